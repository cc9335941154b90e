// Every failure reaches the user as a notification with a clear message; nothing is thrown out of
// a command or a view.
import * as vscode from 'vscode';
import { errorText } from '../errorText';

export function reportError(what: string, e: unknown, output?: vscode.OutputChannel): void {
  const message = errorText(e);
  output?.appendLine(`✗ ${what}: ${message}`);
  const actions = /contextWorkbench\.llm|language model/i.test(message) ? ['Open Settings'] : [];
  void vscode.window.showErrorMessage(`Context Workbench — ${what}: ${message}`, ...actions).then((choice) => {
    if (choice === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'contextWorkbench');
  });
}

/** Wrap a command handler so that a failure becomes a notification. */
export function guarded<A extends unknown[]>(what: string, handler: (...args: A) => unknown, output?: vscode.OutputChannel): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await handler(...args);
    } catch (e) {
      reportError(what, e, output);
    }
  };
}
