// TraceStore: the query API (R8.4) over the traces a host's file system holds under a trace root,
// in seed 002's REST shapes. Reading never writes; damaged files are notes in the answers.
import { TraceQuery } from './wasm/context_workbench.js';
import type { BranchDetail, EventsPage, GoalMessages, Host, TraceDetail, TraceList } from './types.js';
import { ContextWorkbenchError, guarded, guardedAsync } from './errors.js';
import { guardHost } from './host.js';
import { init } from './init.js';

export class TraceStore {
  #wasm: TraceQuery | undefined;

  private constructor(wasm: TraceQuery) {
    this.#wasm = wasm;
  }

  /** Queries over `root` (`.trace` by default) of `host`; `invalid_input` for a root outside it. */
  static async create(host: Host, options: { root?: string; hostTimeoutMs?: number } = {}): Promise<TraceStore> {
    await init();
    const guardedHost = guardHost(host, { timeoutMs: options.hostTimeoutMs, onEvent() {}, onProgress() {} });
    return new TraceStore(guarded(() => new TraceQuery(guardedHost, options.root)));
  }

  dispose(): void {
    this.#wasm?.free();
    this.#wasm = undefined;
  }

  #use<T>(f: (query: TraceQuery) => Promise<T>): Promise<T> {
    return guardedAsync(async () => {
      if (!this.#wasm) throw new ContextWorkbenchError('disposed', 'this trace store was disposed');
      return f(this.#wasm);
    });
  }

  /** Every trace, newest first. */
  listTraces(): Promise<TraceList> { return this.#use((q) => q.listTraces()); }
  /** A trace with its goal tree and its branches' metadata. */
  trace(traceId: string): Promise<TraceDetail> { return this.#use((q) => q.trace(traceId)); }
  /** The main-line messages of one goal (its internal id): the detail of a DAG edge. */
  goalMessages(traceId: string, goalId: string): Promise<GoalMessages> { return this.#use((q) => q.goalMessages(traceId, goalId)); }
  /** One branch with its own goal tree and messages. */
  branch(traceId: string, branchId: string): Promise<BranchDetail> { return this.#use((q) => q.branch(traceId, branchId)); }
  /** The events after `sinceEventId` (0: all); `invalid_input` beyond the newest. */
  eventsAfter(traceId: string, sinceEventId = 0): Promise<EventsPage> { return this.#use((q) => q.eventsAfter(traceId, sinceEventId)); }
}
