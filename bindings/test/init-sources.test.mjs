// init() with sources the embedder names (a bundled extension ships the files elsewhere): a
// compiled WebAssembly.Module and the rank files as bytes and as a file URL. Own process: the
// engine loads once per process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ContextEngine, init, memoryHost } from '../dist/node.js';

const dist = new URL('../dist/', import.meta.url);

test('a compiled module and rank bytes given to init() are what the engines use', async () => {
  const module = await WebAssembly.compile(readFileSync(new URL('wasm/context_workbench_bg.wasm', dist)));
  const o200k = readFileSync(new URL('ranks/o200k_base.tiktoken', dist));
  const first = init({ wasm: module, ranks: { o200k_base: o200k, cl100k_base: new URL('ranks/cl100k_base.tiktoken', dist) } });
  assert.equal(init({ wasm: new URL('file:///nowhere.wasm') }), first, 'init runs once');
  await first;
  const engines = {
    o200k_base: await ContextEngine.create(memoryHost()),
    cl100k_base: await ContextEngine.create(memoryHost(), { encoding: 'cl100k_base' }),
  };
  // gpt-tokenizer's test plan: every o200k_base and cl100k_base case counts exactly.
  const plans = readFileSync(new URL('../../data/testvectors/tokenizers/gpt-tokenizer-TestPlans.txt', import.meta.url), 'utf8');
  let checked = 0;
  for (const block of plans.split('\n\n').filter((b) => b.trim())) {
    const field = (name) => block.split('\n').find((l) => l.startsWith(name))?.slice(name.length + 1) ?? '';
    const engine = engines[field('EncodingName:')];
    if (!engine) continue;
    const expected = field('Encoded:').replace(/^\[|\]$/g, '').split(', ').filter(Boolean).length;
    assert.equal(engine.countTokens(field('Sample:')), expected, `${field('EncodingName:')} ${field('Sample:')}`);
    checked++;
  }
  assert.equal(checked, 64 + 57);
});
