// The package in headless Chromium: init() from the default location, from bytes and from a
// compiled module; the `./count` entry counting at once, then exactly without the engine; browserFsHost over the origin-private file system with an engine reading and
// saving through it; and typed errors for a missing rank file and a host that never answers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startBrowser } from './chromium.mjs';

let chrome;
before(async () => { chrome = await startBrowser(); });
after(async () => { await chrome?.close(); });

test('engines start from the default location, bytes or a compiled module, and count the same', async () => {
  const results = [];
  for (const how of ['default', 'bytes', 'module']) {
    const page = await chrome.page();
    results.push(await page.evaluate(async (how) => {
      const cw = await import('/bindings/dist/web.js');
      const wasmUrl = '/bindings/dist/wasm/context_workbench_bg.wasm';
      const ranks = await (await fetch('/bindings/dist/ranks/o200k_base.tiktoken')).arrayBuffer();
      if (how === 'bytes') await cw.init({ wasm: await (await fetch(wasmUrl)).arrayBuffer(), ranks: new Uint8Array(ranks) });
      if (how === 'module') await cw.init({ wasm: await WebAssembly.compileStreaming(fetch(wasmUrl)), ranks: { o200k_base: ranks } });
      const engine = await cw.ContextEngine.create(cw.memoryHost());
      const counts = [engine.countTokens('hello world'), engine.countTokens('<|endoftext|>'), engine.countTokens(' '.repeat(800_000))];
      engine.dispose();
      return counts;
    }, how));
    assert.deepEqual(page.errors, []);
    await page.close();
  }
  assert.deepEqual(results, [[2, 7, 6250], [2, 7, 6250], [2, 7, 6250]]);
});

test('a page counts with the ./count entry at once, then exactly without the engine', async () => {
  const page = await chrome.page();
  const out = await page.evaluate(async () => {
    const resources = () => performance.getEntriesByType('resource').map((r) => new URL(r.name).pathname);
    const { measureTokens, loadEncoding } = await import('/bindings/dist/count-web.js');
    const first = measureTokens('hello world');
    const beforeFirst = resources();
    await loadEncoding();
    const exact = { short: measureTokens('hello world'), long: measureTokens(' '.repeat(800_000)), cl100k: measureTokens('hello world', 'cl100k_base') };
    return { first, beforeFirst, exact, beforeExact: resources() };
  });
  assert.deepEqual(page.errors, []);
  assert.deepEqual(out.first, { tokens: 2, estimated: true });
  const engineFiles = (paths) => paths.filter((p) => /\.(wasm|ranks|tiktoken)$|context_workbench\.js$/.test(p));
  assert.deepEqual(engineFiles(out.beforeFirst), [], 'nothing fetched before the first count');
  assert.deepEqual(out.exact, { short: { tokens: 2, estimated: false }, long: { tokens: 6250, estimated: false }, cl100k: { tokens: 2, estimated: true } });
  assert.deepEqual(engineFiles(out.beforeExact).sort(), ['/bindings/dist/count.wasm', '/bindings/dist/ranks/o200k_base.ranks'],
    'exact counts: the counting module and the one rank file, nothing of the engine');
  await page.close();
});

test('browserFsHost keeps a workspace in OPFS that the engine reads and saves its trace to', async () => {
  const page = await chrome.page();
  const out = await page.evaluate(async () => {
    const cw = await import('/bindings/dist/web.js');
    const host = cw.browserFsHost({ directory: `ws-${Date.now()}` });
    await host.writeFile('docs/a.txt', 'one');
    await host.appendFile('docs/a.txt', ' two');
    await host.writeFile('CODE_LAW.md', 'Tests first.');
    const read = await host.readFile('docs/a.txt');
    const stat = await host.stat('docs/a.txt');
    const listed = await host.listDir('');
    await host.rename('docs/a.txt', 'docs/b.txt');
    const afterRename = await host.listDir('docs');
    await host.remove('docs/b.txt');
    await host.remove('docs/b.txt');
    const gone = await host.stat('docs/b.txt');
    const refused = await host.readFile('../x').catch((e) => e.code);
    const missing = await host.readFile('nope.txt').catch((e) => e.code);
    const { engine } = await cw.ContextEngine.open(host, undefined, { traceId: 'opfs-session' });
    engine.record({ role: 'user', content: 'Keep tabs in the parser.' });
    const call = await engine.prepareCall({ system_prompt: 'agent' });
    await engine.persist();
    const store = await cw.TraceStore.create(host);
    const traces = (await store.listTraces()).traces.map((t) => t.trace_id);
    return { read, size: stat.size, listed, afterRename, gone, refused, missing, rules: call.request.messages[1].content, traces };
  });
  assert.equal(out.read.text, 'one two');
  assert.equal(out.size, 7);
  assert.deepEqual(out.listed, [{ name: 'CODE_LAW.md', isDir: false }, { name: 'docs', isDir: true }]);
  assert.deepEqual(out.afterRename.map((e) => e.name), ['b.txt']);
  assert.equal(out.gone, null);
  assert.equal(out.refused, 'outside_workspace');
  assert.equal(out.missing, 'not_found');
  assert.match(out.rules, /Tests first\./);
  assert.deepEqual(out.traces, ['opfs-session']);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a missing rank file and a host that never answers are typed errors, not a hang', async () => {
  const page = await chrome.page();
  const out = await page.evaluate(async () => {
    const cw = await import('/bindings/dist/web.js');
    await cw.init({ ranks: { cl100k_base: '/bindings/dist/ranks/missing.tiktoken' } });
    const missing = await cw.ContextEngine.create(cw.memoryHost(), { encoding: 'cl100k_base' }).catch((e) => [e.name, e.code]);
    const silent = cw.memoryHost({ llm: () => new Promise(() => {}) });
    const engine = await cw.ContextEngine.create(silent);
    const started = performance.now();
    const timeout = await engine.complete({ messages: [{ role: 'user', content: 'x' }], purpose: 't', timeoutMs: 100 })
      .catch((e) => [e.name, e.code]);
    engine.dispose();
    const disposed = (() => { try { engine.countTokens('x'); } catch (e) { return e.code; } })();
    return { missing, timeout, ms: performance.now() - started, disposed };
  });
  assert.deepEqual(out.missing, ['ContextWorkbenchError', 'ranks_not_loaded']);
  assert.deepEqual(out.timeout, ['ContextWorkbenchError', 'host_timeout']);
  assert.ok(out.ms < 5000);
  assert.equal(out.disposed, 'disposed');
  assert.deepEqual(page.errors, []);
  await page.close();
});
