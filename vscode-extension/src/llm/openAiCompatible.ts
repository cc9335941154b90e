// A chat model behind an OpenAI-compatible `/chat/completions` endpoint, streamed with `fetch`.
// Works in the Node and the web extension host alike.
import { SseReplyBuilder, applyChunk } from './sseChunks';
import { type ChatModel, type ChatReply, type ChatRequest, ModelError } from './types';
import { errorText } from '../errorText';

export interface OpenAiCompatibleOptions {
  /** Base URL, e.g. `http://127.0.0.1:8080/v1`; `/chat/completions` is appended. */
  url: string;
  model: string;
  apiKey?: string;
  maxInputTokens?: number;
  fetch?: typeof fetch;
}

export class OpenAiCompatibleModel implements ChatModel {
  readonly label: string;
  readonly maxInputTokens: number;
  private readonly endpoint: string;

  constructor(private readonly options: OpenAiCompatibleOptions) {
    let parsed: URL;
    try {
      parsed = new URL(options.url);
    } catch {
      throw new ModelError('no_model', `contextWorkbench.llm.url is not a URL: ${JSON.stringify(options.url)}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new ModelError('no_model', `contextWorkbench.llm.url must be http(s): ${options.url}`);
    }
    if (!options.model) throw new ModelError('no_model', 'contextWorkbench.llm.model is empty: name the model the endpoint serves');
    this.endpoint = `${options.url.replace(/\/+$/, '')}/chat/completions`;
    this.label = `${options.model} via ${parsed.host}`;
    this.maxInputTokens = options.maxInputTokens ?? 128_000;
  }

  async chat(request: ChatRequest): Promise<ChatReply> {
    const body = {
      model: this.options.model,
      messages: request.messages,
      ...(request.tools.length > 0 ? { tools: request.tools } : {}),
      ...(request.maxOutputTokens ? { max_tokens: request.maxOutputTokens } : {}),
      stream: true,
      stream_options: { include_usage: true },
    };
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    const doFetch = this.options.fetch ?? fetch;
    let response: Response;
    try {
      response = await doFetch(this.endpoint, { method: 'POST', headers, body: JSON.stringify(body), signal: request.signal });
    } catch (e) {
      throw failure(e, request.signal, `cannot reach ${this.endpoint}`);
    }
    if (!response.ok) {
      const detail = (await response.text().catch(() => '')).slice(0, 500);
      throw new ModelError('llm', `${this.endpoint} answered ${response.status} ${response.statusText}${detail ? `: ${detail}` : ''}`);
    }
    const builder = new SseReplyBuilder(request.onText);
    const type = response.headers.get('content-type') ?? '';
    try {
      if (!type.includes('text/event-stream')) {
        applyChunk(JSON.parse(await response.text()), builder);
        return builder.finish();
      }
      if (!response.body) throw new Error('the response has no body');
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        builder.push(decoder.decode(value, { stream: true }));
        if (builder.done) break;
      }
      builder.push(decoder.decode());
      return builder.finish();
    } catch (e) {
      throw failure(e, request.signal, `the reply of ${this.endpoint} broke off`);
    }
  }
}

function failure(e: unknown, signal: AbortSignal | undefined, context: string): ModelError {
  if (e instanceof ModelError) return e;
  if (signal?.aborted) return new ModelError('cancelled', 'the request was cancelled');
  const message = errorText(e);
  return new ModelError('llm', `${context}: ${message}`);
}
