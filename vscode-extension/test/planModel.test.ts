import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countByStatus, currentPath, phaseLabel, planRows, revisionNote } from '../src/views/planModel';
import type { GoalTreeData } from '../src/engine/engineApi';

const stats = (m: number, t: number) => ({ message_count: m, total_tokens: t, total_cost: 0 });
const tree: GoalTreeData = {
  mission: 'fix the bug',
  current_id: 4,
  goals: [
    { id: 1, type: 'normal', description: 'Find the bug', status: 'completed', summary: 'in parse()', self_stats: stats(3, 900), cumulative_stats: stats(3, 900) },
    { id: 2, type: 'normal', description: 'Try a rewrite', status: 'abandoned', summary: 'too large' },
    { id: 3, type: 'normal', description: 'Fix it', status: 'in_progress', cumulative_stats: stats(5, 2000) },
    { id: 4, parent_id: 3, type: 'normal', description: 'Edit parse()', status: 'in_progress' },
    { id: 5, parent_id: 2, type: 'normal', description: 'Under the abandoned one', status: 'pending' },
  ],
};

test('rows nest in the engine\'s order and mark the current one', () => {
  const rows = planRows(tree, false);
  assert.deepEqual(rows.map((r) => r.label), ['Find the bug', 'Fix it']);
  assert.equal(rows[1].children[0].label, 'Edit parse()');
  assert.equal(rows[1].children[0].current, true);
  assert.equal(rows[1].children[0].icon, 'debug-stackframe');
  assert.equal(rows[0].icon, 'pass-filled');
  assert.equal(currentPath(rows), 'Fix it › Edit parse()');
});

test('abandoned goals appear only with the toggle, greyed and with their reason', () => {
  const rows = planRows(tree, true);
  assert.deepEqual(rows.map((r) => r.label), ['Find the bug', 'Try a rewrite', 'Fix it']);
  assert.equal(rows[1].icon, 'circle-slash');
  assert.match(rows[1].tooltip, /Reason: too large/);
  assert.equal(rows[1].children[0].label, 'Under the abandoned one');
});

test('the tooltip carries the stats', () => {
  const [first] = planRows(tree, false);
  assert.match(first.tooltip, /This goal: 3 messages, 900 tokens/);
  assert.match(first.tooltip, /Summary: in parse\(\)/);
  assert.deepEqual(countByStatus(tree), { pending: 1, in_progress: 2, completed: 1, abandoned: 1 });
});

test('labels carry the numbers the engine gives the model', () => {
  const rows = planRows(tree, false, { '1': '1', '3': '2', '4': '2.1' });
  assert.deepEqual([rows[0].label, rows[1].label, rows[1].children[0].label], ['1 Find the bug', '2 Fix it', '2.1 Edit parse()']);
});

test('the plan\'s revisions are named by the item they start at and what they dropped', () => {
  assert.equal(revisionNote(tree), undefined);
  const once = { ...tree, revisions: [{ from_item: 3, kept: [1, 2], revised: [6, 4], dropped: ['c'] }] };
  assert.equal(revisionNote(once), 'revised from item 3, dropped “c”');
  const twice = { ...tree, revisions: [...once.revisions, { from_item: 1, kept: [], revised: [7], dropped: [] }] };
  assert.equal(revisionNote(twice), 'revised 2×, last from item 1');
});

test('the phase reads as the plan\'s step', () => {
  assert.equal(phaseLabel({ phase: { phase: 'executing', step: 1 }, steps: 3 }), 'step 2 of 3');
  assert.equal(phaseLabel({ phase: { phase: 'completed' }, steps: 3 }), 'completed');
  assert.equal(phaseLabel(undefined), undefined);
});

test('an exploration\'s branches are rows under its goal, running or finished with their summary', () => {
  const exploring: GoalTreeData = {
    mission: 'choose a store',
    goals: [{ id: 1, type: 'explore_start', description: 'explore 2 branches', status: 'in_progress' }],
    branches: [
      { id: 'A', explore_start_id: 1, description: 'try redis', status: 'completed', summary: 'needs a server' },
      { id: 'B', explore_start_id: 1, description: 'try sqlite', status: 'exploring' },
    ],
  };
  const [goal] = planRows(exploring, false);
  assert.equal(goal.description, 'explore');
  assert.deepEqual(goal.children.map((r) => [r.label, r.description, r.icon]), [
    ['Branch A: try redis', 'finished', 'pass-filled'],
    ['Branch B: try sqlite', 'exploring', 'sync'],
  ]);
  assert.match(goal.children[0].tooltip, /Summary: needs a server/);
});
