// The reads of a viewer following sessions as they are written (TraceStore's traceIds,
// sessionSummary, sessionState, message, firstMessage) over nodeFsHost, and the engine's facts
// (storeFormatVersion, defaultConfig, resolveConfig, messageIds, withoutReminders) read from the
// wasm.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ContextEngine, TraceStore, defaultConfig, init, messageIds, nodeFsHost, resolveConfig, storeFormatVersion, withoutReminders } from '../dist/node.js';

const call = (n, fields = {}) => JSON.stringify({ call: n, at_ms: n, model: 'm', agent: '', stream: true, managed: true, messages: n, new_messages: 1, client_tokens: 900, prompt_tokens: 800, expected_cached_tokens: 0, rewrites: [], status: 200, completed: true, notes: [], ...fields });

test("the engine's facts: the default configuration and one resolved against it, refused as the engine refuses it", async () => {
  assert.throws(() => defaultConfig(), { code: 'not_loaded' });
  await init();
  const defaults = defaultConfig();
  assert.equal(defaults.store.root, '.trace');
  assert.ok(defaults.prices.cache_read < defaults.prices.uncached_input && defaults.prices.cache_write > defaults.prices.uncached_input, JSON.stringify(defaults.prices));
  const resolved = resolveConfig({ prices: { cache_write: 2 } });
  assert.deepEqual(resolved.prices, { ...defaults.prices, cache_write: 2 });
  assert.equal(resolved.window, defaults.window);
  assert.deepEqual(resolveConfig(undefined), defaults);
  assert.throws(() => resolveConfig({ prices: { output: 'x' } }), { code: 'invalid_config', message: /prices\.output/ });
  assert.throws(() => resolveConfig({ windw: 1 }), { code: 'invalid_config', message: /windw/ });
  assert.equal(Number.isInteger(storeFormatVersion()) && storeFormatVersion() >= 1, true);
});

test("a raw reference's message ids and a text without reminders, by the engine's rules", async () => {
  await init();
  assert.deepEqual(messageIds('m000008..m000011'), ['m000008', 'm000009', 'm000010', 'm000011']);
  assert.deepEqual(messageIds('raw#m000003'), ['m000003']);
  assert.deepEqual(messageIds('A-m000001..A-m000002'), ['A-m000001', 'A-m000002'], 'a branch\'s ids');
  assert.throws(() => messageIds('m000009..m000002'), { code: 'invalid_input' });
  assert.throws(() => messageIds('m000001..m009999'), { code: 'invalid_input', message: /at most 500/ });
  assert.equal(withoutReminders('<system-reminder>\nAs you answer…\n</system-reminder>\nFix the parser'), '\nFix the parser');
  assert.equal(withoutReminders('Fix it<system-reminder>cut short'), 'Fix it');
});

test('a session is followed as it grows: unchanged answers null, a landed call changes the state', async () => {
  const base = await mkdtemp(path.join(tmpdir(), 'cw-live-'));
  try {
    const host = nodeFsHost(base);
    const { engine } = await ContextEngine.open(host, undefined, { traceId: 's1' });
    engine.record({ role: 'user', content: 'Fix the parser.' });
    engine.callGoalTool('goal', { add: 'read the test, fix it' });
    await engine.prepareCall({ system_prompt: 'You are a coding agent.' });
    await engine.persist();
    engine.dispose();

    const store = await TraceStore.create(host);
    assert.deepEqual(await store.traceIds(), ['s1']);
    const summary = await store.sessionSummary('s1');
    assert.equal(summary.meta.mission, 'Fix the parser.');
    assert.equal(summary.meta.version, storeFormatVersion());
    assert.equal(summary.proxied, false);
    const state = await store.sessionState('s1');
    assert.deepEqual(state.goal_tree.goals.map((g) => g.description), ['read the test', 'fix it']);
    assert.ok(state.prompt.tokens > 0);
    assert.deepEqual([state.calls, state.notes], [[], []]);
    assert.equal((await store.firstMessage('s1')).content[0].text, 'Fix the parser.');
    assert.equal(await store.message('s1', 'm000099'), null);
    assert.equal(await store.sessionSummary('s1', summary.stamp), null);
    assert.equal(await store.sessionState('s1', state.stamp), null);

    // A proxy's calls land; a half-written line waits for the next read.
    const calls = path.join(base, '.trace/s1/calls.jsonl');
    await writeFile(calls, `${call(1)}\n`);
    await appendFile(calls, `${call(2, { agent: 'claude-cli/2.1.3' })}\n${call(3).slice(0, 30)}`);
    const grown = await store.sessionState('s1', state.stamp);
    assert.deepEqual(grown.calls.map((c) => c.call), [1, 2]);
    assert.deepEqual(grown.notes, []);
    const proxied = await store.sessionSummary('s1', summary.stamp);
    assert.deepEqual([proxied.proxied, proxied.agent], [true, 'claude-cli/2.1.3']);

    // A newer format is refused with its code; a folder being created is not a trace yet.
    const meta = JSON.parse(await readFile(path.join(base, '.trace/s1/meta.json'), 'utf8'));
    await writeFile(path.join(base, '.trace/s1/meta.json'), JSON.stringify({ ...meta, version: storeFormatVersion() + 1 }));
    await assert.rejects(store.sessionSummary('s1'), { code: 'unsupported_version' });
    await writeFile(path.join(base, '.trace/creating.txt'), '');
    await assert.rejects(store.sessionSummary('creating'), { code: 'host_not_found' });
    store.dispose();
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});
