// Web entry (browser extension host): the engine's web build, initialised from the .wasm bytes
// read through vscode.workspace.fs; symbolic links cannot be resolved here, so they are refused.
import type * as vscode from 'vscode';
import { activateWith } from './activate';
import { planToolNames, webBackend } from './engine/webBackend';

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  activateWith(context, { backend: await webBackend(context.extensionUri), planToolNames: planToolNames() });
}

export function deactivate(): void {}
