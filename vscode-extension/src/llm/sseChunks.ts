// Assemble an OpenAI-compatible streamed chat completion (server-sent events of
// `chat.completion.chunk`) into one reply. Pure: fed text as it arrives.
import type { ChatReply, ChatUsage, ToolCall } from './types';

interface ChunkDelta {
  content?: string | null;
  tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }>;
}
interface Chunk {
  choices?: Array<{ delta?: ChunkDelta; message?: ChunkDelta; finish_reason?: string | null }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } } | null;
  error?: { message?: string };
}

export class SseReplyBuilder {
  private buffer = '';
  private text = '';
  private readonly calls: Array<{ id: string; name: string; arguments: string }> = [];
  private usage?: ChatUsage;
  done = false;

  constructor(private readonly onText?: (delta: string) => void) {}

  /** Feed raw text from the response body; complete events are applied, the rest kept. */
  push(raw: string): void {
    this.buffer += raw.replace(/\r\n/g, '\n');
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const event = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      this.applyEvent(event);
    }
  }

  /** The reply so far; throws when the stream carried an error. */
  finish(): ChatReply {
    if (this.buffer.trim() !== '') this.applyEvent(this.buffer);
    this.buffer = '';
    const toolCalls: ToolCall[] = this.calls
      .filter((c) => c.name !== '')
      .map((c, i) => ({ id: c.id || `call_${i}`, name: c.name, arguments: c.arguments || '{}' }));
    return { text: this.text, toolCalls, usage: this.usage };
  }

  private applyEvent(event: string): void {
    const data = event
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n');
    if (data === '') return;
    if (data === '[DONE]') {
      this.done = true;
      return;
    }
    let chunk: Chunk;
    try {
      chunk = JSON.parse(data) as Chunk;
    } catch {
      throw new Error(`the endpoint streamed something that is not JSON: ${data.slice(0, 200)}`);
    }
    applyChunk(chunk, this);
  }

  /** @internal */ addText(delta: string): void {
    this.text += delta;
    this.onText?.(delta);
  }

  /** @internal */ addToolCallDelta(index: number, id?: string, name?: string, args?: string): void {
    while (this.calls.length <= index) this.calls.push({ id: '', name: '', arguments: '' });
    const call = this.calls[index];
    if (id) call.id = id;
    if (name) call.name += name;
    if (args) call.arguments += args;
  }

  /** @internal */ setUsage(usage: ChatUsage): void {
    this.usage = usage;
  }
}

/** Apply one chunk (or a whole non-streamed completion, whose `message` stands for `delta`). */
export function applyChunk(chunk: Chunk, into: SseReplyBuilder): void {
  if (chunk.error) throw new Error(`the endpoint reported an error: ${chunk.error.message ?? JSON.stringify(chunk.error)}`);
  for (const choice of chunk.choices ?? []) {
    const delta = choice.delta ?? choice.message;
    if (!delta) continue;
    if (typeof delta.content === 'string' && delta.content !== '') into.addText(delta.content);
    for (const [i, call] of (delta.tool_calls ?? []).entries()) {
      into.addToolCallDelta(call.index ?? i, call.id, call.function?.name, call.function?.arguments);
    }
  }
  if (chunk.usage) {
    into.setUsage({
      promptTokens: chunk.usage.prompt_tokens ?? 0,
      completionTokens: chunk.usage.completion_tokens ?? 0,
      cachedTokens: chunk.usage.prompt_tokens_details?.cached_tokens ?? 0,
    });
  }
}
