// The trace: compact the tail now, show or export the raw trace, open a trace folder and replay
// it into the views. The engine reads and writes the trace; nothing here edits it.
import * as vscode from 'vscode';
import type { WorkbenchSession } from '../session/workbenchSession';
import type { PromptDocuments } from '../views/promptDocument';

/**
 * Compact now: the uncompacted tail (the oldest turns the engine would compact next), or the
 * work of an ended goal wherever it lies. The user picks; the engine compacts and reports.
 */
export async function compactNow(session: WorkbenchSession): Promise<void> {
  const { engine } = await session.ensure();
  const tail = { label: '$(fold) The uncompacted tail', description: 'the oldest turns not yet compacted; the newest stay', id: undefined };
  const spans = engine.endedSpans().map((s) => ({ label: s.goal || s.id, description: s.outcome ?? '', detail: `ended goal · ${s.id}`, id: s.id as string | undefined }));
  const pick = await vscode.window.showQuickPick([tail, ...spans], { title: 'Compact what now?' });
  if (!pick) return;
  const compact = () => (pick.id === undefined ? engine.compactTail() : engine.compactSpan(pick.id));
  let report: string;
  try {
    report = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Context Workbench: compacting' }, compact);
  } catch (e) {
    // "Nothing to compact" is an answer, not a failure; anything else is reported as an error.
    if ((e as { code?: string } | undefined)?.code !== 'invalid_input') throw e;
    void vscode.window.showInformationMessage(`Context Workbench: ${(e as Error).message}.`);
    return;
  }
  session.planChanged();
  void vscode.window.showInformationMessage(`Context Workbench: ${report}.`);
}

/** The raw trace the views show: a session followed from the trace folder, or the agent's own. */
export async function showRawTrace(session: WorkbenchSession, documents: PromptDocuments, followed?: string): Promise<void> {
  if (followed) {
    await documents.showResult(`raw-trace-${followed}.json`, await session.traceJsonOf(followed));
    return;
  }
  const { engine } = await session.ensure();
  await documents.showResult(`raw-trace-${engine.traceId}.json`, engine.traceJson());
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
