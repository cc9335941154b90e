// The npm package's proxy (`context-workbench/proxy`): a conversation through startProxy against a
// scripted Anthropic upstream (the only stand-in), saved as `workbench proxy` saves it; the log
// lines; a port in use, an upstream that is down, a close while a reply streams, a close with a
// grace that cuts short what the upstream never finishes. The real
// clients (Claude Code, the openai SDK) run through its bin in tests/proxy_clients.rs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startProxy } from '../dist/proxy/index.js';

const KEY = 'sk-ant-api03-npmproxytestkey0123456789abcdefghijklmnopqrstuvwxyz';
const TOOLS = [{ name: 'TodoWrite', description: 'Write the todo list', input_schema: { type: 'object' } }, { name: 'Read', description: 'Read a file', input_schema: { type: 'object' } }];
const TODOS = { todos: [{ content: 'Find the bug', status: 'in_progress', activeForm: 'Finding the bug' }, { content: 'Fix it', status: 'pending', activeForm: 'Fixing it' }] };

/**
 * An Anthropic upstream that streams one scripted reply per request, `delay` ms into the body.
 * `hold(request)` may keep a reply back: 'reply' never answers, 'stream' goes silent after its
 * first event.
 */
async function upstream({ delay = 0, hold = () => undefined } = {}) {
  const received = [];
  let n = 0;
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    received.push({ path: req.url, headers: req.headers, body: JSON.parse(body) });
    const held = hold(received.at(-1).body);
    if (held === 'reply') return;
    const id = `msg_npm_${n++}`;
    const blocks = n === 1
      ? [{ type: 'text', text: 'Planning.' }, { type: 'tool_use', id: 'toolu_1', name: 'TodoWrite', input: TODOS }]
      : [{ type: 'text', text: 'Done.' }];
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const event = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    event('message_start', { message: { id, type: 'message', role: 'assistant', content: [], model: 'scripted', usage: { input_tokens: 40, cache_read_input_tokens: 0, output_tokens: 1 } } });
    if (held === 'stream') return;
    if (delay) await new Promise((r) => setTimeout(r, delay));
    blocks.forEach((block, index) => {
      if (block.type === 'text') {
        event('content_block_start', { index, content_block: { type: 'text', text: '' } });
        event('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
      } else {
        event('content_block_start', { index, content_block: { ...block, input: {} } });
        event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
      }
      event('content_block_stop', { index });
    });
    event('message_delta', { delta: { stop_reason: n === 1 ? 'tool_use' : 'end_turn' }, usage: { output_tokens: 9 } });
    event('message_stop', {});
    res.end();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const close = () => new Promise((r) => {
    server.close(r);
    server.closeAllConnections();
  });
  return { url: `http://127.0.0.1:${server.address().port}`, received, close };
}

function post(url, body) {
  return fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'user-agent': 'claude-cli/2.1.328 (external, cli)' },
    body: JSON.stringify(body),
  });
}

const first = [{ role: 'user', content: 'Fix the failing test in parser.py, please.' }];
const second = [...first,
  { role: 'assistant', content: [{ type: 'text', text: 'Planning.' }, { type: 'tool_use', id: 'toolu_1', name: 'TodoWrite', input: TODOS }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Todos have been modified successfully.' }] }];
const request = (messages, session = 'npm-proxy-session') => ({ model: 'claude-test', max_tokens: 100, stream: true, system: 'You are Claude Code.', tools: TOOLS, metadata: { user_id: JSON.stringify({ session_id: session }) }, messages });
const sessionOf = (body) => JSON.parse(body.metadata.user_id).session_id;
/** The traces under a store: its directories (the store also keeps a `.gitignore` of itself). */
const traceDirs = async (store) => (await readdir(store, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);

test('a conversation goes through the engine and is saved as workbench proxy saves it', async () => {
  const workspace = await mkdtemp(path.join(tmpdir(), 'cw-npm-proxy-'));
  const up = await upstream();
  const lines = [];
  const calls = [];
  const proxy = await startProxy({ port: 0, upstream: up.url, workspace, log: (l) => lines.push(l), onCall: (c) => calls.push(c) });
  try {
    assert.match(proxy.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const one = await post(proxy.url, request(first));
    assert.equal(one.status, 200);
    assert.match(await one.text(), /"stop_reason":"tool_use"/);
    const two = await post(proxy.url, request(second));
    assert.match(await two.text(), /Done\./);
    await proxy.close();

    assert.equal(up.received.length, 2);
    assert.equal(up.received[0].headers['x-api-key'], KEY, 'the key goes upstream');
    assert.ok(up.received[1].body.system.some((b) => b.cache_control), 'the engine marks the stable prefix');
    const store = path.join(workspace, '.trace');
    assert.equal(proxy.storeDir, store);
    const [trace] = await traceDirs(store);
    assert.equal(trace, 'npm-proxy-session');
    const records = (await readFile(path.join(store, trace, 'calls.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(records.map((r) => [r.call, r.managed, r.completed, r.agent, r.new_messages]), [[1, true, true, 'Claude Code 2.1.328', 1], [2, true, true, 'Claude Code 2.1.328', 2]]);
    assert.deepEqual(calls.map((c) => [c.traceId, c.record.call]), [[trace, 1], [trace, 2]]);
    const prompt = JSON.parse(await readFile(path.join(store, trace, 'prompt.json'), 'utf8'));
    assert.equal(prompt.tokens, records[1].prompt_tokens);
    const goals = JSON.parse(await readFile(path.join(store, trace, 'goal.json'), 'utf8'));
    assert.deepEqual(JSON.stringify(goals).match(/Find the bug|Fix it/g), ['Find the bug', 'Fix it'], "Claude Code's TodoWrite is the plan");
    // The log: the lines of `workbench proxy`.
    assert.match(lines[0], /^context-workbench proxy: listening on http:\/\/127\.0\.0\.1:\d+; upstreams /);
    assert.match(lines[1], /^context-workbench proxy: npm-proxy-session #1 claude-test \(Claude Code 2\.1\.328\): 1 new of 1 message, \d+ → \d+ prompt tokens \(\d+% fewer\), cached 0 of 40 \(0%; engine expected 0%\), status 200; no price for model `claude-test`: its dollars are left out \(add it under `model_prices.models` in the configuration\)$/);
    assert.match(lines.at(-1), /^context-workbench proxy: stopping: saving every session$/);
    for (const file of await readdir(path.join(store, trace), { recursive: true })) {
      const text = await readFile(path.join(store, trace, file), 'utf8').catch(() => '');
      assert.ok(!text.includes('npmproxytestkey'), `the key is in ${file}`);
    }
    assert.ok(!lines.join('\n').includes('npmproxytestkey'));
  } finally {
    await proxy.close();
    await up.close();
    await rm(workspace, { recursive: true, force: true });
  }
});

test('an engine thread that dies is replaced: the call it was preparing goes as it came, the next resumes the session', async () => {
  const workspace = await mkdtemp(path.join(tmpdir(), 'cw-npm-proxy-dies-'));
  const up = await upstream();
  const lines = [];
  const calls = [];
  const engineThreads = { script: new URL('./engine-thread-that-dies.mjs', import.meta.url), count: 1 };
  const proxy = await startProxy({ port: 0, upstream: up.url, workspace, engineThreads, log: (l) => lines.push(l), onCall: (c) => calls.push(c) });
  try {
    assert.match(await (await post(proxy.url, request(first))).text(), /"stop_reason":"tool_use"/);
    // The thread ends while it prepares this call: the agent still gets its answer.
    assert.match(await (await post(proxy.url, request(second))).text(), /Done\./);
    assert.deepEqual(up.received[1].body.messages, second, 'the call went upstream as the agent sent it');
    const third = [...second, { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] }, { role: 'user', content: 'Now run the tests.' }];
    assert.match(await (await post(proxy.url, request(third))).text(), /Done\./);
    await proxy.close();
    assert.ok(lines.some((l) => /an engine thread exited \(70\); another takes its place/.test(l)), lines.join('\n'));
    assert.ok(lines.some((l) => /the session is gone \(an engine thread exited \(70\)\), passed through/.test(l)), lines.join('\n'));
    // The session went on in the new thread, from the store: one trace, its third call managed.
    const store = path.join(workspace, '.trace');
    assert.deepEqual(await traceDirs(store), ['npm-proxy-session']);
    assert.deepEqual(calls.map((c) => [c.traceId, c.record.call, c.record.managed]), [['npm-proxy-session', 1, true], ['npm-proxy-session', 2, true]]);
    assert.ok(up.received[2].body.system.some((b) => b.cache_control), 'the third call was prepared by the engine');
  } finally {
    await proxy.close();
    await up.close();
    await rm(workspace, { recursive: true, force: true });
  }
});

test('a port in use, an upstream that is down and a bad upstream get clear errors', async () => {
  const workspace = await mkdtemp(path.join(tmpdir(), 'cw-npm-proxy-'));
  const down = await upstream();
  await down.close();
  const lines = [];
  const proxy = await startProxy({ port: 0, upstream: down.url, workspace, log: (l) => lines.push(l) });
  try {
    await assert.rejects(startProxy({ port: proxy.port, workspace, log() {} }), (e) => e.code === 'port_in_use' && e.message.includes(`127.0.0.1:${proxy.port}`));
    await assert.rejects(startProxy({ port: 0, upstream: 'ftp://x', workspace, log() {} }), (e) => e.code === 'invalid_input' && /--upstream/.test(e.message));
    const reply = await post(proxy.url, request(first));
    assert.equal(reply.status, 502);
    const error = await reply.json();
    assert.equal(error.type, 'error');
    assert.match(error.error.message, new RegExp(`^context-workbench proxy: upstream ${down.url.replace(/\./g, '\\.')}: cannot connect$`));
    await proxy.close();
    const [trace] = await traceDirs(path.join(workspace, '.trace'));
    const record = JSON.parse(await readFile(path.join(workspace, '.trace', trace, 'calls.jsonl'), 'utf8'));
    assert.equal(record.status, 502);
    assert.ok(record.notes.some((n) => /cannot connect/.test(n)), record.notes.join());
    assert.ok(lines.some((l) => /status 502 \(incomplete\); upstream .* cannot connect/.test(l)), lines.join('\n'));
  } finally {
    await proxy.close();
    await rm(workspace, { recursive: true, force: true });
  }
});

test('close finishes the reply in flight and saves the session', async () => {
  const workspace = await mkdtemp(path.join(tmpdir(), 'cw-npm-proxy-'));
  const up = await upstream({ delay: 400 });
  const proxy = await startProxy({ port: 0, upstream: up.url, workspace, log() {} });
  try {
    const reply = post(proxy.url, request(first));
    await new Promise((r) => setTimeout(r, 150));
    const closed = proxy.close();
    const text = await (await reply).text();
    await closed;
    assert.match(text, /event: message_stop/, 'the reply came whole');
    await assert.rejects(post(proxy.url, request(first)), 'no new connection after close');
    const [trace] = await traceDirs(path.join(workspace, '.trace'));
    const files = await readdir(path.join(workspace, '.trace', trace));
    // (no goal.json: the reply's TodoWrite call never ran, so it changes no plan)
    assert.ok(['calls.jsonl', 'meta.json', 'state.json', 'prompt.json'].every((f) => files.includes(f)), files.join());
  } finally {
    await proxy.close();
    await up.close();
    await rm(workspace, { recursive: true, force: true });
  }
});

test('a close with a grace cuts short what is still in flight, and every session is saved with the replies that finished', async () => {
  const workspace = await mkdtemp(path.join(tmpdir(), 'cw-npm-proxy-'));
  // "silent" never answers; "streaming" starts its reply and goes silent; "done" answers at once.
  const up = await upstream({ hold: (body) => ({ silent: 'reply', streaming: 'stream' })[sessionOf(body)] });
  const lines = [];
  const proxy = await startProxy({ port: 0, upstream: up.url, workspace, log: (l) => lines.push(l) });
  try {
    assert.match(await (await post(proxy.url, request(first, 'done'))).text(), /event: message_stop/);
    const silent = post(proxy.url, request(first, 'silent'));
    const streaming = await post(proxy.url, request(first, 'streaming'));
    assert.equal(streaming.status, 200);
    const streamed = streaming.text();
    while (up.received.length < 3) await new Promise((r) => setTimeout(r, 20));

    const bound = new Promise((_, reject) => setTimeout(() => reject(new Error('close did not cut the requests short')), 15000).unref());
    await Promise.race([proxy.close({ graceMs: 300 }), bound]);

    const refused = await silent;
    assert.equal(refused.status, 503);
    assert.equal((await refused.json()).error.message, 'context-workbench proxy: the proxy stopped before the upstream answered');
    assert.match(await streamed, /event: error\ndata: .*context-workbench proxy: the proxy stopped before the reply ended/);
    assert.ok(lines.some((l) => /^context-workbench proxy: stopping: 2 requests still in flight after 300 ms cut short \(their agents get an error/.test(l)), lines.join('\n'));
    assert.match(lines.at(-1), /^context-workbench proxy: stopping: saving every session$/);

    const store = path.join(workspace, '.trace');
    assert.deepEqual((await traceDirs(store)).sort(), ['done', 'silent', 'streaming']);
    const messages = async (trace) => Promise.all((await readdir(path.join(store, trace, 'messages'))).map(async (f) => JSON.parse(await readFile(path.join(store, trace, 'messages', f), 'utf8'))))
      .then((all) => all.sort((a, b) => a.sequence - b.sequence));
    const done = await messages('done');
    assert.deepEqual(done.map((m) => m.role), ['user', 'assistant'], 'the reply that finished is saved when the session closes');
    assert.match(JSON.stringify(done[1]), /Planning\./);
    for (const trace of ['silent', 'streaming']) {
      assert.deepEqual((await messages(trace)).map((m) => m.role), ['user'], `${trace}: the unfinished reply is not recorded`);
      const record = JSON.parse(await readFile(path.join(store, trace, 'calls.jsonl'), 'utf8'));
      assert.equal(record.completed, false);
      assert.ok(record.notes.some((n) => /the proxy stopped before/.test(n)), record.notes.join());
    }
  } finally {
    await up.close(); // first: what it holds back would keep a close without a grace waiting
    await proxy.close();
    await rm(workspace, { recursive: true, force: true });
  }
});

test('the bin refuses bad flags with a clear message and exit code 2', async () => {
  const { execFile } = await import('node:child_process');
  const run = (...args) => new Promise((resolve) => {
    execFile(process.execPath, [new URL('../dist/cli.js', import.meta.url).pathname, ...args], (error, stdout, stderr) => resolve({ code: error?.code ?? 0, stdout, stderr }));
  });
  const port = await run('proxy', '--port', 'abc');
  assert.equal(port.code, 2);
  assert.equal(port.stderr, 'context-workbench: proxy: --port `abc`: expected a whole number from 0 to 65535 (context-workbench proxy --help lists the flags)\n');
  const config = await run('proxy', '--port', '0', '--config', 'no-such-workbench.toml');
  assert.equal(config.code, 2);
  assert.match(config.stderr, /^context-workbench: proxy: no-such-workbench\.toml: ENOENT/);
  const unknown = await run('serve');
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command `serve`/);
  const help = await run('proxy', '--help');
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^usage: context-workbench proxy/);
  assert.match(help.stdout.replace(/\s+/g, ' '), /Anthropic Messages, OpenAI Chat Completions, OpenAI Responses or Gemini/);
  assert.doesNotMatch(help.stdout, /--llm-url|--llm-model/, 'the npm bin takes no LLM flags, so its help names none');
  const llm = await run('proxy', '--llm-url', 'http://127.0.0.1:9/v1');
  assert.equal(llm.code, 2);
  assert.match(llm.stderr, /^context-workbench: proxy: --llm-url and --llm-model are for the native `workbench proxy` only/);
});

test('the bin stops and saves when the process that started it is gone (npx stopped by a SIGTERM)', async () => {
  const { spawn } = await import('node:child_process');
  const workspace = await mkdtemp(path.join(tmpdir(), 'cw-orphan-'));
  const bin = new URL('../dist/cli.js', import.meta.url).pathname;
  const [log, pidFile] = [path.join(workspace, 'proxy.log'), path.join(workspace, 'pid')];
  try {
    // As `npm exec` runs a bin: under `sh -c`, which passes no signal on. Killing the shell
    // leaves the proxy to notice on its own.
    const script = `"${process.execPath}" "${bin}" proxy --port 0 --store "${workspace}/.trace" 2>"${log}" & echo $! >"${pidFile}"; wait`;
    const shell = spawn('sh', ['-c', script], { stdio: ['ignore', 'pipe', 'ignore'] });
    await new Promise((resolve) => shell.stdout.once('data', resolve));
    const pid = Number(await readFile(pidFile, 'utf8'));
    shell.kill('SIGKILL');
    const alive = () => { try { process.kill(pid, 0); return true; } catch { return false; } };
    for (let i = 0; i < 100 && alive(); i += 1) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(alive(), false, 'the proxy stopped');
    assert.match(await readFile(log, 'utf8'), /stopping: saving every session/);
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
});
