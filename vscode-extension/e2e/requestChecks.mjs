// What the scripted endpoint must have received, checked the same way by the agent-loop unit
// test and the end-to-end test. Each check throws an AssertionError saying what was wrong.
import assert from 'node:assert/strict';
import { buildLog } from './scenario.mjs';
import { textOf } from './scriptedEndpoint.mjs';

const GOAL_TOOLS = ['goal', 'step', 'read_progress'];

/**
 * Every agent request offered the goal tools (with `expected` schemas when given), `explore` on
 * the main line only (an explore branch, whose first message starts `BRANCH-`, does not nest),
 * and sent CODE_LAW.md.
 */
export function checkToolsAndRules(agentRequests, expectedGoalTools) {
  assert.ok(agentRequests.length > 0, 'the endpoint received agent requests');
  for (const r of agentRequests) {
    const tools = new Map(r.body.tools.map((t) => [t.function.name, t.function]));
    for (const name of GOAL_TOOLS) assert.ok(tools.has(name), `request #${r.index} offers the ${name} tool`);
    const inBranch = /^BRANCH-/.test(textOf(r.body.messages.find((m) => m.role === 'user') ?? { content: '' }));
    assert.equal(tools.has('explore'), !inBranch, `request #${r.index} offers explore on the main line only`);
    for (const spec of (expectedGoalTools ?? []).filter((t) => tools.has(t.name) || !inBranch)) assert.deepEqual(tools.get(spec.name).parameters, spec.parameters, `${spec.name}'s schema is the engine's`);
    const rules = r.body.messages.find((m) => m.role === 'system' && /LAW-7: every exported function has a one-line comment/.test(textOf(m)));
    assert.ok(rules, `request #${r.index} carries CODE_LAW.md`);
  }
}

/**
 * The large log read was sent whole within its round; later the engine compacted the goal that
 * held it: the request that first shows the compaction block no longer carries that read, cites
 * the raw messages it replaced, and everything before the block is byte-identical to the
 * previous request. Returns what was found, for the report.
 */
export function checkCompaction(agentRequests) {
  const logText = buildLog();
  const isLogRead = (m) => m.role === 'tool' && textOf(m).includes('INFO step 1: compiled module m1') && textOf(m).length >= logText.length;
  // Past the leading system prompt the engine's blocks travel as user text under a `[system]` line.
  const blockAt = (r) => r.body.messages.findIndex((m) => m.role === 'user' && textOf(m).startsWith('[system]\n<compressed_turns'));
  const c = agentRequests.findIndex((r) => blockAt(r) >= 0);
  assert.ok(c > 0, 'some request carries a compaction block (<compressed_turns …>)');
  const [before, after] = [agentRequests[c - 1], agentRequests[c]];
  assert.ok(before.body.messages.some(isLogRead), 'before the compaction the first read of the log was sent whole');
  const at = blockAt(after);
  const block = textOf(after.body.messages[at]).replace(/^\[system\]\n/, '');
  assert.match(block, /raw="m\d+\.\.m\d+"/, 'the block names the raw messages it replaces');
  const firstRead = before.body.messages.findIndex(isLogRead);
  assert.ok(firstRead >= at, `the first read (message ${firstRead}) lay inside the compacted part (from message ${at})`);
  const readsAfter = after.body.messages.map((m, i) => (isLogRead(m) ? i : -1)).filter((i) => i >= 0);
  assert.equal(before.body.messages.filter(isLogRead).length, 1, 'one whole read of the log before the compaction');
  assert.ok(readsAfter.every((i) => i > at + 1), 'after it, the first read no longer travels raw: only the newer read, after the block, does');
  assert.ok(at >= 3, 'the system prompt, CODE_LAW.md and the first input precede the block');
  const prefixBefore = JSON.stringify(before.body.messages.slice(0, at));
  const prefixAfter = JSON.stringify(after.body.messages.slice(0, at));
  assert.equal(prefixAfter, prefixBefore, 'the prompt before the compaction block is byte-identical');
  return { request: after.index, blockMessage: at, beforeChars: before.raw.length, afterChars: after.raw.length, block: block.split('\n')[0] };
}

/** The `@src/greet.js` mention of task A reached the model as the engine's read reminder. */
export function checkMention(agentRequests) {
  const first = agentRequests[0].body.messages.find((m) => m.role === 'user' && textOf(m).startsWith('TASK-A'));
  assert.ok(first, 'the first request carries task A');
  assert.match(textOf(first), /<system-reminder>\s*The user mentioned[^]*src\/greet\.js[^]*<\/system-reminder>/, textOf(first));
}
