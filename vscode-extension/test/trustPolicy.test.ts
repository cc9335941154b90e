// Restricted Mode's decisions (src/trust/trustPolicy.ts): which commands run in an untrusted
// folder, what the others say, and that every command the manifest declares is classified.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NEEDS_TRUST, READ_ONLY, decide, decideTool, planDescription, planMessage } from '../src/trust/trustPolicy';

const manifest = JSON.parse(readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../package.json'), 'utf8'));
const declared: string[] = manifest.contributes.commands.map((c: { command: string }) => c.command.replace(/^contextWorkbench\./, ''));

test('every declared command is classified once: it only reads, or it needs a trusted folder', () => {
  for (const id of declared) assert.ok(READ_ONLY.has(id) !== NEEDS_TRUST.has(id), `${id} is in exactly one of READ_ONLY and NEEDS_TRUST`);
  assert.deepEqual([...READ_ONLY, ...NEEDS_TRUST].filter((id) => !declared.includes(id)), [], 'no command is classified that the manifest lacks');
});

test('in Restricted Mode the agent, the proxy and what writes explain themselves; the views run', () => {
  for (const id of ['runTask', 'startProxy', 'compactNow', 'exportTrace', 'openTrace']) {
    const d = decide(id, id, false);
    assert.equal(d.run, false, id);
    assert.equal(decide(id, id, true).run, true, `${id} runs once the folder is trusted`);
  }
  const runTask = decide('runTask', 'Run Task', false);
  assert.ok(!runTask.run);
  assert.match(runTask.message, /^Context Workbench: Run Task needs a trusted folder\. This folder is open in Restricted Mode/);
  assert.match(runTask.message, /Goal Plan, the Prompt View, the Goal DAG/);
  for (const id of ['showPrompt', 'showDag', 'followSession', 'showRawTrace', 'toggleAbandoned']) assert.equal(decide(id, id, false).run, true, id);
  assert.equal(decide('somethingNew', 'Something New', false).run, false, 'an unclassified command waits for trust');
});

test('the plan tools that change the plan wait for trust; reading the plan does not', () => {
  assert.equal(decideTool('goal', false).run, false);
  assert.equal(decideTool('step', false).run, false);
  assert.equal(decideTool('read_progress', false).run, true);
  assert.equal(decideTool('goal', true).run, true);
});

test("the Goal Plan's description and message say read-only in Restricted Mode, and finished when it is", () => {
  assert.equal(planMessage('Now: Fix it · 0/2 done', true), 'Now: Fix it · 0/2 done');
  assert.equal(planMessage('Now: Fix it · 0/2 done', false), 'Read-only (Restricted Mode) · Now: Fix it · 0/2 done');
  assert.equal(planMessage(undefined, false), undefined, 'an empty plan leaves the welcome, which says it');
  assert.equal(planDescription(false, true), undefined);
  assert.equal(planDescription(true, true), 'finished');
  assert.equal(planDescription(false, false), 'read-only (Restricted Mode)');
  assert.equal(planDescription(true, false), 'finished · read-only (Restricted Mode)');
});
