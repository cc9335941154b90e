// What one trip to an npm proxy engine thread and back costs with no engine work in it (an op
// the thread refuses at once), back to back and after the server sat idle for a while, as it
// does between a streamed reply's events. Prints the median of 100 per idle gap. Not a test:
// the figures explain the part of a managed call's time through the npm proxy that is neither
// the engine's nor Node's HTTP (docs/performance.md). Needs `npm run build`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import '../dist/platform-node.js';
import { EnginePool } from '../dist/proxy/pool.js';
import { ProxyGateway } from '../dist/wasm/context_workbench.js';
import { ensureEncoding, init } from '../dist/init.js';

await init();
await ensureEncoding('o200k_base');
const workspace = mkdtempSync(path.join(tmpdir(), 'cw-bench-hop-'));
const gateway = new ProxyGateway(undefined, ['http://127.0.0.1:9'], undefined, workspace, '.trace');
const pool = await EnginePool.start({ workspace, config: gateway.config() });
const median = (times) => times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
for (const idle of [0, 1, 5, 25]) {
  const times = [];
  for (let i = 0; i < 100; i++) {
    if (idle) await new Promise((resolve) => setTimeout(resolve, idle));
    const start = performance.now();
    await pool.call(0, 'no such op').catch(() => {});
    times.push(performance.now() - start);
  }
  console.log(`idle ${String(idle).padStart(2)} ms before each: a round trip to an engine thread in ${median(times).toFixed(3)} ms (median of 100)`);
}
await pool.terminate();
gateway.free();
rmSync(workspace, { recursive: true, force: true });
