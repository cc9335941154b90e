// The playground end to end, as a person uses it: served from 127.0.0.1, driven in headless
// Chromium, real trajectories from data/traces loaded through the file input. A screenshot
// is kept in test-artifacts/ (not committed).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, truncateSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBrowser } from './chromium.mjs';

const traces = fileURLToPath(new URL('../../../data/traces/', import.meta.url));
const artifacts = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
const TODO_SESSION = path.join(traces, 'claude-code/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl');

let chrome;
before(async () => { chrome = await startBrowser(); });
after(async () => { await chrome?.close(); });

/** What the main session of a Claude Code log holds, read straight from its lines. */
function mainSession(file) {
  const records = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((r) => !r.isSidechain);
  const calls = new Set(records.filter((r) => r.message?.role === 'assistant').map((r) => r.message.id));
  const todoCalls = records.flatMap((r) => (Array.isArray(r.message?.content) ? r.message.content : []))
    .filter((b) => b.type === 'tool_use' && b.name === 'TodoWrite');
  return { calls: calls.size, todos: todoCalls.at(-1).input.todos.map((t) => t.content) };
}

async function load(page, file) {
  await page.setInputFiles('#file', file);
  await page.waitForSelector('body[data-state=done], body[data-state=error]', { timeout: 120_000 });
}

const text = (page, selector) => page.$$eval(selector, (nodes) => nodes.map((n) => n.textContent));

test('a first visit: a drop zone and the sample, replayed with its plan, the unmanaged baseline and the totals', async () => {
  const page = await chrome.page('/bindings/playground/');
  assert.ok(await page.isVisible('#dropzone'), 'the drop zone shows on a first visit');
  assert.match(await page.textContent('#status'), /try the sample/);
  const downloads = [];
  page.on('requestfinished', async (request) => {
    const name = request.url().split('/').pop();
    if (!/\.(wasm|ranks|tiktoken)$/.test(name)) return;
    const response = await request.response();
    downloads.push({ name, encoding: response.headers()['content-encoding'], sent: (await request.sizes()).responseBodySize,
      size: (await response.body()).length });
  });
  await page.click('#sample');
  await page.waitForSelector('body[data-state=done], body[data-state=error]', { timeout: 60_000 });
  const sample = mainSession(fileURLToPath(new URL('../../playground/sample.jsonl', import.meta.url)));
  assert.match(await page.textContent('#status'), new RegExp(`Replayed ${sample.calls} calls of sample at a 16k window`));
  assert.equal(await page.isVisible('#dropzone'), false);
  assert.deepEqual(await text(page, '#dag .dag-node .label'), sample.todos);
  assert.equal((await page.$$('#chart rect.bar')).length, sample.calls);
  assert.equal((await page.$$('#chart polyline.raw')).length, 1, 'the unmanaged prompt is drawn beside the bars');
  // The sample fits its window whole: the engine sends what the agent sent (issue 45: never
  // dropping what an unmanaged prompt keeps), and says so in its totals.
  const [, ratio] = (await page.textContent('#totals')).match(/unmanaged \(([\d.]+)×\)/);
  assert.ok(Number(ratio) <= 1, `never above the unmanaged prompt: ${ratio}×`);
  // Then the replay's own figures: cost against the unmanaged prompt's and both recalls (the
  // sample's one edit and 14 reused references, all in view: tests/replay.rs checks them natively).
  await page.waitForFunction(() => document.getElementById('totals').textContent.includes('reference recall'), null, { timeout: 60_000 });
  const totals = await page.textContent('#totals');
  const [, cost] = totals.match(/cost ([\d.]+)× the unmanaged prompt's/);
  assert.ok(Number(cost) <= 1, totals);
  assert.match(totals, /edit recall 1\.000, reference recall 1\.000 \(of 14 references the agent reused\)/);
  // The worker's downloads are served gzipped: the engine and the binary o200k ranks (1.2 MB, 0.73
  // MB gzipped) come to about 2.1 MB; never the 3.6 MB text file, nor cl100k_base's.
  assert.deepEqual(downloads.map((d) => d.name).sort(), ['context_workbench_bg.wasm', 'o200k_base.ranks']);
  for (const d of downloads) assert.ok(d.encoding === 'gzip' && d.sent < d.size * 0.65, JSON.stringify(d));
  mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, 'playground-first-visit.png'), fullPage: true });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a Claude Code session: its todo items are the DAG, the chart is drawn, blocks expand to their originals', async () => {
  const page = await chrome.page('/bindings/playground/');
  const expected = mainSession(TODO_SESSION);
  // A window its sub-agents outgrow, so that their replays compact.
  await page.selectOption('#window', '8000');
  await load(page, TODO_SESSION);
  assert.match(await page.textContent('#status'), new RegExp(`Replayed ${expected.calls} calls`));
  // Its todo items are the plan's goals; its sub-agents (`Task` calls) are explorations beside them.
  assert.deepEqual(await text(page, '#dag .dag-node[data-kind=normal] .label'), expected.todos);
  assert.equal((await page.$$('#dag .dag-node[data-kind=normal].completed')).length, expected.todos.length, 'the last list is all done');
  assert.ok((await page.$$('#dag .dag-node[data-kind=explore_start]')).length >= 1, 'the sub-agents are drawn as an exploration');
  assert.equal((await page.$$('#chart rect.bar')).length, expected.calls);
  const raw = (await page.$$('#raw .msg.raw')).length;
  assert.ok(raw > expected.calls, `${raw} raw messages shown`);
  // The page explains itself in plain words (#19): legends, no edge that claims "0 msgs", no
  // jargon in empty states, no "0 compressed block(s)". The agent's own sub-agents sit beside its
  // todo items (#47: so the list keeps driving the plan while they run), so the plan has one
  // level and the DAG no level switch.
  assert.match(await page.textContent('#chart-legend'), /rewrote earlier prompt/);
  assert.match(await page.textContent('#dag-legend'), /abandoned/);
  assert.equal(await page.$('#dag .dag-levels'), null, 'a one-level plan has no level switch');
  assert.ok((await text(page, '#dag .dag-edge')).every((t) => !/^0 msgs/.test(t)), 'no empty edges');
  await page.click('#chart rect.bar[data-call="0"]');
  assert.match(await page.textContent('#prompt .call-head'), /recorded so far, none compacted into blocks yet$/);
  assert.doesNotMatch(await page.textContent('#board'), /STATE_DELTA/);

  // A sub-agent that kept its own todo list and whose replay compacted: pick its last call.
  const options = await text(page, '#trajectory option');
  const sidechain = options.findIndex((o) => o.includes('#sidechain-2'));
  assert.ok(sidechain > 0, options.join('\n'));
  await page.selectOption('#trajectory', String(sidechain));
  await page.waitForSelector('body[data-state=done]', { timeout: 120_000 });
  const calls = (await page.$$('#chart rect.bar')).length;
  assert.match(options[sidechain], new RegExp(`${calls} calls`));
  await page.click(`#chart rect.bar[data-call="${calls - 1}"]`);
  const block = await page.waitForSelector('#prompt .msg.kind-block');
  assert.match(await block.textContent(), /<compressed_turns v\d+ replaces="turns \d+-\d+"/);
  const toggle = await block.$('.originals-toggle');
  const [, start, end] = (await toggle.textContent()).match(/\(#(\d+)–#(\d+)\)/).map(Number);
  await toggle.click();
  const originals = await block.$$('.originals .msg.raw');
  assert.equal(originals.length, end - start + 1);
  const firstOriginal = await originals[0].$eval('pre', (n) => n.textContent);
  const inRawTrace = await page.$eval(`#raw .msg.raw[data-index="${start}"] pre`, (n) => n.textContent);
  assert.equal(firstOriginal, inRawTrace, 'the block expands to the raw messages it replaced');
  assert.ok(firstOriginal.length > 0);
  assert.ok((await page.$$('#board dt')).length > 0, 'the board of that call is shown');

  mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, 'playground.png'), fullPage: true });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the page stays responsive while a 735-call run replays in its worker', async () => {
  const page = await chrome.page('/bindings/playground/');
  await page.setInputFiles('#file', path.join(traces, 'vorflux/django__django-15973.json'));
  await page.waitForSelector('body[data-state=running]', { timeout: 60_000 });
  const slowest = await page.evaluate(async () => {
    let worst = 0;
    for (let i = 0; i < 20 && document.body.dataset.state === 'running'; i++) {
      const t = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 10));
      worst = Math.max(worst, performance.now() - t - 10);
    }
    return worst;
  });
  assert.ok(slowest < 500, `the main thread was blocked for ${slowest} ms`);
  await page.waitForSelector('body[data-state=done]', { timeout: 180_000 });
  assert.equal((await page.$$('#chart rect.bar')).length, 735);
  assert.ok((await page.$$('#chart rect.bar.rewrite')).length > 10, 'rewrites are marked');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('bad input gets a clear message: not a trajectory, 100 MB, empty; pasting works', async () => {
  const page = await chrome.page('/bindings/playground/');
  const dir = path.join(tmpdir(), `cw-playground-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  try {
    await load(page, path.join(traces, 'README.md'));
    assert.match(await page.textContent('#status'),
      /^Not a trajectory the importers know \(.*Claude Code JSONL.*\): README\.md: line 1: .*\(invalid_trajectory\)$/);
    assert.equal(await page.$eval('#status', (n) => n.className), 'error');

    const huge = path.join(dir, 'huge.jsonl');
    writeFileSync(huge, '');
    truncateSync(huge, 100 * 1000 * 1000);
    await page.setInputFiles('#file', huge);
    await page.waitForFunction(() => /MB/.test(document.getElementById('status').textContent));
    assert.match(await page.textContent('#status'), /huge\.jsonl is 100\.0 MB: the playground reads trajectories up to 64 MB/);

    const empty = path.join(dir, 'empty.json');
    writeFileSync(empty, '  \n');
    await page.setInputFiles('#file', empty);
    await page.waitForFunction(() => /empty/.test(document.getElementById('status').textContent));

    await page.click('#paste-box summary');
    await page.fill('#paste', readFileSync(path.join(traces, 'swe-agent/local.traj.json'), 'utf8'));
    await page.click('#paste-run');
    await page.waitForSelector('body[data-state=done]', { timeout: 60_000 });
    assert.match(await page.textContent('#status'), /Replayed \d+ calls of pasted/);
    assert.deepEqual(page.errors, []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await page.close();
  }
});

test('the DAG of a goal tree the engine built: folded edges, abandoned goals aside, explore lanes', async () => {
  const page = await chrome.page('/bindings/playground/');
  const view = await page.evaluate(async () => {
    const cw = await import('/bindings/dist/web.js');
    const { renderDag } = await import('/bindings/playground/dag.js');
    const engine = await cw.ContextEngine.create(cw.memoryHost());
    const tool = (id, name) => {
      engine.record({ role: 'assistant', content: [{ type: 'tool_call', id, name, arguments: '{}' }] });
      engine.recordToolResult({ call_id: id, name, status: 'ok', output: 'ok' });
    };
    engine.record({ role: 'user', content: 'Add login' });
    engine.callGoalTool('goal', { add: 'analyse the code, implement login, test it' });
    engine.callGoalTool('goal', { focus: '1' });
    tool('a', 'Read');
    engine.callGoalTool('goal', { done: 'models in user.py' });
    engine.callGoalTool('goal', { focus: '2' });
    engine.callGoalTool('goal', { add: 'sessions, tokens' });
    engine.callGoalTool('goal', { focus: '2.1' });
    tool('b', 'Edit');
    engine.callGoalTool('goal', { abandon: 'sessions need a server', add: 'jwt tokens' });
    engine.callGoalTool('explore', { branches: ['library A', 'library B'] });
    engine.finishBranch('A', 'A works');
    engine.finishBranch('B', 'B is slow');
    engine.mergeExplore('A');
    const tree = engine.goalTree();
    const box = document.createElement('div');
    document.body.append(box);
    const state = { expanded: new Set() };
    const draw = () => renderDag(box, tree, state, draw);
    draw();
    const labels = (selector) => [...box.querySelectorAll(selector)].map((n) => n.textContent);
    const top = { labels: labels('.dag-main .label, .dag > .dag-node .label'), edge: box.querySelector('.dag-edge[data-goal="2"]').textContent };
    box.querySelector('.dag-edge[data-goal="2"]').click();
    const level2 = { labels: labels('.dag-node .label'), abandoned: labels('.dag-side .dag-node.abandoned .label'),
      sideEdge: labels('.dag-side .dag-edge')[0] };
    box.querySelector('.dag-levels [data-level="3"]').click();
    const level3 = { lanes: labels('.dag-parallel .dag-branch .label'), summaries: labels('.dag-parallel .summary'),
      kinds: [...box.querySelectorAll('.dag-node')].map((n) => n.dataset.kind) };
    box.querySelector('.dag-group[data-goal="2"] > .dag-edge').click();
    const collapsed = labels('.dag-node .label');
    const stats = Object.fromEntries(tree.goals.map((g) => [g.id, [g.self_stats.message_count, g.cumulative_stats.message_count]]));
    return { top, level2, level3, collapsed, stats };
  });
  const [, cumulative2] = view.stats['2'];
  assert.deepEqual(view.top.labels, ['analyse the code', 'implement login', 'test it']);
  assert.match(view.top.edge, new RegExp(`^Σ ${cumulative2} msgs .*3 sub-goals, expand`), 'a folded edge: cumulative stats');
  assert.deepEqual(view.level2.labels, ['analyse the code', 'sessions', 'jwt tokens', 'tokens', 'test it']);
  assert.deepEqual(view.level2.abandoned, ['sessions'], 'the abandoned goal hangs aside, grey');
  assert.match(view.level2.sideEdge, new RegExp(`^${view.stats['4'][0]} msgs`), 'an expanded level: self stats');
  assert.deepEqual(view.level3.lanes, ['library A', 'library B'], 'explore branches as parallel lanes');
  assert.deepEqual(view.level3.summaries.slice(-2), ['A works', 'B is slow']);
  assert.ok(view.level3.kinds.includes('explore_start') && view.level3.kinds.includes('explore_merge'));
  assert.deepEqual(view.collapsed, ['analyse the code', 'implement login', 'test it'], 'collapsing folds the level back');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('Open a trace store… opens the dashboard page over a folder picked in the browser', async () => {
  const page = await chrome.page('/bindings/playground/');
  await page.click('#open-store');
  await page.waitForSelector('#folder-picker');
  assert.match(await page.textContent('#folder-picker'), /nothing is uploaded/);
  // A folder that holds no session says so (a store with sessions: test/browser/dashboard.test.mjs).
  const folder = path.join(tmpdir(), `cw-picked-${process.pid}`);
  mkdirSync(path.join(folder, 'notes'), { recursive: true });
  writeFileSync(path.join(folder, 'notes', 'todo.txt'), 'nothing recorded here');
  try {
    await page.setInputFiles('#folder', folder);
    await page.waitForSelector('#view .empty');
    assert.match(await page.textContent('#view .empty'), /No session in this folder/);
    assert.match(await page.textContent('#live'), /Read from a picked folder \(1 file\)/);
    await page.click('#live button');
    await page.waitForSelector('#folder-picker');
    assert.deepEqual(page.errors, []);
  } finally {
    rmSync(folder, { recursive: true, force: true });
    await page.close();
  }
});
