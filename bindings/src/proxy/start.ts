// startProxy: the engine in front of an agent, from Node, as `workbench proxy` puts it. Every
// decision is the engine's (wasm `ProxyGateway` on this thread: routes, limits, errors in the
// provider's shape, the session table, the reply pump, log lines; `ProxyWorker`s on engine threads:
// the sessions, and reading a long body; the dashboard's thread: its query API); this is the I/O:
// a node:http server on 127.0.0.1, requests to the upstream, one request of a conversation at a
// time, the threads, and the shutdown's timer.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { Socket } from 'node:net';
import path from 'node:path';
import { mkdir, realpath } from 'node:fs/promises';
import { type Prices, ProxyGateway, type ProxyRequest, dashboardPath, proxyStoreLocation } from '../wasm/context_workbench.js';
import { ContextWorkbenchError, asWorkbenchError, guarded } from '../errors.js';
import { ensureEncoding } from '../init.js';
import type { Config, ProxyCallRecord } from '../types.js';
import { Dashboard } from './dashboard.js';
import { EnginePool, type EngineThreads } from './pool.js';
import { type End, SendError, Upstream, pump, replyHeader, replyHeaders } from './upstream.js';

export interface ProxyOptions {
  /** 127.0.0.1's port; 8787 by default, 0 picks a free one. */
  port?: number;
  /** `URL` (every API) or `NAME=URL` (`anthropic`, `openai`, `gemini`), in order; the providers' own by default. */
  upstream?: string | string[];
  /** The directory sessions belong to (`CODE_LAW.md` is read there); `process.cwd()` by default. */
  workspace?: string;
  /** The trace root, relative to the workspace or absolute; `.trace` by default. */
  store?: string;
  /** The model's context window in tokens (overrides `config.window`). */
  window?: number;
  /** The engine's configuration (the keys of `workbench --config`). */
  config?: Config;
  /** Where the log lines go (one per request); stderr by default. */
  log?: (line: string) => void;
  /** Each call's record, with its session's trace id, once it is recorded and its reply has ended. */
  onCall?: (call: { traceId: string; record: ProxyCallRecord }) => void;
  /** The engine threads: how many, and where their script and the engine are when a bundler moved them. */
  engineThreads?: EngineThreads;
}

export interface RunningProxy {
  /** `http://127.0.0.1:PORT`: Claude Code's `ANTHROPIC_BASE_URL`; OpenAI clients take `${url}/v1`. */
  url: string;
  port: number;
  /** The trace root on disk. */
  storeDir: string;
  /** What `workbench proxy` prints on stdout: the address and the lines to paste. */
  banner: string;
  /** The running totals: `N requests, M managed: A prompt tokens from the agents, B sent (X% fewer)`. */
  progress(): string;
  /**
   * Stop accepting requests, let those in flight finish for `graceMs` (by default the config's
   * `proxy.shutdown_grace_ms`, 5 s), then cut them short (their agents get an error in the
   * provider's shape; those unfinished replies are not recorded), and save every session. A
   * second call with a shorter grace cuts sooner: `close({ graceMs: 0 })` at once.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

export async function startProxy(options: ProxyOptions = {}): Promise<RunningProxy> {
  await ensureEncoding((options.config?.encoding ?? 'o200k_base') as 'o200k_base');
  const { workspace, root } = await storeLocation(options.workspace ?? process.cwd(), options.store ?? '.trace');
  const flags = typeof options.upstream === 'string' ? [options.upstream] : options.upstream ?? [];
  const gateway = guarded(() => new ProxyGateway(options.config, flags, options.window, workspace, root));
  const threadData = { workspace, config: gateway.config() };
  let pool: EnginePool;
  try {
    pool = await EnginePool.start(threadData, options.engineThreads);
  } catch (error) {
    gateway.free();
    throw error;
  }
  const dashboard = new Dashboard(root, (gateway.config() as { prices: Prices }).prices,
    () => EnginePool.start(threadData, { ...options.engineThreads, count: 1 }));
  // Before any request: what a killed proxy left running is marked interrupted.
  const recovered = await pool.call<string | undefined>(0, 'recover');
  const proxy = new Proxy(gateway, pool, dashboard, safely(options.log ?? ((line) => process.stderr.write(`${line}\n`))), options.onCall);
  const server = createServer((req, res) => void proxy.handle(req, res));
  const port = options.port ?? 8787;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'EADDRINUSE'
      ? new ContextWorkbenchError('port_in_use', `cannot listen on 127.0.0.1:${port}: the address is in use (--port 0 picks a free port)`)
      : new ContextWorkbenchError('io', `cannot listen on 127.0.0.1:${port}: ${error.message}`)));
    server.listen(port, '127.0.0.1', () => resolve());
  }).catch(async (error) => {
    await pool.terminate();
    gateway.free();
    throw error;
  });
  // Small replies go out at once, not after a delayed ACK (~40 ms per request on keep-alive).
  server.on('connection', (socket) => socket.setNoDelay(true));
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  const url = `http://127.0.0.1:${bound}`;
  const storeDir = path.join(workspace, root);
  proxy.log(gateway.startLine(url, storeDir));
  if (recovered) proxy.log(recovered);
  let closing: Promise<void> | undefined;
  return {
    url,
    port: bound,
    storeDir,
    banner: gateway.banner(url),
    progress: () => gateway.progress(),
    close: (options) => {
      proxy.cutAfter(server, options?.graceMs ?? proxy.graceMs);
      closing ??= proxy.close(server);
      return closing;
    },
  };
}

/** Bodies longer than this are read on an engine thread (about a millisecond's parse here). */
const READ_ON_THREAD_BYTES = 64 * 1024;

/** A call as its engine thread recorded it. */
interface Finished {
  record: ProxyCallRecord;
  trace_id: string;
}

class Proxy {
  /** The tail of each conversation's queue: one request of a key at a time, reply included. */
  readonly #turns = new Map<string, Promise<void>>();
  /** Each conversation key's engine thread. */
  readonly #threadOfKey = new Map<string, number>();
  /** The engine thread of each connection's last managed request: its next long body is read there. */
  readonly #threadOfSocket = new WeakMap<Socket, number>();
  /** Each request in flight, with what cuts it short (see `cutAfter`). */
  readonly #inFlight = new Map<Promise<void>, AbortController>();
  #closing = false;
  #cutTimer: ReturnType<typeof setTimeout> | undefined;
  #cutAt = Infinity;
  readonly #timeoutMs: number;
  readonly #upstream: Upstream;
  readonly #bodyTimeoutMs: number;
  readonly graceMs: number;

  constructor(private readonly gateway: ProxyGateway, private readonly pool: EnginePool, private readonly dashboard: Dashboard, readonly log: (line: string) => void,
    private readonly onCall?: ProxyOptions['onCall']) {
    const limits = (gateway.config() as Required<Config>).proxy as { upstream_timeout_ms: number; body_timeout_ms: number; shutdown_grace_ms: number };
    this.#timeoutMs = limits.upstream_timeout_ms;
    this.#upstream = new Upstream(limits.upstream_timeout_ms);
    this.#bodyTimeoutMs = limits.body_timeout_ms;
    this.graceMs = limits.shutdown_grace_ms;
  }

  handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // The path as it came (a request target `new URL` refuses is the gateway's to answer).
    const within = dashboardPath((req.url ?? '/').split('?')[0]);
    if (within !== undefined) return this.dashboard.serve(req, res, within);
    const request = this.gateway.admit(req.method ?? 'GET', req.url ?? '/', req.rawHeaders);
    if (this.#closing) {
      // A request on a kept-alive connection after close began: not taken, as none on a new one.
      res.shouldKeepAlive = false;
      this.#answer(res, this.gateway.stopping(request));
      request.free();
      return Promise.resolve();
    }
    const cut = new AbortController();
    const done = this.#handle(req, res, request, cut.signal).catch((error) => {
      // Nothing reaches the connection unanswered: an unexpected failure is a 500 in the provider's shape.
      const answer = this.gateway.internalError(request, asWorkbenchError(error).message);
      if (!res.headersSent) this.#answer(res, answer);
      else {
        this.log(answer.line);
        res.destroy();
      }
    }).finally(() => request.free());
    this.#inFlight.set(done, cut);
    void done.finally(() => this.#inFlight.delete(done));
    return done;
  }

  async #handle(req: IncomingMessage, res: ServerResponse, request: ProxyRequest, cut: AbortSignal): Promise<void> {
    const refused = request.answer();
    if (refused) {
      req.resume();
      return this.#answer(res, refused);
    }
    const body = await readBody(req, request.limit, this.#bodyTimeoutMs);
    if (body === 'timeout') {
      res.shouldKeepAlive = false; // the rest of the body is never read
      return this.#answer(res, this.gateway.bodyTimedOut(request));
    }
    const action = await this.#decide(req, request, body);
    if (action === 'answer') return this.#answer(res, request.answer()!);
    if (action === 'forward') return this.#forward(req, res, request, body!, cut);
    const release = await this.#turn(request.key!);
    try {
      await this.#managed(req, res, request, body!, cut);
    } finally {
      release();
    }
  }

  /**
   * The gateway's decision on the body. Reading a long body takes a while (a 1.5 MB history: 25-100
   * ms in wasm), so one over `READ_ON_THREAD_BYTES` is read on an engine thread while this thread
   * serves the other requests: the one the connection's last managed request went to, as an
   * agent's next request on it is likely of the same conversation, whose thread then prepares it
   * without reading it again. A short one is read here, sparing it the trip.
   */
  async #decide(req: IncomingMessage, request: ProxyRequest, body: Uint8Array | undefined): Promise<string> {
    if (body === undefined || body.length <= READ_ON_THREAD_BYTES) return this.gateway.decide(request, body);
    try {
      const thread = this.#threadOfSocket.get(req.socket) ?? this.pool.anyThread();
      const decided = await this.pool.call<string>(thread, 'decide', req.method ?? 'POST', req.url ?? '/', req.rawHeaders, body);
      return this.gateway.applyDecision(request, decided);
    } catch (error) {
      // As the native proxy does with a body its engine could not read: sent on as it came.
      request.passAs(`unreadable by the engine (${asWorkbenchError(error).message}), passed through`);
      return 'forward';
    }
  }

  /** The agent's request sent on as it came, the reply back as it comes. */
  async #forward(req: IncomingMessage, res: ServerResponse, request: ProxyRequest, body: Uint8Array, cut: AbortSignal): Promise<void> {
    let response: IncomingMessage;
    try {
      response = await this.#upstream.send(this.gateway.upstreamUrl(request), req.method ?? 'GET', req.headers, body, cut, false);
    } catch (error) {
      const failure = sendFailure(error);
      return this.#answer(res, this.gateway.forwardFailed(request, failure.kind, failure.cause));
    }
    const status = response.statusCode ?? 502;
    this.log(this.gateway.forwarded(request, status));
    // A side call of a session held here is counted in it, beside its turn (never awaited).
    const side = this.gateway.sideCall(request, status);
    const sideThread = side && this.#threadOfKey.get(side.key);
    if (side && sideThread !== undefined) void this.#engines(sideThread, 'recordSideCall', side.key, side.record);
    res.writeHead(status, replyHeaders(response));
    await pump(response, this.#timeoutMs, (bytes) => write(res, bytes), cut);
    res.end();
  }

  async #managed(req: IncomingMessage, res: ServerResponse, request: ProxyRequest, body: Uint8Array, cut: AbortSignal): Promise<void> {
    const key = request.key!;
    const thread = this.pool.threadOf(request.traceBase!);
    this.#threadOfSocket.set(req.socket, thread);
    // Past proxy.max_sessions the least recently used idle conversation makes room; what it
    // could not save goes on this call's record.
    const evicted = this.gateway.touch(request, [...this.#turns.keys()].filter((k) => k !== key));
    const notes = evicted === undefined ? [] : await this.#engines<string[]>(this.#threadOfKey.get(evicted), 'close', evicted);
    if (evicted !== undefined) this.#threadOfKey.delete(evicted);
    this.#threadOfKey.set(key, thread);
    let prepared: string | undefined;
    try {
      prepared = await this.pool.call(thread, 'prepare', req.method ?? 'POST', req.url ?? '/', req.rawHeaders, body, request.format ?? '',
        { notes, opening: request.opening });
    } catch (error) {
      // The engine thread is gone: the request goes as it came, as when a session cannot open.
      request.passAs(`the session is gone (${asWorkbenchError(error).message}), passed through`);
      return this.#forward(req, res, request, body, cut);
    }
    let response: IncomingMessage;
    try {
      response = await this.#upstream.send(this.gateway.upstreamUrl(request), req.method ?? 'POST', req.headers, prepared ?? body, cut, true);
    } catch (error) {
      const failure = sendFailure(error);
      const answer = this.gateway.callFailed(request, failure.kind, failure.cause);
      const finished = await this.#finish(thread, key, answer.status, answer.outcome);
      respond(res, answer.status, answer.body);
      this.#report(finished);
      return;
    }
    const status = response.statusCode ?? 502;
    const reply = this.gateway.replyPump(request, status, replyHeader(response, 'content-type'), replyHeader(response, 'content-length'));
    try {
      res.writeHead(status, replyHeaders(response));
      // The session gets the reply once it is whole and records it while its last bytes go to the
      // agent; the reply ends once it is recorded (calls.jsonl has it), so the agent's next
      // request finds it, and the call's log line follows. A reply that did not complete goes to
      // the session at its end, with why.
      let recording: Promise<Finished | undefined> | undefined;
      const end: End = await pump(response, this.#timeoutMs, (bytes) => {
        if (reply.feed(bytes)) recording = this.#finish(thread, key, reply.status, reply.takeOutcome());
        return write(res, bytes);
      }, cut);
      const trailer = reply.end(end, this.#timeoutMs);
      if (trailer) await write(res, new TextEncoder().encode(trailer));
      if (reply.ready) recording = this.#finish(thread, key, reply.status, reply.takeOutcome());
      const finished = await recording;
      res.end();
      this.#report(finished);
    } finally {
      reply.free();
    }
  }

  /** The reply's outcome to its session on its engine thread: the call as recorded (none when it could not be). */
  async #finish(thread: number, key: string, status: number, outcome: unknown): Promise<Finished | undefined> {
    try {
      return await this.pool.call<Finished>(thread, 'finish', key, status, outcome);
    } catch (error) {
      this.log(`context-workbench proxy: the reply was not recorded: ${asWorkbenchError(error).message}`);
      return undefined;
    }
  }

  /** A recorded call's log line, and its record to the embedder. */
  #report(finished: Finished | undefined): void {
    if (!finished) return;
    try {
      this.log(this.gateway.callLine(finished.record, finished.trace_id));
      this.onCall?.({ traceId: finished.trace_id, record: finished.record });
    } catch {
      // A line or an embedder's callback that fails never fails the request.
    }
  }

  /** `op` on `thread`, or nothing when the key has no thread (it never opened a session). */
  async #engines<T>(thread: number | undefined, op: string, ...args: unknown[]): Promise<T | []> {
    if (thread === undefined) return [];
    return this.pool.call<T>(thread, op, ...args).catch((error) => [asWorkbenchError(error).message] as T);
  }

  #answer(res: ServerResponse, answer: { status: number; body: string; line: string }): void {
    this.log(answer.line);
    respond(res, answer.status, answer.body);
  }

  /** Wait for `key`'s turn; the returned function ends it. */
  async #turn(key: string): Promise<() => void> {
    const previous = this.#turns.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => { release = resolve; });
    const tail = previous.then(() => mine);
    this.#turns.set(key, tail);
    await previous;
    return () => {
      release();
      if (this.#turns.get(key) === tail) this.#turns.delete(key);
    };
  }

  /** Stop taking requests, wait for those in flight (cut after the grace), save every session. */
  async close(server: Server): Promise<void> {
    this.#closing = true;
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    await Promise.allSettled([...this.#inFlight.keys()]);
    clearTimeout(this.#cutTimer);
    server.closeAllConnections();
    await stopped;
    this.#upstream.close();
    const failures = (await Promise.all([...Array(this.pool.size).keys()].map((thread) =>
      this.pool.call<string[]>(thread, 'closeAll').catch((error) => [asWorkbenchError(error).message])))).flat();
    for (const line of this.gateway.closingLines(failures)) this.log(line);
    await Promise.all([this.pool.terminate(), this.dashboard.dispose()]);
    this.gateway.free();
  }

  /** Cut short what is still in flight `ms` from now (sooner than an earlier call said): its agents get an error. */
  cutAfter(server: Server, ms: number): void {
    const at = Date.now() + Math.max(0, ms);
    if (at >= this.#cutAt) return;
    this.#cutAt = at;
    clearTimeout(this.#cutTimer);
    this.#cutTimer = setTimeout(() => {
      const n = this.#inFlight.size;
      if (n === 0) return;
      this.log(this.gateway.cutLine(n, ms));
      for (const cut of this.#inFlight.values()) cut.abort();
      // What waits on an agent (a body still arriving, a connection that is full) ends with the connection.
      setTimeout(() => server.closeAllConnections(), 500).unref();
    }, Math.max(0, ms));
    this.#cutTimer.unref();
  }
}

/** A log that never throws: a closed output (an editor's channel at shutdown) must not stop a session's save. */
function safely(log: (line: string) => void): (line: string) => void {
  return (line) => {
    try {
      log(line);
    } catch {
      // The line is lost; what matters is that saving goes on.
    }
  };
}

/** The body; undefined when it is over `limit` bytes or the agent cut it short; `timeout` when it did not arrive in time. */
function readBody(req: IncomingMessage, limit: number, timeoutMs: number): Promise<Uint8Array | undefined | 'timeout'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (result: Uint8Array | undefined | 'timeout') => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', onGone).off('close', onGone);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else {
        done(undefined);
        req.resume(); // the rest is read and dropped
      }
    };
    const onEnd = () => done(req.complete ? new Uint8Array(Buffer.concat(chunks)) : undefined);
    const onGone = () => done(undefined);
    const timer = setTimeout(() => {
      req.pause();
      done('timeout');
    }, timeoutMs);
    req.on('data', onData).once('end', onEnd).once('error', onGone).once('close', onGone);
  });
}

/** Hand `bytes` to the agent, waiting while its connection is full; false once it has gone. */
function write(res: ServerResponse, bytes: Uint8Array): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return Promise.resolve(false);
  return new Promise((resolve) => {
    const ok = res.write(bytes, (error) => { if (error) resolve(false); });
    if (ok) resolve(true);
    else {
      const onDrain = () => { res.off('close', onClose); resolve(true); };
      const onClose = () => { res.off('drain', onDrain); resolve(false); };
      res.once('drain', onDrain);
      res.once('close', onClose);
    }
  });
}

function respond(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function sendFailure(error: unknown): { kind: string; cause?: string } {
  if (error instanceof SendError) return { kind: error.kind, cause: error.reason };
  return { kind: 'unreachable', cause: 'other' };
}

/** The workspace and the trace root in it, as the engine decides from the two real paths. */
async function storeLocation(workspaceDir: string, store: string): Promise<{ workspace: string; root: string }> {
  const ws = path.resolve(workspaceDir);
  const absolute = path.resolve(ws, store);
  try {
    await mkdir(absolute, { recursive: true });
  } catch (error) {
    // The absolute path, and no flag: the store may be the default one.
    throw new ContextWorkbenchError('io', `cannot create the trace store ${absolute}: ${(error as Error).message}`);
  }
  const [realStore, realWs] = await Promise.all([realpath(absolute), realpath(ws)]);
  return guarded(() => proxyStoreLocation(realWs, realStore));
}
