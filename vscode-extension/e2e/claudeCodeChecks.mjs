// The proxy started from the command palette, and the real Claude Code CLI (pinned, from npm, in
// crates/workbench-cli/tests/clients/) run in VS Code's integrated terminal against a scripted Anthropic upstream: the
// terminal gets the proxy's address, the Goal Plan follows Claude Code's TodoWrite list as it
// changes, the Prompt View shows the engine's compaction block, the status bar the saving. A
// port in use and a second start are tried on the way. Its own code-server and workspace.
import assert from 'node:assert/strict';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLAUDE_CODE_TASK, DONE, claudeCodeReply, writeClaudeCodeWorkspace } from './claudeCodeScript.mjs';
import { startCodeServer } from './codeServer.mjs';
import { ScriptedAgent } from './scriptedAgent.mjs';
import { startScriptedAnthropic } from './scriptedAnthropic.mjs';
import { until } from './until.mjs';
import { WorkbenchPage } from './workbenchPage.mjs';

const extensionRoot = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const claudeCode = path.resolve(extensionRoot, '../crates/workbench-cli/tests/clients/node_modules/@anthropic-ai/claude-code/cli-wrapper.cjs');
const STATUS_ID = 'context-workbench.context-workbench.contextWorkbench.status';
const PROXY_ID = 'context-workbench.context-workbench.contextWorkbench.proxy';
const docs = path.join(extensionRoot, 'docs');
const KEY = 'sk-ant-e2e-0123456789-never-stored';

export const CLAUDE_CODE_CHECKS = [
  'Start Proxy from the palette: a port in use offers a free one, a second start says where it runs, new terminals get its address',
  "the real Claude Code CLI in the integrated terminal through the proxy: the Goal Plan follows its TodoWrite list, the Prompt View shows a compaction block, the status bar the saving; the key is never stored",
  'an upstream that is down: the agent gets a 502 from the proxy, and its log line is in the output channel',
  'Stop Proxy finishes and saves; terminals opened after it no longer get the address',
];


/** Click `label` on the notification whose text matches `pattern`. */
async function clickNotificationButton(page, pattern, label) {
  const toast = page.page.locator('.notification-toast', { hasText: pattern }).first();
  await toast.waitFor({ timeout: 30_000 });
  await toast.locator('.monaco-button', { hasText: label }).first().click();
}

/** A new integrated terminal (one opened now sees the environment collection as it is). */
async function newTerminalRun(page, commandLine) {
  await page.runCommand('Terminal: Create New Terminal');
  await page.page.waitForFunction(() => document.activeElement?.classList.contains('xterm-helper-textarea'), null, { timeout: 15_000 });
  await page.page.waitForTimeout(1500);
  await page.page.keyboard.type(commandLine);
  await page.page.keyboard.press('Enter');
}

/** Every file under `dir`, recursively. */
function filesUnder(dir) {
  return readdirSync(dir, { recursive: true }).map((name) => path.join(dir, name)).filter((f) => statSync(f).isFile());
}

export async function claudeCodeChecks({ check, browser, artifacts, runDir, vsix, settings }) {
  const workspace = path.join(runDir, 'cc-workspace');
  const home = path.join(runDir, 'cc-home');
  cpSync(path.join(extensionRoot, 'e2e/fixture'), workspace, { recursive: true });
  mkdirSync(home, { recursive: true });
  writeClaudeCodeWorkspace(workspace);
  // Each call waits a little, so the views can be seen following the plan step by step.
  const upstream = await startScriptedAnthropic({ replies: (body) => claudeCodeReply(body, workspace), delayMs: 1200 });
  // A port already taken, as the proxy's setting names it.
  const taken = net.createServer();
  await new Promise((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const takenPort = taken.address().port;
  let server;
  let page;
  let proxyUrl;
  try {
    server = await startCodeServer({
      runDir: path.join(runDir, 'claude-code'),
      vsix,
      workspace,
      settings: {
        ...settings,
        'contextWorkbench.engine': {},
        // Claude Code's system prompt and tools are about 11,600 tokens: at 20,000 the engine compacts.
        'contextWorkbench.window': 20000,
        'contextWorkbench.proxy.port': takenPort,
        'contextWorkbench.proxy.upstream': upstream.url,
      },
    });
    page = await WorkbenchPage.open(browser, server.folderUrl, artifacts);
    // No trace in the folder, so the extension waits to be asked: once the window has started up
    // (its extension host has activated what waits for that), the first check's command (Start
    // Proxy) is what activates it.
    await until('start-up has finished in the extension host', async () => server.activations().some((a) => a.event === 'onStartupFinished'), 60_000);
    await page.runCommand('View: Hide Secondary Side Bar').catch(() => {});

    await check(CLAUDE_CODE_CHECKS[0], async () => {
      await page.runCommand('Context Workbench: Start Proxy for Other Agents');
      await page.notification(new RegExp(`port ${takenPort} is in use on 127\\.0\\.0\\.1`));
      await clickNotificationButton(page, /is in use/, 'Use a Free Port');
      const started = await page.notification(/the proxy runs at http:\/\/127\.0\.0\.1:\d+/);
      proxyUrl = /http:\/\/127\.0\.0\.1:\d+/.exec(started)[0];
      const port = Number(proxyUrl.split(':').at(-1));
      assert.notEqual(port, takenPort);
      assert.match(await page.statusBarText(PROXY_ID), new RegExp(`Proxy :${port}$`), 'the proxy status item');
      await page.clearNotifications();
      await page.runCommand('Context Workbench: Start Proxy for Other Agents');
      await page.notification(new RegExp(`the proxy already runs at ${proxyUrl.replace(/\./g, '\\.')}`));
      await page.clearNotifications();
      const env = path.join(runDir, 'cc-env.txt');
      await newTerminalRun(page, `echo "$ANTHROPIC_BASE_URL $OPENAI_BASE_URL" > ${env}`);
      const seen = await until('the terminal wrote its environment', async () => existsSync(env) && readFileSync(env, 'utf8').trim());
      assert.equal(seen, `${proxyUrl} ${proxyUrl}/v1`);
    });

    await check(CLAUDE_CODE_CHECKS[1], async () => {
      assert.ok(proxyUrl, 'the proxy runs');
      await page.openViewContainer('Context Workbench');
      const done = path.join(runDir, 'cc-done.txt');
      const out = path.join(runDir, 'cc-out.txt');
      const env = `HOME=${home} ANTHROPIC_API_KEY=${KEY} CLAUDE_CODE_ENABLE_TASKS=0 DISABLE_AUTOUPDATER=1`;
      await newTerminalRun(page, `${env} node ${claudeCode} -p "${CLAUDE_CODE_TASK}" --allowedTools "Read,Grep,Edit,Write,Bash,TodoWrite" > ${out} 2>&1; echo $? > ${done}`);
      // The plan as the Goal Plan shows it, sampled while Claude Code works: the current item moves.
      const currents = [];
      const deadline = Date.now() + 180_000;
      const started = Date.now();
      const samples = [];
      while (!existsSync(done) && Date.now() < deadline) {
        const rows = await page.treeRows('Goal Plan').catch((e) => [`(${e.message.split('\n')[0]})`]);
        samples.push(`${Date.now() - started} ms: ${rows.join(' | ')}`);
        // A row's text is its label and then its description (`current`).
        const current = rows.map((r) => /^(.*?)\s*current$/.exec(r)?.[1]).find(Boolean);
        if (current && currents.at(-1) !== current) currents.push(current);
        await page.page.waitForTimeout(300);
      }
      await page.screenshot('claude-code-finished');
      assert.ok(existsSync(done), `Claude Code finished: ${existsSync(out) ? readFileSync(out, 'utf8') : ''}`);
      assert.equal(readFileSync(done, 'utf8').trim(), '0', readFileSync(out, 'utf8'));
      assert.match(readFileSync(out, 'utf8'), new RegExp(DONE.replace(/\./g, '\\.')));
      assert.match(readFileSync(path.join(workspace, 'src/greet.js'), 'utf8'), /'Hi ' \+ name/);
      if (currents.length !== 3) console.log(`  the Goal Plan over time:\n    ${samples.join('\n    ')}`);
      assert.deepEqual(currents, ['Read the build logs', 'Fix the greeting', 'Check the result'], 'the current TodoWrite item as the Goal Plan showed it over time');
      const rows = await page.treeRows('Goal Plan');
      assert.deepEqual(rows, ['Read the build logs', 'Fix the greeting', 'Check the result'], 'every item done, none current');
      const status = await until('the status bar shows the saving', async () => {
        const text = await page.statusBarText(STATUS_ID);
        return /sent · \$[\d.]+ saved \(\d+%\) · \d+% cached/.test(text) && text;
      });
      assert.ok(Number(/saved \((\d+)%\)/.exec(status)[1]) > 0, status);
      await page.runCommand('Context Workbench: Show Last Prompt');
      await page.page.locator('.tab', { hasText: 'last-prompt.md' }).waitFor();
      await until('the Prompt View shows the newest call', async () => /Claude Code [\d.]+ · Fix the greeting/.test(await page.editorText()));
      await page.page.locator('.editor-group-container.active .view-lines').click();
      await page.page.keyboard.press('Control+F');
      await page.page.keyboard.type('compaction of raw#');
      await page.page.keyboard.press('Enter');
      await page.page.keyboard.press('Escape');
      const lens = page.page.locator('.codelens-decoration a:visible', { hasText: /Expand raw#m\d+\.\.m\d+/ }).first();
      await lens.waitFor({ timeout: 15_000 });
      await page.screenshot('claude-code-proxy');
      assert.match(await page.editorText(), /──── \d+ · \w+ · history · compaction of raw#m\d+\.\.m\d+ · \d+ characters compressed to \d+ ────/);
      copyFileSync(path.join(artifacts, 'claude-code-proxy.png'), path.join(docs, 'claude-code-proxy.png'));
      await lens.click();
      await page.page.locator('.tab', { hasText: /m\d+\.\.m\d+/ }).first().waitFor();
      await until('the block expands to the raw messages it replaced', async () => /^──── raw#m\d+ · \w+ ────$/m.test(await page.editorText())).catch(async (e) => {
        console.log(`  the expanded block shows:\n${(await page.editorText()).slice(0, 600)}`);
        await page.screenshot('claude-code-expand');
        throw e;
      });
      // The key went upstream and nowhere else.
      assert.ok(upstream.requests.some((r) => r.headers['x-api-key'] === KEY), 'the key reached the upstream');
      const stored = filesUnder(path.join(workspace, '.trace')).filter((f) => readFileSync(f, 'utf8').includes(KEY));
      assert.deepEqual(stored, [], 'the key is in no trace file');
    });

    await check(CLAUDE_CODE_CHECKS[2], async () => {
      await upstream.close();
      const agent = new ScriptedAgent({ baseUrl: proxyUrl, sessionId: 'e2e-upstream-down' });
      await assert.rejects(agent.send('Is anyone there?'), /the proxy answered 502/);
      await page.runCommand('Output: Show Output Channels...');
      await page.pick('Context Workbench');
      const lines = page.page.locator('.part.panel .view-lines');
      // Monaco renders spaces as non-breaking ones.
      const output = { innerText: async () => (await lines.innerText()).replace(/\u00a0/g, ' ') };
      await until('the output channel shows the 502', async () => /\[proxy\] context-workbench proxy: e2e-upstream-down #1 [\s\S]*?status 502[\s\S]*?cannot connect/.test(await output.innerText())).catch(async (e) => {
        console.log(`  the output channel shows:\n${(await output.innerText().catch(() => '')).slice(-1500)}`);
        await page.screenshot('upstream-down');
        throw e;
      });
    });

    await check(CLAUDE_CODE_CHECKS[3], async () => {
      await page.clearNotifications();
      await page.runCommand('Context Workbench: Stop Proxy');
      await page.notification(/the proxy at http:\/\/127\.0\.0\.1:\d+ stopped; its sessions are saved/);
      await until('the proxy status item is gone', async () => (await page.page.locator(`.statusbar-item[id="${PROXY_ID}"]:visible`).count()) === 0);
      await assert.rejects(fetch(`${proxyUrl}/v1/models`), 'nothing listens any more');
      const env = path.join(runDir, 'cc-env-after.txt');
      await newTerminalRun(page, `echo "[$ANTHROPIC_BASE_URL]" > ${env}`);
      assert.equal(await until('the terminal wrote its environment', async () => existsSync(env) && readFileSync(env, 'utf8').trim()), '[]');
      // Claude Code's session, not the one-call session of the check above (readdir's order is the file system's).
      const metas = readdirSync(path.join(workspace, '.trace'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).map((trace) => JSON.parse(readFileSync(path.join(workspace, '.trace', trace, 'meta.json'), 'utf8')));
      const meta = metas.find((m) => m.trace_id !== 'e2e-upstream-down');
      assert.ok(meta?.calls >= 10, `the session is saved with its calls: ${JSON.stringify(metas)}`);
    });
  } finally {
    await page?.page.context().close().catch(() => {});
    await server?.stop();
    await new Promise((resolve) => taken.close(resolve));
    await upstream.close();
  }
}
