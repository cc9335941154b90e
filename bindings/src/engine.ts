// ContextEngine: the engine over one trace, with explicit dispose(). A thin layer over the wasm
// class: it loads the engine and ranks, guards the host (timeouts), fans events out to
// subscribers, and turns every throw and rejection into a ContextWorkbenchError.
import { ContextEngine as WasmEngine } from './wasm/context_workbench.js';
import type {
  CallInput, Completion, CompletionRequest, Compressed, Config, EngineEvent, GoalPlan, GoalToolResult, GoalTree,
  RecallResult,
  HistoryView, Host,
  Message, MessageInput, PersistReport, TokenCount, PreparedCall, Progress, PromptFormat, RepairNote, RewriteRecord, StateBoard, StateDelta,
  StateUpdate, Step, ToolOutputInput, ToolResult, ToolSpec, Trace, Usage,
} from './types.js';
import { ContextWorkbenchError, guarded, guardedAsync } from './errors.js';
import { guardHost } from './host.js';
import { ENCODINGS, ensureEncoding, init, type Encoding } from './init.js';

export interface EngineOptions {
  /** Milliseconds a host file method may take before it fails with `host_timeout` (30,000;
   * `Infinity`: no limit). Anything but a positive number is refused with `invalid_input`. */
  hostTimeoutMs?: number;
}

export type EventListener = (event: EngineEvent) => void;
export type ProgressListener = (update: Progress) => void;

export class ContextEngine {
  #wasm: WasmEngine | undefined;
  readonly #events = new Set<EventListener>();
  readonly #progress = new Set<ProgressListener>();
  #exact: Promise<void> = Promise.resolve();

  private constructor() {}

  /**
   * An engine at once, before the encoding's rank file: it loads in the background, and until
   * it has, counts are a calibrated estimate (`measureTokens` says `estimated: true`,
   * `estimating` is true) and nothing is saved or prepared from them: `prepareCall`, `persist`,
   * the compactions and `requestStateUpdate` wait for the ranks (`exact`), `updateState` refuses
   * with `ranks_not_loaded`. Rejects like `create` for a bad host or config.
   */
  static async start(host: Host, config?: Config, options: EngineOptions = {}): Promise<ContextEngine> {
    const encoding = config?.encoding ?? 'o200k_base';
    const engine = new ContextEngine();
    // The rank file is read while the .wasm loads.
    if (ENCODINGS.includes(encoding)) {
      engine.#exact = ensureEncoding(encoding as Encoding);
      // A failed load is the `exact` promise's rejection; the engine goes on estimating.
      engine.#exact.catch(() => {});
    }
    await init();
    const guardedHost = engine.#guard(host, options);
    engine.#wasm = guarded(() => new WasmEngine(guardedHost, config));
    return engine;
  }

  /**
   * An engine over a new trace. Loads the engine and the encoding's rank file on first use (in
   * Node from the package, in browsers from beside it unless init() named other sources).
   * Rejects with `host_failed` for a host that lacks a method, `invalid_config` for a bad config.
   */
  static async create(host: Host, config?: Config, options: EngineOptions = {}): Promise<ContextEngine> {
    const engine = await ContextEngine.#prepare(config);
    const guardedHost = engine.#guard(host, options);
    engine.#wasm = guarded(() => new WasmEngine(guardedHost, config));
    return engine;
  }

  /**
   * Start or resume a persisted trace under the config's `store.root` (`.trace` by default):
   * with `traceId` naming a saved trace, everything is restored so the next prompt is the one
   * the previous process would have sent. `notes` say what a resume had to degrade. Rejects,
   * naming the file, when a trace cannot be resumed without losing what it holds.
   */
  static async open(
    host: Host, config?: Config, options: EngineOptions & { traceId?: string } = {},
  ): Promise<{ engine: ContextEngine; notes: string[] }> {
    const engine = await ContextEngine.#prepare(config);
    const guardedHost = engine.#guard(host, options);
    const opened = await guardedAsync(() => WasmEngine.open(guardedHost, config, options.traceId));
    engine.#wasm = opened.engine;
    return { engine, notes: opened.notes };
  }

  static async #prepare(config: Config | undefined): Promise<ContextEngine> {
    const encoding = config?.encoding ?? 'o200k_base';
    // An unknown encoding is left to the engine, which refuses it as `invalid_config`.
    await (ENCODINGS.includes(encoding) ? ensureEncoding(encoding) : init());
    return new ContextEngine();
  }

  #guard(host: Host, options: EngineOptions): Host {
    return guardHost(host, {
      timeoutMs: options.hostTimeoutMs,
      onEvent: (event) => notify(this.#events, event),
      onProgress: (update) => notify(this.#progress, update),
    });
  }

  /** Free the engine's memory. Every later call throws `disposed`; pending calls still settle. */
  dispose(): void {
    const wasm = this.#wasm;
    this.#wasm = undefined;
    this.#events.clear();
    this.#progress.clear();
    // A listener may dispose during the call that emitted, while the engine is borrowed: free
    // it once that call has returned.
    if (wasm) {
      queueMicrotask(() => {
        try {
          wasm.free();
        } catch (error) {
          console.error('context-workbench: the engine could not be freed', error);
        }
      });
    }
  }

  get disposed(): boolean {
    return this.#wasm === undefined;
  }

  #use<T>(f: (engine: WasmEngine) => T): T {
    const engine = this.#wasm;
    if (!engine) throw new ContextWorkbenchError('disposed', 'this engine was disposed');
    return guarded(() => f(engine));
  }

  #useAsync<T>(f: (engine: WasmEngine) => Promise<T>): Promise<T> {
    return guardedAsync(() => this.#use(f));
  }

  /** What must not rest on an estimate: once the counts are exact. */
  async #afterRanks<T>(f: (engine: WasmEngine) => Promise<T>): Promise<T> {
    await guardedAsync(() => this.#exact);
    return this.#useAsync(f);
  }

  /** Tokens of `text` in the configured encoding: a plain number, synchronous; exact, except
   * from an engine `start`ed before its ranks (see `measureTokens`). */
  countTokens(text: string): number { return this.#use((e) => e.countTokens(text)); }
  /** Tokens of `text`, `estimated: true` while the encoding's ranks are not loaded. */
  measureTokens(text: string): TokenCount { return this.#use((e) => e.measureTokens(text)); }
  /** True while counts are estimates (an engine `start`ed before its ranks arrived). */
  get estimating(): boolean { return this.#use((e) => e.estimating); }
  /** Resolves when counts are exact; rejects with the rank file's error when it failed to load. */
  get exact(): Promise<void> { return this.#exact; }
  get encoding(): Encoding { return this.#use((e) => e.encoding as Encoding); }
  get traceId(): string { return this.#use((e) => e.traceId); }
  /** The trace directory (`.trace/<id>`) when the engine saves its trace. */
  get traceDir(): string | undefined { return this.#use((e) => e.traceDir); }
  /** The configuration in effect, every field filled in. */
  config(): Required<Config> { return this.#use((e) => e.config()); }

  // Recording
  /** Record a message; returns its id (`m000042`). */
  record(message: MessageInput): string { return this.#use((e) => e.record(message)); }
  /** Record one tool result as a `tool` message answering `result.call_id`. */
  recordToolResult(result: ToolResult): string { return this.#use((e) => e.recordToolResult(result)); }
  /** Record the user's input; `@path` mentions the host's stat finds get a read reminder. */
  recordUserInput(text: string): Promise<string> { return this.#useAsync((e) => e.recordUserInput(text)); }
  /** Replace the history with `messages`, repaired where needed; the repair notes. */
  loadHistory(messages: Message[]): RepairNote[] { return this.#use((e) => e.loadHistory(messages)); }
  /** Withdraw the messages from id `from` on (the agent sent them again changed; its version is recorded next): kept in the raw trace, shown nowhere in the prompt. How many. */
  withdrawFrom(from: string): number { return this.#use((e) => e.withdrawFrom(from)); }
  /** The trace recorded so far. */
  trace(): Trace { return this.#use((e) => e.trace()); }
  /** What replaced what in the prompt: blocks with their raw ranges, summary, pruned outputs, rewrites. */
  historyView(): HistoryView { return this.#use((e) => e.historyView()); }
  startSpan(id: string, goal: string): void { this.#use((e) => e.startSpan(id, goal)); }
  endSpan(id: string, outcome: string): void { this.#use((e) => e.endSpan(id, outcome)); }
  /** A file was read with this mtime: the note for the result when it changed since the last read. */
  observeRead(path: string, mtimeMs: number): string | undefined { return this.#use((e) => e.observeRead(path, mtimeMs)); }

  // Prompts
  /** The next call's prompt, compacted when due, with its request in `format` (openai by default). */
  prepareCall(input?: CallInput, format?: PromptFormat): Promise<PreparedCall> {
    return this.#afterRanks((e) => e.prepareCall(input, format));
  }
  /** The history form of one tool output (R3). */
  compressToolOutput(output: ToolOutputInput): Compressed { return this.#use((e) => e.compressToolOutput(output)); }
  /** Compact an ended span now, wherever it lies; the rewrite and its cost. */
  compactSpan(id: string): Promise<RewriteRecord> { return this.#afterRanks((e) => e.compactSpan(id)); }
  /** Compact the uncompacted tail now, whatever the batching rule and cost model say (`invalid_input` when there is nothing to compact). */
  compactTail(): Promise<RewriteRecord> { return this.#afterRanks((e) => e.compactTail()); }

  // The state board
  stateBoard(): StateBoard { return this.#use((e) => e.stateBoard()); }
  /** Apply a STATE_DELTA (evidence checked) and append it to history. */
  updateState(delta: StateDelta): StateUpdate { return this.#use((e) => e.updateState(delta)); }
  /** Ask the host's LLM for a STATE_DELTA over the recent turns and apply it. */
  requestStateUpdate(): Promise<StateUpdate> { return this.#afterRanks((e) => e.requestStateUpdate()); }

  // Goals and events
  /** The plan tools to offer the model, as JSON-schema functions. */
  goalTools(): ToolSpec[] { return this.#use((e) => e.goalTools()); }
  /** Run a plan tool the model called; a refused call is a result with `is_error`. */
  callGoalTool(name: string, args: string | object): GoalToolResult { return this.#use((e) => e.callGoalTool(name, args)); }
  /** The `recall` tool to offer beside the plan tools: the originals of compressed forms, back. */
  recallTool(): ToolSpec { return this.#use((e) => e.recallTool()); }
  /** Answer a `recall` call from the raw trace (read-only); a bad call is a result with `is_error`. */
  recall(args: string | object): RecallResult { return this.#use((e) => e.recall(args)); }
  goalTree(): GoalTree { return this.#use((e) => e.goalTree()); }
  /** The plan block, the todo list and every goal's display number. */
  plan(): GoalPlan { return this.#use((e) => e.plan()); }
  stepView(): Step[] { return this.#use((e) => e.stepView()); }
  /** Seed 004's tree dump as text, or as JSON text. */
  dumpTree(json = false): string { return this.#use((e) => e.dumpTree(json)); }
  /** Every event after `sinceEventId` (0: all). */
  eventsSince(sinceEventId = 0): EngineEvent[] { return this.#use((e) => e.eventsSince(sinceEventId)); }
  /**
   * Call `listener` with every event as it happens; with `since`, first with the events after
   * that id (0: all so far). Returns the function that unsubscribes.
   */
  subscribe(listener: EventListener, options: { since?: number } = {}): () => void {
    if (options.since !== undefined) for (const event of this.eventsSince(options.since)) call(listener, event);
    this.#use(() => this.#events.add(listener));
    return () => this.#events.delete(listener);
  }
  /** Call `listener` with the progress of long operations (compactions) and notices. */
  onProgress(listener: ProgressListener): () => void {
    this.#use(() => this.#progress.add(listener));
    return () => this.#progress.delete(listener);
  }
  /** Whether the model's plain reply just recorded ends the task: not while the plan has open goals, until the model, reminded of them by the next prompt, answers plainly again (R6.8). */
  replyEndsTask(): boolean { return this.#use((e) => e.replyEndsTask()); }
  /** The task is done: `trace_completed` with the totals, and the trace's `meta.json` says `completed` from the next save. Once per task (the next user input reopens it). */
  completeTrace(): void { this.#use((e) => e.completeTrace()); }

  // Explore branches
  recordInBranch(branch: string, message: MessageInput): string { return this.#use((e) => e.recordInBranch(branch, message)); }
  callBranchTool(branch: string, name: string, args: string | object): string {
    return this.#use((e) => e.callBranchTool(branch, name, args));
  }
  branchMessages(branch: string): Message[] { return this.#use((e) => e.branchMessages(branch)); }
  prepareBranchCall(branch: string, input?: CallInput, format?: PromptFormat): Promise<PreparedCall> {
    return this.#afterRanks((e) => e.prepareBranchCall(branch, input, format));
  }
  /** A branch finished; true when every branch of its exploration has. */
  finishBranch(branch: string, summary: string): boolean { return this.#use((e) => e.finishBranch(branch, summary)); }
  /** Merge the finished exploration; the merge summary is the `explore` call's result. */
  mergeExplore(selected?: string): string { return this.#use((e) => e.mergeExplore(selected)); }

  // The trace store
  /** Save what changed since the last save (prepareCall also saves before it resolves). */
  persist(): Promise<PersistReport> { return this.#afterRanks((e) => e.persist()); }
  /** Save to `root/<trace id>/` from now on (a trace recorded in memory first). */
  attachStore(root: string): void { this.#use((e) => e.attachStore(root)); }
  /** Name the trace before it has a store. */
  setTraceId(id: string): void { this.#use((e) => e.setTraceId(id)); }

  // The LLM
  /** Ask the host's LLM through the engine (its usage then drives the compaction trigger). */
  complete(request: CompletionRequest): Promise<Completion> { return this.#useAsync((e) => e.complete(request)); }
  /** The provider's usage for the call last prepared. */
  reportUsage(usage: Usage): void { this.#use((e) => e.reportUsage(usage)); }
  lastUsage(): Usage | undefined { return this.#use((e) => e.lastUsage()); }
}

function notify<T>(listeners: Set<(value: T) => void>, value: T): void {
  for (const listener of listeners) call(listener, value);
}

/** A listener's throw is its own bug: reported, never breaking the engine call that emitted. */
function call<T>(listener: (value: T) => void, value: T): void {
  try {
    listener(value);
  } catch (error) {
    console.error('context-workbench: a listener threw', error);
  }
}
