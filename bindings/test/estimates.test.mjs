// Counting before the ranks arrive (#50): an engine `start`ed before its rank file counts with the
// calibrated estimate, marked, saves nothing from it, and counts exactly once the file is loaded.
// Own process: the engine and its ranks load once per process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ContextEngine, init, loadEncoding, measureTokens, memoryHost } from '../dist/node.js';

const ranks = readFileSync(new URL('../dist/ranks/o200k_base.ranks', import.meta.url));
let release;
const arrives = new Promise((resolve) => { release = () => resolve(ranks); });
const pending = (promise) => Promise.race([promise.then(() => 'settled', () => 'settled'), new Promise((r) => setTimeout(r, 300, 'pending'))]);
const TEXT = 'fn main() {\n    println!("hello, world: 12345");\n}\n';

test('an estimate is marked, never cached or saved, and exact counts replace it', async () => {
  // o200k_base arrives when the test says; cl100k_base never does.
  await init({ ranks: { o200k_base: () => arrives, cl100k_base: () => new Promise(() => {}) } });
  const host = memoryHost();
  const engine = await ContextEngine.start(host);
  engine.attachStore('.trace');
  assert.equal(engine.estimating, true);
  const estimate = engine.measureTokens(TEXT);
  assert.equal(estimate.estimated, true);
  assert.ok(estimate.tokens > 0 && engine.countTokens(TEXT) === estimate.tokens);

  engine.record({ role: 'user', content: TEXT });
  assert.equal(engine.trace().messages[0].tokens, undefined, 'no estimate is cached on the message');
  assert.throws(() => engine.updateState({ open_questions: ['why?'] }), { code: 'ranks_not_loaded' });
  const saved = engine.persist();
  assert.equal(await pending(saved), 'pending', 'the save waits for exact counts');
  assert.deepEqual([...host.files.keys()].filter((p) => p.startsWith('.trace/')), [], 'nothing written from an estimate');

  release();
  await engine.exact;
  assert.equal(engine.estimating, false);
  const exact = engine.measureTokens(TEXT);
  assert.equal(exact.estimated, false);
  await saved;
  const messages = [...host.files].filter(([p]) => /^\.trace\/[^/]+\/messages\/.+\.json$/.test(p));
  assert.equal(messages.length, 1, 'the save went ahead once exact');
  const record = JSON.parse(messages[0][1].text);
  assert.equal(record.tokens, exact.tokens + 4, 'the saved count is the exact one (and the message overhead)');
  // The package's own `measureTokens` counts through the engine now, and loading the encoding
  // for it is already done: no counting module is loaded.
  assert.deepEqual(measureTokens(TEXT), exact);
  await loadEncoding('o200k_base');
  assert.deepEqual(measureTokens(TEXT), exact);
});

test('a page whose ranks never arrive keeps estimating, marked', async () => {
  const engine = await ContextEngine.start(memoryHost(), { encoding: 'cl100k_base' });
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(engine.measureTokens('hello world'), { tokens: 2, estimated: true });
    assert.deepEqual(measureTokens('hello world', 'cl100k_base'), { tokens: 2, estimated: true });
  }
  assert.equal(engine.estimating, true);
  assert.equal(await pending(engine.prepareCall()), 'pending');
});
