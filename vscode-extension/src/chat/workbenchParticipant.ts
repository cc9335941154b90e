// The chat participant `@workbench`: the same agent loop as Run Task, streamed into the chat view.
import * as vscode from 'vscode';
import type { TaskSink } from '../agent/agentLoop';
import { outcomeText, toolCallLine } from '../agent/outcomeText';
import type { WorkbenchSession } from '../session/workbenchSession';
import { decide } from '../trust/trustPolicy';
import { errorText } from '../errorText';

export function registerWorkbenchParticipant(session: WorkbenchSession, extensionUri: vscode.Uri, relativeOf: (uri: vscode.Uri) => string | undefined): vscode.Disposable | undefined {
  if (!vscode.chat || typeof vscode.chat.createChatParticipant !== 'function') return undefined;
  const participant = vscode.chat.createChatParticipant('context-workbench.workbench', async (request, _context, stream, token) => {
    const trust = decide('runTask', '@workbench', vscode.workspace.isTrusted);
    if (!trust.run) {
      stream.markdown(trust.message);
      stream.button({ command: 'workbench.trust.manage', title: 'Manage Workspace Trust' });
      return;
    }
    if (session.busy) {
      stream.markdown('A task is already running; wait for it or cancel it first.');
      return;
    }
    const task = withReferences(request.prompt, request.references, relativeOf);
    const sink: TaskSink = {
      text: (delta) => stream.markdown(delta),
      toolStarted: (call) => stream.progress(toolCallLine(call.name, call.arguments)),
      toolFinished: () => undefined,
      prepared: () => undefined,
      usage: () => undefined,
      notice: (message) => stream.progress(message),
    };
    try {
      const outcome = await session.run(task, sink, token);
      const { text, isError } = outcomeText(outcome);
      stream.markdown(`\n\n${isError ? '⚠️ ' : ''}_${text}_`);
      stream.button({ command: 'contextWorkbench.showPrompt', title: 'Show the last prompt' });
      return isError ? { errorDetails: { message: text } } : {};
    } catch (e) {
      const message = errorText(e);
      return { errorDetails: { message } };
    }
  });
  participant.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'workbench.svg');
  return participant;
}

/** Files attached with `#file` become `@path` mentions, which the engine turns into reminders. */
function withReferences(prompt: string, references: readonly vscode.ChatPromptReference[], relativeOf: (uri: vscode.Uri) => string | undefined): string {
  const mentions = references
    .map((r) => (r.value instanceof vscode.Uri ? r.value : r.value instanceof vscode.Location ? r.value.uri : undefined))
    .map((uri) => (uri ? relativeOf(uri) : undefined))
    .filter((p): p is string => p !== undefined && !prompt.includes(`@${p}`))
    .map((p) => `@${p}`);
  return mentions.length ? `${prompt}\n\n${mentions.join(' ')}` : prompt;
}
