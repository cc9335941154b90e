// The npm proxy's bytes toward the upstream: Node's fetch with streamed bodies, the headers the
// engine lets cross, and a reader that reports how a body ended (it broke off, went silent past
// the timeout, or the proxy stopped). Which headers cross and what a failure answers are the
// engine's decisions (`passesToUpstream`, `passesToAgent`, `ProxyCore.forwardFailed`).
import type { IncomingHttpHeaders } from 'node:http';
import { passesToAgent, passesToUpstream } from '../wasm/context_workbench.js';

/** Why the upstream gave no reply, as `ProxyCore` takes it: `unreachable` (with its cause), `timeout` or `stopped`. */
export class SendError extends Error {
  constructor(readonly kind: 'unreachable' | 'timeout' | 'stopped', readonly reason?: 'connect' | 'timeout' | 'other') {
    super(kind);
  }
}

/**
 * Send a request to `url` with the agent's headers that cross (its key among them: forwarded,
 * never logged). fetch decodes a compressed reply itself, so the reply is asked for plain and its
 * `content-encoding` never crosses back (see `replyHeaders`).
 */
export async function send(url: string, method: string, headers: IncomingHttpHeaders, body: Uint8Array | string | undefined,
  timeoutMs: number, cut: AbortSignal): Promise<Response> {
  const forwarded = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || !passesToUpstream(name, true)) continue;
    for (const v of Array.isArray(value) ? value : [value]) forwarded.append(name, v);
  }
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  // A cut also ends the reply's body later on: the fetch's signal governs both.
  if (cut.aborted) abort.abort();
  else cut.addEventListener('abort', () => abort.abort(), { once: true });
  try {
    const hasBody = body !== undefined && method !== 'GET' && method !== 'HEAD';
    return await fetch(url, { method, headers: forwarded, body: hasBody ? (body as BodyInit) : undefined, redirect: 'manual', signal: abort.signal });
  } catch (error) {
    if (cut.aborted) throw new SendError('stopped');
    if (abort.signal.aborted) throw new SendError('timeout');
    throw new SendError('unreachable', reasonOf(error));
  } finally {
    clearTimeout(timer);
  }
}

/** The upstream's headers that cross to the agent. */
export function replyHeaders(response: Response): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of response.headers) {
    if (name !== 'set-cookie' && passesToAgent(name, true)) out[name] = value;
  }
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) out['set-cookie'] = cookies;
  return out;
}

/** How a body ended, as `ReplyPump.end` takes it (`silent` after the timeout). */
export type End = 'done' | 'agent-gone' | 'broke-off' | 'silent' | 'stopped';

/** Read `response`'s body piece by piece, each piece to `give` (false: the agent has gone); `cut`, sent with it, ends it. */
export async function pump(response: Response, timeoutMs: number, give: (bytes: Uint8Array) => Promise<boolean>, cut: AbortSignal): Promise<End> {
  if (!response.body) return 'done';
  const reader = response.body.getReader();
  for (;;) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const silent = new Promise<'silent'>((resolve) => { timer = setTimeout(() => resolve('silent'), timeoutMs); });
    let next: ReadableStreamReadResult<Uint8Array> | 'silent';
    try {
      next = await Promise.race([reader.read(), silent]);
    } catch {
      return cut.aborted ? 'stopped' : 'broke-off';
    } finally {
      clearTimeout(timer);
    }
    if (next === 'silent') {
      void reader.cancel().catch(() => {});
      return 'silent';
    }
    if (next.done) return 'done';
    if (!(await give(next.value))) {
      void reader.cancel().catch(() => {});
      return 'agent-gone';
    }
  }
}

function reasonOf(error: unknown): 'connect' | 'timeout' | 'other' {
  const code = (error as { cause?: { code?: string } }).cause?.code ?? '';
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ECONNRESET' || code.startsWith('UND_ERR_CONNECT')) return 'connect';
  if (code.includes('TIMEOUT')) return 'timeout';
  return 'other';
}
