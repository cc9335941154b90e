// The npm proxy's engine time for one managed call, as `cargo bench --bench proxy_overhead`
// compares it with what the proxy adds: the engine's whole work on a call, in this process as on
// an engine thread (wasm, the files written in place): the request admitted and decided, the
// session's prompt prepared, the reply read piece by piece and recorded. Its first line on stdin
// is JSON, `{ request, reply, contentType, contentLength, headers, pauseMs }` (the request body,
// the reply's pieces as the upstream sends them, its type and declared length (a whole reply's),
// the agent's headers as pairs, the wait before each piece as the upstream paces a stream); then
// each line makes one call, answered with a line: its time and the part of it that saved the
// session, in milliseconds (the waits not counted). The bench sends a line after each direct
// request, as it alternates requests direct and through the proxy. Not a test: the bench runs it
// when bindings/dist is built.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import '../dist/platform-node.js';
import { ProxyGateway, ProxyWorker } from '../dist/wasm/context_workbench.js';
import { guardHost } from '../dist/host.js';
import { nodeFsHost } from '../dist/hosts/node-fs.js';
import { ensureEncoding, init } from '../dist/init.js';

/** The engine, ready for the call `setup` describes: a function making one, giving the engine's time and its save's, in ms. */
async function start({ request, reply, contentType, contentLength, headers, pauseMs = 0 }) {
  await init();
  await ensureEncoding('o200k_base');
  const gateway = new ProxyGateway(undefined, ['http://127.0.0.1:9'], undefined, workspace, '.trace');
  const worker = new ProxyWorker(guardHost(nodeFsHost(workspace, { blocking: true }), { onEvent() {}, onProgress() {} }), gateway.config());
  const rawHeaders = headers.flat();
  const body = new TextEncoder().encode(request);
  const pieces = reply.map((piece) => new TextEncoder().encode(piece));
  return async () => {
    let start = performance.now();
    const admitted = gateway.admit('POST', '/v1/messages', rawHeaders);
    if (gateway.decide(admitted, body) !== 'manage') throw new Error('the bench request is not a managed call');
    await worker.prepare('POST', '/v1/messages', rawHeaders, body, admitted.format, { notes: [], opening: admitted.opening });
    const saving = performance.now();
    await worker.saveBehind();
    const save = performance.now() - saving;
    let took = performance.now() - start;
    const pump = gateway.replyPump(admitted, 200, contentType, contentLength);
    let whole = false;
    for (const piece of pieces) {
      if (pauseMs > 0) await sleep(pauseMs);
      start = performance.now();
      whole = pump.feed(piece);
      took += performance.now() - start;
      if (whole) break;
    }
    start = performance.now();
    if (!whole) pump.end('done', 1000);
    await worker.finish(admitted.key, pump.status, pump.takeOutcome());
    took += performance.now() - start;
    pump.free();
    admitted.free();
    return [took, save];
  };
}

const workspace = mkdtempSync(path.join(tmpdir(), 'cw-bench-engine-'));
let call;
for await (const line of createInterface({ input: process.stdin })) {
  if (call === undefined) call = await start(JSON.parse(line));
  else process.stdout.write(`${(await call()).map((ms) => ms.toFixed(4)).join(' ')}\n`);
}
rmSync(workspace, { recursive: true, force: true });
