// The goal DAG in a webview, drawn by the playground's renderer (bundled into dist/dag/). Strict
// Content-Security-Policy: scripts only with this panel's nonce, no remote resources at all.
import * as vscode from 'vscode';
import type { GoalTreeData } from '../engine/engineApi';

export class DagPanel implements vscode.Disposable {
  private panel?: vscode.WebviewPanel;
  private tree: GoalTreeData = { mission: '', goals: [] };

  constructor(private readonly extensionUri: vscode.Uri) {}

  show(tree: GoalTreeData): void {
    this.tree = tree;
    if (this.panel) {
      this.panel.reveal(vscode.ViewColumn.Beside);
      this.post();
      return;
    }
    const dagRoot = vscode.Uri.joinPath(this.extensionUri, 'dist', 'dag');
    this.panel = vscode.window.createWebviewPanel('contextWorkbench.dag', 'Goal DAG', vscode.ViewColumn.Beside, {
      enableScripts: true,
      localResourceRoots: [dagRoot],
      retainContextWhenHidden: true,
    });
    this.panel.onDidDispose(() => (this.panel = undefined));
    this.panel.webview.onDidReceiveMessage((m: { type?: string }) => {
      if (m?.type === 'ready') this.post();
    });
    this.panel.webview.html = dagHtml(this.panel.webview, dagRoot, nonce());
  }

  /** The tree last drawn or given. */
  get current(): GoalTreeData {
    return this.tree;
  }

  update(tree: GoalTreeData): void {
    this.tree = tree;
    this.post();
  }

  private post(): void {
    void this.panel?.webview.postMessage({ type: 'plan', tree: this.tree });
  }

  dispose(): void {
    this.panel?.dispose();
  }
}

export function dagHtml(webview: vscode.Webview, dagRoot: vscode.Uri, nonceValue: string): string {
  const asset = (name: string) => webview.asWebviewUri(vscode.Uri.joinPath(dagRoot, name)).toString();
  const csp = [
    "default-src 'none'",
    `img-src ${webview.cspSource} data:`,
    `style-src ${webview.cspSource} 'nonce-${nonceValue}'`,
    `script-src 'nonce-${nonceValue}'`,
    "font-src 'none'",
    "connect-src 'none'",
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${asset('dag.css')}">
<title>Goal DAG</title>
</head>
<body>
<div id="dag" class="panel" aria-label="Goal DAG"><p class="empty">No plan yet: the DAG appears once the agent sets goals.</p></div>
<script nonce="${nonceValue}" src="${asset('dagView.js')}"></script>
</body>
</html>`;
}

function nonce(): string {
  const bytes = new Uint8Array(18);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes)).replace(/[+/=]/g, '');
}
