// The dashboard at the proxy's /workbench/, as `workbench serve` has it at its root: the page's
// files and their CSP (embedded in the engine), the query API (the engine's `store::api` over the
// proxy's trace store), and requests for another host name refused. Pure I/O around the engine.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dashboardAsset, foreignHost } from '../wasm/context_workbench.js';
import { asWorkbenchError, guarded } from '../errors.js';
import { nodeFsHost } from '../hosts/node-fs.js';
import { TraceStore } from '../store.js';
import type { Prices } from '../wasm/context_workbench.js';

export class Dashboard {
  private constructor(private readonly store: TraceStore, private readonly prices: Prices) {}

  /** The dashboard of the trace root `root` under `workspace`. */
  static async open(workspace: string, root: string, prices: Prices): Promise<Dashboard> {
    return new Dashboard(await TraceStore.create(nodeFsHost(workspace), { root }), prices);
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
    const host = req.headers.host ?? '';
    const refusal = guarded(() => foreignHost(host));
    if (refusal) return json(res, 403, { error: { code: 'forbidden_host', message: refusal } }, true);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = within;
    if (path === '/' && !url.pathname.endsWith('/')) {
      res.writeHead(308, { location: `${url.pathname}/`, 'content-length': '0' });
      return void res.end();
    }
    const asset = path.startsWith('/api/') ? undefined : guarded(() => dashboardAsset(path));
    if (asset) {
      res.writeHead(200, Object.fromEntries(asset.headers));
      return void res.end(asset.text);
    }
    const reply = await this.store.answer(req.method ?? 'GET', path, url.search.slice(1), this.prices);
    res.writeHead(reply.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply.body) });
    res.end(reply.body);
  }

  dispose(): void {
    this.store.dispose();
  }
}

function json(res: ServerResponse, status: number, value: unknown, close = false): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(close ? { connection: 'close' } : {}) });
  res.end(body);
}
