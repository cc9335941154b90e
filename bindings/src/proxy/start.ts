// startProxy: the engine in front of an agent, from Node, as `workbench proxy` puts it. Every
// decision is the engine's (wasm `ProxyGateway` on this thread: each request's exchange, carried
// out by `Call` in exchange.ts, and the session table; `ProxyWorker`s on engine threads: the
// sessions, and reading a long body; the dashboard's thread: its query API); this is the I/O: a
// node:http server on 127.0.0.1, one request of a conversation at a time, the threads, and the
// shutdown's timer.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { Socket } from 'node:net';
import path from 'node:path';
import { mkdir, realpath } from 'node:fs/promises';
import { type ProxyExchange, ProxyGateway, cannotCreateStore, cannotListen, dashboardPath, otlpTracesUrl, proxyStoreLocation } from '../wasm/context_workbench.js';
import { ContextWorkbenchError, asWorkbenchError, guarded } from '../errors.js';
import { ensureEncoding } from '../init.js';
import type { Config, ProxyCallRecord } from '../types.js';
import { Dashboard } from './dashboard.js';
import { EnginePool, type EngineThreads } from './pool.js';
import { Call } from './exchange.js';
import type { Telemetry } from './telemetry.js';
import { Upstream } from './upstream.js';
import type { Operations } from './worker.js';

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
  /** An OpenTelemetry collector's OTLP/HTTP address: one span per call is exported there (overrides `config.proxy.otlp`). */
  otlp?: string;
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
  const log = safely(options.log ?? ((line) => process.stderr.write(`${line}\n`)));
  let pool: EnginePool;
  try {
    pool = await EnginePool.start(threadData, options.engineThreads, (how) => log(gateway.threadReplacedLine(how)));
  } catch (error) {
    gateway.free();
    throw error;
  }
  const dashboard = new Dashboard(root,
    () => EnginePool.start(threadData, { ...options.engineThreads, count: 1 }));
  // Before any request: the store is taken (refused while another proxy records into it), and
  // what a killed proxy left running is marked interrupted.
  let recovered: string | undefined;
  try {
    recovered = await pool.call(0, 'recover');
  } catch (error) {
    await pool.terminate();
    gateway.free();
    throw error;
  }
  const proxy = new Proxy(gateway, pool, dashboard, log, options.onCall);
  const otlp = guarded(() => otlpTracesUrl(options.otlp ?? ((gateway.config() as Required<Config>).proxy as { otlp: string }).otlp));
  // The SDK is loaded only when spans are exported.
  if (otlp !== undefined) proxy.telemetry = new (await import('./telemetry.js')).Telemetry(otlp);
  // Headers that do not arrive in time cost the connection (Node checks at its interval).
  const headersTimeout = ((gateway.config() as Required<Config>).proxy as { header_timeout_ms: number }).header_timeout_ms;
  const server = createServer({ headersTimeout, requestTimeout: Math.max(300_000, headersTimeout), connectionsCheckingInterval: Math.min(30_000, Math.max(100, headersTimeout / 4)) },
    (req, res) => void proxy.handle(req, res));
  const port = options.port ?? 8787;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const inUse = error.code === 'EADDRINUSE';
      reject(new ContextWorkbenchError(inUse ? 'port_in_use' : 'io', cannotListen(`127.0.0.1:${port}`, inUse, error.message)));
    });
    server.listen(port, '127.0.0.1', () => resolve());
  }).catch(async (error) => {
    await pool.terminate();
    gateway.free();
    throw error;
  });
  // Small replies go out at once, not after a delayed ACK (~40 ms per request on keep-alive).
  server.on('connection', (socket) => socket.setNoDelay(true));
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => proxy.parserFailed(error, socket));
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  const url = `http://127.0.0.1:${bound}`;
  const storeDir = path.join(workspace, root);
  proxy.log(gateway.startLine(url, storeDir));
  if (recovered) proxy.log(recovered);
  if (proxy.telemetry) proxy.log(proxy.telemetry.startLine());
  let closing: Promise<void> | undefined;
  return {
    url,
    port: bound,
    storeDir,
    banner: gateway.banner(url),
    progress: () => gateway.progress(),
    close: (options) => {
      const graceMs = options?.graceMs ?? proxy.graceMs;
      if (!closing) proxy.log(gateway.stopBegunLine(proxy.inFlight, graceMs));
      proxy.cutAfter(server, graceMs);
      closing ??= proxy.close(server);
      return closing;
    },
  };
}

/** A call as its engine thread recorded it. */
export type Finished = Awaited<ReturnType<Operations['finish']>>;

export class Proxy {
  /** The tail of each conversation's queue: one request of a key at a time, reply included. */
  readonly #turns = new Map<string, Promise<void>>();
  /** Each conversation key's engine thread. */
  readonly #threadOfKey = new Map<string, number>();
  /** The engine thread of each connection's last managed request: its next long body is read there. */
  readonly #threadOfSocket = new WeakMap<Socket, number>();
  /** The response of each connection's request in flight. */
  readonly #responseOn = new WeakMap<Socket, ServerResponse>();
  /** Each request in flight, with what cuts it short (see `cutAfter`). */
  readonly #inFlight = new Map<Promise<void>, AbortController>();
  #closing = false;
  #cutTimer: ReturnType<typeof setTimeout> | undefined;
  #cutAt = Infinity;
  /** When the first `cutAfter` came: the cut's line says how long after it. */
  #stopAt: number | undefined;
  readonly upstream: Upstream;
  readonly graceMs: number;
  /** `otlp`'s exporter. */
  telemetry: Telemetry | undefined;

  constructor(private readonly gateway: ProxyGateway, readonly pool: EnginePool, private readonly dashboard: Dashboard, readonly log: (line: string) => void,
    private readonly onCall?: ProxyOptions['onCall']) {
    const limits = (gateway.config() as Required<Config>).proxy as { upstream_timeout_ms: number; shutdown_grace_ms: number };
    this.upstream = new Upstream(limits.upstream_timeout_ms);
    this.graceMs = limits.shutdown_grace_ms;
  }

  handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // The path as it came (a request target `new URL` refuses is the exchange's to answer).
    const within = dashboardPath((req.url ?? '/').split('?')[0]);
    if (within !== undefined) return this.dashboard.serve(req, res, within);
    const exchange = this.gateway.begin(req.method ?? 'GET', req.url ?? '/', req.rawHeaders, this.#closing);
    const cut = new AbortController();
    this.#responseOn.set(req.socket, res);
    const done = new Call(this, req, res, exchange, cut).run()
      .catch(() => { res.destroy(); })
      .finally(() => {
        exchange.free();
        if (this.#responseOn.get(req.socket) === res) this.#responseOn.delete(req.socket);
      });
    this.#inFlight.set(done, cut);
    void done.finally(() => this.#inFlight.delete(done));
    return done;
  }

  /**
   * What Node's HTTP parser could not take on `socket`. A body the agent stopped sending short of
   * its length (it closed its side) is the exchange's to answer, in its provider's shape; anything
   * else gets Node's own answer, as without this listener (none once a reply has begun).
   */
  parserFailed(error: NodeJS.ErrnoException, socket: Socket): void {
    const res = this.#responseOn.get(socket);
    if (error.code === 'HPE_INVALID_EOF_STATE' && res && !res.headersSent) {
      res.shouldKeepAlive = false; // nothing more can come on it
      return;
    }
    if (socket.writable && !res?.headersSent) socket.write(NODE_ANSWERS[error.code ?? ''] ?? NODE_ANSWERS.default);
    socket.destroy(error);
  }

  /**
   * What the gateway reads of a long body (a 1.5 MB history: 25-100 ms in wasm), on an engine
   * thread while this thread serves the other requests: the one the connection's last managed
   * request went to, as an agent's next request on it is likely of the same conversation, whose
   * thread then prepares it without reading it again.
   */
  readAway(req: IncomingMessage, body: Uint8Array): Promise<unknown> {
    const thread = this.#threadOfSocket.get(req.socket) ?? this.pool.anyThread();
    return this.pool.call(thread, 'read', req.method ?? 'POST', req.url ?? '/', req.rawHeaders, body);
  }

  /**
   * Wait for the exchange's conversation's turn; past proxy.max_sessions the least recently used
   * idle conversation makes room, and what it could not save goes on this call's record.
   */
  async takeTurn(req: IncomingMessage, exchange: ProxyExchange): Promise<{ release: () => void; thread: number; notes: string[] }> {
    const key = exchange.key!;
    const release = await this.#turn(key);
    try {
      const thread = this.pool.threadOf(exchange.traceBase!);
      this.#threadOfSocket.set(req.socket, thread);
      this.#threadOfKey.set(key, thread);
      const evicted = this.gateway.touch(exchange, [...this.#turns.keys()].filter((k) => k !== key));
      const evictedThread = evicted === undefined ? undefined : this.#threadOfKey.get(evicted);
      // Forgotten at once: the key's next request, if it comes while this closes, maps it again.
      if (evicted !== undefined) this.#threadOfKey.delete(evicted);
      const notes = evictedThread === undefined ? [] : await this.pool.call(evictedThread, 'close', evicted!)
        .catch((error) => [asWorkbenchError(error).message]);
      return { release, thread, notes };
    } catch (error) {
      release();
      throw error;
    }
  }

  /** A side call counted in its agent session's latest conversation held here, beside its turn (never awaited). */
  countSideCall(agentSession: string, record: ProxyCallRecord): void {
    const key = this.gateway.latestOf(agentSession);
    const thread = key === undefined ? undefined : this.#threadOfKey.get(key);
    if (thread !== undefined) void this.pool.call(thread, 'recordSideCall', key!, record).catch(() => undefined);
  }

  /** A recorded call, to the embedder. */
  called(traceId: string, record: ProxyCallRecord): void {
    try {
      this.onCall?.({ traceId, record });
    } catch {
      // An embedder's callback that fails never fails the request.
    }
  }

  /** How many requests are in flight. */
  get inFlight(): number {
    return this.#inFlight.size;
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
    this.upstream.close();
    const failures = (await Promise.all([...Array(this.pool.size).keys()].map((thread) =>
      this.pool.call(thread, 'closeAll').catch((error) => [asWorkbenchError(error).message])))).flat();
    for (const line of this.gateway.closingLines(failures)) this.log(line);
    if (this.telemetry) this.log(await this.telemetry.stop());
    await Promise.all([this.pool.terminate(), this.dashboard.dispose()]);
    this.gateway.free();
  }

  /** Cut short what is still in flight `ms` from now (sooner than an earlier call said): its agents get an error. */
  cutAfter(server: Server, ms: number): void {
    const now = Date.now();
    const at = now + Math.max(0, ms);
    if (at >= this.#cutAt) return;
    this.#cutAt = at;
    this.#stopAt ??= now;
    const waited = at - this.#stopAt;
    clearTimeout(this.#cutTimer);
    this.#cutTimer = setTimeout(() => {
      const n = this.#inFlight.size;
      if (n === 0) return;
      this.log(this.gateway.cutLine(n, waited));
      for (const cut of this.#inFlight.values()) cut.abort();
      // What waits on an agent (a body still arriving, a connection that is full) ends with the connection.
      setTimeout(() => server.closeAllConnections(), 500).unref();
    }, Math.max(0, ms));
    this.#cutTimer.unref();
  }
}

/** Node's own answers to what its HTTP parser cannot take (`node:_http_server`). */
const NODE_ANSWERS: Record<string, string> = {
  HPE_HEADER_OVERFLOW: 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n',
  ERR_HTTP_REQUEST_TIMEOUT: 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n',
  default: 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n',
};

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

/** The workspace and the trace root in it, as the engine decides from the two real paths. */
async function storeLocation(workspaceDir: string, store: string): Promise<{ workspace: string; root: string }> {
  const ws = path.resolve(workspaceDir);
  const absolute = path.resolve(ws, store);
  try {
    await mkdir(absolute, { recursive: true });
  } catch (error) {
    throw new ContextWorkbenchError('io', cannotCreateStore(absolute, (error as Error).message));
  }
  const [realStore, realWs] = await Promise.all([realpath(absolute), realpath(ws)]);
  return guarded(() => proxyStoreLocation(realWs, realStore));
}
