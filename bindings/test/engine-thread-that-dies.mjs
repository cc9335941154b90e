// An engine thread of the npm proxy that ends at its second `prepare`, as a crash or the engine's
// trap ends one (proxy.test.mjs: another thread takes its place); otherwise the package's own.
import { parentPort } from 'node:worker_threads';

let prepares = 0;
// Registered before the thread's own listener, so it runs first.
parentPort.on('message', (message) => {
  if (message.op === 'prepare' && ++prepares === 2) process.exit(70);
});
await import('../dist/proxy/worker.js');
