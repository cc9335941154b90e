// The npm proxy's bytes toward the upstream: node:http(s) requests over kept-alive connections
// (fetch costs about a millisecond more per request here), the headers the engine lets cross, and
// a reader that reports how a body ended (it broke off, went silent past the timeout, or the proxy
// stopped). Which headers cross and what a failure answers are the engine's decisions
// (`passesToUpstream`, `passesToAgent`, the exchange's `failed` event).
import http, { type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import { type End, type Failure, passesToAgent, passesToUpstream } from '../wasm/context_workbench.js';

/** Why the upstream gave no reply, as the exchange's `failed` event takes it. */
class SendError extends Error {
  constructor(readonly failure: Failure) {
    super(typeof failure === 'string' ? failure : 'unreachable');
  }
}

/** The failure `send` rejected with. */
export function failureOf(error: unknown): Failure {
  return error instanceof SendError ? error.failure : { unreachable: 'other' };
}

/** The upstreams as one proxy reaches them: its kept-alive connections, its timeout for a reply's head. */
export class Upstream {
  readonly #agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

  constructor(readonly timeoutMs: number) {}

  /**
   * Send a request to `url` with the agent's headers that cross (its key among them: forwarded,
   * never logged); resolves once the reply's head has arrived, within the timeout. `plain`: the
   * reply is read as it passes (a managed call), so the agent's `accept-encoding` stays behind and
   * the upstream sends it uncompressed; otherwise the reply crosses as it came, compressed or not.
   */
  send(url: string, method: string, headers: IncomingHttpHeaders, body: Uint8Array | string | undefined, cut: AbortSignal,
    plain: boolean): Promise<IncomingMessage> {
    const forwarded: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(headers)) {
      if (value !== undefined && passesToUpstream(name, plain)) forwarded[name] = value;
    }
    const hasBody = body !== undefined && method !== 'GET' && method !== 'HEAD';
    if (hasBody) forwarded['content-length'] = Buffer.byteLength(body);
    const secure = url.startsWith('https:');
    return new Promise((resolve, reject) => {
      if (cut.aborted) return reject(new SendError('stopped'));
      let failure: SendError | undefined;
      const request = (secure ? https : http).request(url, { method, headers: forwarded, agent: secure ? this.#agents.https : this.#agents.http });
      const fail = (error: SendError) => {
        failure ??= error;
        request.destroy();
      };
      const timer = setTimeout(() => fail(new SendError('timeout')), this.timeoutMs);
      const onCut = () => fail(new SendError('stopped'));
      cut.addEventListener('abort', onCut, { once: true });
      const settled = () => {
        clearTimeout(timer);
        cut.removeEventListener('abort', onCut);
      };
      request.once('response', (response) => {
        settled();
        // Read by `pump`; an error before it starts is its to report, never an uncaught one.
        response.on('error', () => {});
        // A cut after the head ends the body too (the pump reports it as stopped).
        if (!cut.aborted) cut.addEventListener('abort', () => response.destroy(), { once: true });
        resolve(response);
      });
      request.on('error', (error) => {
        settled();
        reject(failure ?? new SendError({ unreachable: causeOf(error) }));
      });
      request.setNoDelay(true);
      request.end(hasBody ? body : undefined);
    });
  }

  /** Close the kept-alive connections (the proxy stops). */
  close(): void {
    this.#agents.http.destroy();
    this.#agents.https.destroy();
  }
}

/** The upstream's headers that cross to the agent (the reply's bytes cross as they came, so its `content-encoding` too). */
export function replyHeaders(response: IncomingMessage): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined && passesToAgent(name, false)) out[name] = value;
  }
  return out;
}

/** Read `response`'s body piece by piece, each piece to `give` (false: the agent has gone); `cut`, sent with it, ends it. */
export async function pump(response: IncomingMessage, timeoutMs: number, give: (bytes: Uint8Array) => Promise<boolean>, cut: AbortSignal): Promise<End> {
  const pieces = response[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  for (;;) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const silent = new Promise<'silent'>((resolve) => { timer = setTimeout(() => resolve('silent'), timeoutMs); });
    let next: IteratorResult<Buffer> | 'silent';
    try {
      next = await Promise.race([pieces.next(), silent]);
    } catch {
      return cut.aborted ? 'stopped' : 'broke_off';
    } finally {
      clearTimeout(timer);
    }
    if (next === 'silent') {
      response.destroy();
      return { silent: timeoutMs };
    }
    if (next.done) return cut.aborted ? 'stopped' : response.complete ? 'done' : 'broke_off';
    if (!(await give(next.value))) {
      response.destroy();
      return 'agent_gone';
    }
  }
}

/** The header `name` of the upstream's reply, once. */
export function replyHeader(response: IncomingMessage, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function causeOf(error: unknown): 'cannot_connect' | 'timed_out' | 'other' {
  const code = (error as { code?: string }).code ?? '';
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ECONNRESET' || code === 'EHOSTUNREACH') return 'cannot_connect';
  if (code.includes('TIMEOUT')) return 'timed_out';
  return 'other';
}
