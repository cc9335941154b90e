// The dashboard's figures as the terminal prints them: a saving reads the same on the page
// (`src/dashboard/dom.js`) as in `workbench stats` (the same cases as its unit test in
// `crates/workbench-cli/src/stats.rs`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { savingPercent } from '../../src/dashboard/dom.js';

test('a saving reads as `workbench stats` prints it', () => {
  const cases = [[0.78, '78%'], [0.125, '13%'], [0, '0%'], [-0.004, '0%'], [-0.04, '−4%'], [-0.125, '−13%'], [1, '100%']];
  for (const [share, text] of cases) assert.equal(savingPercent(share), text, String(share));
  assert.equal(savingPercent(null), '–');
});
