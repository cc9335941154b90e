// The `./count` entry (#50): `measureTokens` counts from the first line, before init(), with the
// engine's estimate built alone into a 2 KB module: marked, the same figures the engine gives
// while it estimates; then exactly once `loadEncoding` has loaded the counting module (the
// engine's tokenizer alone, dist/count.wasm) and the rank file, without the engine.
// Own process: the modules and their ranks load once per process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { measureTokens, loadEncoding } from 'context-workbench/count';

const dist = new URL('../dist/', import.meta.url);
const TEXTS = ['', 'hello world', 'fn main() {\n    println!("hello, world: 12345");\n}\n', 'é'.repeat(5000),
  'a '.repeat(100_000), '日本語のテキスト 🚀 done', 'a lone \uD800 surrogate', ' '.repeat(300_000), '<|endoftext|>'];

test('an estimate at once, marked, the figures of an estimating engine; exact after loadEncoding, the engine\'s counts', async () => {
  const early = TEXTS.map((text) => measureTokens(text));
  assert.ok(early.every((count) => count.estimated), 'every figure before loadEncoding is marked');
  assert.deepEqual(early[1], { tokens: 2, estimated: true });
  assert.equal(early[0].tokens, 0);
  assert.ok(early[4].tokens > 80_000 && early[4].tokens < 120_000, `${early[4].tokens} for 100,000 words`);

  // The counting module and the ranks, without the engine: exact, one encoding at a time.
  await loadEncoding('o200k_base');
  const exact = TEXTS.map((text) => measureTokens(text));
  assert.ok(exact.every((count) => !count.estimated));
  assert.notDeepEqual(exact.map((count) => count.tokens), early.map((count) => count.tokens));
  assert.deepEqual(measureTokens('hello world', 'cl100k_base'), { tokens: 2, estimated: true }, 'cl100k_base is not loaded yet');
  await loadEncoding('cl100k_base');
  const exactCl100k = TEXTS.map((text) => measureTokens(text, 'cl100k_base'));
  assert.ok(exactCl100k.every((count) => !count.estimated));

  // The engine, its ranks held back: while it estimates, its figures are the small module's;
  // once they are in, its counts are the counting module's, in both encodings.
  const cw = await import('context-workbench');
  assert.equal(cw.measureTokens, measureTokens, 'the package entry exports the same function');
  let release;
  const arrives = new Promise((resolve) => { release = () => resolve(readFileSync(new URL('ranks/o200k_base.ranks', dist))); });
  await cw.init({ ranks: { o200k_base: () => arrives } });
  const engine = await cw.ContextEngine.start(cw.memoryHost());
  assert.deepEqual(TEXTS.map((text) => engine.measureTokens(text)), early, 'the small module and the engine estimate alike');
  release();
  await engine.exact;
  assert.deepEqual(exact.map((count) => count.tokens), TEXTS.map((text) => engine.countTokens(text)), 'o200k_base: the engine\'s counts');
  const cl100k = await cw.ContextEngine.create(cw.memoryHost(), { encoding: 'cl100k_base' });
  assert.deepEqual(exactCl100k.map((count) => count.tokens), TEXTS.map((text) => cl100k.countTokens(text)), 'cl100k_base: the engine\'s counts');
});

test('an unknown encoding is refused in words', async () => {
  assert.throws(() => measureTokens('x', 'p50k_base'), { code: 'invalid_input', message: /unknown encoding `p50k_base`/ });
  await assert.rejects(loadEncoding('p50k_base'), { code: 'invalid_input', message: /unknown encoding `p50k_base`/ });
});
