// Web entry (browser extension host): symbolic links cannot be resolved here, so they are refused;
// no proxy, since a browser cannot listen for connections.
import type * as vscode from 'vscode';
import { activateWith } from './activate';

export function activate(context: vscode.ExtensionContext): void {
  activateWith(context, { kind: 'web' });
}

export function deactivate(): void {}
