// The npm proxy's engine time for one managed call, as `cargo bench --bench proxy_overhead`
// compares it with what the proxy adds: the engine's whole work on a call, in this process as on
// an engine thread (wasm, the files written in place): the request admitted and decided, the
// session's prompt prepared, the reply read piece by piece and recorded. Reads JSON on stdin:
// `{ request, reply, contentType, contentLength, headers, n, pauseMs }` (the request body, the
// reply's pieces as the upstream sends them, its type and declared length (a whole reply's), the
// agent's headers as pairs, how many calls, the wait before each piece as the upstream paces a
// stream). A streamed call comes after an idle pause as long as a stream, as in the proxy bench
// (the waits not counted). Prints the median in milliseconds. Not a test: the bench runs it when
// bindings/dist is built.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import '../dist/platform-node.js';
import { ProxyGateway, ProxyWorker } from '../dist/wasm/context_workbench.js';
import { guardHost } from '../dist/host.js';
import { nodeFsHost } from '../dist/hosts/node-fs.js';
import { ensureEncoding, init } from '../dist/init.js';

const { request, reply, contentType, contentLength, headers, n, pauseMs = 0 } = JSON.parse(readFileSync(0, 'utf8'));
const workspace = mkdtempSync(path.join(tmpdir(), 'cw-bench-engine-'));
await init();
await ensureEncoding('o200k_base');
const gateway = new ProxyGateway(undefined, ['http://127.0.0.1:9'], undefined, workspace, '.trace');
const worker = new ProxyWorker(guardHost(nodeFsHost(workspace, { blocking: true }), { onEvent() {}, onProgress() {} }), gateway.config());
const rawHeaders = headers.flat();
const body = new TextEncoder().encode(request);
const pieces = reply.map((piece) => new TextEncoder().encode(piece));
const times = [];
for (let i = 0; i < n; i++) {
  if (pauseMs > 0) await sleep(pauseMs * pieces.length);
  let start = performance.now();
  const admitted = gateway.admit('POST', '/v1/messages', rawHeaders);
  if (gateway.decide(admitted, body) !== 'manage') throw new Error('the bench request is not a managed call');
  await worker.prepare('POST', '/v1/messages', rawHeaders, body, admitted.format, { notes: [], opening: admitted.opening });
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
  times.push(took + performance.now() - start);
  pump.free();
  admitted.free();
}
worker.free();
gateway.free();
rmSync(workspace, { recursive: true, force: true });
times.sort((a, b) => a - b);
console.log(times[Math.floor(n / 2)].toFixed(3));
