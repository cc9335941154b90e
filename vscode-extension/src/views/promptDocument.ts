// The "Prompt View": a virtual document with exactly what was last sent; a code lens on each
// compressed block opens its raw original.
import * as vscode from 'vscode';
import type { PreparedCall } from '../engine/engineApi';
import { type PromptText, renderPrompt } from './promptText';

export const PROMPT_SCHEME = 'context-workbench';
export const LAST_PROMPT_URI = vscode.Uri.from({ scheme: PROMPT_SCHEME, path: '/last-prompt.md' });

export class PromptDocuments implements vscode.TextDocumentContentProvider, vscode.CodeLensProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensesChanged.event;
  private last?: PromptText;
  private readonly registrations: vscode.Disposable[];

  constructor(private readonly rawText: (source: string) => string | undefined) {
    this.registrations = [
      vscode.workspace.registerTextDocumentContentProvider(PROMPT_SCHEME, this),
      vscode.languages.registerCodeLensProvider({ scheme: PROMPT_SCHEME }, this),
    ];
  }

  update(call: PreparedCall, title: string): void {
    this.last = renderPrompt(call, this.rawText, title);
    this.changed.fire(LAST_PROMPT_URI);
    this.lensesChanged.fire();
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    if (uri.path === LAST_PROMPT_URI.path) return this.last?.text ?? '# No prompt has been sent yet: run a task first.';
    const raw = /^\/raw\/(.+)\.txt$/.exec(uri.path);
    if (raw) return this.rawText(decodeURIComponent(raw[1])) ?? `# raw#${raw[1]} is not in this trace.`;
    return `# Nothing is shown at ${uri.toString()}`;
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    if (document.uri.path !== LAST_PROMPT_URI.path) return [];
    return (this.last?.blocks ?? [])
      .filter((b) => b.compressed)
      .map((b) => new vscode.CodeLens(new vscode.Range(b.line, 0, b.line, 0), { title: `$(unfold) Expand raw#${b.source}`, command: 'contextWorkbench.expandBlock', arguments: [b.source] }));
  }

  /** The compressed blocks of the last prompt, for a quick pick. */
  compressedBlocks(): Array<{ source: string; header: string }> {
    const lines = this.last?.text.split('\n') ?? [];
    return (this.last?.blocks ?? []).filter((b) => b.compressed).map((b) => ({ source: b.source, header: lines[b.line] ?? b.source }));
  }

  static rawUri(source: string): vscode.Uri {
    return vscode.Uri.from({ scheme: PROMPT_SCHEME, path: `/raw/${encodeURIComponent(source)}.txt` });
  }

  dispose(): void {
    for (const r of this.registrations) r.dispose();
    this.changed.dispose();
    this.lensesChanged.dispose();
  }
}
