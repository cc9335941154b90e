// Rank files that are wrong or missing fail engine creation and `loadEncoding` with a typed error,
// and nothing is left half-loaded; the .wasm named by a file URL loads. Own process: the engine loads once
// per process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ContextEngine, ReplaySession, init, loadEncoding, measureTokens, memoryHost } from '../dist/node.js';

test('a damaged or missing rank file is a typed error, every time it is asked for', async () => {
  const damaged = readFileSync(new URL('../dist/ranks/o200k_base.tiktoken', import.meta.url));
  damaged[100] ^= 1;
  // The .wasm as a file URL (Node reads it; its fetch cannot), the ranks as bytes and a URL.
  const wasm = new URL('../dist/wasm/context_workbench_bg.wasm', import.meta.url);
  await init({ wasm, ranks: { o200k_base: damaged, cl100k_base: new URL('file:///nowhere/cl100k_base.tiktoken') } });
  for (let attempt = 0; attempt < 2; attempt++) {
    await assert.rejects(ContextEngine.create(memoryHost()),
      (e) => e.code === 'invalid_input' && /not the official o200k_base rank file/.test(e.message));
  }
  await assert.rejects(ContextEngine.create(memoryHost(), { encoding: 'cl100k_base' }),
    (e) => e.code === 'ranks_not_loaded' && /cl100k_base rank file file:\/\/\/nowhere\/cl100k_base\.tiktoken could not be loaded/.test(e.message));
  await assert.rejects(ReplaySession.create('x.jsonl', '{}'), { code: 'invalid_input' });
  // A counting module that cannot be read is named; given as bytes it loads, and refuses the
  // rank files as the engine does, in the same words; counts stay estimates.
  await assert.rejects(loadEncoding('o200k_base', { wasm: new URL('file:///nowhere/count.wasm') }),
    (e) => e.code === 'init_failed' && /^the counting module \(count\.wasm\) could not be loaded: .*nowhere/.test(e.message));
  const countWasm = readFileSync(new URL('../dist/count.wasm', import.meta.url));
  await assert.rejects(loadEncoding('o200k_base', { wasm: countWasm }), (e) => e.code === 'invalid_input'
    && /^the o200k_base rank file \(\d+ bytes given\) could not be loaded: invalid input: not the official o200k_base rank file: 3613922 bytes/.test(e.message));
  await assert.rejects(loadEncoding('cl100k_base'), (e) => e.code === 'ranks_not_loaded' && /cl100k_base rank file file:\/\/\/nowhere/.test(e.message));
  assert.deepEqual(measureTokens('hello world'), { tokens: 2, estimated: true });
});
