// The npm proxy's engine time for one managed call, as `cargo bench --bench proxy_overhead`
// compares it with what the proxy adds: the engine's whole work on a call, in this process as on
// an engine thread (wasm, the files written in place): the request's exchange begun and read, the
// session's prompt prepared, the reply relayed piece by piece and recorded. Its first line on stdin
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
  // One managed call through the engine's exchange, its effects carried out as the npm proxy's
  // `Call` does, with the upstream's reply given piece by piece and the waits left out.
  return async () => {
    let took = 0;
    let save = 0;
    let start = performance.now();
    const exchange = gateway.begin('POST', '/v1/messages', rawHeaders, false);
    let effects = exchange.start();
    let recording;
    while (effects.length > 0) {
      let next;
      for (const effect of effects) {
        switch (effect.effect) {
          case 'read_body': next = { event: 'body_read', bytes: body.length }; break;
          case 'read': next = { event: 'read', verdict: effect.away ? worker.read('POST', '/v1/messages', rawHeaders, body) : exchange.verdict(body) }; break;
          case 'take_turn': next = { event: 'turn_taken', notes: [] }; break;
          case 'prepare': {
            const prepared = await worker.prepare('POST', '/v1/messages', rawHeaders, body, { notes: effect.notes, opening: effect.opening });
            const saving = performance.now();
            await worker.saveBehind();
            save = performance.now() - saving;
            next = { event: 'prepared', rewritten: prepared !== undefined };
            break;
          }
          case 'send': next = { event: 'answered', status: 200, content_type: contentType, content_length: contentLength == null ? null : Number(contentLength) }; break;
          case 'respond': {
            for (const piece of pieces) {
              took += performance.now() - start;
              if (pauseMs > 0) await sleep(pauseMs);
              start = performance.now();
              for (const relayed of exchange.relay(piece)) {
                if (relayed.effect === 'finish') recording = worker.finish(exchange.key, relayed.status, relayed.outcome);
              }
            }
            next = { event: 'ended', end: 'done' };
            break;
          }
          case 'finish': recording = worker.finish(exchange.key, effect.status, effect.outcome); break;
          case 'await_record': {
            const finished = await recording;
            next = { event: 'recorded', record: { ...finished.record, trace_id: finished.trace_id } };
            break;
          }
          case 'answer': throw new Error(`the bench request was answered by the proxy: ${effect.status} ${effect.body}`);
          default: break;
        }
      }
      if (!next) break;
      effects = exchange.step(next);
    }
    took += performance.now() - start;
    exchange.free();
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
