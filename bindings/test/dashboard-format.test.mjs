// The dashboard's figures as the terminal prints them: a sum in dollars reads the same on the
// page (`src/dashboard/dom.js`) as in `workbench stats` (the same cases as the engine's test
// `a_saving_reads_the_same_everywhere` in `src/proxy/stats.rs`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { usd } from '../../src/dashboard/dom.js';

test('a sum in dollars reads as `workbench stats` prints it', () => {
  const cases = [[0.0042, '$0.0042'], [0.139, '$0.139'], [12.4, '$12.40'], [-0.012, '$0.012'], [0, '$0.0000'], [9.9996, '$10.000']];
  for (const [value, text] of cases) assert.equal(usd(value), text, String(value));
});
