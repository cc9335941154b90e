// `npm run bench`: token counting, native vs wasm vs gpt-tokenizer vs js-tiktoken, in one run.
// Each measurement is a fresh process (`cargo bench --bench tokens` for native, bench/count.mjs
// for the others), so its first count is cold and its peak RSS its own. The machine is shared and
// noisy: the counters take turns for BENCH_ROUNDS rounds (default 3) and each figure is the
// median over the rounds; compare the ratios of one run, not absolute numbers across runs.
// Needs `npm run build` first.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { root } from './corpus.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
if (!existsSync(path.join(here, '../dist/node.js'))) {
  console.error('bench: bindings/dist is missing; run `npm run build` first');
  process.exit(1);
}
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const node = (name) => [process.execPath, [path.join(here, 'count.mjs'), name]];
const counters = [
  ['native (TokenCounter)', 'cargo', ['bench', '--quiet', '--bench', 'tokens']],
  ['wasm (ContextEngine)', ...node('wasm')],
  ['gpt-tokenizer', ...node('gpt-tokenizer')],
  ['js-tiktoken', ...node('js-tiktoken')],
];

// One fresh process; its last stdout line is the JSON of count.mjs (`json {...}` for native).
function measure(label, command, args) {
  try {
    const out = execFileSync(command, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    return JSON.parse(out.trim().split('\n').at(-1).replace(/^json /, ''));
  } catch (err) {
    console.error(`bench: ${label} FAILED: ${err.message}`);
    process.exitCode = 1;
    return null;
  }
}

const samples = new Map(counters.map(([label]) => [label, []]));
for (let round = 1; round <= rounds; round++) {
  process.stderr.write(`bench: round ${round} of ${rounds}\n`);
  for (const [label, command, args] of counters) {
    const sample = measure(label, command, args);
    if (sample) samples.get(label).push(sample);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const rows = [...samples].filter(([, s]) => s.length > 0).map(([label, s]) => ({
  label,
  samples: s,
  bytes: s[0].bytes,
  files: s[0].files,
  tokens: s[0].tokens,
  shortTokens: s[0].short_tokens,
  seconds: median(s.map((x) => x.seconds)),
  cpuSeconds: median(s.map((x) => x.cpu_seconds)),
  firstMs: median(s.map((x) => x.first_ms)),
  peakRssMb: s[0].peak_rss_mb == null ? null : Math.max(...s.map((x) => x.peak_rss_mb)),
}));
if (rows.length === 0) process.exit(1);

const { bytes, files, tokens, shortTokens } = rows[0];
console.log(`\ntoken counting, o200k_base; corpus: ${files} vorflux files, ${(bytes / 1e6).toFixed(2)} MB, ${tokens} tokens`);
console.log(`medians of ${rounds} rounds (each a fresh process: median of 5 counts after a warm-up); MB/CPU s: by CPU time; peak RSS: the largest`);
console.log(`${'counter'.padEnd(22)} ${'tokens'.padStart(9)} ${'MB/s'.padStart(7)} ${'Mtok/s'.padStart(7)} ${'MB/CPU s'.padStart(9)} ${'first count'.padStart(12)} ${'peak RSS'.padStart(9)}`);
for (const r of rows) {
  const cells = [
    String(r.tokens).padStart(9),
    (r.bytes / 1e6 / r.seconds).toFixed(2).padStart(7),
    (r.tokens / 1e6 / r.seconds).toFixed(2).padStart(7),
    (r.bytes / 1e6 / r.cpuSeconds).toFixed(2).padStart(9),
    `${r.firstMs.toFixed(1)} ms`.padStart(12),
    (r.peakRssMb == null ? 'n/a' : `${r.peakRssMb.toFixed(0)} MB`).padStart(9),
  ];
  console.log(`${r.label.padEnd(22)} ${cells.join(' ')}`);
}

// Every counter must agree, in every round, on the corpus and on the short text.
const disagree = rows.filter((r) =>
  r.samples.some((s) => s.tokens !== tokens || s.bytes !== bytes || s.short_tokens !== shortTokens));
if (disagree.length > 0) {
  console.log(`\n!!! MISMATCH: ${disagree.map((r) => r.label).join(', ')} disagree with ${rows[0].label} on the token count !!!`);
  process.exitCode = 1;
} else {
  console.log(`all ${rows.length} counters agree: ${tokens} tokens (and ${shortTokens} on the short text)`);
}

// Ratios within this run: throughput by wall and by CPU time (above 1: the first is faster) and
// time to first count (below 1: the first is ready sooner).
const by = (prefix) => rows.find((r) => r.label.startsWith(prefix));
console.log('\nratios: throughput by wall time, by CPU time; time to first count');
for (const [a, b] of [['native', 'wasm'], ['wasm', 'gpt-tokenizer'], ['wasm', 'js-tiktoken']]) {
  const [x, y] = [by(a), by(b)];
  if (!x || !y) continue;
  const cells = [y.seconds / x.seconds, y.cpuSeconds / x.cpuSeconds, x.firstMs / y.firstMs].map((v) => `${v.toFixed(2)}x`);
  console.log(`  ${`${a} / ${b}`.padEnd(22)} ${cells.map((c) => c.padStart(7)).join(' ')}`);
}
