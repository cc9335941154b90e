// Desktop entry (Node extension host): symbolic links are resolved with Node's fs.
import type * as vscode from 'vscode';
import { activateWith } from './activate';
import { realPathRefusingDangling } from './hosts/nodeRealPath';

export function activate(context: vscode.ExtensionContext): void {
  activateWith(context, { kind: 'desktop', realPath: realPathRefusingDangling });
}

export function deactivate(): void {}
