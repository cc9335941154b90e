// Desktop entry (Node extension host): symbolic links are resolved with Node's fs, and the proxy
// for other agents runs here (the package's node:http server; the web bundle never imports it).
import type * as vscode from 'vscode';
import { type Activated, activateWith } from './activate';
import { realPathRefusingDangling } from './hosts/nodeRealPath';
import { startPackageProxy } from './proxy/packageProxy';

let activated: Activated | undefined;

export function activate(context: vscode.ExtensionContext): void {
  activated = activateWith(context, { kind: 'desktop', realPath: realPathRefusingDangling, startProxy: startPackageProxy });
}

/** The proxy stops here: requests in flight finish (or are cut short after a grace) and its sessions are saved before the host exits. */
export async function deactivate(): Promise<void> {
  await activated?.deactivate();
}
