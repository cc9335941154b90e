// The engine's constructors over the package (src/engine/packageEngine.ts), against the real engine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { packageBackend } from '../src/engine/packageEngine';

test('a failed engine load is not kept: token counting works once the engine loads', async () => {
  let loads = 0;
  const backend = packageBackend(async () => {
    if (loads++ === 0) throw new Error('the engine could not be read');
  });
  await assert.rejects(backend.countTokens('hello world'), /could not be read/);
  assert.equal(await backend.countTokens('hello world'), 2);
});
