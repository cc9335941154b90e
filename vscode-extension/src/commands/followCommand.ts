// "Follow a Session…": pick which session of the trace folder the views follow, or let them follow
// the newest proxied one. Sessions that cannot be read are listed, with why, and cannot be picked.
import * as vscode from 'vscode';
import type { LiveSessions } from '../live/liveSessions';
import { byRecency, sessionItem } from '../live/sessionList';
import { sessionTitle } from '../live/sessionViews';

export async function followSession(live: LiveSessions, traceFolder: string): Promise<void> {
  const entries = await live.list();
  if (entries.length === 0) {
    void vscode.window.showInformationMessage(`Context Workbench: no sessions in ${traceFolder}/ yet. Start the proxy (Context Workbench: Start Proxy for Other Agents) or run a task.`);
    return;
  }
  type Item = vscode.QuickPickItem & { traceId?: string | null };
  const auto: Item = { label: '$(sync) Follow the newest proxied session', description: 'automatically', traceId: null };
  const readable: Item[] = byRecency(entries).map((e) => ({ ...sessionItem(e), traceId: e.traceId }));
  const unreadable: Item[] = entries.filter((e) => !e.meta).map((e) => sessionItem(e));
  const items: Item[] = [auto, ...readable];
  if (unreadable.length > 0) items.push({ label: 'cannot be followed', kind: vscode.QuickPickItemKind.Separator }, ...unreadable);
  const pick = await vscode.window.showQuickPick(items, { title: `Follow which session of ${traceFolder}/?`, matchOnDescription: true, matchOnDetail: true });
  if (!pick || pick.traceId === undefined) {
    if (pick) void vscode.window.showWarningMessage(`Context Workbench: ${pick.label.replace('$(warning) ', '')} cannot be followed: ${pick.detail}`);
    return;
  }
  const detail = await live.follow(pick.traceId ?? undefined);
  if (detail) void vscode.window.setStatusBarMessage(`Context Workbench: following ${sessionTitle(detail.entry)}`, 4000);
}
