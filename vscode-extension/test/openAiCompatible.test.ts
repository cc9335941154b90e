import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OpenAiCompatibleModel } from '../src/llm/openAiCompatible';
import { SseReplyBuilder } from '../src/llm/sseChunks';
import { ModelError } from '../src/llm/types';
// @ts-expect-error: plain JavaScript test support, shared with the end-to-end test
import { startScriptedEndpoint } from '../e2e/scriptedEndpoint.mjs';

const tool = { type: 'function' as const, function: { name: 'read_file', description: 'read', parameters: { type: 'object' } } };

test('SSE pieces split anywhere assemble into text, tool calls and usage', () => {
  const events = [
    'data: {"choices":[{"delta":{"content":"Hel"}}]}\n\n',
    'data: {"choices":[{"delta":{"content":"lo"}}]}\n\n',
    'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"read_file","arguments":"{\\"pa"}}]}}]}\n\n',
    'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\\":\\"a\\"}"}}]}}]}\n\n',
    'data: {"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4}}}\r\n\r\n',
    'data: [DONE]\n\n',
  ].join('');
  const seen: string[] = [];
  const b = new SseReplyBuilder((d) => seen.push(d));
  for (let i = 0; i < events.length; i += 7) b.push(events.slice(i, i + 7));
  assert.deepEqual(b.finish(), {
    text: 'Hello',
    toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"a"}' }],
    usage: { promptTokens: 10, completionTokens: 2, cachedTokens: 4 },
  });
  assert.deepEqual(seen, ['Hel', 'lo']);
  assert.throws(() => new SseReplyBuilder().push('data: {oops\n\n'), /not JSON/);
});

test('a scripted endpoint answers the task step by step, with the tools sent', async () => {
  const endpoint = await startScriptedEndpoint({
    tasks: [{ match: /^fix it/, steps: [{ toolCalls: [{ name: 'read_file', arguments: { path: 'a.ts' } }] }, { text: 'done' }] }],
  });
  try {
    const model = new OpenAiCompatibleModel({ url: endpoint.url, model: 'scripted', apiKey: 'sk-test' });
    const first = await model.chat({ messages: [{ role: 'user', content: 'fix it' }], tools: [tool] });
    assert.deepEqual(first.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]), [['read_file', { path: 'a.ts' }]]);
    const second = await model.chat({
      messages: [
        { role: 'user', content: 'fix it' },
        { role: 'assistant', content: null, tool_calls: [{ id: first.toolCalls[0].id, type: 'function', function: { name: 'read_file', arguments: first.toolCalls[0].arguments } }] },
        { role: 'tool', tool_call_id: first.toolCalls[0].id, content: 'x' },
      ],
      tools: [tool],
    });
    assert.equal(second.text, 'done');
    assert.equal(second.usage, undefined, 'the scripted endpoint reports no usage');
    assert.equal(endpoint.requests[0].headers.authorization, 'Bearer sk-test');
    assert.equal(endpoint.requests[0].body.stream, true);
    assert.deepEqual(endpoint.requests[0].body.tools, [tool]);
  } finally {
    await endpoint.close();
  }
});

test('HTTP errors, cancellation and bad settings become ModelErrors with a clear message', async () => {
  const endpoint = await startScriptedEndpoint({
    tasks: [
      { match: /^fail/, steps: [{ status: 503, text: 'overloaded' }] },
      { match: /^hang/, steps: [{ hang: true }] },
    ],
  });
  try {
    const model = new OpenAiCompatibleModel({ url: endpoint.url, model: 'scripted' });
    await assert.rejects(model.chat({ messages: [{ role: 'user', content: 'fail' }], tools: [tool] }), (e: unknown) => e instanceof ModelError && e.code === 'llm' && /503.*overloaded/.test(e.message));
    const abort = new AbortController();
    const pending = model.chat({ messages: [{ role: 'user', content: 'hang' }], tools: [tool], signal: abort.signal });
    setTimeout(() => abort.abort(), 50);
    await assert.rejects(pending, (e: unknown) => e instanceof ModelError && e.code === 'cancelled');
  } finally {
    await endpoint.close();
  }
  const refused = new OpenAiCompatibleModel({ url: 'http://127.0.0.1:9/v1', model: 'm' });
  await assert.rejects(refused.chat({ messages: [], tools: [] }), /cannot reach http:\/\/127.0.0.1:9\/v1\/chat\/completions/);
  assert.throws(() => new OpenAiCompatibleModel({ url: 'not a url', model: 'm' }), /is not a URL/);
  assert.throws(() => new OpenAiCompatibleModel({ url: 'ftp://x', model: 'm' }), /must be http/);
  assert.throws(() => new OpenAiCompatibleModel({ url: 'http://x', model: '' }), /model is empty/);
});
