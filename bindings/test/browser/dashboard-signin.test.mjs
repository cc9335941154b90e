// Team mode's sign-in on the dashboard (#49): two members' agents each send a conversation
// through the native `workbench proxy` with their own token (one in the header, one in the base
// URL's path), then headless Chromium reads the store through `workbench serve`: without a token
// the page asks for one and the API answers 401; each member sees only their own session, the
// admin sees both and the savings per person and day; a revoked token is refused. Screenshots go
// to test-artifacts/ (not committed), or to $DASHBOARD_SHOTS when set.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { anthropicEvents, startProcess } from './scripted.mjs';
import { CHROMIUM_ARGS } from './chromium.mjs';

const WORKBENCH = process.env.WORKBENCH_BIN;
const shots = process.env.DASHBOARD_SHOTS ?? fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

let browser;
before(async () => { browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS }); });
after(async () => { await browser?.close(); });

/** A scripted Anthropic upstream that answers every request with one line of text. */
async function scriptedUpstream() {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(anthropicEvents('msg_1', [{ type: 'text', text: 'Done.' }]));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => { server.closeAllConnections(); return new Promise((r) => server.close(r)); } };
}

/** `workbench team …` in `cwd`: its stdout. */
const team = (cwd, ...args) => execFileSync(WORKBENCH, ['team', ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** One task sent as Claude Code would, to `url` (the proxy, or its base URL with a token), with `headers`. */
async function send(url, task, session, headers = {}) {
  const body = { model: 'claude-opus-5-5', max_tokens: 1000, stream: true, messages: [{ role: 'user', content: task }],
    system: 'You are Claude Code.', tools: [{ name: 'Bash', description: 'Bash', input_schema: { type: 'object' } }],
    metadata: { user_id: JSON.stringify({ session_id: session }) } };
  const response = await fetch(`${url}/v1/messages`, { method: 'POST', body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01', ...headers } });
  return { status: response.status, text: await response.text() };
}

/** Sign in on a fresh page at `base` with `token`; resolves once the sessions (or an error) show. */
async function signIn(base, token) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  await page.goto(base);
  await page.waitForSelector('#sign-in');
  await page.fill('#token', token);
  await page.click('#sign-in button[type=submit]');
  return page;
}

const titles = (page) => page.$$eval('#sessions tbody tr td:first-child a', (links) => links.map((a) => a.textContent).sort());

test('each member signs in and sees their own sessions, the admin everyone\'s', { skip: !WORKBENCH && 'WORKBENCH_BIN is not set' }, async () => {
  const work = mkdtempSync(path.join(tmpdir(), 'cw-signin-'));
  mkdirSync(shots, { recursive: true });
  const admin = team(work, 'add', 'ada', '--admin');
  const alice = team(work, 'add', 'alice');
  const bob = team(work, 'add', 'bob');
  const upstream = await scriptedUpstream();
  const proxy = await startProcess(WORKBENCH, ['proxy', '--upstream', upstream.url, '--port', '0'], work, 4);
  let server;
  try {
    const base = proxy.lines[0];
    assert.equal((await send(base, 'Fix the parser', 's-alice', { 'x-workbench-token': alice })).status, 200);
    assert.equal((await send(`${base}/t/${bob}`, 'Speed up the build', 's-bob')).status, 200, 'the token in the base URL');
    const refused = await send(base, 'Sneak in', 's-none');
    assert.equal(refused.status, 401);
    assert.equal(JSON.parse(refused.text).error.type, 'authentication_error');
    proxy.child.kill('SIGTERM');
    await new Promise((resolve) => proxy.child.on('exit', resolve));
    const store = path.join(work, '.trace');
    const people = readdirSync(store, { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name)
      .map((id) => JSON.parse(readFileSync(path.join(store, id, 'meta.json'), 'utf8')).person).sort();
    assert.deepEqual(people, ['alice', 'bob'], 'the refused request is not recorded');

    server = await startProcess(WORKBENCH, ['serve', store, '--port', '0'], work, 1);
    const url = `${server.lines[0]}/`;
    assert.equal((await fetch(`${url}api/traces`)).status, 401, 'the API asks for a token');
    assert.equal((await fetch(`${url}api/traces/alice.s-alice`, { headers: { 'x-workbench-token': bob } })).status, 404, 'another\'s session is not found');

    const page = await signIn(url, alice);
    await page.waitForSelector('#sessions tbody tr');
    assert.deepEqual(await titles(page), ['Fix the parser']);
    assert.equal(await page.locator('#people').count(), 0, 'a member sees no one else\'s figures');
    await page.screenshot({ path: path.join(shots, 'dashboard-signin-alice.png'), fullPage: true });

    const bobs = await signIn(url, bob);
    await bobs.waitForSelector('#sessions tbody tr');
    assert.deepEqual(await titles(bobs), ['Speed up the build']);
    await bobs.goto(`${url}#/session/alice.s-alice`);
    await bobs.waitForFunction(() => /no trace/.test(document.getElementById('status').textContent));

    const ada = await signIn(url, admin);
    await ada.waitForSelector('#people tbody tr');
    assert.deepEqual(await titles(ada), ['Fix the parser', 'Speed up the build']);
    const rows = await ada.$$eval('#people tbody tr', (trs) => trs.map((tr) => [...tr.cells].slice(1, 3).map((td) => td.textContent)));
    assert.deepEqual(rows, [['alice', '1'], ['bob', '1']], 'savings per person and day');
    await ada.screenshot({ path: path.join(shots, 'dashboard-signin-admin.png'), fullPage: true });

    // Revoked: the next request is refused and the page asks again.
    team(work, 'revoke', 'bob', '--store', '.trace');
    await bobs.goto(`${url}#/`);
    await bobs.reload();
    await bobs.waitForSelector('#sign-in .error');
    assert.match(await bobs.textContent('#sign-in .error'), /revoked/);
    await bobs.screenshot({ path: path.join(shots, 'dashboard-signin-revoked.png'), fullPage: true });

    // Signing out forgets the token.
    await page.click('#sign-out');
    await page.waitForSelector('#sign-in');
    for (const p of [page, bobs, ada]) assert.deepEqual(p.errors, []);
  } finally {
    server?.child.kill('SIGTERM');
    proxy.child.kill('SIGTERM');
    await upstream.close();
  }
});
