// Start-up (#50): an engine `start`ed reads its rank file while the .wasm loads, not after, and
// hands out the engine (its first count, an estimate) before loading the ranks takes the thread.
// Own process: the engine and its ranks load once per process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ContextEngine, init, memoryHost } from '../dist/node.js';

const dist = new URL('../dist/', import.meta.url);

test('the rank file is read while the .wasm loads, and the first count does not wait for it', async () => {
  let releaseWasm;
  const wasm = new Promise((resolve) => { releaseWasm = () => resolve(readFileSync(new URL('wasm/context_workbench_bg.wasm', dist))); });
  let asked = false;
  init({ wasm, ranks: { o200k_base: async () => { asked = true; return readFileSync(new URL('ranks/o200k_base.ranks', dist)); } } });
  const starting = ContextEngine.start(memoryHost());
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(asked, true, 'the rank file is asked for before the .wasm is in');

  releaseWasm();
  const engine = await starting;
  assert.deepEqual(engine.measureTokens('hello world'), { tokens: 2, estimated: true }, 'the first count comes before the ranks load');
  await engine.exact;
  assert.deepEqual(engine.measureTokens('hello world'), { tokens: 2, estimated: false });
});
