// The session and the commands over it, against the real engine, the scripted endpoint and the
// VS Code parts of vscodeStub.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compressSelection } from '../src/commands/compressCommands';
import type { EngineBackend } from '../src/engine/engineApi';
import { packageBackend } from '../src/engine/packageEngine';
import { type SessionParts, WorkbenchSession } from '../src/session/workbenchSession';
// @ts-expect-error: plain JavaScript test support, shared with the end-to-end test
import { startScriptedEndpoint } from '../e2e/scriptedEndpoint.mjs';
import * as vscode from './vscodeStub';

const quiet = { text() {}, toolStarted() {}, toolFinished() {}, prepared() {}, usage() {}, notice() {} };

function session(backend: EngineBackend): WorkbenchSession {
  const none = () => undefined;
  const parts = {
    secrets: { get: async () => undefined },
    backend,
    terminal: {},
    plan: { update: none },
    prompts: { update: none },
    status: { busy: none, update: none },
    output: { appendLine: none },
    onPlan: none,
  };
  return new WorkbenchSession(parts as unknown as SessionParts);
}

test('while the first task is still loading the engine, a second task and opening a trace are refused', async () => {
  const endpoint = await startScriptedEndpoint({ tasks: [{ match: /^TASK-HI/, steps: [{ text: 'Hi.' }] }] });
  try {
    vscode.workspace.workspaceFolders = [{ uri: vscode.Uri.file('/ws'), name: 'ws', index: 0 }];
    vscode.workspace.settings = { 'llm.url': endpoint.url, 'llm.model': 'scripted', window: 50_000 };
    let loaded = () => {};
    const loading = new Promise<void>((resolve) => (loaded = resolve));
    const s = session(packageBackend(() => loading));
    const first = s.run('TASK-HI: say hi', quiet);
    assert.equal(s.busy, true);
    await assert.rejects(s.run('TASK-HI: say hi again', quiet), /already running/);
    await assert.rejects(s.openTrace('any'), /task is running/);
    loaded();
    assert.equal((await first).kind, 'answered');
    assert.equal(s.busy, false);
    assert.equal(endpoint.agentRequests().length, 1, 'one task reached the model');
    s.dispose();
  } finally {
    await endpoint.close();
  }
});

test('while a trace is opening, a task is refused', async () => {
  vscode.workspace.workspaceFolders = [{ uri: vscode.Uri.file('/ws'), name: 'ws', index: 0 }];
  vscode.workspace.settings = { 'llm.url': 'http://127.0.0.1:9/v1', window: 50_000 };
  let loaded = () => {};
  const loading = new Promise<void>((resolve) => (loaded = resolve));
  const s = session(packageBackend(() => loading));
  const opening = s.openTrace('no-such-trace');
  assert.equal(s.busy, true);
  await assert.rejects(s.run('TASK-HI: say hi', quiet), /already running/);
  loaded();
  await assert.rejects(opening);
  assert.equal(s.busy, false);
  s.dispose();
});

test('Compress Selection needs no open folder and no model', async () => {
  vscode.workspace.workspaceFolders = undefined;
  vscode.workspace.settings = {};
  const output = [...Array.from({ length: 400 }, (_, i) => `INFO step ${i}: compiled module m${i}`), 'error: m400 failed to compile'].join('\n');
  vscode.window.activeTextEditor = { selection: { isEmpty: false }, document: { getText: () => output } };
  await compressSelection(session(packageBackend(async () => {})));
  assert.match(vscode.window.messages.at(-1) ?? '', /compressed the selection \(command output\): \d+ → \d+ tokens/);
  assert.match(vscode.window.documents.at(-1) ?? '', /m400 failed to compile/);
  assert.ok((vscode.window.documents.at(-1) ?? '').length < output.length);
});
