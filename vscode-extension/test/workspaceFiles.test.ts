// The engine's file host over vscode.workspace.fs (here the in-memory stand-in of vscodeStub.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorkspaceFiles } from '../src/hosts/workspaceFiles';
import * as vscode from './vscodeStub';

test('appendFile replaces the file in one rename: a write that fails midway leaves the log as it was', async () => {
  const files = new WorkspaceFiles([{ uri: vscode.Uri.file('/ws'), name: 'ws', index: 0 }] as never);
  const log = '.trace/t1/events.jsonl';
  await files.writeFile(log, '{"n":1}\n');
  await files.appendFile(log, '{"n":2}\n');
  assert.equal((await files.readFile(log)).text, '{"n":1}\n{"n":2}\n');
  assert.deepEqual(await files.listDir('.trace/t1'), [{ name: 'events.jsonl', isDir: false }]);

  const write = vscode.workspace.fs.writeFile;
  vscode.workspace.fs.writeFile = async (uri) => {
    vscode.files.set(uri.path, new Uint8Array()); // truncated, then the disk fills up
    throw new Error('no space left on device');
  };
  try {
    await assert.rejects(files.appendFile(log, '{"n":3}\n'), /no space left/);
  } finally {
    vscode.workspace.fs.writeFile = write;
  }
  assert.equal((await files.readFile(log)).text, '{"n":1}\n{"n":2}\n');
});
