// The `./count` entry (#50): `measureTokens` counts from the first line, before init(), with the
// engine's estimate built alone into a 2 KB module: marked, the same figures the engine gives
// while it estimates, then exact once the engine and the encoding's ranks are in.
// Own process: the engine and its ranks load once per process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { measureTokens } from '../dist/count.js';

const ranks = readFileSync(new URL('../dist/ranks/o200k_base.ranks', import.meta.url));
const TEXTS = ['', 'hello world', 'fn main() {\n    println!("hello, world: 12345");\n}\n', 'é'.repeat(5000),
  'a '.repeat(100_000), '日本語のテキスト 🚀 done', 'a lone \uD800 surrogate', ' '.repeat(300_000)];

test('before the engine an estimate, marked, the figures of an estimating engine; exact once loaded', async () => {
  const early = TEXTS.map((text) => measureTokens(text));
  assert.ok(early.every((count) => count.estimated), 'every figure before the engine is marked');
  assert.deepEqual(early[1], { tokens: 2, estimated: true });
  assert.equal(early[0].tokens, 0);
  assert.ok(early[4].tokens > 80_000 && early[4].tokens < 120_000, `${early[4].tokens} for 100,000 words`);

  // The engine in, its ranks held back: the engine's own estimate (the same source) agrees.
  const cw = await import('../dist/node.js');
  assert.equal(cw.measureTokens, measureTokens, 'the package entry exports the same function');
  let release;
  const arrives = new Promise((resolve) => { release = () => resolve(ranks); });
  await cw.init({ ranks: { o200k_base: () => arrives } });
  const engine = await cw.ContextEngine.start(cw.memoryHost());
  assert.deepEqual(TEXTS.map((text) => measureTokens(text)), early, 'the small module and the engine estimate alike');
  assert.deepEqual(TEXTS.map((text) => engine.measureTokens(text)), early);

  release();
  await cw.loadEncoding('o200k_base');
  const exact = TEXTS.map((text) => measureTokens(text));
  assert.ok(exact.every((count) => !count.estimated));
  assert.deepEqual(exact.map((count) => count.tokens), TEXTS.map((text) => engine.countTokens(text)), 'exact: the engine\'s counts');
  assert.notDeepEqual(exact.map((count) => count.tokens), early.map((count) => count.tokens));
  // An encoding not loaded is still estimated, and marked.
  assert.deepEqual(measureTokens('hello world', 'cl100k_base'), { tokens: 2, estimated: true });
});

test('an unknown encoding is refused in words', () => {
  assert.throws(() => measureTokens('x', 'p50k_base'), { code: 'invalid_input', message: /unknown encoding `p50k_base`/ });
});
