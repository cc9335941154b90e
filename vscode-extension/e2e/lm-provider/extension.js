// A language model for the end-to-end test only: VS Code's Language Model API offers it as any
// signed-in provider's model (vendor `e2e-scripted`), and its replies come from the test's
// scripted endpoint, the one stand-in allowed (the LLM). Context Workbench, configured without
// an endpoint of its own, finds it with vscode.lm.selectChatModels and drives it through the API:
// text streamed part by part, tool calls as parts, cancellation by token.
const vscode = require('vscode');

const MODEL = {
  id: 'scripted-lm',
  name: 'Scripted LM',
  family: 'scripted-lm',
  version: '1',
  maxInputTokens: 16_000,
  maxOutputTokens: 4_096,
  capabilities: { toolCalling: true },
};

exports.activate = (context) => {
  context.subscriptions.push(
    vscode.lm.registerLanguageModelChatProvider('e2e-scripted', {
      provideLanguageModelChatInformation: () => [MODEL],
      provideLanguageModelChatResponse: respond,
      provideTokenCount: async (_model, text) => Math.ceil((typeof text === 'string' ? text : JSON.stringify(text)).length / 4),
    }),
  );
};

async function respond(model, messages, options, progress, token) {
  const url = vscode.workspace.getConfiguration('e2eScriptedModel').get('url');
  const abort = new AbortController();
  const cancelled = token.onCancellationRequested(() => abort.abort());
  try {
    const tools = (options.tools ?? []).map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.inputSchema ?? { type: 'object', properties: {} } },
    }));
    const response = await fetch(`${url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-via': 'vscode.lm' },
      body: JSON.stringify({ model: model.id, stream: true, messages: messages.flatMap(toWire), tools }),
      signal: abort.signal,
    });
    if (!response.ok) throw new Error(`the scripted endpoint answered HTTP ${response.status}: ${await response.text()}`);
    const calls = [];
    for await (const delta of deltas(response.body)) {
      if (delta.content) progress.report(new vscode.LanguageModelTextPart(delta.content));
      for (const part of delta.tool_calls ?? []) {
        const call = (calls[part.index] ??= { id: '', name: '', args: '' });
        call.id ||= part.id ?? '';
        call.name ||= part.function?.name ?? '';
        call.args += part.function?.arguments ?? '';
      }
    }
    for (const call of calls) progress.report(new vscode.LanguageModelToolCallPart(call.id, call.name, JSON.parse(call.args || '{}')));
  } finally {
    cancelled.dispose();
  }
}

/** The `delta`s of an OpenAI-style event stream. */
async function* deltas(body) {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const data = buffer.slice(0, end).replace(/^data: /, '');
      buffer = buffer.slice(end + 2);
      if (data !== '[DONE]') yield JSON.parse(data).choices?.[0]?.delta ?? {};
    }
  }
}

/** A Language Model API message in the OpenAI chat form (tool results become `tool` messages). */
function toWire(message) {
  const text = [];
  const calls = [];
  const results = [];
  for (const part of message.content) {
    if (part instanceof vscode.LanguageModelTextPart) text.push(part.value);
    else if (part instanceof vscode.LanguageModelToolCallPart) {
      calls.push({ id: part.callId, type: 'function', function: { name: part.name, arguments: JSON.stringify(part.input ?? {}) } });
    } else if (part instanceof vscode.LanguageModelToolResultPart) {
      const content = part.content.map((c) => (c instanceof vscode.LanguageModelTextPart ? c.value : '')).join('');
      results.push({ role: 'tool', tool_call_id: part.callId, content });
    }
  }
  if (message.role === vscode.LanguageModelChatMessageRole.Assistant) {
    return [{ role: 'assistant', content: text.join('') || null, ...(calls.length ? { tool_calls: calls } : {}) }];
  }
  return [...results, ...(text.length ? [{ role: 'user', content: text.join('') }] : [])];
}
