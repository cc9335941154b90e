// Restricted Mode in VS Code: a command that needs a trusted folder explains why instead of
// running (with a button to the trust editor), and the views follow the folder's trust as it is
// granted, without a reload.
import * as vscode from 'vscode';
import { type Decision, MANAGE_TRUST, decide } from './trustPolicy';

/** Show why something does not run here, with the button that opens the trust editor. */
export async function explainRestricted(decision: Extract<Decision, { run: false }>): Promise<void> {
  const choice = await vscode.window.showWarningMessage(decision.message, MANAGE_TRUST);
  if (choice === MANAGE_TRUST) await vscode.commands.executeCommand('workbench.trust.manage');
}

/** `handler`, run only when the folder's trust allows `command` (asked at each call: trust can be granted meanwhile). */
export function trustGated<A extends unknown[]>(command: string, title: string, handler: (...args: A) => unknown): (...args: A) => Promise<unknown> {
  return async (...args: A) => {
    const decision = decide(command, title, vscode.workspace.isTrusted);
    return decision.run ? handler(...args) : explainRestricted(decision);
  };
}

/** Call `apply` with the folder's trust now and again once it is granted. */
export function followTrust(apply: (trusted: boolean) => void): vscode.Disposable {
  apply(vscode.workspace.isTrusted);
  return vscode.workspace.onDidGrantWorkspaceTrust(() => apply(true));
}
