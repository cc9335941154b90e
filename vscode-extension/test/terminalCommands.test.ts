// The agent's run_command over a terminal (the VS Code parts from vscodeStub.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TerminalCommands } from '../src/hosts/terminalCommands';
import * as vscode from './vscodeStub';

test('cancelling a command that prints nothing ends it at once: ^C sent, no listener left', { timeout: 5000 }, async () => {
  const sent: string[] = [];
  const quiet = { read: async function* () { await new Promise(() => {}); yield ''; } };
  vscode.window.terminal = { exitStatus: undefined, show() {}, dispose() {}, sendText: (t: string) => sent.push(t), shellIntegration: { executeCommand: () => quiet } };
  vscode.window.answer = 'Run';
  const commands = new TerminalCommands(undefined);
  const abort = new AbortController();
  setTimeout(() => abort.abort(), 50);
  const result = await commands.run('sleep 600', abort.signal);
  assert.equal(result?.exitCode, undefined);
  assert.match(result?.output ?? '', /cancelled/);
  assert.deepEqual(sent, ['\x03']);
  assert.equal(vscode.window.endListeners.size, 0);
  commands.dispose();
});
