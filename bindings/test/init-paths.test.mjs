// init() with plain file paths, as a Node embedder writes them: absolute, or relative to the
// working directory, with characters a URL would read otherwise (#, %, ?). Own process: the
// engine loads once per process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ContextEngine, init, memoryHost } from '../dist/node.js';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));

test('init() reads paths as paths: absolute or relative to the working directory, # % ? included', async () => {
  const base = await mkdtemp(path.join(tmpdir(), 'cw-paths-'));
  try {
    const dir = path.join(base, 'my#ranks %41?x');
    await mkdir(dir);
    for (const file of ['wasm/context_workbench_bg.wasm', 'ranks/o200k_base.tiktoken', 'ranks/cl100k_base.tiktoken']) {
      await copyFile(path.join(dist, file), path.join(dir, path.basename(file)));
    }
    await init({
      wasm: path.join(dir, 'context_workbench_bg.wasm'),
      ranks: {
        o200k_base: path.join(dir, 'o200k_base.tiktoken'),
        cl100k_base: path.relative(process.cwd(), path.join(dir, 'cl100k_base.tiktoken')),
      },
    });
    assert.equal((await ContextEngine.create(memoryHost())).countTokens('hello world'), 2);
    assert.equal((await ContextEngine.create(memoryHost(), { encoding: 'cl100k_base' })).countTokens('hello world'), 2);
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});
