// The package as an embedder uses it in Node: `ContextEngine.create(memoryHost())` with no
// set-up, then every part of the façade, against the built dist/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ContextEngine, ContextWorkbenchError, TraceStore, memoryHost } from '../dist/node.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const SYSTEM = { system_prompt: 'You are a coding agent.' };

/** Resolves once `ready()` is truthy; fails the test after 5 s instead of hanging. */
async function until(ready) {
  for (let i = 0; i < 5000 && !ready(); i++) await new Promise((resolve) => setTimeout(resolve, 1));
  assert.ok(ready(), 'the host was never called');
}

/** An assistant call of `name` with `args`, answered by `output`. */
function toolRound(engine, id, name, args, output, exitCode) {
  engine.record({ role: 'assistant', content: [{ type: 'tool_call', id, name, arguments: JSON.stringify(args) }] });
  return engine.recordToolResult({ call_id: id, name, status: 'ok', output, exit_code: exitCode });
}

test('create needs no set-up; counts are synchronous plain numbers', async () => {
  const engine = await ContextEngine.create(memoryHost());
  assert.equal(engine.countTokens('hello world'), 2);
  assert.equal(typeof engine.countTokens(''), 'number');
  assert.equal(engine.countTokens('<|endoftext|>'), 7, 'special tokens count as text');
  assert.equal(engine.encoding, 'o200k_base');
  assert.equal(engine.traceId, `trace-${Date.UTC(2026, 0, 1)}`);
  assert.equal(engine.config().window, 200000);
  const cl100k = await ContextEngine.create(memoryHost(), { encoding: 'cl100k_base' });
  assert.equal(cl100k.encoding, 'cl100k_base');
  assert.equal(cl100k.countTokens('hello world'), 2);
  engine.dispose();
  cl100k.dispose();
});

test('a recorded conversation is assembled in each serialization', async () => {
  const host = memoryHost({ files: { 'CODE_LAW.md': 'Never edit generated files.' } });
  const engine = await ContextEngine.create(host);
  const user = await engine.recordUserInput('Fix the failing test in @src/lib.rs please');
  assert.equal(user, 'm000000');
  toolRound(engine, 'c1', 'Bash', { command: 'cargo test' }, 'test result: FAILED. 1 passed; 1 failed', 101);
  engine.record({ role: 'assistant', content: 'The parser drops tabs; I will fix lex().' });

  const openai = await engine.prepareCall({ ...SYSTEM, tools: engine.goalTools() });
  assert.equal(openai.format, 'openai');
  assert.deepEqual(openai.request.messages.map((m) => m.role), ['system', 'system', 'user', 'assistant', 'tool', 'assistant']);
  assert.match(openai.request.messages[1].content, /Never edit generated files\./, 'L2 project rules from the host');
  assert.equal(openai.request.messages[3].tool_calls[0].function.name, 'Bash');
  assert.equal(openai.request.messages[4].tool_call_id, 'c1');
  assert.deepEqual(openai.request.tools.map((t) => t.function.name), ['goal', 'step', 'read_progress', 'explore']);
  assert.ok(openai.tokens > 40 && Number.isInteger(openai.tokens));
  assert.equal(openai.first_changed_byte, null, 'the first call has nothing to compare with');

  const anthropic = await engine.prepareCall({ ...SYSTEM, tools: engine.goalTools() }, 'anthropic');
  assert.equal(anthropic.format, 'anthropic');
  assert.equal(anthropic.request.messages[1].content[0].type, 'tool_use');
  assert.equal(anthropic.request.messages[2].content[0].type, 'tool_result');
  assert.ok(anthropic.expected_cached_tokens > 0, 'the prefix repeats the previous call');

  const react = await engine.prepareCall(SYSTEM, 'react');
  assert.equal(react.expected_cached_tokens, 0, 'other tools: a provider caches nothing');
  assert.equal(typeof react.request, 'string');
  assert.match(react.request, /\[assistant\] .*Action: Bash\[/s);
  await assert.rejects(engine.prepareCall(SYSTEM, 'xml'), { name: 'ContextWorkbenchError', code: 'invalid_input' });
  engine.dispose();
});

test('the history view says what replaced what, after rounds settle', async () => {
  const engine = await ContextEngine.create(memoryHost());
  engine.record({ role: 'user', content: 'list the files' });
  const listing = Array.from({ length: 400 }, (_, i) => `src/module_${i}.rs`).join('\n');
  toolRound(engine, 'c1', 'Bash', { command: 'ls -R' }, listing, 0);
  engine.record({ role: 'user', content: 'now count them' });
  await engine.prepareCall(SYSTEM);
  const view = engine.historyView();
  assert.equal(view.settled, 3, 'the first round ended with the new user message');
  assert.match(view.forms['2'], /exit code|lines|module_0/, 'the settled output has its history form, by message index');
  assert.deepEqual([view.blocks, view.pruned, view.summary], [[], [], null]);
});

test('a real tool output is compressed with a pointer to its original', async () => {
  const engine = await ContextEngine.create(memoryHost());
  const log = readFileSync(path.join(root, 'data/traces/vorflux/django__django-15973.json'), 'utf8');
  const call = JSON.parse(log).trajectory.find((e) => e.type === 'tool_call' && e.tool === 'bash_execute'
    && e.result?.stdout?.length > 4000);
  assert.ok(call, 'a long command output in the trace');
  const text = call.result.stdout;
  const args = JSON.stringify(call.arguments);
  const compressed = engine.compressToolOutput({ tool: 'bash_execute', arguments: args, output: text, raw_id: 'm000042' });
  assert.equal(compressed.family, 'bash');
  assert.equal(compressed.tokens_in, engine.countTokens(text));
  assert.ok(compressed.tokens_out < compressed.tokens_in / 2, `${compressed.tokens_out} of ${compressed.tokens_in}`);
  assert.match(compressed.text, /full output: raw#m000042/);
  // Without a raw_id (a selection, not a recorded output) the form names no pointer to nothing.
  const unnamed = engine.compressToolOutput({ tool: 'bash_execute', arguments: args, output: text });
  assert.ok(unnamed.tokens_out < unnamed.tokens_in / 2);
  assert.doesNotMatch(unnamed.text, /raw#/);
  assert.throws(() => engine.compressToolOutput({ output: 'x' }), { code: 'invalid_input' });
  assert.throws(() => engine.compressToolOutput({ tool: ' ', output: 'x' }), { code: 'invalid_input' });
});

test('goal tools change the plan, every change is an event, and a late subscriber catches up', async () => {
  const seen = [];
  const engine = await ContextEngine.create(memoryHost());
  const unsubscribe = engine.subscribe((e) => seen.push(e));
  engine.record({ role: 'user', content: 'Make tabs survive the parser.' });
  const refused = engine.callGoalTool('goal', { focus: '9' });
  assert.equal(refused.is_error, true);
  assert.match(refused.text, /9/);
  assert.equal(engine.callGoalTool('goal', '{"add": "find the bug, fix it"}').is_error, false);
  assert.equal(engine.callGoalTool('goal', { focus: '1' }).is_error, false);
  toolRound(engine, 'c1', 'Read', { file_path: 'src/lex.rs' }, '1\tfn lex() {}');
  const plan = engine.plan();
  assert.match(plan.prompt, /find the bug.*← current/s);
  assert.deepEqual(plan.display_numbers, { 1: '1', 2: '2' });
  const tree = engine.goalTree();
  assert.deepEqual(tree.goals.map((g) => [g.description, g.status]), [['find the bug', 'in_progress'], ['fix it', 'pending']]);
  assert.equal(tree.goals[0].self_stats.message_count, 2);
  assert.equal(tree.goals[0].self_stats.preview, 'read');

  const types = seen.map((e) => e.type);
  assert.deepEqual(types.slice(0, 2), ['goal_added', 'goal_added']);
  assert.ok(types.includes('goal_updated') && types.includes('message_added'), types.join());
  assert.deepEqual(seen.map((e) => e.id), seen.map((_, i) => i + 1), 'ids increase by one from 1');
  assert.deepEqual(engine.eventsSince(0), seen);

  const late = [];
  engine.subscribe((e) => late.push(e), { since: 2 });
  assert.deepEqual(late, seen.slice(2), 'a late subscriber gets what it missed first');
  unsubscribe();
  const heard = seen.length;
  engine.callGoalTool('goal', { done: 'lex() drops tabs' });
  assert.equal(late.at(-1).type, 'goal_updated');
  assert.equal(seen.length, heard, 'the unsubscribed listener heard nothing more');
  assert.match(engine.dumpTree(), /Step Tree Debug/);
  assert.equal(JSON.parse(engine.dumpTree(true)).trace.trace_id ?? JSON.parse(engine.dumpTree(true)).trace_id, engine.traceId);
  assert.ok(engine.stepView().some((s) => s.step_type === 'goal'));
  engine.completeTrace();
  assert.equal(engine.eventsSince(0).at(-1).type, 'trace_completed');
  assert.throws(() => engine.completeTrace(), { code: 'invalid_input' });
});

test('a span is compacted on request, with its cost; the board takes checked deltas', async () => {
  const engine = await ContextEngine.create(memoryHost());
  engine.record({ role: 'user', content: 'Find why the build is slow.' });
  engine.startSpan('profile', 'profile the build');
  const log = Array.from({ length: 300 }, (_, k) => `compiling crate ${k}: 1.2s`).join('\n');
  for (let n = 0; n < 4; n++) toolRound(engine, `c${n}`, 'Bash', { command: `cargo build -p c${n}` }, log, 0);
  engine.endSpan('profile', 'codegen of one crate dominates');
  const record = await engine.compactSpan('profile');
  assert.equal(record.mechanism, 'tail_compaction');
  const [block] = engine.historyView().blocks;
  assert.deepEqual([block.start, block.end], [record.start, record.end], 'the block names the raw range it replaced');
  assert.equal(block.content.replaces.span_id, 'profile');
  assert.match(block.text, /^<compressed_turns v1 /);
  assert.ok(record.cost.tokens_after < record.cost.tokens_before, JSON.stringify(record.cost));
  await assert.rejects(engine.compactSpan('nope'), { code: 'invalid_input' });
  await assert.rejects(engine.compactTail(), { code: 'invalid_input' }, 'the span was the whole tail');
  for (let n = 4; n < 12; n++) toolRound(engine, `c${n}`, 'Bash', { command: `cargo test -p c${n}` }, log, 0);
  const tail = await engine.compactTail();
  assert.deepEqual(tail.reasons, ['tail compacted on request']);
  assert.equal(engine.historyView().blocks.length, 2);
  assert.ok(tail.start >= record.end, 'after the span block');

  const update = engine.updateState({ current_goal: 'speed up the build', next_actions: ['split crate 7'] });
  assert.equal(update.version, engine.stateBoard().version);
  assert.equal(engine.stateBoard().current_goal, 'speed up the build');
  const anchored = engine.updateState({ anchors: [{ path: 'src/a.rs', start_line: 1, end_line: 2, snippet: 'never seen' }] });
  assert.equal(anchored.rejected.length, 1, 'an anchor nobody read is rejected');
  assert.throws(() => engine.updateState({}), { code: 'invalid_input' });
  assert.throws(() => engine.updateState({ curent_goal: 'typo' }), (e) => e.code === 'invalid_input' && /curent_goal/.test(e.message));
});

test('explore branches keep their own context until merged', async () => {
  const engine = await ContextEngine.create(memoryHost());
  engine.record({ role: 'user', content: 'Choose a session store.' });
  const started = engine.callGoalTool('explore', { branches: ['try redis', 'try sqlite'] });
  assert.equal(started.is_error, false, started.text);
  assert.deepEqual(started.branches, ['A', 'B']);
  const id = engine.recordInBranch('A', { role: 'assistant', content: 'redis needs a server' });
  assert.equal(id, 'A-m000000');
  assert.equal(engine.branchMessages('A')[0].branch_id, 'A');
  const prompt = await engine.prepareBranchCall('A', SYSTEM);
  assert.match(JSON.stringify(prompt.request), /try redis/);
  assert.equal(engine.finishBranch('A', 'needs a server'), false);
  assert.equal(engine.finishBranch('B', 'a file is enough'), true);
  assert.match(engine.mergeExplore('B'), /a file is enough/);
  assert.throws(() => engine.recordInBranch('Z', { role: 'assistant', content: 'x' }), { code: 'invalid_input' });
});

test('history from an agent framework is loaded and repaired with notes', async () => {
  const source = await ContextEngine.create(memoryHost());
  source.record({ role: 'user', content: 'hi' });
  toolRound(source, 'c1', 'Read', { file_path: 'a' }, 'text');
  const messages = source.trace().messages;
  const engine = await ContextEngine.create(memoryHost());
  assert.deepEqual(engine.loadHistory(messages.slice(0, 2)).map((n) => n.message), ['m000001'], 'an unanswered call is repaired');
  assert.equal(engine.trace().messages.length, 3);
  assert.throws(() => engine.loadHistory([{ role: 'user' }]), { code: 'invalid_input' });
});

test('a history the agent sent again changed is withdrawn from the first changed message', async () => {
  const engine = await ContextEngine.create(memoryHost());
  engine.record({ role: 'user', content: 'Fix calc.py' });
  engine.record({ role: 'assistant', content: 'calc.py, version one' });
  engine.record({ role: 'user', content: 'tests fail' });
  assert.equal(engine.withdrawFrom('m000001'), 2);
  engine.record({ role: 'assistant', content: 'calc.py, version two' });
  const texts = JSON.stringify((await engine.prepareCall(SYSTEM)).request.messages);
  assert.ok(texts.includes('version two') && !texts.includes('version one') && !texts.includes('tests fail'), texts);
  assert.equal(engine.trace().messages.length, 4, 'the raw trace keeps both versions');
  assert.deepEqual(engine.historyView().withdrawn, [{ start: 1, end: 3 }]);
  assert.throws(() => engine.withdrawFrom('m000002'), { code: 'invalid_input' });
});

test('LLM calls go through the host; the engine stays usable while one is pending', async () => {
  let release;
  const engine = await ContextEngine.create(memoryHost({ llm: () => new Promise((resolve) => { release = resolve; }) }));
  const pending = engine.complete({ messages: [{ role: 'user', content: 'slow' }], purpose: 'test' });
  await until(() => release);
  assert.equal(engine.countTokens('still responsive'), 2);
  release({ text: 'done', usage: { promptTokens: 12, completionTokens: 3 } });
  assert.equal((await pending).text, 'done');
  assert.deepEqual(engine.lastUsage(), { promptTokens: 12, completionTokens: 3, cachedTokens: 0 });
  engine.reportUsage({ promptTokens: 99, completionTokens: 1 });
  assert.equal(engine.lastUsage().promptTokens, 99);
  await assert.rejects(engine.complete({ messages: [] }), { code: 'invalid_input' });
});

test('host failures are typed errors: rejections, throws, bad values and hosts that never answer', async () => {
  const request = { messages: [{ role: 'user', content: 'x' }], purpose: 'test' };
  const rejecting = await ContextEngine.create(memoryHost({ llm: async () => { throw new Error('rate limited'); } }));
  await assert.rejects(rejecting.complete(request), (err) => {
    assert.ok(err instanceof ContextWorkbenchError);
    assert.equal(err.code, 'host_failed');
    assert.equal(err.message, 'host.complete failed: rate limited');
    return true;
  });
  const throwing = await ContextEngine.create(memoryHost({ llm: () => { throw Object.assign(new Error('slow'), { code: 'timeout' }); } }));
  await assert.rejects(throwing.complete(request), { code: 'host_timeout' });
  const unconfigured = await ContextEngine.create(memoryHost());
  await assert.rejects(unconfigured.complete(request), { code: 'host_llm_not_configured' });
  const bad = await ContextEngine.create(memoryHost({ llm: async () => ({ txt: 'typo' }) }));
  await assert.rejects(bad.complete(request), (err) => err.code === 'host_failed' && /text/.test(err.message));

  const silent = await ContextEngine.create(memoryHost({ llm: () => new Promise(() => {}) }));
  const started = Date.now();
  await assert.rejects(silent.complete({ ...request, timeoutMs: 50 }), (err) => err.code === 'host_timeout' && /50 ms/.test(err.message));
  assert.ok(Date.now() - started < 5000);
  const hanging = { ...memoryHost(), listDir: () => new Promise(() => {}), stat: () => new Promise(() => {}) };
  const stuck = await ContextEngine.create(hanging, undefined, { hostTimeoutMs: 50 });
  const waited = Date.now();
  await stuck.recordUserInput('read @src/lib.rs');
  assert.equal(stuck.trace().messages[0].content[0].text, 'read @src/lib.rs', 'a mention the host cannot stat gets no reminder');
  const assembled = await stuck.prepareCall(SYSTEM);
  assert.equal(assembled.view.messages.length, 2, 'project rules that never load are left out, not waited for');
  assert.ok(Date.now() - waited >= 100, 'both calls waited for the timeout');
});

test('disposing while a call waits on the host lets that call settle', async () => {
  let release;
  const host = { ...memoryHost(), listDir: () => new Promise((resolve) => { release = resolve; }) };
  const engine = await ContextEngine.create(host);
  engine.record({ role: 'user', content: 'go' });
  const pending = engine.prepareCall(SYSTEM);
  await until(() => release);
  engine.dispose();
  release([]);
  const call = await pending;
  assert.equal(call.view.messages.length, 2, 'the call finished on the engine it started on');
  assert.throws(() => engine.trace(), { code: 'disposed' });
});

test('dispose() from a listener during a call: the call returns, then the engine is disposed', async () => {
  for (const act of [(e) => e.record({ role: 'user', content: 'go' }), (e) => e.callGoalTool('goal', { done: 'a found' })]) {
    const engine = await ContextEngine.create(memoryHost());
    engine.callGoalTool('goal', { add: 'a, b' });
    engine.callGoalTool('goal', { focus: '1' });
    const thrown = [];
    engine.subscribe(() => {
      try {
        engine.dispose();
      } catch (error) {
        thrown.push(error);
      }
    });
    assert.ok(act(engine), 'the call that emitted returns its result');
    assert.deepEqual(thrown, []);
    assert.equal(engine.disposed, true);
    assert.throws(() => engine.trace(), { code: 'disposed' });
    await new Promise((resolve) => setImmediate(resolve));
    assert.throws(() => engine.countTokens('x'), { code: 'disposed' }, 'still disposed once the memory was freed');
    engine.dispose();
  }
});

test('hostTimeoutMs: Infinity and huge values wait for a slow host; zero, negative and NaN are refused', async () => {
  const slowHost = () => {
    const host = memoryHost({ files: { 'CODE_LAW.md': 'Tests first.' } });
    const slow = (f) => async (...args) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return f(...args);
    };
    return { ...host, readFile: slow(host.readFile), stat: slow(host.stat), listDir: slow(host.listDir) };
  };
  for (const hostTimeoutMs of [Infinity, 2 ** 31, 1e12, 0.5 + 2 ** 31]) {
    const engine = await ContextEngine.create(slowHost(), undefined, { hostTimeoutMs });
    engine.record({ role: 'user', content: 'go' });
    const call = await engine.prepareCall(SYSTEM);
    assert.match(call.request.messages[1]?.content ?? '', /Tests first\./, `hostTimeoutMs ${hostTimeoutMs}: the rules were read`);
  }
  for (const hostTimeoutMs of [0, -1, NaN, -Infinity, '100']) {
    await assert.rejects(ContextEngine.create(memoryHost(), undefined, { hostTimeoutMs }),
      (e) => e instanceof ContextWorkbenchError && e.code === 'invalid_input' && /hostTimeoutMs/.test(e.message), String(hostTimeoutMs));
  }
  await assert.rejects(TraceStore.create(memoryHost(), { hostTimeoutMs: -5 }), { code: 'invalid_input' });
});

test('a host whose event or progress hook throws does not silence the listeners', async () => {
  const hooked = { event: 0, progress: 0 };
  const host = {
    ...memoryHost(),
    event() { hooked.event++; throw new Error('a bug in the host'); },
    progress() { hooked.progress++; throw new Error('a bug in the host'); },
  };
  const engine = await ContextEngine.create(host);
  const events = [];
  const progress = [];
  engine.subscribe((e) => events.push(e.type));
  engine.onProgress((p) => progress.push(p.operation));
  engine.record({ role: 'user', content: 'Find why the build is slow.' });
  engine.callGoalTool('goal', { add: 'profile the build' });
  engine.startSpan('profile', 'profile the build');
  const log = Array.from({ length: 300 }, (_, k) => `compiling crate ${k}: 1.2s`).join('\n');
  for (let n = 0; n < 4; n++) toolRound(engine, `c${n}`, 'Bash', { command: `cargo build -p c${n}` }, log, 0);
  engine.endSpan('profile', 'codegen of one crate dominates');
  await engine.compactSpan('profile');
  assert.ok(hooked.event > 0 && hooked.progress > 0, JSON.stringify(hooked));
  assert.equal(events.length, hooked.event, 'every event reached the listener');
  assert.ok(events.includes('goal_added'), events.join());
  assert.deepEqual(progress.length, hooked.progress);
  assert.ok(progress.includes('tail_compaction'), progress.join());
});

test('bad hosts and configs are refused by name; a disposed engine says so', async () => {
  await assert.rejects(ContextEngine.create({ complete() {} }), (err) => err.code === 'host_failed' && /readFile/.test(err.message));
  await assert.rejects(ContextEngine.create(null), { code: 'host_failed' });
  await assert.rejects(ContextEngine.create(memoryHost(), { windw: 1 }), (err) => err.code === 'invalid_config' && /windw/.test(err.message));
  await assert.rejects(ContextEngine.create(memoryHost(), { encoding: 'p50k' }), { code: 'invalid_config' });
  const engine = await ContextEngine.create(memoryHost());
  assert.throws(() => engine.record({ role: 'robot', content: 'x' }), { code: 'invalid_input' });
  assert.throws(() => engine.record({ role: 'tool', content: 'no result part' }), { code: 'invalid_input' });
  engine.dispose();
  assert.equal(engine.disposed, true);
  assert.throws(() => engine.countTokens('x'), { name: 'ContextWorkbenchError', code: 'disposed' });
  await assert.rejects(engine.prepareCall(SYSTEM), { code: 'disposed' });
  engine.dispose();
});

test('wasm counts equal native counts on every shared trace', async () => {
  const target = path.resolve(root, process.env.CARGO_TARGET_DIR ?? 'target');
  const bin = [process.env.WORKBENCH_BIN, path.join(target, 'release/workbench'), path.join(target, 'debug/workbench')]
    .find((candidate) => candidate && existsSync(candidate));
  assert.ok(bin, 'the native CLI is built (cargo build --bin workbench)');
  const traces = path.resolve(root, 'data/traces');
  const lines = execFileSync(bin, ['count', traces], { encoding: 'utf8', maxBuffer: 1 << 24 }).trim().split('\n');
  const engine = await ContextEngine.create(memoryHost());
  let total = 0;
  for (const line of lines.slice(0, -1)) {
    const [n, file] = line.split('\t');
    assert.equal(engine.countTokens(readFileSync(file, 'utf8')), Number(n), file);
    total += Number(n);
  }
  assert.ok(lines.length > 80);
  assert.equal(lines.at(-1), `${total}\ttotal`);
});
