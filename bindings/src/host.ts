// The Host contract as the engine sees it, and the guard every host is wrapped in: a method
// that throws, rejects or never settles becomes a typed error after a timeout, so the engine
// (and the page or extension driving it) never hangs on a host.
import type { Completion, CompletionRequest, EngineEvent, Host, Progress } from './types.js';
import { ContextWorkbenchError } from './errors.js';

/** The methods a host must have; `progress`, `event`, `tryLock` and `unlock` are optional. */
export const HOST_METHODS = [
  'complete', 'readFile', 'stat', 'writeFile', 'appendFile', 'rename', 'remove', 'listDir', 'nowMs',
] as const;

/** How long a host's file methods may take before they fail with `host_timeout`. */
export const DEFAULT_HOST_TIMEOUT_MS = 30_000;
/** The longest delay setTimeout keeps (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface GuardOptions {
  /** Milliseconds a file method may take (`Infinity`: no limit); an LLM call gets its request's `timeoutMs`. */
  timeoutMs?: number;
  onEvent(event: EngineEvent): void;
  onProgress(update: Progress): void;
}

/** Check `host` has every method, and wrap it with timeouts and the engine's listeners. */
export function guardHost(host: Host, options: GuardOptions): Host {
  if (typeof host !== 'object' || host === null) {
    throw new ContextWorkbenchError('host_failed', 'the host must be an object with the Host methods');
  }
  const missing = HOST_METHODS.filter((m) => typeof (host as unknown as Record<string, unknown>)[m] !== 'function');
  if (missing.length > 0) throw new ContextWorkbenchError('host_failed', `the host object lacks: ${missing.join(', ')}`);
  const timeoutMs = options.timeoutMs ?? DEFAULT_HOST_TIMEOUT_MS;
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0)) {
    throw new ContextWorkbenchError('invalid_input',
      `hostTimeoutMs must be a positive number of milliseconds (Infinity: no limit), not ${String(timeoutMs)}`);
  }
  const timed = <A extends unknown[], R>(f: (...args: A) => R | Promise<R>, ms: (...args: A) => number) =>
    (...args: A): Promise<R> => settleWithin(() => f.apply(host, args), ms(...args));
  const fixed = () => timeoutMs;
  const inTurn = writesInTurn(host, timeoutMs);
  return {
    complete: timed(host.complete, (request: CompletionRequest) => request.timeoutMs ?? timeoutMs),
    readFile: timed(host.readFile, fixed),
    stat: timed(host.stat, fixed),
    writeFile: inTurn(host.writeFile, (path) => [path]),
    appendFile: inTurn(host.appendFile, (path) => [path]),
    rename: inTurn(host.rename, (from, to) => [from, to]),
    remove: inTurn(host.remove, (path) => [path]),
    listDir: timed(host.listDir, fixed),
    nowMs: () => host.nowMs(),
    ...(host.tryLock && { tryLock: timed(host.tryLock, fixed) }),
    ...(host.unlock && { unlock: timed(host.unlock, fixed) }),
    progress: (update) => {
      hook('host.progress', () => host.progress?.(update));
      options.onProgress(update);
    },
    event: (event) => {
      hook('host.event', () => host.event?.(event));
      options.onEvent(event as EngineEvent);
    },
  };
}

/**
 * Wrap a host's write methods so that writes to one path run one at a time, in call order, each
 * within `timeoutMs` (its wait included). A write the engine gave up on (a timeout) still ends
 * before the next one to that path starts, so nothing interleaves with it, and a host whose
 * append reads and rewrites the file (OPFS's writable streams, a `.tmp` and rename) loses no
 * record to a retry that ran beside it.
 */
function writesInTurn(host: Host, timeoutMs: number) {
  const last = new Map<string, Promise<void>>();
  return <A extends unknown[]>(f: (...args: A) => void | Promise<void>, paths: (...args: A) => string[]) =>
    (...args: A): Promise<void> => {
      const keys = paths(...args);
      const call = Promise.all(keys.map((k) => last.get(k))).then(() => f.apply(host, args));
      const ended = call.then(() => undefined, () => undefined);
      for (const k of keys) last.set(k, ended);
      void ended.then(() => keys.forEach((k) => last.get(k) === ended && last.delete(k)));
      return settleWithin(() => call, timeoutMs);
    };
}

/** A host hook's throw is the host's own bug: reported, never keeping the listeners from hearing. */
function hook(name: string, f: () => void): void {
  try {
    f();
  } catch (error) {
    console.error(`context-workbench: ${name} threw`, error);
  }
}

/** `f()`'s result, or a rejection with `code: 'timeout'` after `ms` (a sync throw rejects too);
 * `Infinity` waits for good, other values are kept within 1 … 2^31−1 ms. */
function settleWithin<R>(f: () => R | Promise<R>, ms: number): Promise<R> {
  const call = new Promise<R>((resolve) => resolve(f()));
  if (ms === Infinity) return call;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    const delay = Math.min(Math.max(ms, 1), MAX_TIMER_MS);
    timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${ms} ms`), { code: 'timeout' })), delay);
  });
  return Promise.race([call, timeout]).finally(() => clearTimeout(timer));
}

export type { Completion, CompletionRequest, Host };
