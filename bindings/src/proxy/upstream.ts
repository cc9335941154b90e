// The upstream side of the npm proxy: Node's fetch with streamed bodies, the headers that pass in
// each direction (as `workbench proxy`'s), and a reader that gives up when the upstream goes
// silent. Errors name the upstream's scheme, host and port only, never a path or a key.
import type { IncomingHttpHeaders } from 'node:http';
import { upstreamUrl } from '../wasm/context_workbench.js';

export type Format = 'anthropic' | 'openai';

/** Hop-by-hop and recomputed headers: they never pass. */
const HOP = new Set(['host', 'content-length', 'connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate',
  'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

export interface Upstreams { anthropic: string; openai: string }

/** Why the upstream gave no answer: `unreachable` (502), `timeout` (504) or `stopped`: the proxy cut it short (503). */
export class SendError extends Error {
  constructor(readonly kind: 'unreachable' | 'timeout' | 'stopped', message: string) {
    super(message);
  }
}

/**
 * Send a request on to the upstream of `format` with the agent's headers (its key among them:
 * forwarded, never logged). fetch decodes compressed replies itself, so the reply's
 * `content-encoding` never passes back (see `replyHeaders`).
 */
export async function send(upstreams: Upstreams, format: Format, method: string, path: string,
  headers: IncomingHttpHeaders, body: Uint8Array | string | undefined, timeoutMs: number, cut: AbortSignal): Promise<Response> {
  const url = upstreamUrl(upstreams[format], path);
  const forwarded = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (HOP.has(name) || name === 'accept-encoding' || value === undefined) continue;
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
    if (cut.aborted) throw new SendError('stopped', 'the proxy stopped before the upstream answered');
    if (abort.signal.aborted) throw new SendError('timeout', 'the upstream did not answer in time');
    throw new SendError('unreachable', `upstream ${hostOf(url)}: ${why(error)}`);
  } finally {
    clearTimeout(timer);
  }
}

/** The upstream's headers for the agent. */
export function replyHeaders(response: Response): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of response.headers) {
    if (HOP.has(name) || name === 'content-encoding' || name === 'set-cookie') continue;
    out[name] = value;
  }
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) out['set-cookie'] = cookies;
  return out;
}

export function isEventStream(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').trimStart().toLowerCase().startsWith('text/event-stream');
}

/** How a body ended: `done`, or `cut` with why (it broke off, or stayed silent past the timeout). */
export type End = { kind: 'done' } | { kind: 'cut'; why: string } | { kind: 'agent-gone' };

/** Read `response`'s body piece by piece, each piece to `give` (false: the agent has gone); `cut`, sent with it, ends it. */
export async function pump(response: Response, timeoutMs: number, give: (bytes: Uint8Array) => Promise<boolean>, cut: AbortSignal): Promise<End> {
  if (!response.body) return { kind: 'done' };
  const reader = response.body.getReader();
  for (;;) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const silent = new Promise<'silent'>((resolve) => { timer = setTimeout(() => resolve('silent'), timeoutMs); });
    let next: ReadableStreamReadResult<Uint8Array> | 'silent';
    try {
      next = await Promise.race([reader.read(), silent]);
    } catch {
      return { kind: 'cut', why: cut.aborted ? 'the proxy stopped before the reply ended' : "the upstream's reply broke off" };
    } finally {
      clearTimeout(timer);
    }
    if (next === 'silent') {
      void reader.cancel().catch(() => {});
      return { kind: 'cut', why: `the upstream sent nothing for ${Math.round(timeoutMs / 1000)} s` };
    }
    if (next.done) return { kind: 'done' };
    if (!(await give(next.value))) {
      void reader.cancel().catch(() => {});
      return { kind: 'agent-gone' };
    }
  }
}

/** `scheme://host[:port]` of a URL: what an error may name. */
function hostOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return 'the upstream';
  }
}

function why(error: unknown): string {
  const code = (error as { cause?: { code?: string } }).cause?.code ?? '';
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ECONNRESET' || code.startsWith('UND_ERR_CONNECT')) return 'cannot connect';
  if (code.includes('TIMEOUT')) return 'timed out';
  return 'the request failed';
}
