// startProxy: the engine in front of an agent, from Node, with the same behaviour, log lines,
// store layout and errors as `workbench proxy`. The decisions are the engine's (wasm
// `ProxyCore`); this is the I/O: a node:http server on 127.0.0.1, fetch to the upstream, and
// one request of a conversation at a time.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import path from 'node:path';
import { mkdir, realpath } from 'node:fs/promises';
import { ProxyCore, type ReadRequest, ReplyReader, classifyRoute, proxyErrorBody, proxyStreamErrorEvent } from '../wasm/context_workbench.js';
import { ContextWorkbenchError, asWorkbenchError, guarded } from '../errors.js';
import { guardHost } from '../host.js';
import { nodeFsHost } from '../hosts/node-fs.js';
import { ensureEncoding } from '../init.js';
import type { Config, ProxyCallRecord } from '../types.js';
import { type End, type Format, SendError, type Upstreams, isEventStream, pump, replyHeaders, send } from './upstream.js';

export interface ProxyOptions {
  /** 127.0.0.1's port; 8787 by default, 0 picks a free one. */
  port?: number;
  /** `URL` (both routes) or `anthropic=URL` / `openai=URL`, in order; the providers' own by default. */
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
  /** Each call's record once its reply ended, with its session's trace id. */
  onCall?: (call: { traceId: string; record: ProxyCallRecord }) => void;
}

export interface RunningProxy {
  /** `http://127.0.0.1:PORT`: Claude Code's `ANTHROPIC_BASE_URL`; OpenAI clients take `${url}/v1`. */
  url: string;
  port: number;
  /** The trace root on disk. */
  storeDir: string;
  /** The running totals: `N requests, M managed: A prompt tokens from the agents, B sent (X% fewer)`. */
  progress(): string;
  /**
   * Stop accepting connections, finish the requests in flight, save every session. With
   * `graceMs` (an editor closing, which gives its extensions a few seconds), the requests still in
   * flight after that long are cut short, so that every session is saved in time: their agents
   * get an error in the provider's shape, and those unfinished replies are not recorded.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/** Headers an agent may name its session with. */
const SESSION_HEADERS = ['x-claude-code-session-id', 'x-session-id'];

export async function startProxy(options: ProxyOptions = {}): Promise<RunningProxy> {
  const upstreams = parseUpstreams(options.upstream);
  const { workspace, root } = await storeLocation(options.workspace ?? process.cwd(), options.store ?? '.trace');
  const config: Config = { ...options.config, store: { ...options.config?.store, root } } as Config;
  if (options.window !== undefined) config.window = options.window;
  // Agents' file tools (Claude Code's Read) want absolute paths: forms name their originals so.
  if (!config.store?.originals_base) config.store = { ...config.store, originals_base: workspace };
  await ensureEncoding((config.encoding ?? 'o200k_base') as 'o200k_base');
  const host = guardHost(nodeFsHost(workspace), { onEvent() {}, onProgress() {} });
  const core = guarded(() => new ProxyCore(host, config));
  const proxy = new Proxy(core, upstreams, options.log ?? ((line) => process.stderr.write(`${line}\n`)), options.onCall);
  const server = createServer((req, res) => void proxy.handle(req, res));
  const port = options.port ?? 8787;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'EADDRINUSE'
      ? new ContextWorkbenchError('port_in_use', `cannot listen on 127.0.0.1:${port}: the address is in use (--port 0 picks a free port)`)
      : new ContextWorkbenchError('io', `cannot listen on 127.0.0.1:${port}: ${error.message}`)));
    server.listen(port, '127.0.0.1', () => resolve());
  }).catch((error) => {
    core.free();
    throw error;
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  const storeDir = path.join(workspace, root);
  proxy.log(`workbench proxy: listening on http://127.0.0.1:${bound}; upstreams ${upstreams.anthropic} (Anthropic Messages) and ${upstreams.openai} (OpenAI Chat Completions); sessions saved under ${storeDir}`);
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    storeDir,
    progress: () => core.progress(),
    close: (options) => {
      closing ??= proxy.close(server);
      if (options?.graceMs !== undefined) proxy.cutAfter(server, options.graceMs);
      return closing;
    },
  };
}

class Proxy {
  /** The tail of each conversation's queue: one request of a key at a time, reply included. */
  readonly #turns = new Map<string, Promise<void>>();
  /** Each request in flight, with what cuts it short (see `cutAfter`). */
  readonly #inFlight = new Map<Promise<void>, AbortController>();
  #closing = false;
  readonly #timeoutMs: number;
  readonly #limit: number;

  constructor(private readonly core: ProxyCore, private readonly upstreams: Upstreams,
    readonly log: (line: string) => void, private readonly onCall?: ProxyOptions['onCall']) {
    const limits = (core.config() as Required<Config>).proxy as { max_body_bytes: number; upstream_timeout_ms: number };
    this.#timeoutMs = limits.upstream_timeout_ms;
    this.#limit = limits.max_body_bytes;
  }

  handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const route = classifyRoute(req.method ?? 'GET', req.url ?? '/', 'x-api-key' in req.headers || 'anthropic-version' in req.headers);
    if (this.#closing) {
      // A request on a kept-alive connection after close began: not taken, as none on a new one.
      res.shouldKeepAlive = false;
      respondError(res, route.format, 503, 'workbench proxy: the proxy is stopping');
      return Promise.resolve();
    }
    const cut = new AbortController();
    const done = this.#handle(req, res, route, cut.signal).catch((error) => {
      // Nothing reaches the connection unanswered: an unexpected failure is a 500 in the provider's shape.
      const message = asWorkbenchError(error).message;
      this.log(this.core.requestLine(`${req.method} ${bare(req.url)}: failed: ${message}`));
      if (!res.headersSent) respondError(res, route.format, 500, `workbench proxy: ${message}`);
      else res.destroy();
    });
    this.#inFlight.set(done, cut);
    void done.finally(() => this.#inFlight.delete(done));
    return done;
  }

  async #handle(req: IncomingMessage, res: ServerResponse, route: { managed: boolean; format: Format }, cut: AbortSignal): Promise<void> {
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    const format = route.format;
    const body = await readBody(req, this.#limit);
    if (!body) {
      this.log(this.core.requestLine(`${method} ${url}: refused, body over ${this.#limit} bytes or cut short`));
      respondError(res, format, 413, `workbench proxy: the request body is over the limit of ${this.#limit} bytes (proxy.max_body_bytes) or was cut short`);
      return;
    }
    if (!route.managed) return this.#passthrough(req, res, format, body, 'passed through', cut);
    const header = SESSION_HEADERS.map((h) => req.headers[h]).find((v): v is string => typeof v === 'string');
    const agent = typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : undefined;
    const read = guarded(() => this.core.read(format, body, header, agent));
    if (read.action === 'pass') {
      const why = read.why;
      read.free();
      return this.#passthrough(req, res, format, body, why, cut);
    }
    if (read.action === 'refuse') {
      const [status, why] = [read.status, read.why];
      read.free();
      this.log(this.core.requestLine(`${method} ${url}: refused (${status}): ${why}`));
      respondError(res, format, status, `workbench proxy: ${why}`);
      return;
    }
    const key = read.key;
    const release = await this.#turn(key);
    try {
      await this.#managed(req, res, format, body, key, read, cut);
    } finally {
      release();
    }
  }

  /** The agent's request sent on as it came, the reply back as it comes. */
  async #passthrough(req: IncomingMessage, res: ServerResponse, format: Format, body: Uint8Array, why: string, cut: AbortSignal): Promise<void> {
    const method = req.method ?? 'GET';
    let response: Response;
    try {
      response = await send(this.upstreams, format, method, req.url ?? '/', req.headers, body, this.#timeoutMs, cut);
    } catch (error) {
      const [status, message] = sendFailure(error);
      this.log(this.core.requestLine(`${method} ${bare(req.url)}: ${why}, ${message}`));
      respondError(res, format, status, `workbench proxy: ${message}`);
      return;
    }
    this.log(this.core.requestLine(`${method} ${bare(req.url)}: ${why}, status ${response.status}`));
    res.writeHead(response.status, replyHeaders(response));
    const end = await pump(response, this.#timeoutMs, (bytes) => write(res, bytes), cut);
    res.end();
    void end;
  }

  async #managed(req: IncomingMessage, res: ServerResponse, format: Format, body: Uint8Array, key: string,
    read: ReadRequest, cut: AbortSignal): Promise<void> {
    const prepared = await this.core.prepare(read);
    const outgoing = prepared.body ?? body;
    let response: Response;
    try {
      response = await send(this.upstreams, format, req.method ?? 'POST', req.url ?? '/', req.headers, outgoing, this.#timeoutMs, cut);
    } catch (error) {
      const [status, message] = sendFailure(error);
      await this.#finish(key, status, undefined, message);
      respondError(res, format, status, `workbench proxy: ${message}`);
      return;
    }
    const limit = this.#limit;
    let reader: ReplyReader | undefined = new ReplyReader(format, isEventStream(response), response.status, limit);
    let finished: Promise<void> | undefined;
    res.writeHead(response.status, replyHeaders(response));
    const end: End = await pump(response, this.#timeoutMs, async (bytes) => {
      if (reader) {
        reader.push(bytes);
        if (reader.isComplete()) {
          finished = this.#finish(key, response.status, reader, undefined);
          reader = undefined;
        }
      }
      return write(res, bytes);
    }, cut);
    let note: string | undefined;
    if (end.kind === 'agent-gone') note = 'the agent closed the connection before the reply ended';
    if (end.kind === 'cut') {
      note = end.why;
      await write(res, new TextEncoder().encode(proxyStreamErrorEvent(format, `workbench proxy: ${end.why}`)));
    }
    res.end();
    await finished;
    if (reader) await this.#finish(key, response.status, reader, note);
  }

  async #finish(key: string, status: number, reader: ReplyReader | undefined, error: string | undefined): Promise<void> {
    const finished = await this.core.finish(key, status, reader, error);
    this.log(finished.line);
    this.onCall?.({ traceId: finished.trace_id, record: finished.record });
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

  async close(server: Server): Promise<void> {
    this.#closing = true;
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    await Promise.allSettled([...this.#inFlight.keys()]);
    server.closeAllConnections();
    await stopped;
    this.log('workbench proxy: stopping: saving every session');
    const failures = (await this.core.closeAll()) as string[];
    for (const failure of failures) this.log(`workbench: proxy: ${failure}`);
    this.core.free();
  }

  /** Cut short what is still in flight `ms` after now (once closing): its agents get an error. */
  cutAfter(server: Server, ms: number): void {
    setTimeout(() => {
      const n = this.#inFlight.size;
      if (n === 0) return;
      this.log(`workbench proxy: stopping: ${n} request${n === 1 ? '' : 's'} still in flight after ${ms} ms cut short (${n === 1 ? 'its agent gets' : 'their agents get'} an error; those replies are not recorded)`);
      for (const cut of this.#inFlight.values()) cut.abort();
      // What waits on an agent (a body still arriving, a connection that is full) ends with the connection.
      setTimeout(() => server.closeAllConnections(), 500).unref();
    }, Math.max(0, ms)).unref();
  }
}

/** The body, or undefined when it is over `limit` bytes or the agent cut it short. */
async function readBody(req: IncomingMessage, limit: number): Promise<Uint8Array | undefined> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        req.resume();
        return undefined;
      }
      chunks.push(chunk);
    }
  } catch {
    return undefined;
  }
  if (!req.complete) return undefined;
  return new Uint8Array(Buffer.concat(chunks));
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

function respondError(res: ServerResponse, format: Format, status: number, message: string): void {
  const body = proxyErrorBody(format, status, message);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function sendFailure(error: unknown): [number, string] {
  if (error instanceof SendError) return [{ timeout: 504, stopped: 503, unreachable: 502 }[error.kind], error.message];
  return [502, asWorkbenchError(error).message];
}

function bare(url: string | undefined): string {
  return (url ?? '/').split('?')[0] ?? '/';
}

/** The upstream of each format: the providers' own unless `upstream` names another. */
export function parseUpstreams(flags: string | string[] | undefined): Upstreams {
  const upstreams: Upstreams = { anthropic: 'https://api.anthropic.com', openai: 'https://api.openai.com' };
  for (const flag of typeof flags === 'string' ? [flags] : flags ?? []) {
    const match = /^(anthropic|openai)=(.*)$/.exec(flag);
    const url = match ? match[2]! : flag;
    if (!/^https?:\/\//.test(url)) {
      throw new ContextWorkbenchError('invalid_input', `--upstream \`${flag}\`: expected URL, anthropic=URL or openai=URL with http(s)://`);
    }
    const trimmed = url.replace(/\/+$/, '');
    if (match) upstreams[match[1] as Format] = trimmed;
    else upstreams.anthropic = upstreams.openai = trimmed;
  }
  return upstreams;
}

/** The workspace and the trace root in it: a store outside the workspace has its parent as the workspace. */
async function storeLocation(workspaceDir: string, store: string): Promise<{ workspace: string; root: string }> {
  const ws = path.resolve(workspaceDir);
  const absolute = path.resolve(ws, store);
  try {
    await mkdir(absolute, { recursive: true });
  } catch (error) {
    throw new ContextWorkbenchError('io', `--store ${store}: ${(error as Error).message}`);
  }
  const [realStore, realWs] = await Promise.all([realpath(absolute), realpath(ws)]);
  const relative = path.relative(realWs, realStore);
  if (relative && !relative.startsWith('..') && !path.isAbsolute(relative)) {
    return { workspace: realWs, root: relative.split(path.sep).join('/') };
  }
  const parent = path.dirname(realStore);
  if (parent === realStore) throw new ContextWorkbenchError('invalid_input', "--store must not be the file system's root");
  return { workspace: parent, root: path.basename(realStore) };
}
