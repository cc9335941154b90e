// The npm proxy's engine threads: a few `node:worker_threads`, each a ProxyWorker (worker.ts),
// so the engine's work (reading a long history, compacting it) never runs on the server's event
// loop: a long prepare in one conversation holds up neither another conversation on another
// thread, nor a side call, nor a forwarded request. The conversations of one trace base (an
// agent's session id) stay on one thread, which names their traces.
import { Worker } from 'node:worker_threads';
import { ContextWorkbenchError } from '../errors.js';
import type { RanksSource } from '../init.js';
import type { ResolvedConfig } from '../wasm/context_workbench.js';

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
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

export class EnginePool {
  readonly #threads: Worker[];
  readonly #pending = new Map<number, Pending>();
  /** Trace base → its thread, and how many bases each thread holds. */
  readonly #assigned = new Map<string, number>();
  readonly #load: number[];
  #next = 0;
  #nextAny = 0;
  /** Threads that failed or exited: a call to one fails at once. */
  readonly #gone = new Set<number>();

  private constructor(threads: Worker[]) {
    this.#threads = threads;
    this.#load = threads.map(() => 0);
    threads.forEach((thread, index) => {
      thread.on('message', (message: { id?: number; result?: unknown; error?: { message: string; code: string } }) => {
        const pending = message.id === undefined ? undefined : this.#pending.get(message.id);
        if (!pending) return;
        this.#pending.delete(message.id!);
        if (message.error) pending.reject(new ContextWorkbenchError(message.error.code, message.error.message));
        else pending.resolve(message.result);
      });
      // A thread that dies fails what waits on it; the server then sends those requests as they came.
      const fail = (why: string) => {
        this.#gone.add(index);
        for (const [id, pending] of this.#pending) {
          pending.reject(new ContextWorkbenchError('host_failed', `an engine thread ${why}`));
          this.#pending.delete(id);
        }
      };
      thread.on('error', (error) => fail(`failed: ${error.message}`));
      thread.on('exit', (code) => fail(`exited (${code})`));
    });
  }

  /** Start the threads and wait until each has loaded the engine. */
  static async start(data: EngineThreadData, options: EngineThreads = {}): Promise<EnginePool> {
    const script = options.script ?? new URL('./worker.js', import.meta.url);
    const count = Math.max(1, options.count ?? 2);
    const threads = Array.from({ length: count }, () => new Worker(script, { workerData: { ...data, wasm: options.wasm, ranks: options.ranks } }));
    await Promise.all(threads.map((thread) => new Promise<void>((resolve, reject) => {
      thread.once('message', () => resolve());
      thread.once('error', (error) => reject(new ContextWorkbenchError('init_failed', `an engine thread could not start: ${error.message}`)));
    })));
    return new EnginePool(threads);
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

  /** Run ProxyWorker's `op` on `thread`. */
  call<T>(thread: number, op: string, ...args: unknown[]): Promise<T> {
    if (this.#gone.has(thread)) return Promise.reject(new ContextWorkbenchError('host_failed', 'the engine thread is gone'));
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.#threads[thread]!.postMessage({ id, op, args });
    });
  }

  /** How many threads there are. */
  get size(): number {
    return this.#threads.length;
  }

  async terminate(): Promise<void> {
    await Promise.all(this.#threads.map((thread) => thread.terminate()));
  }
}
