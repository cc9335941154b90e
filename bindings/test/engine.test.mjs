// Drives the built wasm (dist/node) from plain JavaScript, as an embedder would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { ContextEngine } = require('../dist/node/context_workbench.js');
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');

function host(complete) {
  const files = new Map();
  return {
    complete,
    readFile: async (p) => {
      if (!files.has(p)) throw Object.assign(new Error(`no such file: ${p}`), { code: 'ENOENT' });
      return { text: files.get(p), mtimeMs: 1 };
    },
    stat: async (p) => (files.has(p) ? { isDir: false, size: files.get(p).length, mtimeMs: 1 } : null),
    writeFile: async (p, d) => void files.set(p, d),
    appendFile: async (p, d) => void files.set(p, (files.get(p) ?? '') + d),
    rename: async (a, b) => { files.set(b, files.get(a)); files.delete(a); },
    remove: async (p) => void files.delete(p),
    listDir: async () => [],
    nowMs: () => Date.UTC(2026, 0, 1),
  };
}

test('countTokens is synchronous and returns plain numbers', () => {
  const engine = new ContextEngine(host(async () => ({ text: '' })));
  assert.equal(engine.countTokens('hello world'), 2);
  assert.equal(typeof engine.countTokens(''), 'number');
  assert.equal(engine.countTokens('<|endoftext|>'), 7, 'special tokens count as text');
  assert.equal(engine.encoding, 'o200k_base');
  assert.equal(new ContextEngine(host(async () => ({ text: '' })), { encoding: 'cl100k_base' }).encoding, 'cl100k_base');
  engine.free();
});

test('an LLM call resolves through the JS host', async () => {
  const seen = [];
  const engine = new ContextEngine(host(async (req) => {
    seen.push(req);
    return { text: `echo: ${req.messages.at(-1).content}`, usage: { promptTokens: 12, completionTokens: 3 } };
  }));
  const reply = await engine.complete({ messages: [{ role: 'user', content: 'ping' }], purpose: 'test' });
  assert.equal(reply.text, 'echo: ping');
  assert.deepEqual(engine.lastUsage(), { promptTokens: 12, completionTokens: 3, cachedTokens: 0 });
  assert.equal(seen[0].timeoutMs, 120000, 'the engine passes its timeout to the host');
  assert.equal(seen[0].purpose, 'test');
});

test('the engine can be used while a host call is pending', async () => {
  let release;
  const engine = new ContextEngine(host(() => new Promise((resolve) => { release = resolve; })));
  const pending = engine.complete({ messages: [{ role: 'user', content: 'slow' }], purpose: 'test' });
  while (!release) await new Promise((resolve) => setImmediate(resolve));
  // The host call is now in flight: the engine must not be borrowed across its await.
  assert.equal(engine.countTokens('still responsive'), 2);
  release({ text: 'done' });
  assert.equal((await pending).text, 'done');
});

test('a rejecting host yields an Error with the host message and a stable code', async () => {
  const engine = new ContextEngine(host(async () => { throw new Error('rate limited by provider'); }));
  const request = { messages: [{ role: 'user', content: 'x' }], purpose: 'test' };
  await assert.rejects(engine.complete(request), (err) => {
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'ContextWorkbenchError');
    assert.equal(err.message, 'host.complete failed: rate limited by provider');
    assert.equal(err.code, 'host_failed');
    return true;
  });
  const timeouts = new ContextEngine(host(async () => { throw Object.assign(new Error('slow'), { code: 'timeout' }); }));
  await assert.rejects(timeouts.complete(request), { code: 'host_timeout' });
  const strings = new ContextEngine(host(() => Promise.reject('plain string')));
  await assert.rejects(strings.complete(request), { code: 'host_failed', message: 'host.complete failed: plain string' });
  const bad = new ContextEngine(host(async () => ({ txt: 'typo' })));
  await assert.rejects(bad.complete(request), (err) => err.code === 'host_failed' && /text/.test(err.message));
  await assert.rejects(engine.complete({ messages: [] }), { code: 'invalid_input' });
});

test('bad hosts and configs throw typed errors', () => {
  assert.throws(() => new ContextEngine({ complete() {} }), (err) => err.code === 'host_failed' && /readFile/.test(err.message));
  assert.throws(() => new ContextEngine(host(async () => ({ text: '' })), { windw: 1 }), (err) => err.code === 'invalid_config' && /windw/.test(err.message));
});

test('wasm counts equal native counts on every shared trace', () => {
  const bin = process.env.WORKBENCH_BIN ?? path.resolve(root, process.env.CARGO_TARGET_DIR ?? 'target', 'release/workbench');
  const traces = path.resolve(root, '../shared/traces');
  const lines = execFileSync(bin, ['count', traces], { encoding: 'utf8', maxBuffer: 1 << 24 }).trim().split('\n');
  const engine = new ContextEngine(host(async () => ({ text: '' })));
  let total = 0;
  for (const line of lines.slice(0, -1)) {
    const [n, file] = line.split('\t');
    assert.equal(engine.countTokens(readFileSync(file, 'utf8')), Number(n), file);
    total += Number(n);
  }
  assert.ok(lines.length > 80);
  assert.equal(lines.at(-1), `${total}\ttotal`);
});
