// Compress the selection, or the active terminal's last output, as a tool result: the engine's
// compressor decides, the result opens beside the editor with what it saved.
import * as vscode from 'vscode';
import type { ToolOutput } from '../engine/engineApi';
import type { TerminalCommands } from '../hosts/terminalCommands';
import type { WorkbenchSession } from '../session/workbenchSession';
import type { PromptDocuments } from '../views/promptDocument';

/** Above this, the text is cut to its head and tail before the engine sees it (memory bound). */
const MAX_INPUT_CHARS = 8_000_000;

const TOOLS: Array<{ label: string; tool: string; detail: string }> = [
  { label: 'Command output', tool: 'run_command', detail: 'bash family: errors and the tail kept' },
  { label: 'File read', tool: 'read_file', detail: 'read family' },
  { label: 'Search results', tool: 'grep', detail: 'grep family' },
  { label: 'File list', tool: 'glob', detail: 'glob family' },
  { label: 'Other tool', tool: 'tool', detail: 'default family: truncate and summarise' },
];

export async function compressSelection(session: WorkbenchSession, documents: PromptDocuments): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const text = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : undefined;
  if (!editor || text === undefined) {
    void vscode.window.showWarningMessage('Context Workbench: select the text of a tool output in an editor first.');
    return;
  }
  const kind = await vscode.window.showQuickPick(TOOLS, { title: 'Compress as the output of which tool?' });
  if (!kind) return;
  await compressAndShow(session, documents, { tool: kind.tool, arguments: '{}', output: text }, `the selection (${kind.label.toLowerCase()})`);
}

export async function compressTerminalOutput(session: WorkbenchSession, documents: PromptDocuments, terminal: TerminalCommands): Promise<void> {
  const last = terminal.lastOfActiveTerminal();
  if (!last) {
    void vscode.window.showWarningMessage('Context Workbench: no finished command in the active terminal yet (this needs the terminal\'s shell integration). Run a command in it first.');
    return;
  }
  const note = last.truncated ? ` (${last.totalChars} characters; head and tail kept)` : '';
  await compressAndShow(session, documents, { tool: 'run_command', arguments: JSON.stringify({ command: last.command }), output: last.output, exitCode: last.exitCode }, `\`${last.command}\`${note}`);
}

let compressions = 0;

async function compressAndShow(session: WorkbenchSession, documents: PromptDocuments, input: ToolOutput, what: string): Promise<void> {
  const output = input.output.length > MAX_INPUT_CHARS ? `${input.output.slice(0, MAX_INPUT_CHARS / 2)}\n… [${input.output.length - MAX_INPUT_CHARS} characters not kept] …\n${input.output.slice(-MAX_INPUT_CHARS / 2)}` : input.output;
  const result = await session.compress({ ...input, output });
  await documents.showResult(`compressed-${++compressions}.txt`, result.text, vscode.ViewColumn.Beside);
  const saved = result.tokensIn > 0 ? Math.round((100 * (result.tokensIn - result.tokensOut)) / result.tokensIn) : 0;
  const notes = result.notes.length ? ` (${result.notes.join('; ')})` : ' (kept as it was)';
  void vscode.window.showInformationMessage(`Context Workbench compressed ${what}: ${result.tokensIn} → ${result.tokensOut} tokens, ${saved}% saved, ${result.family} family${notes}.`);
}
