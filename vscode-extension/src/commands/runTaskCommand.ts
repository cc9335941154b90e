// "Context Workbench: Run Task": the agent loop without the chat view, streaming into an output
// channel while the plan view, the prompt view and the status bar follow.
import * as vscode from 'vscode';
import type { TaskSink } from '../agent/agentLoop';
import { outcomeText, toolCallLine } from '../agent/outcomeText';
import type { WorkbenchSession } from '../session/workbenchSession';
import { reportError } from './reportError';

export async function runTaskCommand(session: WorkbenchSession, output: vscode.OutputChannel, given?: string): Promise<void> {
  if (session.busy) {
    void vscode.window.showWarningMessage('Context Workbench: a task is already running.');
    return;
  }
  const task = given ?? (await vscode.window.showInputBox({ title: 'Context Workbench: Run Task', prompt: 'What should the agent do? (@path mentions a file)', ignoreFocusOut: true }));
  if (!task || task.trim() === '') return;
  output.show(true);
  output.appendLine(`\n▶ ${task}`);
  const sink: TaskSink = {
    text: (delta) => output.append(delta),
    toolStarted: (call) => output.appendLine(`\n  ⚙ ${toolCallLine(call.name, call.arguments)}`),
    toolFinished: (_call, run) => output.appendLine(`    ${run.isError ? '✗' : '✓'} ${firstLine(run.output)}`),
    prepared: (call) => output.appendLine(`\n  [prompt: ${call.tokens} tokens, ${call.expectedCachedTokens} unchanged${call.rewrites.length ? `; rewrites: ${call.rewrites.map((r) => r.mechanism).join(', ')}` : ''}]`),
    usage: () => undefined,
    notice: (message) => output.appendLine(`  [engine] ${message}`),
  };
  try {
    const outcome = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Context Workbench: running the task', cancellable: true },
      (_progress, token) => session.run(task, sink, token),
    );
    const { text, isError } = outcomeText(outcome);
    output.appendLine(`\n■ ${text}`);
    if (isError) void vscode.window.showErrorMessage(`Context Workbench: ${text}`);
    else void vscode.window.showInformationMessage(`Context Workbench: ${text}`);
  } catch (e) {
    reportError('Run Task', e, output);
  }
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '';
  return line.length > 120 ? `${line.slice(0, 117)}…` : line;
}
