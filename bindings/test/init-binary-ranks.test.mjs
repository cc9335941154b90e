// The binary rank files (*.ranks, what the package loads by default): one of the wrong encoding,
// or truncated, is refused with an error naming the file and what it is, never counted with; the
// right one counts exactly as the text file does. Own process: the engine loads once per process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ContextEngine, init, memoryHost } from '../dist/node.js';

const ranks = (name) => new URL(`../dist/ranks/${name}`, import.meta.url);

test('a binary rank file of the wrong encoding or truncated is a clear error naming the file', async () => {
  const wrong = fileURLToPath(ranks('cl100k_base.ranks'));
  const truncated = readFileSync(ranks('cl100k_base.ranks')).subarray(0, 500_000);
  await init({ ranks: { o200k_base: wrong, cl100k_base: truncated } });
  await assert.rejects(ContextEngine.create(memoryHost()), (e) => e.code === 'invalid_input'
    && e.message.includes(`the o200k_base rank file ${wrong} could not be loaded`)
    && /not the official o200k_base rank file: this is cl100k_base\.ranks/.test(e.message));
  await assert.rejects(ContextEngine.create(memoryHost(), { encoding: 'cl100k_base' }), (e) => e.code === 'invalid_input'
    && /the cl100k_base rank file \(500000 bytes given\) could not be loaded: .*not the official cl100k_base rank file: 500000 bytes/.test(e.message));
});

test('the shipped binary files are less than half the size of the text ones', () => {
  for (const encoding of ['o200k_base', 'cl100k_base']) {
    assert.ok(readFileSync(ranks(`${encoding}.ranks`)).length < readFileSync(ranks(`${encoding}.tiktoken`)).length / 2, encoding);
  }
});
