// What the agent loop asks of a chat model, whatever serves it (an OpenAI-compatible endpoint,
// VS Code's Language Model API). Messages and tools are the engine's OpenAI chat serialization.

export interface WireToolCall { id: string; type: 'function'; function: { name: string; arguments: string } }

export interface WireMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null | Array<{ type: string; text?: string }>;
  tool_calls?: WireToolCall[];
  tool_call_id?: string;
  name?: string;
}

export interface WireTool { type: 'function'; function: { name: string; description: string; parameters: unknown } }

export interface ChatRequest {
  messages: WireMessage[];
  tools: WireTool[];
  maxOutputTokens?: number;
  /** Called with each piece of text as it streams in. */
  onText?: (delta: string) => void;
  signal?: AbortSignal;
}

export interface ToolCall { id: string; name: string; arguments: string }

export interface ChatUsage { promptTokens: number; completionTokens: number; cachedTokens?: number }

export interface ChatReply { text: string; toolCalls: ToolCall[]; usage?: ChatUsage }

export interface ChatModel {
  /** A name for the user: `gpt-4o via https://…`, `copilot/gpt-4o`. */
  readonly label: string;
  /** The model's input window in tokens. */
  readonly maxInputTokens: number;
  chat(request: ChatRequest): Promise<ChatReply>;
}

/** A model failure the user should read as is: `cancelled`, `no_model`, `llm`. */
export class ModelError extends Error {
  constructor(readonly code: 'cancelled' | 'no_model' | 'llm' | 'timeout', message: string) {
    super(message);
    this.name = 'ModelError';
  }
}
