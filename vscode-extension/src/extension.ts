// Desktop entry (Node extension host): the engine's Node build, symbolic links resolved with fs.
import type * as vscode from 'vscode';
import { activateWith } from './activate';
import { nodeBackend, planToolNames } from './engine/nodeBackend';
import { realPathRefusingDangling } from './hosts/nodeRealPath';

export function activate(context: vscode.ExtensionContext): void {
  activateWith(context, { backend: nodeBackend(), planToolNames: planToolNames(), realPath: realPathRefusingDangling });
}

export function deactivate(): void {}
