// One request through the npm proxy: the engine's exchange (wasm `ProxyExchange`) decides every
// step, and this carries out its effects with node:http, the upstream client and the engine
// threads, as `workbench proxy` does with tokio.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExchangeEffect, ExchangeEvent, ProxyExchange } from '../wasm/context_workbench.js';
import { asWorkbenchError } from '../errors.js';
import { failureOf, pump, replyHeader, replyHeaders } from './upstream.js';
import type { Finished, Proxy } from './start.js';

export class Call {
  #body: Uint8Array = new Uint8Array();
  /** Whether the agent's body is still unread (the exchange answered before reading it). */
  #unread = true;
  #prepared: string | undefined;
  #thread: number | undefined;
  #release: (() => void) | undefined;
  #response: IncomingMessage | undefined;
  #chunk: Uint8Array = new Uint8Array();
  #agentHere = true;
  #recording: Promise<Finished> | undefined;
  #finished: Finished | undefined;
  /** The connection closed before the reply ended: the agent left (or the proxy's cut closed it, after aborting `stop`). */
  #agentLeft = false;

  /** `stop` cuts the call short: at the proxy's shutdown, or once its agent has gone. */
  constructor(private readonly proxy: Proxy, private readonly req: IncomingMessage, private readonly res: ServerResponse,
    private readonly exchange: ProxyExchange, private readonly stop: AbortController) {}

  /** Carry out the exchange's effects, and those of the events they lead to, until it is over. */
  async run(): Promise<void> {
    this.res.once('close', () => {
      if (this.res.writableFinished) return;
      this.#agentLeft = true;
      this.stop.abort();
    });
    try {
      await this.#drive(this.exchange.start());
    } catch (error) {
      // Nothing reaches the connection unanswered: the exchange answers or closes.
      await this.#drive(this.exchange.step({ event: 'broke', why: asWorkbenchError(error).message }));
    } finally {
      this.#release?.();
    }
  }

  async #drive(effects: ExchangeEffect[]): Promise<void> {
    while (effects.length > 0) {
      let next: ExchangeEvent | undefined;
      for (const effect of effects) next = (await this.#act(effect)) ?? next;
      if (!next) return;
      effects = this.exchange.step(next);
    }
  }

  async #act(effect: ExchangeEffect): Promise<ExchangeEvent | undefined> {
    const { proxy, req, res } = this;
    switch (effect.effect) {
      case 'read_body': {
        this.#unread = false;
        const body = await readBody(req, effect.limit, effect.timeout_ms);
        if (body === 'timeout') return { event: 'body_timed_out' };
        if (body === undefined) return { event: 'body_refused' };
        this.#body = body;
        return { event: 'body_read', bytes: body.length };
      }
      case 'read':
        try {
          const verdict = effect.away ? await proxy.readAway(req, this.#body) : this.exchange.verdict(this.#body);
          return { event: 'read', verdict };
        } catch (error) {
          return { event: 'unreadable', why: asWorkbenchError(error).message };
        }
      case 'log':
        proxy.log(effect.line);
        return;
      case 'answer':
        if (effect.close) {
          res.shouldKeepAlive = false;
          // A body never read is read and dropped first: an agent still sending it then reads the answer, not a reset.
          if (this.#unread) await drain(req, effect.drain_ms);
        }
        if (!res.headersSent && !res.destroyed) respond(res, effect.status, effect.body);
        return;
      case 'take_turn': {
        const { release, thread, notes } = await proxy.takeTurn(req, this.exchange);
        [this.#release, this.#thread] = [release, thread];
        return { event: 'turn_taken', notes };
      }
      case 'prepare':
        try {
          this.#prepared = await proxy.pool.call(this.#thread!, 'prepare', req.method ?? 'POST', req.url ?? '/',
            req.rawHeaders, this.#body, { notes: effect.notes, opening: effect.opening });
          return { event: 'prepared', rewritten: this.#prepared !== undefined };
        } catch (error) {
          return { event: 'session_gone', why: asWorkbenchError(error).message };
        }
      case 'count_side_call':
        proxy.countSideCall(effect.agent_session, effect.record);
        return;
      case 'send':
        try {
          const body = effect.prepared ? this.#prepared : this.#body;
          const response = await proxy.upstream.send(effect.url, req.method ?? 'POST', req.headers, body, this.stop.signal, effect.plain);
          this.#response = response;
          const length = replyHeader(response, 'content-length');
          return {
            event: 'answered', status: response.statusCode ?? 502, content_type: replyHeader(response, 'content-type') ?? null,
            content_length: length === undefined || !/^\d+$/.test(length.trim()) ? null : Number(length),
          };
        } catch (error) {
          return { event: 'failed', failure: this.#agentLeft ? 'agent_gone' : failureOf(error) };
        }
      case 'read_reply': {
        const pieces: Uint8Array[] = [];
        let size = 0;
        const end = await pump(this.#response!, proxy.upstream.timeoutMs, async (bytes) => {
          size += bytes.length;
          pieces.push(bytes);
          return size <= effect.limit;
        }, this.stop.signal);
        if (end === 'done') return { event: 'reply_read', body: Buffer.concat(pieces).toString('utf8') };
        // Here `agent_gone` is the callback's refusal: the reply ran over the limit.
        return { event: 'ended', end: this.#agentLeft ? 'agent_gone' : end === 'agent_gone' ? 'broke_off' : end };
      }
      case 'respond': {
        res.writeHead(effect.status, replyHeaders(this.#response!));
        const end = await pump(this.#response!, proxy.upstream.timeoutMs, async (bytes) => {
          this.#chunk = bytes;
          for (const relayed of this.exchange.relay(bytes)) await this.#act(relayed);
          return this.#agentHere;
        }, this.stop.signal);
        return { event: 'ended', end: this.#agentLeft ? 'agent_gone' : end };
      }
      case 'give':
        this.#agentHere &&= await write(res, this.#chunk);
        return;
      case 'give_text':
        this.#agentHere &&= await write(res, new TextEncoder().encode(effect.text));
        return;
      case 'finish':
        this.#recording = proxy.pool.call(this.#thread!, 'finish', this.exchange.key!, effect.status, effect.outcome);
        // `await_record` tells its failure (a reply that breaks before then is not recorded, natively too).
        this.#recording.catch(() => undefined);
        return;
      case 'await_record':
        try {
          this.#finished = await this.#recording;
        } catch (error) {
          return { event: 'not_recorded', why: asWorkbenchError(error).message };
        }
        return { event: 'recorded', record: this.#finished ? { ...this.#finished.record, trace_id: this.#finished.trace_id } : null };
      case 'end_reply':
        res.end();
        return;
      case 'called':
        if (this.#finished) {
          proxy.called(this.#finished.trace_id, this.#finished.record);
          try {
            const span = proxy.telemetry && this.exchange.span(Date.now());
            if (span) proxy.telemetry!.export(span);
          } catch {
            // A span that cannot be made is not exported; the call is answered and recorded.
          }
        }
        return;
      case 'close':
        res.destroy();
        return;
      case 'done':
        this.#release?.();
        this.#release = undefined;
        return;
    }
  }
}

/** The body; undefined when it is over `limit` bytes or the agent cut it short; `timeout` when it did not arrive in time. */
function readBody(req: IncomingMessage, limit: number, timeoutMs: number): Promise<Uint8Array | undefined | 'timeout'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (result: Uint8Array | undefined | 'timeout') => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', onGone).off('close', onGone);
      req.socket.off('end', onCut);
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
    // The agent closed its side short of the body's length (Node's parser then says nothing to `req`).
    const onCut = () => { if (!req.complete) done(undefined); };
    const timer = setTimeout(() => {
      req.pause();
      done('timeout');
    }, timeoutMs);
    req.on('data', onData).once('end', onEnd).once('error', onGone).once('close', onGone);
    req.socket.once('end', onCut);
  });
}

/** Read and drop what is left of `req`'s body, for at most `ms`. */
function drain(req: IncomingMessage, ms: number): Promise<void> {
  if (req.readableEnded || req.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      req.off('end', done).off('close', done).off('error', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    req.once('end', done).once('close', done).once('error', done);
    req.resume();
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
