// The README's npm recipe, run as it stands: the block after `<!-- readme-test: node -->` in the
// package's own README.md (bindings/README.md) is written into the package (so `import 'context-workbench'` resolves to
// this build) and run in a fresh Node; what it prints is what the README says it prints.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ContextEngine, memoryHost, messageFromAnthropic, messageFromOpenAi } from '../dist/node.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const readme = readFileSync(path.resolve(here, '../README.md'), 'utf8');

/** The fenced code blocks that follow `<!-- readme-test: KIND -->` markers. */
function blocks(kind) {
  const marker = new RegExp(`<!-- readme-test: ${kind} -->\\s*\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\``, 'g');
  return [...readme.matchAll(marker)].map((m) => m[1]);
}

test('the README npm recipe runs as written and prints what the README says', () => {
  const [source] = blocks('node');
  assert.ok(source, 'bindings/README.md has a block marked `readme-test: node`');
  const dir = path.resolve(here, '../test-artifacts');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'readme-recipe.mjs');
  writeFileSync(file, source);
  const printed = execFileSync(process.execPath, [file], { encoding: 'utf8' }).trim().split('\n');
  assert.deepEqual(printed, ['anthropic 3 true 0', 'bash true']);
  const said = readme.match(/It prints `([^`]+)` \(.*?\) and `([^`]+)`/s);
  assert.deepEqual(said?.slice(1), printed, 'the README states the output');
});

test('provider replies become the MessageInput the engine records', async () => {
  const openai = messageFromOpenAi({
    role: 'assistant', content: null,
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'grep', arguments: '{"pattern":"x"}' } }],
  });
  assert.deepEqual(openai, { role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: 'grep', arguments: '{"pattern":"x"}' }] });
  const anthropic = messageFromAnthropic({
    content: [
      { type: 'thinking', thinking: 'look first', signature: 'sig' },
      { type: 'text', text: 'Searching.' },
      { type: 'tool_use', id: 'toolu_1', name: 'Grep', input: { pattern: 'x' } },
    ],
  });
  assert.deepEqual(anthropic.content, [
    { type: 'reasoning', text: 'look first', signature: 'sig' },
    { type: 'text', text: 'Searching.' },
    { type: 'tool_call', id: 'toolu_1', name: 'Grep', arguments: '{"pattern":"x"}' },
  ]);
  const engine = await ContextEngine.create(memoryHost());
  engine.record({ role: 'user', content: 'find x' });
  engine.record(anthropic);
  engine.recordToolResult({ call_id: 'toolu_1', name: 'Grep', status: 'ok', output: 'a.py:1: x' });
  const calls = engine.trace().messages[1].content.filter((p) => p.type === 'tool_call');
  assert.equal(calls[0].id, 'toolu_1');
  engine.dispose();

  // A wrong shape names the part and the field (not serde's "did not match any variant").
  const named = await ContextEngine.create(memoryHost());
  assert.throws(() => named.record({ role: 'assistant', content: [{ type: 'tool_call', name: 'bash' }] }),
    { code: 'invalid_input', message: /at 'content\[0\]': missing field `id`/ });
  assert.throws(() => named.record({ role: 'assistant', content: 42 }),
    { code: 'invalid_input', message: /at 'content': .*expected a string, or an array of content parts/ });
  named.dispose();

  assert.throws(() => messageFromAnthropic([{ type: 'image', source: {} }]), { code: 'invalid_input', message: /content\[0\] is a `image` block/ });
  assert.throws(() => messageFromOpenAi({ tool_calls: [{ function: {} }] }), { code: 'invalid_input', message: /tool_calls\[0\]/ });
  assert.throws(() => messageFromOpenAi(null), { code: 'invalid_input' });
});
