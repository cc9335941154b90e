// Size and start-up of the npm package (a benchmark, not a test: it prints one run's numbers).
//   npm run build && npm run bench:startup      (BENCH_ROUNDS=5 by default)
// Size: dist/wasm/context_workbench_bg.wasm and the rank files, raw and gzip -9.
// Start-up: from init() to the first token count (loading and compiling the .wasm, loading
// the o200k_base ranks, creating an engine on a memory host, counting 'hello world'); in Node
// in a fresh process per round, in headless Chromium in a fresh browser context per round
// (cold: nothing cached) and once more in the same context (warm: the rank file from the
// HTTP cache). Medians over the rounds, with the split between the .wasm and the ranks. Then
// the engine's latency in wasm: the longest shared trajectory replayed call by call through
// ReplaySession in Node (record + prepare_call per call, as the playground runs it).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { startBrowser } from '../test/browser/chromium.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const dist = new URL('../dist/', import.meta.url);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mb = (n) => `${(n / 1e6).toFixed(2)} MB`;

/** One start in this process: the times from init() to the .wasm ready and to the first count. */
async function startOnce() {
  const t0 = performance.now();
  const cw = await import('../dist/node.js');
  const imported = performance.now();
  await cw.init();
  const wasmReady = performance.now();
  const engine = await cw.ContextEngine.create(cw.memoryHost());
  const tokens = engine.countTokens('hello world');
  const counted = performance.now();
  return { import: imported - t0, wasm: wasmReady - imported, ranks: counted - wasmReady, total: counted - imported, tokens };
}

if (process.argv[2] === '--once') {
  console.log(JSON.stringify(await startOnce()));
  process.exit(0);
}

function sizes() {
  const rows = [];
  for (const file of ['wasm/context_workbench_bg.wasm', 'wasm/context_workbench.js', 'ranks/o200k_base.tiktoken', 'ranks/cl100k_base.tiktoken']) {
    const bytes = readFileSync(new URL(file, dist));
    rows.push([file, bytes.length, gzipSync(bytes, { level: 9 }).length]);
  }
  return rows;
}

function node() {
  const runs = [];
  for (let i = 0; i < ROUNDS; i++) {
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--once'], { encoding: 'utf8' });
    runs.push(JSON.parse(out.trim().split('\n').at(-1)));
  }
  return runs;
}

/** In the page: import the package, then time init() → first count. */
async function pageStart(page) {
  return page.evaluate(async () => {
    const cw = await import('/bindings/dist/web.js');
    const t0 = performance.now();
    await cw.init();
    const wasmReady = performance.now();
    const engine = await cw.ContextEngine.create(cw.memoryHost());
    const tokens = engine.countTokens('hello world');
    const counted = performance.now();
    return { wasm: wasmReady - t0, ranks: counted - wasmReady, total: counted - t0, tokens };
  });
}

async function chromium() {
  const chrome = await startBrowser();
  const cold = [];
  const warm = [];
  try {
    for (let i = 0; i < ROUNDS; i++) {
      const context = await chrome.browser.newContext();
      const page = await context.newPage();
      await page.goto(`${chrome.url}/bindings/test/browser/blank.html`);
      cold.push(await pageStart(page));
      await page.reload();
      warm.push(await pageStart(page));
      await context.close();
    }
  } finally {
    await chrome.close();
  }
  return { cold, warm };
}

const row = (name, runs) => {
  const m = (k) => `${median(runs.map((r) => r[k])).toFixed(0).padStart(6)} ms`;
  if (runs.some((r) => r.tokens !== 2)) throw new Error(`${name}: 'hello world' did not count 2 tokens`);
  return `${name.padEnd(34)}${m('wasm')}${m('ranks')}${m('total')}`;
};

console.log(`context-workbench start-up; medians of ${ROUNDS} rounds; ${new Date().toISOString().slice(0, 10)}`);
console.log('\nfile                              raw         gzip -9');
for (const [file, raw, gz] of sizes()) console.log(`${file.padEnd(34)}${mb(raw).padStart(8)}   ${mb(gz).padStart(8)}`);
const nodeRuns = node();
const { cold, warm } = await chromium();
console.log(`\ninit() → first count               .wasm     ranks     total`);
console.log(row(`Node ${process.version}`, nodeRuns));
console.log(row('Chromium, cold (nothing cached)', cold));
console.log(row('Chromium, warm (ranks from cache)', warm));
console.log(`(import of the JS modules before init(), Node: ${median(nodeRuns.map((r) => r.import)).toFixed(0)} ms)`);

const TRACE = process.env.BENCH_TRACE ?? '../../data/traces/vorflux/django__django-15973.json';
const { ReplaySession } = await import('../dist/node.js');
const text = readFileSync(new URL(TRACE, import.meta.url), 'utf8');
const started = performance.now();
const session = await ReplaySession.create(TRACE.split('/').at(-1), text);
let calls = 0;
while (session.step()) calls++;
const seconds = (performance.now() - started) / 1000;
console.log(`\nreplay in wasm (Node): ${TRACE.split('/').at(-1)}, ${calls} calls in ${seconds.toFixed(2)} s`
  + ` (${((seconds * 1000) / calls).toFixed(2)} ms per call, import included)`);
console.log(`load average during the run: ${loadavg().map((l) => l.toFixed(1)).join(', ')} (2 cores)`);
