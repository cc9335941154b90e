// openAiCompatibleLlm: an LLM over any OpenAI-compatible chat-completions endpoint (OpenAI,
// vLLM, Ollama, llama.cpp, LiteLLM, OpenRouter …) with fetch, as the CLI's client does it.
import type { Completion, CompletionRequest, Usage } from '../types.js';
import { type Llm, hostError } from './shared.js';

export interface OpenAiLlmOptions {
  /** A server address, a `…/v1` base, or the full `…/chat/completions` URL. */
  url: string;
  model: string;
  /** Sent as `Authorization: Bearer …`; never logged or put in an error. */
  apiKey?: string;
  /** Extra headers (an OpenRouter referer, say). */
  headers?: Record<string, string>;
  /** Used when a request names no timeout (120,000 ms). */
  timeoutMs?: number;
  /** Another fetch (a proxy's, a test's). */
  fetch?: typeof fetch;
}

/** The full chat-completions URL, as the CLI derives it. */
export function chatCompletionsUrl(url: string): string {
  const base = url.replace(/\/+$/, '');
  if (base.endsWith('/chat/completions')) return base;
  return base.endsWith('/v1') ? `${base}/chat/completions` : `${base}/v1/chat/completions`;
}

export function openAiCompatibleLlm(options: OpenAiLlmOptions): Llm {
  const url = chatCompletionsUrl(options.url);
  const doFetch = options.fetch ?? globalThis.fetch;
  return async (request: CompletionRequest): Promise<Completion> => {
    const timeoutMs = request.timeoutMs ?? options.timeoutMs ?? 120_000;
    const body: Record<string, unknown> = { model: options.model, messages: request.messages, stream: false };
    if (request.maxOutputTokens !== undefined) body.max_tokens = request.maxOutputTokens;
    const headers: Record<string, string> = { 'Content-Type': 'application/json', ...options.headers };
    if (options.apiKey) headers.Authorization = `Bearer ${options.apiKey}`;
    let response: Response;
    let text: string;
    try {
      response = await doFetch(url, {
        method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      const name = (error as Error)?.name;
      if (name === 'TimeoutError' || name === 'AbortError') {
        throw hostError('timeout', `LLM endpoint ${url}: no answer within ${timeoutMs} ms`);
      }
      throw hostError('llm', `LLM endpoint ${url}: ${(error as Error)?.message ?? String(error)}`);
    }
    if (!response.ok) {
      throw hostError('llm', `LLM endpoint ${url} answered ${response.status}: ${text.slice(0, 300)}`);
    }
    return parseChatCompletion(url, text);
  };
}

function parseChatCompletion(url: string, body: string): Completion {
  let value: any;
  try {
    value = JSON.parse(body);
  } catch (error) {
    throw hostError('llm', `LLM endpoint ${url}: response is not JSON: ${(error as Error).message}`);
  }
  const message = value?.choices?.[0]?.message;
  if (message == null) throw hostError('llm', `LLM endpoint ${url}: response has no choices[0].message`);
  const content = message.content;
  let text: string;
  if (typeof content === 'string') text = content;
  else if (content == null) text = '';
  else if (Array.isArray(content)) text = content.map((p: { text?: unknown }) => (typeof p?.text === 'string' ? p.text : '')).join('');
  else throw hostError('llm', `LLM endpoint ${url}: choices[0].message.content is ${JSON.stringify(content)}`);
  const u = value.usage;
  const usage: Usage | undefined = typeof u?.prompt_tokens === 'number'
    ? {
      promptTokens: u.prompt_tokens,
      completionTokens: typeof u.completion_tokens === 'number' ? u.completion_tokens : 0,
      cachedTokens: typeof u.prompt_tokens_details?.cached_tokens === 'number' ? u.prompt_tokens_details.cached_tokens : 0,
    }
    : undefined;
  return usage ? { text, usage } : { text };
}
