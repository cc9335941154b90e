// The npm proxy's engine threads: a few `node:worker_threads`, each a ProxyWorker (worker.ts),
// so the engine's work (reading a long history, compacting it) never runs on the server's event
// loop: a long prepare in one conversation holds up neither another conversation on another
// thread, nor a side call, nor a forwarded request. The conversations of one trace base (an
// agent's session id) stay on one thread, which names their traces.
import { Worker } from 'node:worker_threads';
import { ContextWorkbenchError } from '../errors.js';
import type { RanksSource } from '../init.js';
import type { ResolvedConfig } from '../wasm/context_workbench.js';
import type { Operations } from './worker.js';

/** Where an engine thread finds its script and the engine (a bundler ships them elsewhere). */
export interface EngineThreads {
  /** The thread's script: the package's `dist/proxy/worker.js` by default. */
  script?: string | URL;
  /** The `.wasm` and the rank files, when not beside the script's package (see `init`). */
  wasm?: string;
  ranks?: Partial<Record<'o200k_base' | 'cl100k_base', RanksSource>>;
  /** How many threads; by default 2 (at least one conversation besides a long one). */
  count?: number;
}

/** What a thread starts with. */
export interface EngineThreadData {
  workspace: string;
  config: ResolvedConfig;
  wasm?: string;
  ranks?: EngineThreads['ranks'];
}

interface Pending {
  thread: number;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

export class EnginePool {
  readonly #threads: Worker[] = [];
  /** Each thread's start: calls wait for it, and fail when it failed (a thread that is gone). */
  readonly #ready: Promise<void>[] = [];
  readonly #pending = new Map<number, Pending>();
  /** Trace base → its thread, and how many bases each thread holds. */
  readonly #assigned = new Map<string, number>();
  readonly #load: number[];
  #next = 0;
  #nextAny = 0;
  #terminating = false;

  private constructor(count: number, private readonly spawn: () => Worker, private readonly onReplaced: (how: string) => void) {
    this.#load = Array.from({ length: count }, () => 0);
  }

  /**
   * Start the threads and wait until each has loaded the engine. A thread that ends later (a
   * crash, the engine's trap) fails only the calls it had, and another takes its place, told to
   * `onReplaced` (how it ended): its conversations go on from the store at their next call.
   */
  static async start(data: EngineThreadData, options: EngineThreads = {}, onReplaced: (how: string) => void = () => {}): Promise<EnginePool> {
    const script = options.script ?? new URL('./worker.js', import.meta.url);
    const workerData = { ...data, wasm: options.wasm, ranks: options.ranks };
    const pool = new EnginePool(Math.max(1, options.count ?? 2), () => new Worker(script, { workerData }), onReplaced);
    try {
      await Promise.all(pool.#load.map((_, index) => pool.#start(index)));
    } catch (error) {
      await pool.terminate();
      throw error;
    }
    return pool;
  }

  /** Start thread `index`; resolves once it has loaded the engine. */
  #start(index: number): Promise<void> {
    const thread = this.spawn();
    this.#threads[index] = thread;
    /** Why it ended, when an error ended it. */
    let failure: string | undefined;
    thread.on('message', (message: { id?: number; result?: unknown; error?: { message: string; code: string } }) => {
      const pending = message.id === undefined ? undefined : this.#pending.get(message.id);
      if (!pending) return;
      this.#pending.delete(message.id!);
      if (message.error) pending.reject(new ContextWorkbenchError(message.error.code, message.error.message));
      else pending.resolve(message.result);
    });
    thread.on('error', (error) => { failure = error.message; });
    let started = false;
    let refuse!: (error: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      refuse = reject;
      thread.once('message', () => {
        started = true;
        resolve();
      });
    });
    ready.catch(() => undefined);
    thread.once('exit', (code) => {
      const how = failure === undefined ? `exited (${code})` : `failed: ${failure}`;
      for (const [id, pending] of this.#pending) {
        if (pending.thread !== index) continue;
        pending.reject(new ContextWorkbenchError('host_failed', `an engine thread ${how}`));
        this.#pending.delete(id);
      }
      if (!started) {
        // A start that failed is not tried again.
        refuse(new ContextWorkbenchError('init_failed', `an engine thread could not start: ${failure ?? `it exited (${code})`}`));
      } else if (!this.#terminating) {
        this.onReplaced(how);
        void this.#start(index);
      }
    });
    this.#ready[index] = ready;
    return ready;
  }

  /** The thread of a trace base: the one it has, else the least loaded. */
  threadOf(traceBase: string): number {
    let thread = this.#assigned.get(traceBase);
    if (thread === undefined) {
      thread = this.#load.indexOf(Math.min(...this.#load));
      this.#assigned.set(traceBase, thread);
      this.#load[thread]! += 1;
    }
    return thread;
  }

  /** A thread for work of no conversation's, each in turn. */
  anyThread(): number {
    this.#nextAny = (this.#nextAny + 1) % this.#threads.length;
    return this.#nextAny;
  }

  /** Run ProxyWorker's `op` on `thread` (one taking another's place, once it has started). */
  call<Op extends keyof Operations>(thread: number, op: Op, ...args: Parameters<Operations[Op]>): Promise<Awaited<ReturnType<Operations[Op]>>> {
    type Result = Awaited<ReturnType<Operations[Op]>>;
    const gone = () => Promise.reject(new ContextWorkbenchError('host_failed', 'the engine thread is gone'));
    return this.#ready[thread]!.then(() => new Promise<Result>((resolve, reject) => {
      const id = this.#next++;
      this.#pending.set(id, { thread, resolve: resolve as (value: unknown) => void, reject });
      this.#threads[thread]!.postMessage({ id, op, args });
    }), gone);
  }

  /** How many threads there are. */
  get size(): number {
    return this.#threads.length;
  }

  async terminate(): Promise<void> {
    this.#terminating = true;
    await Promise.all(this.#threads.map((thread) => thread.terminate()));
  }
}
