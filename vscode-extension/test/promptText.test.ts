import { test } from 'node:test';
import assert from 'node:assert/strict';
import { partsText, renderPrompt } from '../src/views/promptText';
import type { PreparedCall } from '../src/engine/engineApi';

const call: PreparedCall = {
  messages: [],
  tools: [{ type: 'function', function: { name: 'read_file', description: '', parameters: {} } }],
  tokens: 120,
  expectedCachedTokens: 80,
  rewrites: [{ mechanism: 'tail', position: 'tail' }],
  notes: [],
  view: {
    messages: [
      { role: 'system', layer: 'system', content: [{ type: 'text', text: 'You are a coding agent.' }] },
      { role: 'assistant', layer: 'history', source: 'm2', content: [{ type: 'tool_call', id: 'c1', name: 'read_file', arguments: '{"path":"a"}' }] },
      { role: 'tool', layer: 'history', source: 'm3', content: [{ type: 'tool_result', call_id: 'c1', name: 'read_file', status: 'ok', output: 'short form' }] },
    ],
  },
};

test('the prompt text shows every message and marks compressed blocks by their raw id', () => {
  const raw: Record<string, string> = { m2: '→ read_file({"path":"a"})', m3: 'a very long original output' };
  const { text, blocks } = renderPrompt(call, (s) => raw[s], 'Last prompt');
  assert.deepEqual(blocks.map((b) => [b.source, b.compressed]), [['m2', false], ['m3', true]]);
  const lines = text.split('\n');
  assert.match(lines[blocks[1].line], /3 · tool · history · raw#m3 · compressed from 27 to 10 characters/);
  assert.match(text, /You are a coding agent\./);
  assert.match(text, /# rewrite: tail \(tail\)/);
  assert.match(text, /tools offered: read_file/);
});

test('parts of every kind have a text', () => {
  assert.equal(partsText([{ type: 'text', text: 'a' }, { type: 'reasoning', text: 'b' }, { type: 'tool_result', output: 'c' }]), 'a\nb\nc');
});
