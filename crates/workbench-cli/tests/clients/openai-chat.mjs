// The official openai SDK in a streamed tool-calling loop against OPENAI_BASE_URL (the proxy):
// it reads the files the model asks for and prints one JSON line: the answer and the counts.
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';

const client = new OpenAI(); // OPENAI_API_KEY and OPENAI_BASE_URL from the environment
const tools = [
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Read a text file of the working directory',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
];
const messages = [
  { role: 'system', content: 'You read notes for the user.' },
  { role: 'user', content: 'Read every notes file and tell me when you are done.' },
];

let calls = 0;
let toolCalls = 0;
let answer = null;
while (answer === null && calls < 40) {
  calls += 1;
  const stream = await client.chat.completions.create({
    model: 'gpt-scripted',
    messages,
    tools,
    stream: true,
    stream_options: { include_usage: true },
  });
  let content = '';
  let finish = null;
  let usage = null;
  const pending = [];
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    if (choice.delta?.content) content += choice.delta.content;
    for (const call of choice.delta?.tool_calls ?? []) {
      pending[call.index] ??= { id: '', name: '', arguments: '' };
      const slot = pending[call.index];
      if (call.id) slot.id = call.id;
      if (call.function?.name) slot.name += call.function.name;
      if (call.function?.arguments) slot.arguments += call.function.arguments;
    }
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  if (!usage) throw new Error(`call ${calls}: the stream carried no usage`);
  const assistant = { role: 'assistant', content: content || null };
  if (pending.length > 0) {
    assistant.tool_calls = pending.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  }
  messages.push(assistant);
  if (finish !== 'tool_calls') {
    answer = content;
    break;
  }
  for (const call of pending) {
    toolCalls += 1;
    const { path } = JSON.parse(call.arguments);
    messages.push({ role: 'tool', tool_call_id: call.id, content: readFileSync(path, 'utf8') });
  }
}
console.log(JSON.stringify({ answer, calls, tool_calls: toolCalls }));
