// The trace store from JavaScript: an engine saved through a host, resumed in a new engine with
// the same next prompt, and queried with TraceStore (over nodeFsHost and memoryHost).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ContextEngine, TraceStore, memoryHost, nodeFsHost } from '../dist/node.js';

const SYSTEM = { system_prompt: 'You are a coding agent.' };

/** A short session with a plan, a tool round and a secret in a tool output. */
function session(engine) {
  engine.record({ role: 'user', content: 'Make the parser keep tabs.' });
  engine.callGoalTool('goal', { add: 'find the bug, fix it' });
  engine.callGoalTool('goal', { focus: '1' });
  engine.record({ role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: 'Bash', arguments: '{"command":"env"}' }] });
  engine.recordToolResult({ call_id: 'c1', name: 'Bash', status: 'ok', output: 'OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789', exit_code: 0 });
}

test('a saved engine resumes with the same next prompt, and the store answers queries', async () => {
  const base = await mkdtemp(path.join(tmpdir(), 'cw-store-'));
  try {
    const host = nodeFsHost(base, { now: () => Date.UTC(2026, 0, 1) });
    await writeFile(path.join(base, '.gitignore'), 'node_modules/\n');
    const { engine } = await ContextEngine.open(host, undefined, { traceId: 'session-1' });
    assert.equal(engine.traceId, 'session-1');
    assert.equal(engine.traceDir, '.trace/session-1');
    session(engine);
    await engine.prepareCall(SYSTEM);
    const report = await engine.persist();
    assert.equal(report.files_written >= 0 && report.redactions >= 0, true);
    const files = await readdir(path.join(base, '.trace/session-1'));
    assert.ok(['meta.json', 'goal.json', 'events.jsonl', 'state.json', 'messages'].every((f) => files.includes(f)), files.join());
    // The store keeps itself out of git; the project's own .gitignore is left alone.
    assert.match(await readFile(path.join(base, '.trace/.gitignore'), 'utf8'), /^\*$/m);
    assert.equal(await readFile(path.join(base, '.gitignore'), 'utf8'), 'node_modules/\n');

    engine.record({ role: 'assistant', content: 'lex() splits on spaces only.' });
    await engine.persist();
    const expected = await engine.prepareCall(SYSTEM);
    engine.dispose();

    const resumed = await ContextEngine.open(host, undefined, { traceId: 'session-1' });
    assert.deepEqual(resumed.engine.goalTree().goals.map((g) => g.description), ['find the bug', 'fix it']);
    const again = await resumed.engine.prepareCall(SYSTEM);
    assert.notEqual(JSON.stringify(again.request), JSON.stringify(expected.request), 'the saved copy is redacted');
    const unredact = (r) => JSON.stringify(r).replace(/\[REDACTED:[^\]]*\]/g, 'X').replace(/sk-proj-\w+/g, 'X');
    assert.equal(unredact(again.request), unredact(expected.request), 'the same prompt, secrets aside');
    assert.ok(resumed.notes.some((n) => /redact/i.test(n)), resumed.notes.join());

    const store = await TraceStore.create(host);
    const list = await store.listTraces();
    assert.deepEqual(list.traces.map((t) => t.trace_id), ['session-1']);
    assert.equal(list.traces[0].mission, 'Make the parser keep tabs.');
    const detail = await store.trace('session-1');
    assert.equal(detail.goal_tree.goals.length, 2);
    const goal = detail.goal_tree.goals[0];
    const messages = await store.goalMessages('session-1', goal.id);
    assert.equal(messages.messages.length, goal.self_stats.message_count);
    const events = await store.eventsAfter('session-1', 0);
    assert.equal(events.last_event_id, detail.last_event_id);
    assert.equal((await store.eventsAfter('session-1', 2)).events[0].id, 3);
    await assert.rejects(store.trace('nope'), { code: 'host_not_found' });
    await assert.rejects(store.trace('../x'), { code: 'invalid_input' });
    await assert.rejects(store.eventsAfter('session-1', 10_000), { code: 'invalid_input' });
    await assert.rejects(store.branch('session-1', 'A'), { code: 'host_not_found' });
    store.dispose();
    await assert.rejects(store.listTraces(), { code: 'disposed' });
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test('an engine recorded in memory is saved once attached; misuse is a typed error', async () => {
  const host = memoryHost();
  const engine = await ContextEngine.create(host);
  await assert.rejects(engine.persist(), { code: 'invalid_input' });
  engine.setTraceId('demo');
  session(engine);
  engine.attachStore('.trace');
  assert.throws(() => engine.setTraceId('other'), { code: 'invalid_input' });
  await engine.persist();
  assert.ok(host.files.has('.trace/demo/meta.json'));
  const saved = [...host.files.keys()].filter((k) => k.startsWith('.trace/demo/messages/'));
  assert.equal(saved.length, engine.trace().messages.length);
  assert.ok([...host.files.values()].every((f) => !f.text.includes('sk-proj-')), 'secrets never reach the host');
  assert.throws(() => engine.attachStore('/abs'), { code: 'invalid_config' });
  await assert.rejects(TraceStore.create(host, { root: '../up' }), { code: 'invalid_config' });
});

test('an append that times out but lands later loses nothing to the retry, and is read once', async () => {
  // The host wrapper cannot cancel a slow write: the engine sees `host_timeout`, the next save
  // appends the same events again, and the slow write lands while that save runs. The host here
  // appends as OPFS does (read the file, write it whole), so a retry's append running beside the
  // slow one would be overwritten by it: writes to one path run in turn. Each event is read once.
  const host = memoryHost({ now: () => Date.UTC(2026, 0, 1) });
  let release;
  const slowOnce = {
    ...host,
    appendFile(file, data) {
      if (release || !file.endsWith('events.jsonl') || !host.files.has(file)) return host.appendFile(file, data);
      const before = host.files.get(file).text;
      return new Promise((resolve) => { release = () => resolve(host.writeFile(file, before + data)); });
    },
  };
  const { engine } = await ContextEngine.open(slowOnce, undefined, { traceId: 'slow', hostTimeoutMs: 500 });
  session(engine);
  await engine.persist();
  engine.callGoalTool('goal', { focus: '2' });
  await assert.rejects(engine.persist(), { code: 'host_timeout' });
  engine.callGoalTool('goal', { done: 'fixed' });
  const retry = engine.persist();
  setTimeout(() => release(), 50);
  await retry;
  const made = engine.eventsSince(0).map((e) => e.id);
  engine.dispose();

  const { engine: resumed, notes } = await ContextEngine.open(host, undefined, { traceId: 'slow' });
  assert.ok(notes.some((n) => /comes again/.test(n)), notes.join('\n'));
  const stored = (await (await TraceStore.create(host)).eventsAfter('slow', 0)).events.map((e) => e.id);
  assert.deepEqual(stored, made, 'every event the engine made is on disk, once, in order');
  resumed.dispose();
});
