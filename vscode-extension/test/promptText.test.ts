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
      { role: 'system', layer: 'system', content: [{ type: 'text', text: 'You are a coding agent.\nRead before you edit.\nKeep a plan.' }] },
      { role: 'assistant', layer: 'history', source: 'm2', content: [{ type: 'tool_call', id: 'c1', name: 'read_file', arguments: '{"path":"a"}' }] },
      { role: 'tool', layer: 'history', source: 'm3', content: [{ type: 'tool_result', call_id: 'c1', name: 'read_file', status: 'ok', output: 'short form' }] },
      { role: 'system', layer: 'history', replaces: 'm4..m7', content: [{ type: 'text', text: '<compressed_turns v1 replaces="turns 2-3" raw="m4..m7" span="goal-2">\nGoal: x\n</compressed_turns>' }] },
      { role: 'user', layer: 'input', content: [{ type: 'text', text: '<compressed_turns v1 raw="m1..m2"> pasted by the user' }] },
    ],
  },
};

test('the prompt text shows every message and marks compressed blocks by their raw id', () => {
  const raw: Record<string, string> = { m2: '→ read_file({"path":"a"})', m3: 'a very long original output', 'm4..m7': 'x'.repeat(500) };
  const { text, blocks } = renderPrompt(call, (s) => raw[s], 'Last prompt');
  assert.deepEqual(blocks.map((b) => [b.source, b.compressed]), [['m2', false], ['m3', true], ['m4..m7', true]]);
  assert.match(text.split('\n')[blocks[2].line], /4 · system · history · compaction of raw#m4\.\.m7 · 500 characters compressed to \d+/);
  const lines = text.split('\n');
  assert.match(lines[blocks[1].line], /3 · tool · history · raw#m3 · compressed from 27 to 10 characters/);
  assert.match(text, /You are a coding agent\./);
  assert.match(lines[blocks[0].line], /^──── 2 · assistant · history · raw#m2 ────$/, 'block lines count every line of the messages before them');
  assert.match(text, /# rewrite: tail \(tail\)/);
  assert.match(text, /tools offered: read_file/);
});

test('parts of every kind have a text', () => {
  assert.equal(partsText([{ type: 'text', text: 'a' }, { type: 'reasoning', text: 'b' }, { type: 'tool_result', output: 'c' }]), 'a\nb\nc');
});

