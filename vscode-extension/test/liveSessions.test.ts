// The live views over a trace folder: sessions listed and named through the engine's TraceStore,
// the followed one read as it grows, what the proxy saved computed by hand, and a light poll that
// looks only at the followed session and new folders.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { type Host, type ProxyCallRecord, type TraceMeta, ContextEngine, callTotals, init } from 'context-workbench';
import { type SessionEntry, agentName, autoFollowed, byRecency, sessionItem, shortTime, trimmedMission } from '../src/live/sessionList';
import { preparedOf, sessionHead, sessionStatus } from '../src/live/sessionViews';
import { TraceReader } from '../src/live/traceReader';
import { renderPrompt } from '../src/views/promptText';
import { callLine, messageFile, meta, nodeFsHost, tempTraceFolder, traceStore, write } from './traceFolderFiles';

// Three calls, figures computed by hand below; their dollars as the proxy recorded them.
const dollars = (sent: number, agent: number, basis = 'reported') => ({ dollars: { sent, agent, basis, priced_as: 'claude-sonnet-4-5', prices_read_on: '2025-10-15' } });
const CALLS = [
  callLine(1, { client_tokens: 1000, prompt_tokens: 1000, expected_cached_tokens: 0, usage: { input_tokens: 1000, cache_read_tokens: 0, cache_write_tokens: 0, output_tokens: 50 }, ...dollars(0.004, 0.004) }),
  callLine(2, { client_tokens: 3000, prompt_tokens: 2000, expected_cached_tokens: 1000, usage: { input_tokens: 200, cache_read_tokens: 1000, cache_write_tokens: 800, output_tokens: 50 }, ...dollars(0.003, 0.008) }),
  callLine(3, { client_tokens: 6000, prompt_tokens: 2500, expected_cached_tokens: 1500, rewrites: ['tail_compaction 4..9'], ...dollars(0.005, 0.012, 'estimated') }),
].join('\n') + '\n';

/** The records of a calls.jsonl text, as the engine hands them over. */
const records = (text: string): ProxyCallRecord[] => text.split('\n').filter(Boolean).map((l) => JSON.parse(l));

/** A session the engine saved in `base` (its plan, its messages), as a proxy would leave it but for calls.jsonl and prompt.json. */
async function savedSession(base: string, traceId: string): Promise<void> {
  const { engine } = await ContextEngine.open(nodeFsHost(base, { now: () => 1_700_000_000_000 }), undefined, { traceId });
  engine.record({ role: 'user', content: 'Fix the failing test' });
  engine.callGoalTool('goal', { add: 'Read the test, Fix the parser' });
  engine.callGoalTool('goal', { focus: '1' });
  engine.record({ role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: 'Read', arguments: '{"file_path":"test.js"}' }] });
  engine.recordToolResult({ call_id: 'c1', name: 'Read', status: 'ok', output: 'line\n'.repeat(200) });
  engine.record({ role: 'assistant', content: 'Done reading.' });
  engine.callGoalTool('goal', { done: 'read it' });
  engine.callGoalTool('goal', { focus: '2' });
  await engine.persist();
  engine.dispose();
}

test('calls.jsonl through the engine: a line still being written waits for the next read; a damaged line is named', async (t) => {
  const base = tempTraceFolder();
  t.after(() => rmSync(base, { recursive: true, force: true }));
  write(base, 's1/meta.json', meta('s1'));
  write(base, 's1/calls.jsonl', `${CALLS}not json\n${callLine(4)}\n${callLine(5).slice(0, 30)}`);
  const reader = new TraceReader(await traceStore(base));
  const [entry] = await reader.sessions();
  const { calls, problems } = await reader.detail(entry);
  assert.deepEqual(calls.map((c) => c.call), [1, 2, 3, 4]);
  assert.equal(problems.length, 1, problems.join('\n'));
  assert.match(problems[0], /calls\.jsonl: line 4 is not a JSON record/);
  assert.equal(calls[0].agent, 'claude-cli/2.1.328');
  assert.equal(calls[2].usage, undefined);
  assert.deepEqual(calls[2].rewrites, ['tail_compaction 4..9']);
});

test('what it saved, by hand: tokens sent vs received, the cached share the provider reported, the dollars recorded, in the engine\'s words', async () => {
  await init();
  const s = callTotals(records(CALLS));
  assert.deepEqual([s.client_tokens, s.prompt_tokens], [10_000, 5_500]);
  // (0 + 1000) read from the cache of (1000) + (200 + 1000 + 800) reported prompt tokens; call 3 reported none.
  assert.equal(s.cached_share, 1000 / 3000);
  assert.equal(s.reported_calls, 2);
  assert.ok(Math.abs(s.sent_usd - 0.012) < 1e-12 && Math.abs(s.agent_usd - 0.024) < 1e-12, JSON.stringify(s));
  assert.equal(s.saving_brief, '$0.012 saved (50%)');
  assert.deepEqual(s.saving_lines, [
    'Prompt tokens: the agent sent 10000, the upstream received 5500 (45% fewer) over 3 calls',
    'Cached: 33% of the prompt tokens, as the provider reported (2 of 3 calls)',
    'Cost: $0.012 instead of $0.024: $0.012 saved (50%) [1 call estimated]',
  ]);
  assert.deepEqual(callTotals([]).saving_lines, ['No call has gone through the proxy yet.']);
  assert.match(callTotals(records(callLine(1) + '\n')).saving_lines[1], /not reported/);
  // A record without dollars (a model without a price) is left out of them, and said so.
  assert.match(callTotals(records(callLine(1) + '\n')).saving_lines[2], /^Cost: not priced: 1 call without a price$/);
  // Dearer than the agent's own: the same words with the sign.
  assert.equal(callTotals(records(callLine(1, dollars(0.0052, 0.005)) + '\n')).saving_brief, '$0.0002 more (−4%)');
  // A side call (a title) costs the same on both sides and leaves the agent's prompt cache alone.
  const side = callLine(1, { client_tokens: 400, prompt_tokens: 400, expected_cached_tokens: 0, side_call: true, managed: false, ...dollars(0.001, 0.001) });
  const [one, ...rest] = CALLS.trim().split('\n');
  const withSide = callTotals(records([one, side, ...rest].join('\n')));
  assert.deepEqual([withSide.calls, withSide.side_calls, withSide.client_tokens], [3, 1, 10_400]);
  assert.ok(Math.abs(withSide.saving_usd - s.saving_usd) < 1e-12);
  assert.match(withSide.saving_lines[0], /over 3 calls and 1 side call$/);
});

test('sessions are named by agent, first user message and time; the newest proxied one is followed', async () => {
  await init();
  const entry = (traceId: string, updated: number, proxied: boolean, agent = ''): SessionEntry => ({ traceId, proxied, agent, meta: JSON.parse(meta(traceId, { updated_at: updated })) as TraceMeta });
  assert.equal(agentName(entry('a', 1, true, 'claude-cli/2.1.328')), 'claude-cli 2.1.328');
  assert.equal(agentName(entry('a', 1, true, 'Claude Code 2.1.328')), 'Claude Code 2.1.328', 'as the proxy names it now');
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

test('a conversation the agent compacted itself is one session: its traces are parts, the boundary is named', async () => {
  await init();
  const part = (traceId: string, updated: number, fields: Record<string, unknown> = {}): SessionEntry =>
    ({ traceId, proxied: true, agent: 'Claude Code 2.1.328', meta: JSON.parse(meta(traceId, { updated_at: updated, ...fields })) as TraceMeta });
  const summary = { mission: 'This session is being continued from a previous conversation that ran out of context.' };
  const list = [
    part('s', 100),
    part('s-2', 200, { ...summary, continues: 's' }),
    part('other', 250),
    part('s-3', 300, { ...summary, continues: 's-2', status: 'finished' }),
    // A trace that names one not in the folder, and two that name each other: sessions of their own.
    part('lone', 50, { continues: 'gone' }),
    part('c1', 10, { continues: 'c2' }),
    part('c2', 20, { continues: 'c1' }),
  ];
  const sessions = byRecency(list);
  assert.deepEqual(sessions.map((e) => e.traceId), ['s-3', 'other', 'lone', 'c2', 'c1']);
  const [chain] = sessions;
  assert.deepEqual(chain.earlier?.map((e) => e.traceId), ['s', 's-2']);
  assert.deepEqual(sessionItem(chain), {
    label: 'Claude Code 2.1.328 · Fix the failing test',
    description: shortTime(300),
    detail: '6 calls · 12 messages · finished · s → s-2 → s-3 (the agent compacted its history 2×)',
  });
  assert.equal(autoFollowed(list)?.traceId, 's-3');
  assert.deepEqual(byRecency(sessions), sessions, 'a list of sessions is its own list');
  const head = sessionHead({ entry: chain, calls: [], totals: callTotals([]), problems: [], signature: '' });
  assert.equal(head[1], 'Continues s → s-2: the agent compacted its own history where this trace starts');
});

test('a sub-agent\'s session comes right after its caller\'s, named as one; the views follow the caller', async () => {
  await init();
  const entry = (traceId: string, updated: number, fields: Record<string, unknown> = {}): SessionEntry =>
    ({ traceId, proxied: true, agent: 'Claude Code 2.1.328', meta: JSON.parse(meta(traceId, { updated_at: updated, ...fields })) as TraceMeta });
  const of = (trace_id: string) => ({ branch_of: { trace_id, call_id: 'toolu_1' } });
  const list = [
    entry('s', 100),
    entry('s-2', 300, of('s')),
    entry('s-3', 310, of('s-2')),
    entry('other', 200),
    entry('lone', 400, of('gone')),
    entry('x', 10, of('y')),
    entry('y', 20, of('x')),
  ];
  const sessions = byRecency(list);
  assert.deepEqual(sessions.map((e) => e.traceId), ['lone', 'other', 's', 's-2', 's-3', 'y', 'x']);
  assert.equal(autoFollowed(list)?.traceId, 'lone', 'a sub-agent whose caller is not in the folder stands alone');
  assert.equal(autoFollowed(list.filter((e) => e.traceId !== 'lone'))?.traceId, 'other');
  const item = sessionItem(sessions[3]);
  assert.match(item.label, /^\$\(type-hierarchy-sub\) Claude Code 2\.1\.328 · /);
  assert.match(item.detail, /a sub-agent of s, started by its call toolu_1$/);
  assert.deepEqual(byRecency(sessions), sessions, 'a list of sessions is its own list');
});


test('the trace folder: sessions listed (a newer one and a damaged one with why), the followed one read as it grows', async (t) => {
  const base = tempTraceFolder();
  t.after(() => rmSync(base, { recursive: true, force: true }));
  write(base, 'own/meta.json', meta('own', { updated_at: 1_500 }));
  write(base, 'future/meta.json', meta('future', { version: 9 }));
  write(base, 'broken/meta.json', '{"version": 1, "trace_');
  write(base, 'creating/goal.json', '{}');
  // s1: the engine's trace (plan, messages), then what a proxy adds: its calls and the newest prompt.
  await savedSession(base, 's1');
  write(base, 's1/calls.jsonl', CALLS);
  const prompt = {
    view: {
      messages: [
        { role: 'system', layer: 'system', content: [{ type: 'text', text: 'You are Claude Code.' }] },
        { role: 'user', layer: 'history', source: 'm000000', content: [{ type: 'text', text: 'Fix the failing test' }] },
        { role: 'user', layer: 'history', replaces: 'm000002..m000003', content: [{ type: 'text', text: '<compressed_turns span="t" raw="m000002..m000003">\nread the test\n</compressed_turns>' }] },
      ],
      tools: [{ name: 'Read', description: 'read', parameters: {} }],
    },
    tokens: 2500, tail_rewrite_tokens: 0, first_changed_byte: 120, expected_cached_tokens: 1500, rewrites: [], notes: [],
  };
  write(base, 's1/prompt.json', JSON.stringify(prompt));
  // Claude Code's first message opens with reminders: the session is named by its own text.
  write(base, 'cc/meta.json', meta('cc', { mission: '<system-reminder>…', updated_at: 1_000 }));
  write(base, 'cc/calls.jsonl', callLine(1) + '\n');
  write(base, 'cc/messages/m000000.json', messageFile('cc', 0, 'user', [{ type: 'text', text: '<system-reminder>\nAttribution…\n</system-reminder>\n' }, { type: 'text', text: 'Fix the greeting in src/greet.js' }]));
  const reader = new TraceReader(await traceStore(base));
  const sessions = await reader.sessions();
  assert.equal(sessionItem(sessions.find((s) => s.traceId === 'cc')!).label, 'claude-cli 2.1.328 · Fix the greeting in src/greet.js');
  assert.deepEqual(sessions.map((s) => [s.traceId, s.proxied, s.problem ?? '']), [
    ['broken', false, 'damaged: .trace/broken/meta.json is not valid at `?`: EOF while parsing a string at line 1 column 22'],
    ['cc', true, ''],
    ['future', false, 'written by a newer build: unsupported format version 9 (this build reads up to 1); update the extension to follow it'],
    ['own', false, ''],
    ['s1', true, ''],
  ]);
  assert.equal(autoFollowed(sessions)?.traceId, 's1');
  const s1 = sessions.find((s) => s.traceId === 's1')!;
  const detail = await reader.detail(s1);
  assert.deepEqual(detail.problems, []);
  assert.deepEqual(detail.goal?.goals.map((g) => [g.description, g.status]), [['Read the test', 'completed'], ['Fix the parser', 'in_progress']]);
  assert.equal(detail.calls.length, 3);
  assert.equal(reader.rawText('s1', 'm000000'), 'Fix the failing test');
  assert.match(reader.rawText('s1', 'm000002..m000003') ?? '', /^──── raw#m000002 · tool ────\n[\s\S]*line\n[\s\S]*──── raw#m000003 · assistant ────\nDone reading\.$/);
  // The Prompt View renders it with the session's figures at its head, the compaction block marked.
  const head = sessionHead(detail);
  assert.match(head[0], /^Session s1, updated /);
  const rendered = renderPrompt(preparedOf(detail.prompt!), (s) => reader.rawText('s1', s), 'Prompt', head);
  assert.match(rendered.text, /^# Prompt\n# Session s1, updated .*\n# Prompt tokens: the agent sent 10000, the upstream received 5500 \(45% fewer\)/);
  assert.match(rendered.text, /──── 3 · user · history · compaction of raw#m000002\.\.m000003 · \d+ characters compressed to \d+ ────/);
  assert.match(rendered.text, /tools offered: Read/);
  assert.deepEqual(rendered.blocks.map((b) => [b.source, b.compressed]), [['m000000', false], ['m000002..m000003', true]]);
  const status = sessionStatus(detail);
  // The last call: 2500 sent upstream, no usage reported, so the engine's expected 1500 cached.
  assert.equal(status.text, '2.5k sent · $0.012 saved (50%) · 60% cached');
  assert.match(status.tooltip, /\nCost: \$0\.012 instead of \$0\.024: \$0\.012 saved \(50%\) \[1 call estimated\]\n/);
  assert.match(status.tooltip, /^Following: claude-cli 2\.1\.328 · Fix the failing test\n/);
  // Nothing changed: the same signature, from a stat per file.
  assert.equal((await reader.detail(s1)).signature, detail.signature);
  // A call lands: the signature changes and the figures follow ($0.014 against $0.034); a half-written line waits.
  write(base, 's1/calls.jsonl', `${CALLS}${callLine(4, { client_tokens: 7000, prompt_tokens: 2600, expected_cached_tokens: 2500, ...dollars(0.002, 0.01) })}\n${callLine(5).slice(0, 40)}`);
  const grown = await reader.detail(s1);
  assert.notEqual(grown.signature, detail.signature);
  assert.equal(grown.calls.length, 4);
  assert.deepEqual(grown.problems, []);
  assert.equal(sessionStatus(grown).text, '2.6k sent · $0.020 saved (59%) · 96% cached');
  // Damage in the followed session is named; what can be read is still shown.
  write(base, 's1/goal.json', '{"goals": [');
  const damaged = await reader.detail(s1);
  assert.equal(damaged.problems.length, 1);
  assert.match(damaged.problems[0], /\.trace\/s1\/goal\.json is corrupted/);
  assert.equal(damaged.goal, undefined);
  assert.equal(damaged.calls.length, 4);
});

test('a light listing (most polls) looks only at the followed session and new folders; a full one at every trace', async () => {
  const base = tempTraceFolder();
  try {
    write(base, 'a/meta.json', meta('a', { updated_at: 1_000 }));
    write(base, 'b/meta.json', meta('b', { updated_at: 2_000 }));
    let stats = 0;
    let reads = 0;
    const counted = (host: Host): Host => ({ ...host, stat: (p: string) => { stats++; return host.stat(p); }, readFile: (p: string) => { reads++; return host.readFile(p); } });
    const reader = new TraceReader(await traceStore(base, counted));
    await reader.sessions();
    write(base, 'a/meta.json', meta('a', { updated_at: 5_000, mission: 'Grown' }));
    write(base, 'b/meta.json', meta('b', { updated_at: 6_000, mission: 'Also grown' }));
    write(base, 'c/meta.json', meta('c', { updated_at: 3_000 }));
    stats = 0;
    const light = await reader.sessions((traceId) => traceId === 'b');
    assert.deepEqual(light.map((s) => [s.traceId, s.meta?.updated_at]), [['a', 1_000], ['b', 6_000], ['c', 3_000]]);
    assert.equal(stats, 4, 'meta.json and calls.jsonl of b and c only');
    const full = await reader.sessions();
    assert.deepEqual(full.map((s) => [s.traceId, s.meta?.updated_at]), [['a', 5_000], ['b', 6_000], ['c', 3_000]]);
    // Nothing changed since: a full listing stats each trace's files and reads none of them again.
    stats = 0;
    reads = 0;
    assert.deepEqual((await reader.sessions()).map((s) => s.meta?.updated_at), [5_000, 6_000, 3_000]);
    assert.deepEqual([stats, reads], [6, 0]);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
