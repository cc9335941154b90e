// Size and start-up of the npm package against the goals of issue #50 (a benchmark, not a test:
// it prints one run's numbers).
//   npm run build && npm run bench:startup      (BENCH_ROUNDS=5 by default)
//   (cd ../vscode-extension && npm run build && npm run package) first for the .vsix row
// Size: the .wasm files, the glue and the rank files, raw and gzip -9.
// Start-up: to the first token count (`measureTokens('hello world')`, the engine's estimate from
// its 2 KB module), to exact counts (`loadEncoding()`: the counting module, dist/count.wasm,
// compiled while the o200k_base rank file downloads), then to an engine started on a memory host
// and counting exactly (its .wasm; the rank file already read): in Node from the package's
// import, in a fresh process per round; in headless Chromium from the first byte of the page
// (bench/startup.html: its head fetches the `./count` entry's modules at once, as docs/npm.md
// advises, and the engine starts after exact counts), in a fresh browser context per round (cold:
// nothing cached) and once more after a reload (warm: the .wasm files and modules revalidated,
// 304, the rank file from the HTTP cache); the same page without those hints too, in the same
// rounds. Medians over the rounds. Then what the page downloaded before its first count (gzip -9
// of each file it fetched, as the server sends them) and the .vsix. Each row says its goal,
// whether it holds and
// the load average (1 minute, the mean over its rounds). Then the engine's latency in wasm: the
// longest shared trajectory replayed call by call through ReplaySession in Node (record +
// prepare_call per call, as the playground runs it).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { startBrowser } from '../test/browser/chromium.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const bindings = new URL('../', import.meta.url);
const dist = new URL('dist/', bindings);
const vsix = new URL('../vscode-extension/dist/context-workbench.vsix', bindings);

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mb = (n) => `${(n / 1e6).toFixed(2)} MB`;
const gz = (bytes) => gzipSync(bytes, { level: 9 }).length;

/** One start in this process, timed from the package's import: the first count (`measureTokens`,
 * an estimate), exact counts (`loadEncoding`: the counting module and the ranks), then an engine
 * started and counting exactly (its .wasm and its own copy of the ranks). */
async function startOnce() {
  const t0 = performance.now();
  const cw = await import('../dist/node.js');
  const imported = performance.now();
  const first = cw.measureTokens('hello world');
  const counted = performance.now();
  await cw.loadEncoding();
  const exact = performance.now();
  const exactCount = cw.measureTokens('hello world');
  const engine = await cw.ContextEngine.start(cw.memoryHost());
  await engine.exact;
  const ready = performance.now();
  return {
    import: imported - t0, first: counted - t0, exact: exact - t0, engine: ready - t0,
    tokens: first.tokens, estimated: first.estimated, exactTokens: exactCount.estimated ? -1 : exactCount.tokens,
    engineTokens: engine.countTokens('hello world'),
  };
}

if (process.argv[2] === '--once') {
  console.log(JSON.stringify(await startOnce()));
  process.exit(0);
}

function sizes() {
  const rows = [];
  for (const file of ['count.wasm', 'wasm/context_workbench_bg.wasm', 'wasm/context_workbench.js', 'ranks/o200k_base.ranks', 'ranks/cl100k_base.ranks',
    'ranks/o200k_base.tiktoken', 'ranks/cl100k_base.tiktoken']) {
    const bytes = readFileSync(new URL(file, dist));
    rows.push([file, bytes.length, gz(bytes)]);
  }
  return rows;
}

function node() {
  const runs = [];
  const loads = [];
  for (let i = 0; i < ROUNDS; i++) {
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--once'], { encoding: 'utf8' });
    runs.push(JSON.parse(out.trim().split('\n').at(-1)));
    loads.push(loadavg()[0]);
  }
  runs.load = mean(loads);
  return runs;
}

/** The page's own times, from its first byte: first count, exact counts, the engine ready. */
async function pageStart(page) {
  await page.waitForFunction(() => window.startup, null, { timeout: 60_000 });
  const t = await page.evaluate(() => window.startup);
  return {
    first: t.counted - t.firstByte, exact: t.exact - t.firstByte, engine: t.engine - t.firstByte,
    tokens: t.tokens, estimated: t.estimated, exactTokens: t.exactTokens, engineTokens: t.engineTokens, resources: t.resources,
  };
}

const PAGE = '/bindings/bench/startup.html';
const PLAIN = '/bindings/test-artifacts/startup-without-hints.html';
const HINTS = /<!-- start-up hints[^]*<!-- end of the start-up hints -->\n/;

/** Cold and warm rounds of the page with its start-up hints and (`plain`) without, one after the
 * other in each round, so both see the same load. */
async function chromium() {
  // The page without its hints, served as a file too (intercepting the page in the browser would
  // slow every request of the page), beside bench/ so that its imports resolve alike.
  mkdirSync(new URL('test-artifacts/', bindings), { recursive: true });
  writeFileSync(new URL(PLAIN.replace('/bindings/', ''), bindings), readFileSync(new URL('bench/startup.html', bindings), 'utf8').replace(HINTS, ''));
  const chrome = await startBrowser();
  const runs = { hints: { cold: [], warm: [] }, plain: { cold: [], warm: [] } };
  const loads = [];
  try {
    // The server compresses a file on its first request, as a deployment does once, beforehand.
    await page0(chrome);
    for (let i = 0; i < ROUNDS; i++) {
      for (const variant of i % 2 ? ['plain', 'hints'] : ['hints', 'plain']) {
        const context = await chrome.browser.newContext();
        const page = await context.newPage();
        await page.goto(`${chrome.url}${variant === 'plain' ? PLAIN : PAGE}`);
        runs[variant].cold.push(await pageStart(page));
        await page.reload();
        runs[variant].warm.push(await pageStart(page));
        await context.close();
      }
      loads.push(loadavg()[0]);
    }
  } finally {
    await chrome.close();
  }
  return { ...runs, load: mean(loads) };
}

async function page0(chrome) {
  const context = await chrome.browser.newContext();
  const page = await context.newPage();
  await page.goto(`${chrome.url}${PAGE}`);
  await pageStart(page);
  await context.close();
}

/** Files the page fetched before its first count that its hints do not name: the hints are stale. */
function unhinted(resources) {
  const hints = readFileSync(new URL('bench/startup.html', bindings), 'utf8').match(HINTS)[0];
  const named = new Set([...hints.matchAll(/(?:href="|fetch\(')(\.\.\/[^"']+)/g)].map(([, href]) => new URL(href, `http://h${PAGE}`).pathname));
  return resources.filter((r) => !named.has(r) && !/\.(ranks|tiktoken)$/.test(r));
}

/** gzip -9 of every file the cold page fetched before its first count, and the page itself. */
function download(resources) {
  // The server serves the repository's root: a path under /bindings/ is a file of this package.
  const files = ['bench/startup.html', ...new Set(resources.map((p) => p.replace(/^\/bindings\//, '')))];
  return { files, bytes: files.reduce((sum, f) => sum + gz(readFileSync(new URL(f, bindings))), 0) };
}

const verdict = (ok) => (ok ? 'ok' : 'MISSED');
/** A row: `column` (the first count or exact counts) against its goal, then the engine ready. */
const timeRow = (name, runs, column, goal, load) => {
  const m = (k) => median(runs.map((r) => r[k]));
  if (runs.some((r) => r.tokens !== 2 || r.exactTokens !== 2 || r.engineTokens !== 2)) {
    throw new Error(`${name}: 'hello world' did not count 2 tokens (estimated, exactly and by the engine)`);
  }
  const estimated = runs.filter((r) => r.estimated).length;
  const cell = (v) => `${v.toFixed(0).padStart(6)} ms`;
  const how = column === 'first' ? `  (estimated in ${estimated}/${runs.length})` : '';
  const against = (goal === undefined ? '' : `≤ ${goal} ms  ${verdict(m(column) <= goal)}`).padEnd(17);
  return `${name.padEnd(38)}${cell(m(column))}   ${against}${cell(m('engine'))}   load ${load.toFixed(1)}${how}`;
};

console.log(`context-workbench start-up; medians of ${ROUNDS} rounds; ${new Date().toISOString().slice(0, 10)}`);
console.log('\nfile                              raw         gzip -9');
for (const [file, raw, gzipped] of sizes()) console.log(`${file.padEnd(34)}${mb(raw).padStart(8)}   ${mb(gzipped).padStart(8)}`);
const nodeRuns = node();
const { hints: { cold, warm }, plain, load } = await chromium();
console.log(`\n                                           time    goal             engine ready   load average`);
console.log(timeRow(`Node ${process.version}, first count`, nodeRuns, 'first', 100, nodeRuns.load));
console.log(timeRow(`Node ${process.version}, exact counts`, nodeRuns, 'exact', undefined, nodeRuns.load));
console.log(timeRow('Chromium cold, first count', cold, 'first', 150, load));
console.log(timeRow('Chromium cold, exact counts', cold, 'exact', 250, load));
console.log(timeRow('Chromium warm, first count', warm, 'first', 100, load));
console.log(timeRow('Chromium warm, exact counts', warm, 'exact', undefined, load));
console.log(timeRow('  no start-up hints: cold, first', plain.cold, 'first', undefined, load));
console.log(timeRow('  no start-up hints: cold, exact', plain.cold, 'exact', undefined, load));
console.log(timeRow('  no start-up hints: warm, first', plain.warm, 'first', undefined, load));
console.log(`(of which the import of the JS modules, Node: ${median(nodeRuns.map((r) => r.import)).toFixed(0)} ms)`);
const stale = unhinted(cold[0].resources);
if (stale.length) console.log(`bench/startup.html does not preload ${stale.join(', ')}: update its hints (and docs/npm.md)`);
const page = download(cold[0].resources);
console.log(`\npage download before the first count    ${(page.bytes < 1e5 ? `${(page.bytes / 1e3).toFixed(1)} kB` : mb(page.bytes)).padStart(8)} gzip -9   ≤ 2 MB  ${verdict(page.bytes <= 2e6)}`
  + `\n  (${page.files.join(', ')})`);
if (existsSync(vsix)) {
  const size = statSync(vsix).size;
  console.log(`.vsix                                   ${mb(size).padStart(8)}           ≤ 3 MB  ${verdict(size <= 3e6)}`);
} else {
  console.log('.vsix: not built (in vscode-extension/: npm run build && npm run package)');
}

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
