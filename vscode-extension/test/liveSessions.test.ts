import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { DEFAULT_PRICES, pricesOf, savingPercent, savingsLines, savingsOf } from '../src/live/savings';
import { type SessionEntry, agentName, autoFollowed, byRecency, sessionItem, shortTime, trimmedMission } from '../src/live/sessionList';
import { preparedOf, sessionHead, sessionStatus } from '../src/live/sessionViews';
import { TraceReader } from '../src/live/traceReader';
import { idsOfRange, parseCalls, parseMeta, parsePrompt } from '../src/live/traceRecords';
import { renderPrompt } from '../src/views/promptText';
import { callLine, meta, nodeTraceFiles, tempTraceFolder, write } from './traceFolderFiles';

// Three calls, figures computed by hand below.
const CALLS = [
  callLine(1, { client_tokens: 1000, prompt_tokens: 1000, expected_cached_tokens: 0, usage: { input_tokens: 1000, cache_read_tokens: 0, cache_write_tokens: 0, output_tokens: 50 } }),
  callLine(2, { client_tokens: 3000, prompt_tokens: 2000, expected_cached_tokens: 1000, usage: { input_tokens: 200, cache_read_tokens: 1000, cache_write_tokens: 800, output_tokens: 50 } }),
  callLine(3, { client_tokens: 6000, prompt_tokens: 2500, expected_cached_tokens: 1500, rewrites: ['tail_compaction 4..9'] }),
].join('\n') + '\n';

test('calls.jsonl: a line still being written waits for the next read; a damaged line is named', () => {
  const { calls, problems } = parseCalls(`${CALLS}not json\n${callLine(5).slice(0, 30)}`);
  assert.deepEqual(calls.map((c) => c.call), [1, 2, 3]);
  assert.deepEqual(problems, ['calls.jsonl line 4 is not a call record']);
  assert.equal(calls[0].agent, 'claude-cli/2.1.328');
  assert.equal(calls[2].usage, undefined);
  assert.deepEqual(calls[2].rewrites, ['tail_compaction 4..9']);
});

test('what it saved, by hand: tokens sent vs received, the cached share the provider reported, the cost at the prices', () => {
  const s = savingsOf(parseCalls(CALLS).calls, DEFAULT_PRICES);
  assert.equal(s.sentTokens, 10_000);
  assert.equal(s.upstreamTokens, 5_500);
  assert.ok(Math.abs(s.tokenSaving - 0.45) < 1e-12, String(s.tokenSaving));
  // (0 + 1000) read from the cache of (1000) + (200 + 1000 + 800) reported prompt tokens; call 3 reported none.
  assert.equal(s.cachedShare, 1000 / 3000);
  assert.equal(s.reportedCalls, 2);
  // Upstream: 1.25×1000; 0.1×1000 + 1.25×1000; 0.1×1500 + 1.25×1000.
  assert.equal(s.cost, 1250 + 1350 + 1400);
  // The agent's own: 1.25×1000; 0.1×1000 + 1.25×2000; 0.1×3000 + 1.25×3000.
  assert.equal(s.agentCost, 1250 + 2600 + 4050);
  assert.equal(savingPercent(s.costSaving), '−49%');
  assert.deepEqual(savingsLines(s, DEFAULT_PRICES), [
    'Prompt tokens: the agent sent 10000, the upstream received 5500 (−45%) over 3 calls',
    'Cached: 33% of the prompt tokens, as the provider reported (2 of 3 calls)',
    "Cost: 4000 against 7900 for the agent's own prompts (−49%), in uncached input tokens at cache read 0.1, cache write 1.25",
  ]);
  // Other prices change the cost, not the tokens.
  const dear = pricesOf({ prices: { cache_write: 2, output: 'x' } });
  assert.deepEqual(dear, { ...DEFAULT_PRICES, cache_write: 2 });
  assert.equal(savingsOf(parseCalls(CALLS).calls, dear).cost, 2000 + 2100 + 2150);
  assert.equal(savingsOf([], DEFAULT_PRICES).tokenSaving, 0);
  assert.equal(savingPercent(-0.04), '+4%');
  assert.match(savingsLines(savingsOf(parseCalls(callLine(1) + '\n').calls, DEFAULT_PRICES), DEFAULT_PRICES)[1], /not reported/);
});

test('meta.json: a newer store format or a damaged file is refused with a sentence', () => {
  assert.equal(parseMeta(meta('a')).value?.trace_id, 'a');
  assert.match(parseMeta(meta('b', { version: 2 })).problem ?? '', /written by a newer build \(store format 2; this extension reads up to 1\)/);
  assert.match(parseMeta('{"trace_id": ').problem ?? '', /meta\.json is damaged/);
  assert.match(parsePrompt('[]').problem ?? '', /prompt\.json is damaged/);
});

test('sessions are named by agent, first user message and time; the newest proxied one is followed', () => {
  const entry = (traceId: string, updated: number, proxied: boolean, agent = ''): SessionEntry => ({ traceId, proxied, agent, meta: parseMeta(meta(traceId, { updated_at: updated })).value });
  assert.equal(agentName(entry('a', 1, true, 'claude-cli/2.1.328')), 'claude-cli 2.1.328');
  assert.equal(agentName(entry('a', 1, true)), 'an agent');
  assert.equal(agentName(entry('a', 1, false)), 'Context Workbench agent');
  assert.equal(trimmedMission('<system-reminder>\nAs you answer…\n</system-reminder>\n  Fix   the\nparser '), 'Fix the parser');
  assert.equal(trimmedMission('x'.repeat(80), 20), `${'x'.repeat(19)}…`);
  assert.equal(trimmedMission(''), '(no message yet)');
  assert.equal(trimmedMission('<system-reminder>…'), '(no message yet)');
  const when = new Date(2026, 10, 25, 9, 5).getTime();
  assert.equal(shortTime(when), '2026-11-25 09:05');
  const item = sessionItem(entry('s1', when, true, 'claude-cli/2.1.328'));
  assert.deepEqual(item, { label: 'claude-cli 2.1.328 · Fix the failing test', description: '2026-11-25 09:05', detail: '2 calls · 4 messages · running · s1' });
  const list = [entry('own', 900, false), entry('old', 100, true), entry('new', 500, true), { traceId: 'broken', proxied: true, agent: '', problem: 'damaged' }];
  assert.equal(autoFollowed(list)?.traceId, 'new');
  assert.deepEqual(byRecency(list).map((e) => e.traceId), ['own', 'new', 'old']);
  assert.equal(autoFollowed([entry('own', 900, false)]), undefined);
  assert.match(sessionItem(list[3]).detail ?? '', /damaged/);
});

test('a raw range names every message it covers', () => {
  assert.deepEqual(idsOfRange('m000008..m000011'), ['m000008', 'm000009', 'm000010', 'm000011']);
  assert.deepEqual(idsOfRange('m000003'), ['m000003']);
  assert.deepEqual(idsOfRange('m000009..m000002'), []);
});

test('the trace folder: sessions listed (a newer one and a damaged one with why), the followed one read as it grows', async (t) => {
  const root = tempTraceFolder();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  write(root, 'own/meta.json', meta('own', { updated_at: 1_500 }));
  write(root, 'future/meta.json', meta('future', { version: 9 }));
  write(root, 'broken/meta.json', '{"version": 1, "trace_');
  write(root, 'creating/goal.json', '{}');
  write(root, 's1/meta.json', meta('s1'));
  write(root, 's1/calls.jsonl', CALLS);
  write(root, 's1/goal.json', JSON.stringify({ version: 1, mission: 'Fix the failing test', current_id: '2', goals: [{ id: '1', type: 'normal', description: 'Read the test', status: 'completed' }, { id: '2', type: 'normal', description: 'Fix the parser', status: 'in_progress' }] }));
  write(root, 's1/messages/m000001.json', JSON.stringify({ id: 'm000001', role: 'user', content: [{ type: 'text', text: 'Fix the failing test' }] }));
  write(root, 's1/messages/m000002.json', JSON.stringify({ id: 'm000002', role: 'tool', content: [{ type: 'tool_result', call_id: 'c1', output: 'line\n'.repeat(200) }] }));
  write(root, 's1/messages/m000003.json', JSON.stringify({ id: 'm000003', role: 'assistant', content: [{ type: 'text', text: 'Done reading.' }] }));
  const prompt = {
    view: {
      messages: [
        { role: 'system', layer: 'system', content: [{ type: 'text', text: 'You are Claude Code.' }] },
        { role: 'user', layer: 'history', source: 'm000001', content: [{ type: 'text', text: 'Fix the failing test' }] },
        { role: 'user', layer: 'history', content: [{ type: 'text', text: '<compressed_turns span="t" raw="m000002..m000003">\nread the test\n</compressed_turns>' }] },
      ],
      tools: [{ name: 'Read', description: 'read', parameters: {} }],
    },
    tokens: 2500, tail_rewrite_tokens: 0, first_changed_byte: 120, expected_cached_tokens: 1500, rewrites: [{ mechanism: 'tail_compaction', position: 'tail' }], notes: [],
  };
  write(root, 's1/prompt.json', JSON.stringify(prompt));
  // Claude Code's first message opens with reminders: the session is named by its own text.
  write(root, 'cc/meta.json', meta('cc', { mission: '<system-reminder>…', updated_at: 1_000 }));
  write(root, 'cc/calls.jsonl', callLine(1) + '\n');
  write(root, 'cc/messages/m000000.json', JSON.stringify({ id: 'm000000', role: 'user', content: [{ type: 'text', text: '<system-reminder>\nAttribution…\n</system-reminder>\n' }, { type: 'text', text: 'Fix the greeting in src/greet.js' }] }));
  const reader = new TraceReader(nodeTraceFiles(root));
  const sessions = await reader.sessions();
  assert.equal(sessionItem(sessions.find((s) => s.traceId === 'cc')!).label, 'claude-cli 2.1.328 · Fix the greeting in src/greet.js');
  assert.deepEqual(sessions.map((s) => [s.traceId, s.proxied, s.problem ?? '']), [
    ['broken', false, "meta.json is damaged (not the engine's trace metadata)"],
    ['cc', true, ''],
    ['future', false, 'written by a newer build (store format 9; this extension reads up to 1): update the extension to follow it'],
    ['own', false, ''],
    ['s1', true, ''],
  ]);
  assert.equal(autoFollowed(sessions)?.traceId, 's1');
  const s1 = sessions.find((s) => s.traceId === 's1')!;
  const detail = await reader.detail(s1);
  assert.deepEqual(detail.problems, []);
  assert.deepEqual(detail.goal?.goals.map((g) => g.description), ['Read the test', 'Fix the parser']);
  assert.equal(detail.calls.length, 3);
  assert.equal(reader.rawText('s1', 'm000001'), 'Fix the failing test');
  assert.match(reader.rawText('s1', 'm000002..m000003') ?? '', /^──── raw#m000002 · tool ────\nline\n[\s\S]*──── raw#m000003 · assistant ────\nDone reading\.$/);
  // The Prompt View renders it with the session's figures at its head, the compaction block marked.
  const head = sessionHead(detail, DEFAULT_PRICES);
  assert.match(head[0], /^Session s1, updated /);
  const rendered = renderPrompt(preparedOf(detail.prompt!), (s) => reader.rawText('s1', s), 'Prompt', head);
  assert.match(rendered.text, /^# Prompt\n# Session s1, updated .*\n# Prompt tokens: the agent sent 10000, the upstream received 5500 \(−45%\)/);
  assert.match(rendered.text, /──── 3 · user · history · compaction of raw#m000002\.\.m000003 · \d+ characters compressed to \d+ ────/);
  assert.match(rendered.text, /tools offered: Read/);
  assert.deepEqual(rendered.blocks.map((b) => [b.source, b.compressed]), [['m000001', false], ['m000002..m000003', true]]);
  const status = sessionStatus(detail, DEFAULT_PRICES);
  // The last call: 2500 sent upstream, no usage reported, so the engine's expected 1500 cached.
  assert.equal(status.text, '2.5k sent · −45% · 60% cached');
  assert.match(status.tooltip, /^Following: claude-cli 2\.1\.328 · Fix the failing test\n/);
  // A call lands: the signature changes and the figures follow (1 − 8100/17000 = 52%); a half-written line waits.
  const before = detail.signature;
  write(root, 's1/calls.jsonl', `${CALLS}${callLine(4, { client_tokens: 7000, prompt_tokens: 2600, expected_cached_tokens: 2500 })}\n${callLine(5).slice(0, 40)}`);
  const grown = await reader.detail(s1);
  assert.notEqual(grown.signature, before);
  assert.equal(grown.calls.length, 4);
  assert.equal(sessionStatus(grown, DEFAULT_PRICES).text, '2.6k sent · −52% · 96% cached');
  // Damage in the followed session is named; what can be read is still shown.
  write(root, 's1/goal.json', '{"goals": [');
  const damaged = await reader.detail(s1);
  assert.deepEqual(damaged.problems, ['goal.json is damaged (not JSON)']);
  assert.equal(damaged.calls.length, 4);
});

test('a light listing (most polls) looks only at the followed session and new folders; a full one at every trace', async () => {
  const root = tempTraceFolder();
  try {
    write(root, 'a/meta.json', meta('a', { updated_at: 1_000 }));
    write(root, 'b/meta.json', meta('b', { updated_at: 2_000 }));
    const files = nodeTraceFiles(root);
    let stats = 0;
    const counted = { ...files, stat: (p: string) => { stats++; return files.stat(p); } };
    const reader = new TraceReader(counted);
    await reader.sessions();
    write(root, 'a/meta.json', meta('a', { updated_at: 5_000, mission: 'Grown' }));
    write(root, 'b/meta.json', meta('b', { updated_at: 6_000, mission: 'Also grown' }));
    write(root, 'c/meta.json', meta('c', { updated_at: 3_000 }));
    stats = 0;
    const light = await reader.sessions((traceId) => traceId === 'b');
    assert.deepEqual(light.map((s) => [s.traceId, s.meta?.updated_at]), [['a', 1_000], ['b', 6_000], ['c', 3_000]]);
    assert.equal(stats, 4, 'meta.json and calls.jsonl of b and c only');
    const full = await reader.sessions();
    assert.deepEqual(full.map((s) => [s.traceId, s.meta?.updated_at]), [['a', 5_000], ['b', 6_000], ['c', 3_000]]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
