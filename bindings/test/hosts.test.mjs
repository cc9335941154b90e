// The ready-made hosts: memoryHost, nodeFsHost (escapes refused), pickedFolderHost (the browser's,
// over Node's own Blob) and openAiCompatibleLlm against
// a scripted OpenAI-compatible server on 127.0.0.1; and an engine working through each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { mkdtemp, mkdir, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ContextEngine, TraceStore, memoryHost, nodeFsHost, openAiCompatibleLlm } from '../dist/node.js';
import { pickedFolderHost } from '../dist/hosts/picked.js';

/** Every file method of `host` behaves like a workspace: create, append, list, rename, remove. */
async function exerciseWorkspace(host) {
  assert.equal(await host.stat('box/notes/a.txt'), null);
  await host.writeFile('box/notes/a.txt', 'one');
  await host.appendFile('box/notes/a.txt', ' two');
  await host.appendFile('box/notes/new.txt', 'fresh');
  const file = await host.readFile('box/notes/a.txt');
  assert.equal(file.text, 'one two');
  assert.equal(typeof file.mtimeMs, 'number');
  assert.deepEqual(await host.stat('box/notes/a.txt'), { isDir: false, size: 7, mtimeMs: file.mtimeMs });
  assert.equal((await host.stat('box/notes')).isDir, true);
  await host.writeFile('box/b.txt', 'b');
  assert.deepEqual(await host.listDir('box'), [{ name: 'b.txt', isDir: false }, { name: 'notes', isDir: true }]);
  await host.rename('box/notes/new.txt', 'box/notes/renamed.txt');
  assert.deepEqual((await host.listDir('box/notes')).map((e) => e.name), ['a.txt', 'renamed.txt']);
  assert.equal((await host.readFile('box/notes/renamed.txt')).text, 'fresh');
  await host.remove('box/b.txt');
  await host.remove('box/b.txt');
  assert.equal(await host.stat('box/b.txt'), null);
  await assert.rejects(host.readFile('missing.txt'), { code: 'not_found' });
  await assert.rejects(host.listDir('missing'), { code: 'not_found' });
  // The engine's one rule for paths: backslashes are separators, `..` climbs but never out.
  assert.equal((await host.readFile('box\\notes\\a.txt')).text, 'one two');
  assert.equal((await host.readFile('box/x/../notes/./a.txt')).text, 'one two');
  for (const bad of ['/etc/passwd', '../outside.txt', 'box/../../x', 'C:\\x', 'file:///etc/passwd', 'a\0b']) {
    await assert.rejects(host.readFile(bad), { code: 'outside_workspace' }, bad);
    await assert.rejects(host.writeFile(bad, 'x'), { code: 'outside_workspace' }, bad);
  }
}

test('memoryHost is a workspace with a fixed clock and no LLM unless given one', async () => {
  const host = memoryHost({ files: { 'src/lib.rs': 'fn main() {}' } });
  assert.equal(host.nowMs(), Date.UTC(2026, 0, 1));
  assert.equal((await host.readFile('./src//lib.rs')).text, 'fn main() {}');
  await exerciseWorkspace(host);
  assert.equal(host.files.get('box/notes/a.txt').text, 'one two');
  await assert.rejects(async () => host.complete({ messages: [], purpose: 'x' }), { code: 'llm_not_configured' });
});

for (const blocking of [false, true]) {
  const mode = blocking ? ' (blocking: the engine threads\' file operations)' : '';

  test(`nodeFsHost works in its root and refuses absolute paths, .. and links that lead out${mode}`, async () => {
    const base = await mkdtemp(path.join(tmpdir(), 'cw-host-'));
    try {
      const root = path.join(base, 'ws');
      await mkdir(root);
      await writeFile(path.join(base, 'secret.txt'), 'outside');
      await symlink(path.join(base, 'secret.txt'), path.join(root, 'link.txt'));
      await symlink(base, path.join(root, 'up'));
      const host = nodeFsHost(root, { now: () => 7, blocking });
      assert.equal(host.nowMs(), 7);
      await exerciseWorkspace(host);
      assert.equal(await readFile(path.join(root, 'box/notes/a.txt'), 'utf8'), 'one two');
      await assert.rejects(host.readFile('link.txt'), { code: 'outside_workspace' });
      await assert.rejects(host.readFile('up/secret.txt'), { code: 'outside_workspace' });
      await assert.rejects(host.writeFile('up/new.txt', 'x'), { code: 'outside_workspace' });
      assert.equal(await readFile(path.join(base, 'secret.txt'), 'utf8'), 'outside', 'nothing outside was touched');

      // The engine reads the project rules through it, and refuses what the host refuses.
      await writeFile(path.join(root, 'CODE_LAW.md'), 'Tests first.');
      const engine = await ContextEngine.create(host);
      engine.record({ role: 'user', content: 'go' });
      const call = await engine.prepareCall({ system_prompt: 'agent' });
      assert.match(call.request.messages[1].content, /Tests first\./);
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });

  test(`nodeFsHost refuses dangling links: writing through one creates nothing where it points${mode}`, async () => {
    const base = await mkdtemp(path.join(tmpdir(), 'cw-host-'));
    try {
      const root = path.join(base, 'ws');
      await mkdir(root);
      await mkdir(path.join(base, 'outside'));
      await symlink(path.join(base, 'outside/pwned.txt'), path.join(root, 'link'));
      await symlink(path.join(base, 'gone'), path.join(root, 'dir'));
      await symlink(path.join(root, 'later.txt'), path.join(root, 'inner'));
      await writeFile(path.join(root, 'a.txt'), 'a');
      const host = nodeFsHost(root, { blocking });
      for (const p of ['link', 'dir/new.txt', 'inner']) {
        await assert.rejects(host.writeFile(p, 'x'), { code: 'outside_workspace' }, p);
        await assert.rejects(host.appendFile(p, 'x'), { code: 'outside_workspace' }, p);
        await assert.rejects(host.rename('a.txt', p), { code: 'outside_workspace' }, p);
        await assert.rejects(host.readFile(p), { code: 'outside_workspace' }, p);
      }
      assert.deepEqual(await readdir(path.join(base, 'outside')), [], 'nothing was created outside');
      assert.deepEqual((await readdir(base)).sort(), ['outside', 'ws']);
      assert.equal((await host.readFile('a.txt')).text, 'a');
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });
}

/** A scripted OpenAI-compatible endpoint on 127.0.0.1: each request gets the next reply. */
async function scriptedServer(replies) {
  const received = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    received.push({ url: req.url, headers: req.headers, body: JSON.parse(body) });
    const reply = replies.shift();
    if (reply === 'hang') return;
    res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
    res.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${server.address().port}`, received, close: () => server.close() };
}

test('pickedFolderHost reads the picked files as asked, lists their folders and writes nothing', async () => {
  const file = (text) => Object.assign(new Blob([text]), { lastModified: 7 });
  const host = pickedFolderHost([['.trace/t1/meta.json', file('{"id":"t1"}')], ['.trace/t1/raw/m1.txt', file('out')], ['notes.txt', file('hi')]]);
  assert.deepEqual(await host.readFile('.trace/t1/meta.json'), { text: '{"id":"t1"}', mtimeMs: 7 });
  assert.deepEqual(await host.stat('./.trace/t1/raw/m1.txt'), { isDir: false, size: 3, mtimeMs: 7 });
  assert.equal((await host.stat('.trace/t1')).isDir, true);
  assert.equal(await host.stat('.trace/t2'), null);
  assert.deepEqual(await host.listDir(''), [{ name: '.trace', isDir: true }, { name: 'notes.txt', isDir: false }]);
  assert.deepEqual(await host.listDir('.trace/t1'), [{ name: 'meta.json', isDir: false }, { name: 'raw', isDir: true }]);
  await assert.rejects(host.readFile('.trace/t1/state.json'), { code: 'not_found' });
  await assert.rejects(host.listDir('nowhere'), { code: 'not_found' });
  await assert.rejects(host.readFile('../etc/passwd'), { code: 'outside_workspace' });
  for (const write of [() => host.writeFile('notes.txt', 'x'), () => host.appendFile('a', 'x'), () => host.rename('notes.txt', 'b'), () => host.remove('notes.txt')]) {
    await assert.rejects(write(), { code: 'io', message: /read-only/ });
  }
  assert.equal((await host.readFile('notes.txt')).text, 'hi', 'nothing was written');
  // The query API reads through it as through any host.
  const store = await TraceStore.create(host);
  assert.deepEqual((await store.traceIds()), ['t1']);
  store.dispose();
});

test('openAiCompatibleLlm speaks chat completions and maps failures to codes', async () => {
  const ok = { choices: [{ message: { role: 'assistant', content: 'hello' } }],
    usage: { prompt_tokens: 9, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 8 } } };
  const server = await scriptedServer([{ body: ok }, { status: 500, body: 'overloaded' }, { body: 'not json' },
    { body: { choices: [] } }, 'hang']);
  try {
    const llm = openAiCompatibleLlm({ url: `${server.url}/v1/`, model: 'scripted', apiKey: 'sk-secret' });
    const request = { messages: [{ role: 'user', content: 'hi' }], maxOutputTokens: 50, purpose: 'test' };
    const engine = await ContextEngine.create(memoryHost({ llm }));
    const reply = await engine.complete(request);
    assert.equal(reply.text, 'hello');
    assert.deepEqual(reply.usage, { promptTokens: 9, completionTokens: 1, cachedTokens: 8 });
    const first = server.received[0];
    assert.equal(first.url, '/v1/chat/completions');
    assert.equal(first.headers.authorization, 'Bearer sk-secret');
    assert.deepEqual(first.body, { model: 'scripted', messages: request.messages, stream: false, max_tokens: 50 });
    await assert.rejects(engine.complete(request), (e) => e.code === 'host_llm' && /answered 500: overloaded/.test(e.message));
    await assert.rejects(engine.complete(request), (e) => e.code === 'host_llm' && /not JSON/.test(e.message));
    await assert.rejects(engine.complete(request), (e) => e.code === 'host_llm' && /choices\[0\]/.test(e.message));
    await assert.rejects(engine.complete({ ...request, timeoutMs: 100 }), { code: 'host_timeout' });
    assert.ok(server.received.every((r) => !JSON.stringify(r.body).includes('sk-secret')));
  } finally {
    server.close();
  }
  const refused = openAiCompatibleLlm({ url: 'http://127.0.0.1:9', model: 'm' });
  await assert.rejects(async () => refused({ messages: [{ role: 'user', content: 'x' }], purpose: 't' }), { code: 'llm' });
});
