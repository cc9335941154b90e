// A scripted Anthropic Messages upstream on 127.0.0.1 for the proxy tests: each request gets the
// next reply of the script as a stream (the events of tests/proxy_support/mod.rs
// `anthropic_events`), a unique message id each, and usage from a prefix cache of its own (the
// request's serialized system, tools and messages; 4 characters a token), as a provider reports.
import http from 'node:http';

/**
 * `replies`: content blocks per call (`{type:'text', text}` or `{type:'tool_use', name, input}`),
 * given in order (past the end, a short text), or a function of the request's body giving them.
 * A request without tools (an agent's side call: a title) gets a short text; `count_tokens` a
 * fixed count. `delayMs`: how long each agent call waits before its reply (so a test sees each
 * step). Resolves to `{ url, requests, close }`.
 */
export async function startScriptedAnthropic({ replies, delayMs = 0, log = () => {} }) {
  const requests = [];
  let calls = 0;
  let previous = '';
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (piece) => (raw += piece));
    req.on('end', async () => {
      let body;
      try {
        body = JSON.parse(raw);
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'not JSON' } }));
        return;
      }
      requests.push({ method: req.method, path: req.url, headers: req.headers, body });
      log(`scripted anthropic: ${req.method} ${req.url}`);
      if (req.method !== 'POST' || req.url.includes('count_tokens')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ input_tokens: 1000 }));
        return;
      }
      if (!Array.isArray(body.tools) || body.tools.length === 0) {
        const id = `msg_e2e_side_${process.pid}_${requests.length}`;
        const blocks = [{ type: 'text', text: 'Scripted session' }];
        const usage = { input_tokens: 100, output_tokens: 5 };
        if (body.stream) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          for (const [event, data] of anthropicEvents(id, blocks, usage)) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
          res.end();
        } else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ id, type: 'message', role: 'assistant', model: 'claude-scripted', content: blocks, stop_reason: 'end_turn', stop_sequence: null, usage }));
        }
        return;
      }
      const n = calls++;
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      log(`scripted anthropic: call ${n + 1}, ${body.messages?.length} messages`);
      const prompt = JSON.stringify({ system: body.system, tools: body.tools, messages: body.messages });
      let common = 0;
      while (common < prompt.length && common < previous.length && prompt[common] === previous[common]) common++;
      previous = prompt;
      const usage = { input_tokens: Math.ceil((prompt.length - common) / 4), cache_read_input_tokens: Math.floor(common / 4), cache_creation_input_tokens: 0, output_tokens: 20 };
      const blocks = (typeof replies === 'function' ? replies(body, n) : replies[n]) ?? [{ type: 'text', text: 'Nothing more to do.' }];
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const [event, data] of anthropicEvents(`msg_e2e_${process.pid}_${n + 1}`, blocks, usage)) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    /** Stop answering (again: nothing). */
    close: () => new Promise((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    }),
  };
}

/** The stream of one reply, as Anthropic sends it: text and tool input in two pieces each. */
export function anthropicEvents(id, blocks, usage) {
  const events = [['message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', content: [], model: 'claude-scripted', stop_reason: null, stop_sequence: null, usage } }]];
  let toolUse = false;
  blocks.forEach((block, index) => {
    const half = (s) => [s.slice(0, Math.floor(s.length / 2)), s.slice(Math.floor(s.length / 2))];
    if (block.type === 'tool_use') {
      toolUse = true;
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }]);
      for (const piece of half(JSON.stringify(block.input))) events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } }]);
    } else {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
      for (const piece of half(block.text)) events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } }]);
    }
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  events.push(['message_delta', { type: 'message_delta', delta: { stop_reason: toolUse ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 20 } }]);
  events.push(['message_stop', { type: 'message_stop' }]);
  return events;
}
