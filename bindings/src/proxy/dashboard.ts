// The dashboard at the proxy's /workbench/, as `workbench serve` has it at its root: the page's
// files and their CSP (embedded in the engine), the query API (the engine's `store::api` over the
// proxy's trace store; live events over WebSocket are the native server's only), and requests
// for another host name or from another site's page refused. Pure I/O around the engine. The
// answers are read on a thread of their own, started at the first: a search over a large store
// or a long session's compactions hold up neither the proxy's requests nor its engine threads.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dashboardAsset, dashboardRefusal } from '../wasm/context_workbench.js';
import { asWorkbenchError, guarded } from '../errors.js';
import type { EnginePool } from './pool.js';

export class Dashboard {
  #thread: Promise<EnginePool> | undefined;

  /** The dashboard of the trace root `root`; `startThread` starts the thread its answers are read on. */
  constructor(private readonly root: string, private readonly startThread: () => Promise<EnginePool>) {}

  /** The query API's answer, read on the dashboard's thread (started again after a failure). */
  async #answer(method: string, path: string, query: string): Promise<{ status: number; body: string }> {
    const thread = this.#thread ??= this.startThread();
    try {
      return await (await thread).call(0, 'answer', this.root, method, path, query);
    } catch (error) {
      if (this.#thread === thread) this.#thread = undefined;
      void thread.then((pool) => pool.terminate(), () => {});
      throw error;
    }
  }

  /** Answer `req`, whose path within the dashboard is `within` (the bare prefix is `/`); never rejects. */
  async serve(req: IncomingMessage, res: ServerResponse, within: string): Promise<void> {
    try {
      await this.#serve(req, res, within);
    } catch (error) {
      if (res.headersSent) res.destroy();
      else json(res, 500, { error: { code: 'internal', message: asWorkbenchError(error).message } });
    }
  }

  async #serve(req: IncomingMessage, res: ServerResponse, within: string): Promise<void> {
    req.resume();
    const refusal = guarded(() => dashboardRefusal(req.headers.host ?? '', req.headers.origin));
    if (refusal) return json(res, 403, { error: { code: 'forbidden_host', message: refusal } }, true);
    const [pathname, query = ''] = (req.url ?? '/').split(/\?(.*)/s);
    const path = within;
    if (path === '/' && !pathname.endsWith('/')) {
      res.writeHead(308, { location: `${pathname}/`, 'content-length': '0' });
      return void res.end();
    }
    const method = req.method ?? 'GET';
    const asset = path.startsWith('/api/') || !['GET', 'HEAD'].includes(method) ? undefined : guarded(() => dashboardAsset(path));
    if (asset) {
      res.writeHead(200, Object.fromEntries(asset.headers));
      return void res.end(asset.text);
    }
    const reply = await this.#answer(method, path, query);
    res.writeHead(reply.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply.body) });
    res.end(reply.body);
  }

  /** Stop the dashboard's thread, if it started. */
  async dispose(): Promise<void> {
    const thread = this.#thread;
    this.#thread = undefined;
    await thread?.then((pool) => pool.terminate(), () => {});
  }
}

function json(res: ServerResponse, status: number, value: unknown, close = false): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(close ? { connection: 'close' } : {}) });
  res.end(body);
}
