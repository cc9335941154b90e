// ReplaySession from the package in Node: a real Claude Code session replayed call by call,
// its todo list as the goal tree; bad input refused with a code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ReplaySession } from '../dist/node.js';

const traces = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../data/traces');
const TODO_SESSION = 'claude-code/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl';

test('a Claude Code session replays call by call and its todos become the goal tree', async () => {
  const text = readFileSync(path.join(traces, TODO_SESSION), 'utf8');
  const session = await ReplaySession.create(path.basename(TODO_SESSION), text);
  const [main, ...agents] = session.trajectories();
  assert.equal(main.format, 'claude_code');
  assert.ok(agents.length > 0);
  assert.equal(session.calls, main.calls);
  const raw = session.rawMessages();
  assert.equal(raw.length, main.messages);
  const texts = [];
  let steps = 0;
  let tokens = [];
  for (let step = session.step(); step; step = session.step()) {
    assert.equal(step.texts_from, texts.length);
    texts.push(...step.texts);
    for (const m of step.call.messages) assert.ok(m.text < texts.length);
    tokens.push(step.call.tokens);
    steps++;
  }
  assert.equal(steps, main.calls);
  assert.ok(tokens.every((n) => Number.isInteger(n) && n > 0));
  assert.equal(session.step(), undefined);
  const lastTodos = raw.flatMap((m) => m.content).filter((p) => p.type === 'tool_call' && p.name === 'TodoWrite').at(-1);
  const todos = JSON.parse(lastTodos.arguments).todos.map((t) => t.content);
  const goals = session.goalTree().goals;
  assert.deepEqual(goals.filter((g) => g.type === 'normal').map((g) => g.description), todos);
  // Its sub-agents (three `Task` calls in one reply, then two) are two explorations of the plan.
  assert.equal(goals.filter((g) => g.type === 'explore_start').length, 2);
  assert.equal(session.goalTree().branches.length, 5);
  assert.equal(typeof session.board().version, 'number');
  session.select(1);
  assert.equal(session.step().call.call, 0, 'a sub-agent starts over');
  session.dispose();
  assert.throws(() => session.step(), { code: 'disposed' });
});

test('a file that is no trajectory, or too big, is refused with a code', async () => {
  await assert.rejects(ReplaySession.create('notes.md', '# notes\nnothing here'), { code: 'invalid_trajectory' });
  await assert.rejects(ReplaySession.create('torn.jsonl', '{"type":"user","message":{"role":"user","content":"hi"}}\n{"typ'),
    { code: 'invalid_trajectory' });
  await assert.rejects(ReplaySession.create('big.json', ' '.repeat(64 * 1024 * 1024 + 1)), (e) => e.code === 'invalid_input' && /MB/.test(e.message));
});
