// The views follow a session another process writes: `workbench proxy` (the native build) runs in
// the workspace against a scripted Anthropic upstream, a scripted Claude Code-like client talks
// through it, and the Goal Plan, the status bar and the Prompt View follow the session call by
// call; after a reload the same trace is back in the views. Its own code-server and workspace.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startCodeServer } from './codeServer.mjs';
import { ScriptedAgent } from './scriptedAgent.mjs';
import { startScriptedAnthropic } from './scriptedAnthropic.mjs';
import { until } from './until.mjs';
import { WorkbenchPage } from './workbenchPage.mjs';

const extensionRoot = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const repository = path.dirname(extensionRoot);
const STATUS_ID = 'context-workbench.context-workbench.contextWorkbench.status';
/** Screenshots the README shows. */
const docs = path.join(extensionRoot, 'docs');

/** The native `workbench` binary: WORKBENCH_BIN, else the release build, else the debug one. */
export function workbenchBinary() {
  const candidates = [process.env.WORKBENCH_BIN, path.join(repository, 'target/release/workbench'), path.join(repository, 'target/debug/workbench')].filter(Boolean);
  const found = candidates.find((file) => existsSync(file));
  if (!found) throw new Error(`no workbench binary (looked for ${candidates.join(', ')}): build it with cargo build --release --bin workbench`);
  return found;
}

/** `workbench proxy` in `cwd`; resolves to `{ url, stop, stderr }` once it prints its address. */
export async function startNativeProxy({ cwd, upstream, window }) {
  const stderr = [];
  const child = spawn(workbenchBinary(), ['proxy', '--port', '0', '--upstream', upstream, '--window', String(window)], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (piece) => stderr.push(piece));
  const url = await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`workbench proxy exited with ${code}: ${stderr.join('')}`)));
    readline.createInterface({ input: child.stdout }).once('line', (line) => resolve(line.trim()));
  });
  const stop = async () => {
    if (child.exitCode !== null) return child.exitCode;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    return exited;
  };
  return { url, stop, stderr };
}


const todos = (first, second) => ({
  todos: [
    { content: 'Read src/greet.js', status: first, activeForm: 'Reading src/greet.js' },
    { content: 'Change the greeting', status: second, activeForm: 'Changing the greeting' },
  ],
});

/** A Read result large enough that the engine shows it compressed (a 6,000-token window). */
function bigRead() {
  return Array.from({ length: 400 }, (_, i) => `${String(i + 1).padStart(6)}\tconst line${i} = 'code on line ${i} of the greeting module';`).join('\n');
}

export const LIVE_CHECKS = [
  'a session written by `workbench proxy` in another process appears in the views while it grows',
  'Follow a Session… names each session by agent, first message and time; a newer or damaged trace is said, the others unaffected',
  "the extension's own agent takes the views while it runs a task; the followed session's next call takes them back",
  'after a reload the most recent trace is back in the views, and Show Raw Trace shows it (#19)',
];

export async function liveSessionChecks({ check, browser, artifacts, runDir, vsix, settings }) {
  const workspace = path.join(runDir, 'live-workspace');
  cpSync(path.join(extensionRoot, 'e2e/fixture'), workspace, { recursive: true });
  const upstream = await startScriptedAnthropic({
    replies: [
      [{ type: 'text', text: 'I will plan this.' }, { type: 'tool_use', id: 'toolu_e2e_1', name: 'TodoWrite', input: todos('in_progress', 'pending') }],
      [{ type: 'tool_use', id: 'toolu_e2e_2', name: 'Read', input: { file_path: path.join(workspace, 'src/greet.js') } }],
      [{ type: 'tool_use', id: 'toolu_e2e_3', name: 'TodoWrite', input: todos('completed', 'in_progress') }],
      [{ type: 'text', text: 'The greeting is changed.' }],
    ],
  });
  let proxy;
  let server;
  let page;
  try {
    proxy = await startNativeProxy({ cwd: workspace, upstream: upstream.url, window: 6000 });
    server = await startCodeServer({ runDir: path.join(runDir, 'live'), vsix, workspace, settings });
    page = await WorkbenchPage.open(browser, server.folderUrl, artifacts);
    await page.runCommand('View: Hide Secondary Side Bar').catch(() => {});
    // No trace in the folder yet: opening the view is what activates the extension.
    await page.openViewContainer('Context Workbench');
    await page.statusBarText(STATUS_ID);
    const agent = new ScriptedAgent({ baseUrl: proxy.url, sessionId: 'e2e-live-session' });

    await check(LIVE_CHECKS[0], async () => {
      let reply = await agent.send('Fix the greeting in src/greet.js');
      reply = await agent.send(ScriptedAgent.results(reply, () => 'Todos have been modified successfully.'));
      // The TodoWrite of the first reply is recorded with the second request: the plan shows it.
      const rows = await until('the Goal Plan shows the TodoWrite items', async () => {
        const r = await page.treeRows('Goal Plan');
        return r.some((row) => /Read src\/greet\.js.*current/.test(row)) && r.some((row) => /Change the greeting/.test(row)) && r;
      });
      assert.ok(!rows.some((row) => /Change the greeting.*current/.test(row)), `${rows}`);
      assert.match(await page.statusBarText(STATUS_ID), /sent · /);
      reply = await agent.send(ScriptedAgent.results(reply, bigRead));
      reply = await agent.send(ScriptedAgent.results(reply, () => 'Todos have been modified successfully.'));
      assert.deepEqual(reply, [{ type: 'text', text: 'The greeting is changed.' }]);
      // The second TodoWrite moves the current goal; the status bar shows what the proxy saved.
      await until('the current goal moved to the second item', async () => (await page.treeRows('Goal Plan')).some((row) => /Change the greeting.*current/.test(row)));
      const status = await until('the status bar shows the saving', async () => {
        const text = await page.statusBarText(STATUS_ID);
        return /\d.* sent · \$[\d.]+ saved \(\d+%\) · \d+% cached/.test(text) && text;
      });
      const saving = Number(/saved \((\d+)%\)/.exec(status)[1]);
      assert.ok(saving >= 20, `the large read went upstream compressed: ${status}`);
      // The dollars calls.jsonl holds, summed here.
      const calls = readFileSync(path.join(workspace, '.trace/e2e-live-session/calls.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      const sum = (side) => calls.reduce((n, c) => n + (c.dollars?.[side] ?? 0), 0);
      assert.equal(saving, Math.round(100 * (1 - sum('sent') / sum('agent'))), 'the status bar says what calls.jsonl holds');
      const sent = calls.reduce((n, c) => n + c.client_tokens, 0);
      const received = calls.reduce((n, c) => n + c.prompt_tokens, 0);

      await page.runCommand('Context Workbench: Show Last Prompt');
      await page.page.locator('.tab', { hasText: 'last-prompt.md' }).waitFor();
      const text = await until('the Prompt View shows the newest call', async () => {
        const t = await page.editorText();
        return /Prompt tokens: the agent sent \d+, the upstream received \d+ \(\d+% fewer\)[\s\S]*Cost: \$[\d.]+ instead of \$[\d.]+: \$[\d.]+ saved \(\d+%\)/.test(t) && t;
      });
      assert.match(text, new RegExp(`the agent sent ${sent}, the upstream received ${received} `));
      assert.match(text, /Cached: \d+% of the prompt tokens, as the provider reported \(4 of 4 calls\)/);
      assert.match(text, /Claude Code 2\.1\.328 · Fix the greeting in src\/greet\.js/);
      assert.match(text, /──── \d+ · tool · history · raw#m\d+ · compressed from \d+ to \d+ characters/);
      await page.screenshot('live-session');
      copyFileSync(path.join(artifacts, 'live-session.png'), path.join(docs, 'live-session.png'));
      // The DAG draws the same plan.
      await page.runCommand('Context Workbench: Show Goal DAG');
      const frame = page.page.frameLocator('iframe.webview').frameLocator('iframe#active-frame');
      await frame.locator('#dag .dag-node').first().waitFor({ timeout: 30_000 });
      assert.match(await frame.locator('#dag').innerText(), /Change the greeting/);
      await page.runCommand('View: Close All Editors');
    });

    await check(LIVE_CHECKS[1], async () => {
      const root = path.join(workspace, '.trace');
      mkdirSync(path.join(root, 'from-the-future'), { recursive: true });
      writeFileSync(path.join(root, 'from-the-future/meta.json'), JSON.stringify({ version: 9, trace_id: 'from-the-future', mission: 'x', created_at: 1, updated_at: 1, message_count: 0, status: 'running', calls: 0 }));
      mkdirSync(path.join(root, 'damaged'), { recursive: true });
      writeFileSync(path.join(root, 'damaged/meta.json'), '{"version": 1, "trace_id": ');
      await page.runCommand('Context Workbench: Follow a Session…');
      const rows = await until('the picker lists the sessions', async () => {
        const r = await page.page.locator('.quick-input-widget .monaco-list-row').allInnerTexts();
        return r.length >= 4 && r.map((t) => t.replace(/\s+/g, ' '));
      });
      assert.ok(rows.some((r) => /Claude Code 2\.1\.328 · Fix the greeting in src\/greet\.js.*\d{4}-\d\d-\d\d \d\d:\d\d/.test(r)), `${rows}`);
      assert.ok(rows.some((r) => /from-the-future.*written by a newer build: unsupported format version 9/.test(r)), `${rows}`);
      assert.ok(rows.some((r) => /damaged.*damaged: \.trace\/damaged\/meta\.json is not valid/.test(r)), `${rows}`);
      await page.screenshot('follow-session');
      copyFileSync(path.join(artifacts, 'follow-session.png'), path.join(docs, 'follow-session.png'));
      await page.pick('Fix the greeting in src/greet.js');
      // Still followed and shown.
      assert.match(await page.statusBarText(STATUS_ID), /sent · \$[\d.]+ saved \(\d+%\)/);
    });

    await check(LIVE_CHECKS[2], async () => {
      await page.clearNotifications();
      // A task the scripted endpoint has no steps for: one model call, answered in text.
      await page.runCommand('Context Workbench: Run Task');
      await page.answerInput('TASK-LIVE: say hello');
      await page.notification(/Task finished after 1 model call/, 60_000);
      assert.match(await page.statusBarText(STATUS_ID), /^\S*\s*[\d.]+k?\/[\d.]+k? · \d+% cached$/, "the agent's own status");
      await page.runCommand('Context Workbench: Show Last Prompt');
      await page.page.locator('.tab', { hasText: 'last-prompt.md' }).waitFor();
      await until("the Prompt View shows the agent's prompt", async () => /# Prompt of the last call to .*\n[\s\S]*TASK-LIVE: say hello/.test(await page.editorText()));
      // The session's next call lands: the views follow it again.
      await agent.send('Also check the farewell.');
      await until('the status bar follows the session again', async () => /sent · \$[\d.]+ saved \(\d+%\)/.test(await page.statusBarText(STATUS_ID)));
      await until('the Prompt View follows the session again', async () => /the agent sent \d+, the upstream received \d+ .* over 5 calls/.test(await page.editorText()));
      await page.clearNotifications();
    });

    await check(LIVE_CHECKS[3], async () => {
      assert.equal(await proxy.stop(), 0, 'the proxy stopped cleanly and saved its session');
      await page.page.context().close();
      page = await WorkbenchPage.open(browser, server.folderUrl, artifacts);
      await page.statusBarText(STATUS_ID);
      await page.openViewContainer('Context Workbench');
      await until('the Goal Plan is back', async () => (await page.treeRows('Goal Plan')).some((row) => /Change the greeting/.test(row)));
      await until('the status bar is back', async () => /sent · \$[\d.]+ saved \(\d+%\)/.test(await page.statusBarText(STATUS_ID)));
      await page.runCommand('Context Workbench: Show Last Prompt');
      await page.page.locator('.tab', { hasText: 'last-prompt.md' }).waitFor();
      await until('the Prompt View is back', async () => /Prompt tokens: the agent sent/.test(await page.editorText()));
      await page.runCommand('Context Workbench: Show Raw Trace');
      await page.page.locator('.tab', { hasText: 'raw-trace-e2e-live-session.json' }).waitFor({ timeout: 30_000 });
      await until('the raw trace is the reopened one', async () => /"mission": "Fix the greeting in src\/greet\.js"/.test(await page.editorText()));
    });
  } finally {
    await page?.page.context().close().catch(() => {});
    await server?.stop();
    await proxy?.stop();
    await upstream.close();
  }
}
