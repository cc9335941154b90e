// The trace: compact the tail now, show or export the raw trace, open a trace folder and replay
// it into the views. The engine reads and writes the trace; nothing here edits it.
import * as vscode from 'vscode';
import type { WorkbenchSession } from '../session/workbenchSession';

/** Compact the work of an ended goal now: the user picks the span, the engine compacts it. */
export async function compactNow(session: WorkbenchSession): Promise<void> {
  const { engine } = await session.ensure();
  const spans = engine.endedSpans();
  if (spans.length === 0) {
    void vscode.window.showInformationMessage('Context Workbench: nothing to compact yet; a goal\'s work can be compacted once it is done or abandoned.');
    return;
  }
  const pick = await vscode.window.showQuickPick(
    spans.map((s) => ({ label: s.goal || s.id, description: s.outcome ?? '', detail: s.id, id: s.id })),
    { title: 'Compact the work of which ended goal now?' },
  );
  if (!pick) return;
  const report = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Context Workbench: compacting' }, () => engine.compactSpan(pick.id));
  session.planChanged();
  void vscode.window.showInformationMessage(`Context Workbench: ${report}.`);
}

export async function showRawTrace(session: WorkbenchSession): Promise<void> {
  const { engine } = await session.ensure();
  const doc = await vscode.workspace.openTextDocument({ content: engine.traceJson(), language: 'json' });
  await vscode.window.showTextDocument(doc, { preview: false });
}

export async function exportTrace(session: WorkbenchSession): Promise<void> {
  const { engine } = await session.ensure();
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const target = await vscode.window.showSaveDialog({
    title: 'Export the raw trace',
    defaultUri: folder ? vscode.Uri.joinPath(folder, `trace-${engine.traceId}.json`) : undefined,
    filters: { JSON: ['json'] },
  });
  if (!target) return;
  await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(engine.traceJson()));
  void vscode.window.showInformationMessage(`Context Workbench: trace exported to ${vscode.workspace.asRelativePath(target)}.`);
}

export async function openTrace(session: WorkbenchSession): Promise<void> {
  const { traces, notes } = await session.listTraces();
  // Traces the engine cannot read (a newer format, damaged files) are left alone and said.
  if (notes.length > 0) void vscode.window.showWarningMessage(`Context Workbench: some traces in ${session.traceFolder()}/ were not listed: ${notes.join('; ')}`);
  if (traces.length === 0) {
    void vscode.window.showWarningMessage(`Context Workbench: no traces in ${session.traceFolder()}/ yet.`);
    return;
  }
  const pick = await vscode.window.showQuickPick(
    traces.map((t) => ({ label: t.task || t.traceId, description: t.traceId, detail: t.detail, traceId: t.traceId })),
    { title: `Open a trace of ${session.traceFolder()}/ and replay it into the views` },
  );
  if (!pick) return;
  const opened = await session.openTrace(pick.traceId);
  void vscode.window.showInformationMessage(`Context Workbench: trace ${pick.traceId} opened: ${opened}`);
}
