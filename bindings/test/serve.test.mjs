// The static server of the playground, the browser tests and the start-up benchmark: a file the
// browser has is revalidated with a 304 (its cached copy, and the code compiled from it, kept).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { serve } from '../scripts/serve.mjs';

test('a file is revalidated by its etag: 304 while unchanged', async () => {
  const server = await serve(fileURLToPath(new URL('../', import.meta.url)));
  try {
    const url = `${server.url}/package.json`;
    const first = await fetch(url);
    const etag = first.headers.get('etag');
    assert.equal(first.status, 200);
    assert.ok(etag, 'an etag is sent');
    assert.equal(first.headers.get('cache-control'), 'no-cache');
    await first.arrayBuffer();
    const again = await fetch(url, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal((await again.arrayBuffer()).byteLength, 0);
    const other = await fetch(url, { headers: { 'if-none-match': 'W/"0-0"' } });
    assert.equal(other.status, 200);
    assert.deepEqual(await other.json(), await (await fetch(url)).json());
  } finally {
    await server.close();
  }
});
