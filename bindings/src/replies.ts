// A provider's reply as the engine's MessageInput, so an embedder records it without writing the
// conversion: OpenAI chat's `choices[0].message`, Anthropic's `content` blocks (or the whole reply).
import { ContextWorkbenchError } from './errors.js';
import type { ContentPart, MessageInput } from './types.js';

/** OpenAI chat completions' `choices[0].message`: its text and its `tool_calls`. */
export interface OpenAiReplyMessage {
  role?: string;
  content?: string | Array<{ type: string; text?: string }> | null;
  tool_calls?: Array<{ id: string; type?: string; function: { name: string; arguments: string } }> | null;
}

/** One block of an Anthropic reply's `content`. */
export type AnthropicReplyBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: string; [field: string]: unknown };

/** The assistant message of an OpenAI chat reply (`choices[0].message`). */
export function messageFromOpenAi(message: OpenAiReplyMessage): MessageInput {
  if (!isObject(message)) throw invalid('messageFromOpenAi: expected `choices[0].message`, an object with `content` and `tool_calls`');
  const content: ContentPart[] = [];
  const text = typeof message.content === 'string'
    ? message.content
    : Array.isArray(message.content) ? message.content.filter((p) => p?.type === 'text').map((p) => p.text ?? '').join('') : '';
  if (text) content.push({ type: 'text', text });
  for (const [i, call] of (message.tool_calls ?? []).entries()) {
    if (!isObject(call) || typeof call.id !== 'string' || !isObject(call.function) || typeof call.function.name !== 'string') {
      throw invalid(`messageFromOpenAi: tool_calls[${i}] needs \`id\` and \`function: { name, arguments }\``);
    }
    content.push({ type: 'tool_call', id: call.id, name: call.function.name, arguments: String(call.function.arguments ?? '') });
  }
  return { role: 'assistant', content };
}

/**
 * The assistant message of an Anthropic Messages reply: its `content` blocks, or the reply itself.
 * `text`, `tool_use` (the input as JSON text) and `thinking` (with its signature) are read; any
 * other block is refused by its type, never dropped in silence.
 */
export function messageFromAnthropic(reply: AnthropicReplyBlock[] | { content: AnthropicReplyBlock[] }): MessageInput {
  const blocks = Array.isArray(reply) ? reply : isObject(reply) && Array.isArray(reply.content) ? reply.content : undefined;
  if (!blocks) throw invalid('messageFromAnthropic: expected the reply or its `content`, an array of blocks');
  const content = blocks.map((block, i): ContentPart => {
    const b = block as Record<string, unknown>;
    switch (b?.type) {
      case 'text':
        return { type: 'text', text: String(b.text ?? '') };
      case 'tool_use':
        if (typeof b.id !== 'string' || typeof b.name !== 'string') throw invalid(`messageFromAnthropic: content[${i}] (tool_use) needs \`id\` and \`name\``);
        return { type: 'tool_call', id: b.id, name: b.name, arguments: JSON.stringify(b.input ?? {}) };
      case 'thinking':
        return { type: 'reasoning', text: String(b.thinking ?? ''), ...(typeof b.signature === 'string' ? { signature: b.signature } : {}) };
      default:
        throw invalid(`messageFromAnthropic: content[${i}] is a \`${String(b?.type)}\` block; text, tool_use and thinking are read`);
    }
  });
  return { role: 'assistant', content: content.filter((p) => p.type !== 'text' || p.text !== '') };
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(message: string): ContextWorkbenchError {
  return new ContextWorkbenchError('invalid_input', message);
}
