// The "Prompt View": a virtual document with exactly what was last sent; a code lens on each
// compressed block opens its raw original. Other results (the raw trace, a compressed selection)
// are read-only documents of the same scheme, never dirty Untitled editors.
import * as vscode from 'vscode';
import type { PreparedCall } from '../engine/engineApi';
import { type PromptText, renderPrompt } from './promptText';

export const PROMPT_SCHEME = 'context-workbench';
export const LAST_PROMPT_URI = vscode.Uri.from({ scheme: PROMPT_SCHEME, path: '/last-prompt.md' });
/** How many result documents are kept; the oldest is forgotten first. */
const MAX_RESULTS = 20;

export class PromptDocuments implements vscode.TextDocumentContentProvider, vscode.CodeLensProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensesChanged.event;
  private last?: PromptText;
  /** What the document says when there is no prompt to show. */
  private empty = '# No prompt has been sent yet: run a task first.';
  private readonly results = new Map<string, string>();
  private readonly registrations: vscode.Disposable[];

  constructor(private readonly rawText: (source: string) => string | undefined) {
    this.registrations = [
      vscode.workspace.registerTextDocumentContentProvider(PROMPT_SCHEME, this),
      vscode.languages.registerCodeLensProvider({ scheme: PROMPT_SCHEME }, this),
    ];
  }

  update(call: PreparedCall, title: string, head: string[] = []): void {
    this.last = renderPrompt(call, this.rawText, title, head);
    this.changed.fire(LAST_PROMPT_URI);
    this.lensesChanged.fire();
  }

  /** No prompt to show: `text` says why (a followed session that has none yet). */
  clear(text: string): void {
    this.last = undefined;
    this.empty = text;
    this.changed.fire(LAST_PROMPT_URI);
    this.lensesChanged.fire();
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    if (uri.path === LAST_PROMPT_URI.path) return this.last?.text ?? this.empty;
    const result = this.results.get(uri.path);
    if (result !== undefined) return result;
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

  /** Show `text` as the read-only document `name` (its extension picks the language). */
  async showResult(name: string, text: string, column?: vscode.ViewColumn): Promise<void> {
    const uri = vscode.Uri.from({ scheme: PROMPT_SCHEME, path: `/results/${name}` });
    this.results.delete(uri.path);
    this.results.set(uri.path, text);
    for (const old of [...this.results.keys()].slice(0, Math.max(0, this.results.size - MAX_RESULTS))) this.results.delete(old);
    this.changed.fire(uri);
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { viewColumn: column, preview: false });
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
