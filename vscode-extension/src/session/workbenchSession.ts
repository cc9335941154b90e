// One workbench session: the engine over the workspace, the configured model, and the views it
// keeps up to date. Created on first use, so a missing model or folder only shows when needed.
import * as vscode from 'vscode';
import { type TaskOutcome, type TaskSink, runTask } from '../agent/agentLoop';
import { CodingTools } from '../agent/codingTools';
import { type Settings, readSettings } from '../config/settings';
import type { CompressedOutput, EngineApi, EngineBackend, GoalTreeData, PreparedCall, ToolOutput, TraceSummary } from '../engine/engineApi';
import { engineHost } from '../hosts/engineHost';
import { readOnlyHost } from '../hosts/readOnlyHost';
import type { TerminalCommands } from '../hosts/terminalCommands';
import { type RealPath, WorkspaceFiles } from '../hosts/workspaceFiles';
import { configuredModel, windowOf } from '../llm/configuredModel';
import type { ChatModel } from '../llm/types';
import type { GoalPlanView } from '../views/goalPlanView';
import type { PromptDocuments } from '../views/promptDocument';
import type { PromptStatusBar } from '../views/statusBar';
import { errorText } from '../errorText';

export interface SessionParts {
  secrets: vscode.SecretStorage;
  backend: EngineBackend;
  realPath?: RealPath;
  terminal: TerminalCommands;
  plan: GoalPlanView;
  prompts: PromptDocuments;
  status: PromptStatusBar;
  output: vscode.OutputChannel;
  /** Called whenever the goal tree changed (the DAG panel listens). */
  onPlan: (tree: GoalTreeData) => void;
  /** Called when a task starts: the views are the agent's again. */
  onAgentActive?: () => void;
}

interface Live { engine: EngineApi; model: ChatModel; files: WorkspaceFiles; window: number }

export class WorkbenchSession implements vscode.Disposable {
  private live?: Promise<Live>;
  private running?: AbortController;
  private planTimer?: ReturnType<typeof setTimeout>;
  /** The engine once started, for the views' synchronous questions. */
  private current?: Live;
  private unsubscribe?: () => void;
  private plan: GoalTreeData = { mission: '', goals: [] };

  constructor(private readonly parts: SessionParts) {}

  /** The engine and model, created on first use; a failure is thrown again on the next try. */
  async ensure(): Promise<Live> {
    this.live ??= this.start().catch((e) => {
      this.live = undefined;
      throw e;
    });
    return this.live;
  }

  private async start(resume?: string): Promise<Live> {
    const settings = readSettings();
    const files = new WorkspaceFiles(vscode.workspace.workspaceFolders ?? [], this.parts.realPath);
    const model = await configuredModel(settings, this.parts.secrets);
    const window = windowOf(settings, model);
    const host = this.hostOver(files, async () => this.current?.model ?? model);
    // `@path` reminders name the agent's own read tool (the model has no `Read`).
    const config = { read_tool: 'read_file', ...settings.engine, window, ...storeConfig(settings) };
    let engine: EngineApi;
    if (resume) {
      const opened = await this.parts.backend.open(host, config, resume);
      for (const note of opened.notes) this.parts.output.appendLine(`[trace ${resume}] ${note}`);
      engine = opened.engine;
    } else {
      engine = await this.parts.backend.create(host, config);
    }
    this.parts.output.appendLine(`Context Workbench: trace ${engine.traceId}, model ${model.label}, window ${window} tokens`);
    this.unsubscribe?.();
    this.unsubscribe = engine.onEvent(() => this.schedulePlanUpdate());
    this.current = { engine, model, files, window };
    this.updatePlan(engine);
    return this.current;
  }

  /** The text of a raw history message as the prompt view compares it, if the trace has it. */
  rawText(source: string): string | undefined {
    return this.current?.engine.rawMessageText(source);
  }

  currentPlan(): GoalTreeData {
    return this.plan;
  }

  /** The trace of the engine this window started or opened, if any. */
  traceId(): string | undefined {
    return this.current?.engine.traceId;
  }

  /**
   * The raw trace `traceId` of the trace folder as JSON, read through an engine of its own that
   * may not write (another process may be writing that trace): no model, nothing saved.
   */
  async traceJsonOf(traceId: string): Promise<string> {
    const settings = readSettings();
    const files = new WorkspaceFiles(vscode.workspace.workspaceFolders ?? [], this.parts.realPath);
    const opened = await this.parts.backend.open(readOnlyHost(files), { ...settings.engine, ...storeConfig(settings) }, traceId);
    try {
      return opened.engine.traceJson();
    } finally {
      opened.engine.dispose();
    }
  }

  private hostOver(files: WorkspaceFiles, model: () => Promise<ChatModel>) {
    return engineHost(files, model, {
      progress: (p) => {
        this.parts.output.appendLine(`[engine] ${p.operation}: ${p.message}`);
        if (p.done && /fail|stopp|timeout/i.test(p.message)) void vscode.window.showWarningMessage(`Context Workbench: ${p.message}`);
      },
    });
  }

  /** The engine's compressor under the engine settings; needs no folder and no model. */
  compress(input: ToolOutput): Promise<CompressedOutput> {
    return this.parts.backend.compressToolOutput(readSettings().engine, input);
  }

  traceFolder(): string {
    return readSettings().traceFolder;
  }

  /** The traces kept in the trace folder, newest first as the engine lists them. */
  async listTraces(): Promise<{ traces: TraceSummary[]; notes: string[] }> {
    const files = new WorkspaceFiles(vscode.workspace.workspaceFolders ?? [], this.parts.realPath);
    const host = this.hostOver(files, async () => {
      throw new Error('listing traces needs no model');
    });
    return this.parts.backend.listTraces(host, this.traceFolder());
  }

  /** Replace the session's engine by one resumed from `traceId`; the views show its state. */
  async openTrace(traceId: string): Promise<string> {
    if (this.running) throw new Error('A task is running; open the trace when it has finished.');
    // Busy while it opens: a task started now would run on the engine about to be disposed.
    this.running = new AbortController();
    try {
      const previous = this.live;
      const next = this.start(traceId);
      const live = await next;
      this.live = next;
      void previous?.then((l) => l.engine.dispose(), () => undefined);
      const tree = live.engine.goalTree();
      const goals = tree.goals.length;
      return `${goals} goal${goals === 1 ? '' : 's'}${tree.mission ? ` for "${tree.mission.slice(0, 60)}"` : ''}; the next task continues it.`;
    } finally {
      this.running = undefined;
    }
  }

  get busy(): boolean {
    return this.running !== undefined;
  }

  /** Run one task through the agent loop; `sink` streams it, the views follow. */
  async run(task: string, sink: TaskSink, cancellation?: vscode.CancellationToken): Promise<TaskOutcome> {
    if (this.running) throw new Error('A task is already running; wait for it or cancel it first.');
    // Busy from the first moment: the engine may still be loading, and one engine runs one task.
    const abort = new AbortController();
    this.running = abort;
    this.parts.onAgentActive?.();
    const subscription = cancellation?.onCancellationRequested(() => abort.abort());
    try {
      return await this.runOn(await this.ensure(), task, sink, abort.signal);
    } finally {
      subscription?.dispose();
      this.running = undefined;
    }
  }

  private async runOn(live: Live, task: string, sink: TaskSink, signal: AbortSignal): Promise<TaskOutcome> {
    // The model as the settings name it now (they may have changed since the engine started).
    live.model = await configuredModel(readSettings(), this.parts.secrets);
    const tools = new CodingTools(live.files, this.parts.terminal, [readSettings().traceFolder]);
    const viewSink: TaskSink = {
      ...sink,
      prepared: (call) => {
        this.parts.prompts.update(call, `Prompt of the last call to ${live.model.label}`);
        this.parts.status.busy(`${call.tokens} tokens sent…`);
        sink.prepared(call);
      },
      usage: (usage, call) => {
        const reported = usage?.cachedTokens !== undefined && usage.cachedTokens > 0;
        this.parts.status.update({ tokens: call.tokens, window: live.window, cachedTokens: reported ? (usage?.cachedTokens ?? 0) : call.expectedCachedTokens, cachedReported: reported, model: live.model.label });
        sink.usage(usage, call);
      },
      toolFinished: (call, run) => {
        this.schedulePlanUpdate();
        sink.toolFinished(call, run);
      },
    };
    try {
      const { maxRounds, parallelBranches } = readSettings();
      return await runTask({ engine: live.engine, model: live.model, tools, maxRounds, parallelBranches }, task, viewSink, signal);
    } finally {
      this.updatePlan(live.engine);
      // The engine saves the last prompt beside the trace too (its prompt.json): a reload shows it.
      await this.persist(live.engine);
    }
  }

  cancel(): void {
    this.running?.abort();
  }

  private async persist(engine: EngineApi): Promise<void> {
    try {
      await engine.persist();
    } catch (e) {
      void vscode.window.showErrorMessage(`Context Workbench could not save the trace: ${errorText(e)}`);
    }
  }

  /** Something outside the loop (a Language Model Tool) changed the plan. */
  planChanged(): void {
    this.schedulePlanUpdate();
  }

  private schedulePlanUpdate(): void {
    if (this.planTimer) return;
    this.planTimer = setTimeout(() => {
      this.planTimer = undefined;
      void this.live?.then((l) => this.updatePlan(l.engine), () => undefined);
    }, 50);
  }

  private updatePlan(engine: EngineApi): void {
    const tree = engine.goalTree();
    this.plan = tree;
    const { numbers, progress } = engine.planMarks();
    this.parts.plan.update(tree, numbers, progress);
    this.parts.onPlan(tree);
  }

  dispose(): void {
    this.running?.abort();
    if (this.planTimer) clearTimeout(this.planTimer);
    void this.live?.then((l) => l.engine.dispose(), () => undefined);
  }
}

/** The engine keeps traces under its configured store root unless the trace folder setting names one. */
function storeConfig(settings: Settings): Record<string, unknown> {
  return settings.traceFolderSet ? { store: { ...(settings.engine.store as object | undefined), root: settings.traceFolder } } : {};
}
