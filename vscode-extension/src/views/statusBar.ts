// The status-bar item: prompt tokens over the window, and the cached share of the last call.
import * as vscode from 'vscode';
import { statusText } from './statusText';

export class PromptStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('contextWorkbench.status', vscode.StatusBarAlignment.Right, 100);

  constructor() {
    this.item.name = 'Context Workbench';
    this.item.command = 'contextWorkbench.showPrompt';
    this.item.text = '$(layers) Context Workbench';
    this.item.tooltip = 'No prompt sent yet';
    this.item.show();
  }

  update(input: { tokens: number; window: number; cachedTokens: number; cachedReported: boolean; model: string }): void {
    const { text, tooltip } = statusText(input);
    this.item.text = `$(layers) ${text}`;
    this.item.tooltip = tooltip;
  }

  /** A session read from the trace folder (its own words, see live/sessionViews.ts). */
  show(text: string, tooltip: string): void {
    this.item.text = `$(layers) ${text}`;
    this.item.tooltip = tooltip;
  }

  busy(message: string): void {
    this.item.text = `$(sync~spin) ${message}`;
  }

  dispose(): void {
    this.item.dispose();
  }
}
