// A scripted Anthropic client for the proxy tests: it keeps its conversation as Claude Code does
// (the whole history in every request, the assistant's replies as they streamed in), sends it
// through a base URL, and reads the streamed reply back into content blocks.
export const CLAUDE_TOOLS = [
  {
    name: 'TodoWrite',
    description: 'Create and manage a structured task list for the current session.',
    input_schema: { type: 'object', properties: { todos: { type: 'array', items: { type: 'object', properties: { content: { type: 'string' }, status: { type: 'string', enum: ['pending', 'in_progress', 'completed'] }, activeForm: { type: 'string' } }, required: ['content', 'status', 'activeForm'] } } }, required: ['todos'] },
  },
  {
    name: 'Read',
    description: 'Reads a file from the local filesystem.',
    input_schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
  },
];

export class ScriptedAgent {
  constructor({ baseUrl, sessionId, userAgent = 'claude-cli/2.1.328 (external, cli)', system = 'You are Claude Code, a scripted stand-in.' }) {
    Object.assign(this, { baseUrl, sessionId, userAgent, system });
    this.messages = [];
  }

  /** Send `content` as the next user message; resolves to the reply's content blocks. */
  async send(content) {
    this.messages.push({ role: 'user', content });
    const response = await fetch(`${this.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-e2e-not-a-key', 'anthropic-version': '2023-06-01', 'user-agent': this.userAgent, 'x-session-id': this.sessionId },
      body: JSON.stringify({ model: 'claude-sonnet-4-5-20250929', max_tokens: 1024, stream: true, system: [{ type: 'text', text: this.system }], tools: CLAUDE_TOOLS, messages: this.messages }),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`the proxy answered ${response.status}: ${text.slice(0, 300)}`);
    const blocks = [];
    for (const line of text.split('\n')) {
      if (!line.startsWith('data: ')) continue;
      const event = JSON.parse(line.slice(6));
      if (event.type === 'content_block_start') blocks[event.index] = { ...event.content_block, partial: '' };
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') blocks[event.index].text += event.delta.text;
      if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta') blocks[event.index].partial += event.delta.partial_json;
      if (event.type === 'error') throw new Error(`the stream ended with an error: ${JSON.stringify(event.error)}`);
    }
    const reply = blocks.map(({ partial, ...b }) => (b.type === 'tool_use' ? { ...b, input: JSON.parse(partial || '{}') } : b));
    this.messages.push({ role: 'assistant', content: reply });
    return reply;
  }

  /** The results of the reply's tool calls, as the next user message's blocks. */
  static results(reply, outputOf) {
    return reply.filter((b) => b.type === 'tool_use').map((b) => ({ type: 'tool_result', tool_use_id: b.id, content: outputOf(b) }));
  }
}
