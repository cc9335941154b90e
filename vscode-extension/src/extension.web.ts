// Web entry (browser extension host): symbolic links cannot be resolved here, so they are refused.
import type * as vscode from 'vscode';
import { activateWith } from './activate';

export function activate(context: vscode.ExtensionContext): void {
  activateWith(context, { kind: 'web' });
}

export function deactivate(): void {}
