// Load the engine shipped inside the extension (dist/engine/: the .wasm and the tokenizer's rank
// files), read through vscode.workspace.fs so the desktop and the web extension host do the same.
import * as vscode from 'vscode';
import { init } from 'context-workbench';

let loading: Promise<void> | undefined;

export function loadEngine(extensionUri: vscode.Uri): Promise<void> {
  loading ??= (async () => {
    // Copied into plain ArrayBuffer-backed arrays, as the package's types ask.
    const file = async (name: string) => new Uint8Array(await vscode.workspace.fs.readFile(vscode.Uri.joinPath(extensionUri, 'dist', 'engine', name)));
    const [wasm, o200k, cl100k] = await Promise.all([file('context_workbench_bg.wasm'), file('o200k_base.tiktoken'), file('cl100k_base.tiktoken')]);
    await init({ wasm, ranks: { o200k_base: o200k, cl100k_base: cl100k } });
  })().catch((e) => {
    loading = undefined;
    throw e;
  });
  return loading;
}
