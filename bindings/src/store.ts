// TraceStore: the query API (R8.4) over the traces a host's file system holds under a trace root,
// in seed 002's REST shapes, and the reads of a viewer following sessions as they are written
// (summaries and states that cost a stat per file when unchanged). Reading never writes; damaged
// files are notes in the answers.
import { TraceQuery } from './wasm/context_workbench.js';
import type { BranchDetail, EventsPage, GoalMessages, Host, Message, TraceDetail, TraceList } from './types.js';
import type { SessionState, SessionSummary } from './wasm/context_workbench.js';

export type { SessionState, SessionSummary };
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

  // A viewer following sessions as they are written: pass a summary's or a state's `stamp` back
  // as `since`, and an unchanged trace answers `null` after a stat per file, unread.

  /** The directories under the root that may hold a trace (one may not have its meta.json yet), sorted. */
  traceIds(): Promise<string[]> { return this.#use((q) => q.traceIds()); }
  /** A trace's metadata, whether a proxy wrote it and for which agent; `host_not_found` before its meta.json exists. */
  sessionSummary(traceId: string, since?: string): Promise<SessionSummary | null> { return this.#use((q) => q.sessionSummary(traceId, since)); }
  /** A trace's plan, the proxy's call records and the newest prompt; damage is a note. */
  sessionState(traceId: string, since?: string): Promise<SessionState | null> { return this.#use((q) => q.sessionState(traceId, since)); }
  /** The query API's answer to `method path?query` (every REST route of `workbench serve`, its checks and errors). */
  answer(method: string, path: string, query: string): Promise<{ status: number; body: string }> {
    return this.#use((q) => q.answer(method, path, query));
  }

  /** One message of the main line by its id (`m000012`), `null` when there is none. */
  message(traceId: string, messageId: string): Promise<Message | null> { return this.#use((q) => q.message(traceId, messageId)); }
  /** The first message the trace recorded, `null` when there is none yet. */
  firstMessage(traceId: string): Promise<Message | null> { return this.#use((q) => q.firstMessage(traceId)); }
}
