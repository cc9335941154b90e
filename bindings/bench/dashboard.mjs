// The dashboard at scale (a benchmark, not a test: it prints one run's numbers).
//   WORKBENCH_BIN=target/release/workbench npm run bench:dashboard     (SESSIONS=1000 CALLS=10000)
// A trace store made here: SESSIONS proxied sessions of 30 calls each, and one session of CALLS
// calls and as many messages, each call's prompt saved (200 messages; a compaction every 50 calls). `workbench serve` reads it; each API route is timed (median of 5),
// then headless Chromium opens the page: the time to the sessions table, and to the big
// session's chart, and how many rows and bars the page holds.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '../test/browser/chromium.mjs';

const SESSIONS = Number(process.env.SESSIONS ?? 1000);
const CALLS = Number(process.env.CALLS ?? 10000);
const WORKBENCH = process.env.WORKBENCH_BIN;
if (!WORKBENCH) throw new Error('set WORKBENCH_BIN to the workbench binary');
const DAY = Date.UTC(2026, 10, 1);

function call(n, history) {
  const client = 2000 + history * 400;
  const prompt = Math.min(client, 60000);
  return { call: n, at_ms: DAY + n * 1000, model: 'claude-scripted', agent: 'Claude Code 2.1.328', stream: true, managed: true,
    messages: history, new_messages: 2, client_tokens: client, prompt_tokens: prompt, expected_cached_tokens: Math.floor(prompt * 0.9),
    rewrites: n % 50 === 0 ? ['tail 10..20'] : [], status: 200, completed: true,
    usage: { input_tokens: 100, output_tokens: 40, cache_read_tokens: Math.floor(prompt * 0.85), cache_write_tokens: 0 }, notes: [] };
}

function message(traceId, sequence, text) {
  return { id: `m${String(sequence).padStart(6, '0')}`, trace_id: traceId, role: sequence % 2 ? 'assistant' : 'user', sequence,
    content: [{ type: 'text', text }], description: 'a message', tokens: 100, created_at_ms: DAY + sequence };
}

function writeTrace(store, traceId, calls, messages, day) {
  const dir = path.join(store, traceId);
  mkdirSync(path.join(dir, 'messages'), { recursive: true });
  const meta = { version: 1, trace_id: traceId, mission: `Fix issue ${traceId}`, created_at: day, updated_at: day + calls * 1000,
    message_count: messages, status: 'finished', calls };
  writeFileSync(path.join(dir, 'meta.json'), JSON.stringify(meta));
  writeFileSync(path.join(dir, 'calls.jsonl'), Array.from({ length: calls }, (_, i) => `${JSON.stringify(call(i + 1, 2 * i + 1))}\n`).join(''));
  for (let s = 0; s < messages; s++) {
    const text = s === Math.floor(messages / 2) ? `error: needle-scale-42 in src/module_${s}.rs` : `output line ${s} `.repeat(30);
    writeFileSync(path.join(dir, 'messages', `m${String(s).padStart(6, '0')}.json`), JSON.stringify(message(traceId, s, text)));
  }
}

/** The big session's saved prompts (`prompts.jsonl`, `parts.jsonl`): call n's prompt is the last
 * PROMPT_MESSAGES messages, one part each; every 50th call reports a tail compaction of 10 messages. */
const PROMPT_MESSAGES = 200;
function writePrompts(dir, calls) {
  const id = (s) => `m${String(s).padStart(6, '0')}`;
  const parts = [JSON.stringify({ id: 'tools', value: [] })];
  for (let s = 0; s < calls; s++) {
    const text = `output line ${s} of src/module_${s % 97}.rs `.repeat(20);
    parts.push(JSON.stringify({ id: `p${s}`, value: { role: s % 2 ? 'assistant' : 'user', content: [{ type: 'text', text }], layer: 'history', source: id(s) } }));
  }
  writeFileSync(path.join(dir, 'parts.jsonl'), `${parts.join('\n')}\n`);
  const cost = { kept_prefix_tokens: 9000, tokens_before: 6000, tokens_after: 800, one_off_cost: 100, saving_per_call: 50, horizon: 50 };
  const lines = Array.from({ length: calls }, (_, i) => {
    const n = i + 1;
    const messages = Array.from({ length: Math.min(n, PROMPT_MESSAGES) }, (_, k) => `p${n - Math.min(n, PROMPT_MESSAGES) + k}`);
    const rewrites = n % 50 === 0 ? [{ call: i, mechanism: 'tail_compaction', position: 'tail', start: n - 20, end: n - 10, reasons: ['scripted'], cost, output_tokens: 0, notes: [] }] : [];
    return JSON.stringify({ call: n, tokens: 60000, tail_rewrite_tokens: 0, first_changed_byte: null, expected_cached_tokens: 54000, rewrites, notes: [], messages, tools: 'tools' });
  });
  writeFileSync(path.join(dir, 'prompts.jsonl'), `${lines.join('\n')}\n`);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timed(url, rounds = 5) {
  const times = [];
  let bytes = 0;
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    const response = await fetch(url);
    bytes = (await response.arrayBuffer()).byteLength;
    if (!response.ok) throw new Error(`${url}: ${response.status}`);
    times.push(performance.now() - t0);
  }
  return { ms: median(times), bytes };
}

const root = mkdtempSync(path.join(tmpdir(), 'cw-bench-dashboard-'));
const store = path.join(root, '.trace');
const t0 = performance.now();
for (let i = 0; i < SESSIONS; i++) writeTrace(store, `s${String(i).padStart(4, '0')}`, 30, 6, DAY + (i % 20) * 86_400_000);
writeTrace(store, 'big', CALLS, CALLS, DAY + 20 * 86_400_000);
writePrompts(path.join(store, 'big'), CALLS);
console.log(`store: ${SESSIONS} sessions of 30 calls and one of ${CALLS} calls and messages, written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

const server = spawn(WORKBENCH, ['serve', store, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
const base = await new Promise((resolve) => server.stdout.once('data', (d) => resolve(String(d).trim())));
try {
  console.log('\nroute                                   median ms   bytes');
  for (const route of ['api/stats', 'api/traces', 'api/traces/big', 'api/traces/big/calls', `api/traces/big/calls?from=${CALLS}`, 'api/traces/big/prompt',
    `api/traces/big/prompt?call=${CALLS / 2}`, 'api/traces/big/compactions',
    'api/traces/big/originals?ref=m005000..m005009', 'api/search?q=needle-scale-42']) {
    const { ms, bytes } = await timed(`${base}/${route}`);
    console.log(`${route.padEnd(40)}${ms.toFixed(1).padStart(9)}${String(bytes).padStart(10)}`);
  }
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  let start = performance.now();
  await page.goto(`${base}/`);
  await page.waitForSelector('#sessions tbody tr');
  const listMs = performance.now() - start;
  const rows = await page.locator('#sessions tbody tr').count();
  start = performance.now();
  await page.goto(`${base}/#/session/big`);
  await page.waitForSelector('#chart rect.bar');
  const sessionMs = performance.now() - start;
  const bars = await page.locator('#chart rect.bar').count();
  // A live poll that found nothing new: how long the page's main thread is busy with it.
  const pollMs = await page.evaluate(() => new Promise((resolve) => {
    const observer = new PerformanceObserver((list) => { resolve(Math.max(...list.getEntries().map((e) => e.duration))); observer.disconnect(); });
    observer.observe({ type: 'longtask' });
    setTimeout(() => { observer.disconnect(); resolve(0); }, 5000);
  }));
  console.log(`\npage: sessions table in ${listMs.toFixed(0)} ms (${rows} rows in the DOM); the ${CALLS}-call session in ${sessionMs.toFixed(0)} ms (${bars} bars); `
    + `longest task of the next 5 s of live polls ${pollMs.toFixed(0)} ms (0: none over 50 ms)`);
  await browser.close();
} finally {
  server.kill('SIGTERM');
  rmSync(root, { recursive: true, force: true });
}
