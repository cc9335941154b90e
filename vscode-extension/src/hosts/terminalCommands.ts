// The agent's run_command over a VS Code terminal: the user confirms each command, it runs in a
// visible terminal through shell integration, and its output (bounded) and exit code come back.
// Also remembers the last finished command of every terminal, for "Compress Terminal's Last Output".
import * as vscode from 'vscode';
import type { CommandRunner } from '../agent/codingTools';
import { BoundedText, stripTerminalControl } from './terminalText';

/** Output kept per command: head and tail of at most this many characters. */
export const MAX_CAPTURED_CHARS = 4_000_000;
const SHELL_INTEGRATION_WAIT_MS = 15_000;

export interface FinishedCommand { command: string; output: string; exitCode: number | undefined; totalChars: number; truncated: boolean }

export class TerminalCommands implements CommandRunner, vscode.Disposable {
  private terminal?: vscode.Terminal;
  private readonly lastByTerminal = new WeakMap<vscode.Terminal, FinishedCommand>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly cwd: vscode.Uri | undefined) {
    if (typeof vscode.window.onDidStartTerminalShellExecution === 'function') {
      this.disposables.push(vscode.window.onDidStartTerminalShellExecution((e) => void this.capture(e)));
    }
  }

  /** The last finished command of the active terminal, if shell integration saw one. */
  lastOfActiveTerminal(): FinishedCommand | undefined {
    const active = vscode.window.activeTerminal;
    return active ? this.lastByTerminal.get(active) : undefined;
  }

  async run(command: string, signal?: AbortSignal): Promise<{ output: string; exitCode: number | undefined } | undefined> {
    const choice = await vscode.window.showWarningMessage(
      'The agent wants to run a command in the workspace.',
      { modal: true, detail: command },
      'Run',
    );
    if (choice !== 'Run') return undefined;
    const terminal = await this.agentTerminal();
    const integration = terminal.shellIntegration ?? (await waitForShellIntegration(terminal));
    if (!integration) {
      return { output: 'The terminal has no shell integration, so the output of the command cannot be read; it was not run.', exitCode: undefined };
    }
    const execution = integration.executeCommand(command);
    let listener: vscode.Disposable | undefined;
    const ended = new Promise<number | undefined>((resolve) => {
      listener = vscode.window.onDidEndTerminalShellExecution((e) => e.execution === execution && resolve(e.exitCode));
    });
    // Every wait races Cancel, so a command that prints nothing (`sleep`, a server) is cancelled too.
    let cancel: () => void = () => undefined;
    const cancelled = new Promise<undefined>((resolve) => (cancel = () => resolve(undefined)));
    signal?.addEventListener('abort', cancel);
    const text = new BoundedText(MAX_CAPTURED_CHARS);
    const stream = execution.read()[Symbol.asyncIterator]();
    try {
      while (!signal?.aborted) {
        const next = await Promise.race([stream.next(), cancelled]);
        if (!next || next.done) break;
        text.append(next.value);
      }
      const exitCode = signal?.aborted ? undefined : await Promise.race([ended, cancelled]);
      const output = stripTerminalControl(text.toString());
      if (!signal?.aborted) return { output, exitCode };
      terminal.sendText('\x03', false);
      void stream.return?.().catch(() => undefined);
      return { output: `${output}${output && '\n'}[cancelled: ^C sent to the terminal]`, exitCode: undefined };
    } finally {
      signal?.removeEventListener('abort', cancel);
      listener?.dispose();
    }
  }

  private async capture(event: vscode.TerminalShellExecutionStartEvent): Promise<void> {
    const text = new BoundedText(MAX_CAPTURED_CHARS);
    const ended = new Promise<number | undefined>((resolve) => {
      const listener = vscode.window.onDidEndTerminalShellExecution((e) => {
        if (e.execution === event.execution) {
          listener.dispose();
          resolve(e.exitCode);
        }
      });
    });
    for await (const piece of event.execution.read()) text.append(piece);
    const exitCode = await ended;
    this.lastByTerminal.set(event.terminal, {
      command: event.execution.commandLine.value,
      output: stripTerminalControl(text.toString()),
      exitCode,
      totalChars: text.length,
      truncated: text.truncated,
    });
  }

  private async agentTerminal(): Promise<vscode.Terminal> {
    if (this.terminal && this.terminal.exitStatus === undefined) return this.terminal;
    this.terminal = vscode.window.createTerminal({ name: 'Context Workbench agent', cwd: this.cwd });
    this.terminal.show(true);
    return this.terminal;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.terminal?.dispose();
  }
}

function waitForShellIntegration(terminal: vscode.Terminal): Promise<vscode.TerminalShellIntegration | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      listener.dispose();
      resolve(terminal.shellIntegration);
    }, SHELL_INTEGRATION_WAIT_MS);
    const listener = vscode.window.onDidChangeTerminalShellIntegration((e) => {
      if (e.terminal === terminal) {
        clearTimeout(timer);
        listener.dispose();
        resolve(e.shellIntegration);
      }
    });
  });
}
