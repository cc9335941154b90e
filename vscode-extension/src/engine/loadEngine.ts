// Load the engine shipped inside the extension (dist/engine/: the .wasm and the tokenizer's binary
// rank files), read through vscode.workspace.fs so the desktop and the web extension host do the same.
import * as vscode from 'vscode';
import { init } from 'context-workbench';

let loading: Promise<void> | undefined;

export function loadEngine(extensionUri: vscode.Uri): Promise<void> {
  loading ??= (async () => {
    // Copied into plain ArrayBuffer-backed arrays, as the package's types ask.
    const file = async (name: string) => new Uint8Array(await vscode.workspace.fs.readFile(vscode.Uri.joinPath(extensionUri, 'dist', 'engine', name)));
    // The rank files are read when an engine first counts in their encoding (cl100k_base only for
    // the models that use it); the binary form loads by reference, without a parse.
    await init({ wasm: await file('context_workbench_bg.wasm'), ranks: { o200k_base: () => file('o200k_base.ranks'), cl100k_base: () => file('cl100k_base.ranks') } });
  })().catch((e) => {
    loading = undefined;
    throw e;
  });
  return loading;
}
