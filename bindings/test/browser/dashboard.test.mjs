// The dashboard end to end: the real Claude Code CLI runs a scripted session through the native
// `workbench proxy` (a scripted Anthropic upstream stands in for the model, step by step), while
// headless Chromium watches the page the proxy serves at /workbench/. Then the same store through
// `workbench serve`, the npm package's proxy and the playground's static page reading it as a
// folder picked in the browser. Keyboard use and contrast are checked with axe-core. Screenshots go to
// test-artifacts/ (not committed).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { anthropicEvents, startProcess } from './scripted.mjs';
import { CHROMIUM_ARGS } from './chromium.mjs';
import { serve } from '../../scripts/serve.mjs';

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const artifacts = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
const CLAUDE = fileURLToPath(new URL('../../../crates/workbench-cli/tests/clients/node_modules/@anthropic-ai/claude-code/cli-wrapper.cjs', import.meta.url));
const WORKBENCH = process.env.WORKBENCH_BIN;
const NPM_CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const TASK = 'Summarise the warnings of the build log';
/** Only in the middle of a long command output, which the engine compresses away. */
const NEEDLE = 'marker-7f3a-zebra';
const PRICES = { cache_read: 0.1, cache_write: 1.25 };

const todos = (statuses, last = 'Write the summary') => ({ todos: ['Read the build log', 'Count the warnings', last]
  .map((content, i) => ({ content, status: statuses[i], activeForm: `Working on: ${content}` })) });
const log = (lines, tag) => `seq 1 ${lines} | sed 's/^/${tag} /'`;
/** Part `n` of the warnings: 300 lines, each naming its variable and file (under Claude Code's 30 KB, so the output stays inline). */
const warnings = (n) => `seq 1 300 | awk '{print "warning ${n}: unused variable tmp_" $1 " in src/module_${n}.py"}'`;
/** The scripted session: a plan, a long build log with the needle in its middle, more output, the plan done with its last item rewritten (a revision). */
const STEPS = [
  ['TodoWrite', todos(['in_progress', 'pending', 'pending'])],
  ['Bash', { command: `${log(600, 'build step')}; echo ${NEEDLE} reached; seq 601 1200 | sed 's/^/build step /'`, description: 'Show the build log' }],
  ['TodoWrite', todos(['completed', 'in_progress', 'pending'])],
  ...[1, 2, 3, 4, 5].map((n) => ['Bash', { command: warnings(n), description: `Warnings, part ${n}` }]),
  ['TodoWrite', todos(['completed', 'completed', 'completed'], 'Write a one-line summary')],
];

let browser;
before(async () => { browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS }); });
after(async () => { await browser?.close(); });

/** A scripted Anthropic upstream: step n is answered once `release(n)` allowed it. */
async function scriptedUpstream() {
  let ids = 0;
  let allowed = -1;
  const waiting = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', async () => {
      const request = body ? JSON.parse(body) : {};
      if (req.url.includes('count_tokens')) return res.end(JSON.stringify({ input_tokens: 1000 }));
      const id = `msg_dash_${ids++}`;
      let blocks = [{ type: 'text', text: 'Build log warnings' }];
      if (request.tools) {
        const answered = (request.messages ?? []).flatMap((m) => (Array.isArray(m.content) ? m.content : []))
          .map((b) => /^toolu_dash(\d+)$/.exec(b.tool_use_id ?? '')?.[1]).filter(Boolean).map(Number);
        const n = answered.length ? Math.max(...answered) + 1 : 0;
        await new Promise((resolve) => (n <= allowed ? resolve() : waiting.push({ n, resolve })));
        const step = STEPS[n];
        blocks = step ? [{ type: 'text', text: `Step ${n}.` }, { type: 'tool_use', id: `toolu_dash${n}`, name: step[0], input: step[1] }]
          : [{ type: 'text', text: 'All done: 1,500 warnings, none an error.' }];
      }
      if (!request.stream) {
        res.setHeader('content-type', 'application/json');
        return res.end(JSON.stringify({ id, type: 'message', role: 'assistant', model: 'claude-scripted', content: blocks, stop_reason: 'end_turn', usage: { input_tokens: 100, output_tokens: 5 } }));
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(anthropicEvents(id, blocks));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    release(n) {
      allowed = Math.max(allowed, n);
      for (const w of waiting.splice(0)) {
        if (w.n <= allowed) w.resolve();
        else waiting.push(w);
      }
    },
    close: () => { server.closeAllConnections(); return new Promise((resolve) => server.close(resolve)); },
  };
}

/** Start `workbench ARGS` in `cwd`; resolves with the process and its first `lines` stdout lines. */
const startWorkbench = (args, cwd, lines) => startProcess(WORKBENCH, args, cwd, lines);

/** A sum in dollars as the engine writes it, written again here. */
const dollarsText = (value) => { const abs = Math.abs(value); return `$${abs.toFixed(abs < 0.01 ? 4 : abs < 10 ? 3 : 2)}`; };

/** What the page must say a trace's calls cost and saved: the dollars its `calls.jsonl` records,
 * summed here independently of the engine (side calls are priced from counts: estimated). */
function savingOf(records) {
  let [sent, agent, estimated] = [0, 0, 0];
  for (const c of records) {
    if (c.status == null || c.status < 200 || c.status >= 300) continue; // no model answered: no cost
    sent += c.dollars.sent;
    agent += c.dollars.agent;
    if (c.dollars.basis === 'estimated') estimated += 1;
  }
  const saved = agent - sent;
  const share = Math.round((agent > 0 ? 1 - sent / agent : 0) * 100);
  const marks = estimated ? ` [${estimated} call${estimated === 1 ? '' : 's'} estimated]` : '';
  return `${dollarsText(sent)} instead of ${dollarsText(agent)}: ${dollarsText(saved)} ${saved < 0 ? 'more' : 'saved'} (${share < 0 ? `−${-share}` : share}%)${marks}`;
}

/** The one proxied trace under `store` and its call records. */
function callsOf(store) {
  const traces = readdirSync(store, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(store, d.name, 'calls.jsonl'))).map((d) => d.name);
  assert.equal(traces.length, 1, `one proxied trace: ${traces}`);
  const lines = readFileSync(path.join(store, traces[0], 'calls.jsonl'), 'utf8').trim().split('\n');
  return { traceId: traces[0], records: lines.map((l) => JSON.parse(l)) };
}

/** axe-core's WCAG A/AA violations on the page as it is now. */
async function violations(page) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  const result = await page.evaluate(() => window.axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21aa'] }));
  return result.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

const texts = (page, selector) => page.$$eval(selector, (nodes) => nodes.map((n) => n.textContent));

test('Claude Code through the proxy, watched live on its dashboard; the same store through workbench serve, the npm proxy and a picked folder', { skip: !WORKBENCH && 'WORKBENCH_BIN is not set' }, async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'cw-dashboard-'));
  const work = path.join(root, 'work');
  const home = path.join(root, 'home');
  mkdirSync(work);
  mkdirSync(home);
  writeFileSync(path.join(work, 'README.md'), 'A project with a noisy build.\n');
  mkdirSync(artifacts, { recursive: true });
  const upstream = await scriptedUpstream();
  const proxy = await startWorkbench(['proxy', '--upstream', upstream.url, '--window', '12000', '--port', '0'], work, 4);
  const dashboard = proxy.lines.find((l) => l.startsWith('dashboard: '))?.slice('dashboard: '.length);
  assert.match(dashboard ?? '', /^http:\/\/127\.0\.0\.1:\d+\/workbench\/$/, proxy.lines.join('\n'));
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  let claude;
  try {
    // Before any agent: an empty state that says what to do.
    await page.goto(dashboard);
    await page.waitForSelector('.empty');
    assert.match(await page.textContent('.empty'), new RegExp(`ANTHROPIC_BASE_URL=${dashboard.replace('/workbench/', '')}`));
    assert.deepEqual(await violations(page), []);

    upstream.release(0);
    claude = spawn('node', [CLAUDE, '-p', TASK, '--allowedTools', 'Bash,TodoWrite'], {
      cwd: work,
      env: { ...process.env, HOME: home, ANTHROPIC_BASE_URL: dashboard.replace('/workbench/', ''), ANTHROPIC_API_KEY: 'sk-ant-api03-dashboardtest0123456789abcdefghijklmnopqrstuvwxyzABCD', DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_ENABLE_TASKS: '0', ANTHROPIC_AUTH_TOKEN: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let claudeOut = '';
    claude.stdout.on('data', (d) => { claudeOut += d; });
    claude.stderr.on('data', (d) => { claudeOut += d; });
    const claudeDone = new Promise((resolve) => claude.on('exit', resolve));

    // The session appears without a reload, titled with the task's words; the keyboard opens it.
    const row = page.locator('#sessions tbody tr').first();
    await row.waitFor({ timeout: 60_000 });
    assert.match(await row.textContent(), new RegExp(TASK));
    assert.deepEqual(await violations(page), []);
    let tabs = 0;
    const onRow = () => page.evaluate(() => document.activeElement?.closest('#sessions tbody') !== null);
    while (!(await onRow()) && tabs++ < 40) await page.keyboard.press('Tab');
    assert.ok(await onRow(), 'the keyboard reaches the session');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#plan');

    // The plan follows the agent's TodoWrite; the chart grows as calls come.
    await page.waitForFunction(() => document.querySelectorAll('#plan li').length >= 3 && document.querySelector('#plan li[data-status=in_progress]'), null, { timeout: 60_000 });
    // The plan's heading says which step the agent is on (R6.8).
    assert.match(await page.locator('#phase').textContent(), /^ · step [1-3] of 3$/);
    const barsBefore = await page.locator('#chart rect.bar').count();
    upstream.release(2);
    await page.waitForFunction(() => [...document.querySelectorAll('#plan li')].some((li) => li.dataset.status === 'completed' && li.textContent.includes('Read the build log')), null, { timeout: 60_000 });
    assert.ok(await page.locator('#chart rect.bar').count() > barsBefore, 'the chart grows with the calls');
    upstream.release(STEPS.length);
    const code = await claudeDone;
    assert.equal(code, 0, `Claude Code: ${claudeOut}\nproxy: ${proxy.log()}`);
    await page.waitForFunction((n) => document.querySelectorAll('#plan li[data-status=completed]').length === n, 3, { timeout: 30_000 });
    // The rewritten last item is a revision of the plan: the one it replaced never ran, so it is gone.
    const revision = await page.locator('#plan ul.revisions li').textContent();
    assert.equal(await page.locator('#phase').textContent(), ' · completed');
    assert.equal(revision, 'Revised from item 3: kept “Read the build log”, “Count the warnings”; revised “Write a one-line summary”; dropped “Write the summary”');

    // The store's record of the session.
    const { traceId, records } = callsOf(path.join(work, '.trace'));
    const mainCalls = records.filter((r) => !r.side_call).length;
    await page.waitForFunction((n) => document.querySelectorAll('#chart rect.bar').length === n, mainCalls, { timeout: 30_000 });
    const saving = savingOf(records);
    assert.match(saving, / saved \(\d+%\)/, 'the engine saved money');
    await page.waitForFunction((s) => document.querySelector('.totals .saving')?.textContent === s, saving, { timeout: 10_000 });
    assert.ok(records.some((r) => r.rewrites.length > 0), 'the window is small enough that the engine compacts');
    // The chart takes the arrow keys: the call before the newest.
    const numbers = records.filter((r) => !r.side_call).map((r) => r.call);
    await page.focus('#chart svg');
    await page.keyboard.press('ArrowLeft');
    await page.waitForFunction((n) => document.querySelector('#call-detail')?.textContent.startsWith(`Call ${n}:`), numbers.at(-2));
    assert.ok(await page.evaluate(() => document.activeElement?.closest('#chart') !== null), 'the chart keeps the focus');
    // The prompt follows the picked call: that call's, as the model saw it.
    const heading = (n, newest) => `The prompt of call ${n}${newest ? ' (the newest)' : ''}, as the model saw it`;
    const previous = records.find((r) => r.call === numbers.at(-2));
    await page.waitForFunction((h) => document.querySelector('#prompt h2')?.textContent === h, heading(previous.call, false));
    assert.ok((await page.textContent('#prompt .hint')).startsWith(`${previous.prompt_tokens.toLocaleString('en')} tokens in `), 'its own tokens');
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(artifacts, 'dashboard-session.png') });
    await page.keyboard.press('ArrowRight');
    await page.waitForFunction((h) => document.querySelector('#prompt h2')?.textContent === h, heading(numbers.at(-1), true));

    // What each compaction kept and dropped: one item per rewrite the calls report.
    const rewritten = records.filter((r) => r.rewrites.length > 0);
    await page.waitForFunction((n) => document.querySelectorAll('#compactions ol > li').length === n, rewritten.reduce((n, r) => n + r.rewrites.length, 0));
    const first = page.locator('#compactions ol > li').first();
    assert.match(await first.textContent(), new RegExp(`^Call ${rewritten[0].call}: tail compaction of raw m\\d+\\.\\.m\\d+ \\(`));
    const compactions = await (await fetch(`${dashboard}api/traces/${traceId}/compactions`)).json();
    // The item with the most names: its lists as the API gives them.
    const named = compactions.compactions.reduce((best, c, i, all) => (c.kept.length + c.dropped.length + c.earlier.length
      > all[best].kept.length + all[best].dropped.length + all[best].earlier.length ? i : best), 0);
    const { kept, dropped, earlier } = compactions.compactions[named];
    assert.ok(kept.length + dropped.length + earlier.length > 0, JSON.stringify(compactions).slice(0, 2000));
    const item = page.locator('#compactions ol > li').nth(named);
    assert.match(await item.textContent(), new RegExp(`the prompt kept ${kept.length} and dropped ${dropped.length}; ${earlier.length} were out of it before\\.`));
    for (const summary of await item.locator('summary').all()) await summary.click();
    assert.deepEqual((await item.locator('.names').allTextContents()).map((t) => t.split(', ')[0]), [dropped[0], kept[0], earlier[0]].filter(Boolean));
    assert.deepEqual(await violations(page), []);
    await page.locator('#compactions').screenshot({ path: path.join(artifacts, 'dashboard-compactions.png') });

    // The build log's middle is not in the prompt the model saw; expanding its compressed form shows it.
    const prompt = await (await fetch(`${dashboard}api/traces/${traceId}/prompt`)).text();
    assert.ok(!prompt.includes(NEEDLE), `the needle was compressed away: ${prompt.slice(prompt.indexOf(NEEDLE) - 2000, prompt.indexOf(NEEDLE) + 500)}`);
    await page.click('#prompt summary'); // the prompt's messages are shown on demand, once its toggle event runs
    const buttons = page.locator('#prompt .msg.compressed button.expand');
    await buttons.first().waitFor({ timeout: 10_000 }).catch(() => {});
    assert.ok(await buttons.count() > 0, 'a compressed part can be expanded');
    let found = false;
    for (let i = 0; i < await buttons.count() && !found; i++) {
      await buttons.nth(i).click();
      await page.waitForFunction((n) => document.querySelectorAll('#prompt .msg.compressed button.expand')[n]?.getAttribute('aria-expanded') === 'true', i);
      const more = page.locator('#prompt .originals button.link');
      while (await more.count() > 0) await more.first().click();
      found = (await texts(page, '#prompt .originals pre')).some((t) => t.includes(NEEDLE));
    }
    await page.locator('#prompt .originals').first().evaluate((node) => node.closest('.msg').scrollIntoView());
    await page.screenshot({ path: path.join(artifacts, 'dashboard-recall.png') });
    assert.ok(found, 'an expanded original holds the dropped text');
    assert.deepEqual(await violations(page), []);

    // Search finds the dropped text and jumps to the call that first held it.
    await page.fill('#q', NEEDLE);
    await page.press('#q', 'Enter');
    const hit = page.locator('.hits li a').first();
    await hit.waitFor();
    assert.match(await hit.textContent(), /call \d+/);
    assert.match(await page.textContent('.hits li'), new RegExp(NEEDLE));
    assert.deepEqual(await violations(page), []);
    await page.screenshot({ path: path.join(artifacts, 'dashboard-search.png'), fullPage: true });
    const call = /call (\d+)/.exec(await hit.textContent())[1];
    await hit.click();
    await page.waitForFunction((n) => document.querySelector('#call-detail')?.textContent.startsWith(`Call ${n}:`), call);
    assert.deepEqual(errors, []);
  } finally {
    claude?.kill();
    proxy.child.kill('SIGTERM');
    await upstream.close();
  }

  // The same page from `workbench serve STORE`, from the npm package's proxy, and from a static
  // server (the playground's) reading the store as a folder picked in the browser, all reading
  // what the native proxy saved.
  const { records } = callsOf(path.join(work, '.trace'));
  const running = (server, address) => ({ address: address(server.lines), stop: () => server.child.kill('SIGTERM') });
  const servers = [
    ['workbench serve', async () => running(await startWorkbench(['serve', path.join(work, '.trace'), '--port', '0'], work, 1), (lines) => `${lines[0]}/`), /Live/],
    ['the npm proxy', async () => running(await startProcess(process.execPath, [NPM_CLI, 'proxy', '--port', '0'], work, 4), (lines) => lines[3].slice('dashboard: '.length)), /Live/],
    ['a picked folder', async () => {
      const server = await serve(fileURLToPath(new URL('../../../', import.meta.url)));
      return { address: `${server.url}/src/dashboard/dashboard.html?folder`, stop: server.close, picks: path.join(work, '.trace') };
    }, /^Read from a picked folder \(\d+ files\) as it was when picked/],
  ];
  try {
    for (const [name, start, liveLine] of servers) {
      const server = await start();
      try {
        await page.goto(server.address);
        if (server.picks) {
          assert.match(await page.locator('#folder-picker').textContent(), /Open a trace store/);
          await page.setInputFiles('#folder', server.picks);
        }
        const row = page.locator('#sessions tbody tr').first();
        await row.waitFor();
        assert.match(await row.textContent(), new RegExp(TASK), name);
        assert.equal(await page.textContent('.totals .saving'), savingOf(records), name);
        assert.match(await page.textContent('#live'), liveLine, name);
        if (name === 'workbench serve') await page.screenshot({ path: path.join(artifacts, 'dashboard-sessions.png') });
        if (server.picks) await page.screenshot({ path: path.join(artifacts, 'dashboard-folder.png') });
        await row.locator('a').click();
        await page.waitForFunction(() => document.querySelectorAll('#plan li[data-status=completed]').length === 3);
        assert.deepEqual(await violations(page), [], name);
        if (server.picks) {
          // The search reads the picked files too: the needle is only in an output the prompt dropped.
          await page.fill('#q', NEEDLE);
          await page.press('#q', 'Enter');
          await page.locator('.hits li').first().waitFor();
          assert.match(await page.textContent('.hits li'), new RegExp(NEEDLE));
        }
      } finally {
        await server.stop();
      }
    }
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
    rmSync(root, { recursive: true, force: true });
  }
});
