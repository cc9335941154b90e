// End to end in a real VS Code (code-server from npm) driven by Chromium: the .vsix installed,
// the fixture workspace opened, the agent run against the scripted endpoint through Run Task and
// @workbench, the views and commands checked as a person sees them. Screenshots go to
// tests/artifacts/vscode/ (gitignored). Prints "N passed, N failed".
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCodeServer } from './codeServer.mjs';
import { TASKS, TASK_A, TASK_B, buildLog } from './scenario.mjs';
import { startScriptedEndpoint, textOf } from './scriptedEndpoint.mjs';
import { WorkbenchPage, launchBrowser } from './workbenchPage.mjs';

const extensionRoot = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const artifacts = path.resolve(extensionRoot, '../tests/artifacts/vscode');
const vsix = path.join(extensionRoot, 'dist/context-workbench.vsix');
const STATUS_ID = 'context-workbench.context-workbench.contextWorkbench.status';

const results = [];
async function check(name, body) {
  const started = Date.now();
  try {
    await body();
    results.push({ name, ok: true });
    console.log(`ok - ${name} (${Date.now() - started} ms)`);
  } catch (e) {
    results.push({ name, ok: false });
    console.log(`not ok - ${name}\n  ${String(e.stack ?? e).split('\n').slice(0, 6).join('\n  ')}`);
    await wb?.screenshot(`failed-${results.length}`).catch(() => {});
  }
}

if (!existsSync(vsix)) {
  console.error(`e2e: ${vsix} is missing: run npm run package first`);
  process.exit(1);
}
rmSync(artifacts, { recursive: true, force: true });
mkdirSync(artifacts, { recursive: true });
const runDir = path.join(os.tmpdir(), `cw-e2e-${process.pid}`);
rmSync(runDir, { recursive: true, force: true });
const workspace = path.join(runDir, 'workspace');
cpSync(path.join(extensionRoot, 'e2e/fixture'), workspace, { recursive: true });
mkdirSync(path.join(workspace, 'logs'), { recursive: true });
writeFileSync(path.join(workspace, 'logs/build.log'), buildLog());

const endpoint = await startScriptedEndpoint({ tasks: TASKS, log: (line) => process.env.E2E_VERBOSE && console.log(line) });
const settings = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'security.workspace.trust.enabled': false,
  'terminal.integrated.shellIntegration.enabled': true,
  'terminal.integrated.defaultProfile.linux': 'bash',
  'contextWorkbench.llm.url': endpoint.url,
  'contextWorkbench.llm.model': 'scripted-model',
  // Small enough that the second task's history crosses the compaction threshold.
  'contextWorkbench.window': Number(process.env.E2E_WINDOW ?? 9000),
};
let server;
let browser;
let wb;
try {
  server = await startCodeServer({ runDir, vsix, workspace, settings });
  browser = await launchBrowser();
  wb = await WorkbenchPage.open(browser, server.folderUrl, artifacts);
  await wb.statusBarText(STATUS_ID);

  await check('Run Task runs the agent: files edited, command confirmed, task finished', async () => {
    await wb.runCommand('Context Workbench: Run Task');
    await wb.answerInput(TASK_A);
    await wb.clickDialogButton('Run', 120_000);
    await wb.notification(/Task finished after \d+ model calls/, 120_000);
    assert.match(readFileSync(path.join(workspace, 'src/greet.js'), 'utf8'), /'Hi ' \+ name/);
    assert.match(readFileSync(path.join(workspace, 'src/farewell.js'), 'utf8'), /export function farewell\(name\)/);
    await wb.clearNotifications();
  });

  await check('the Goal Plan view renders the plan; abandoned goals show behind the toggle', async () => {
    await wb.openViewContainer('Context Workbench');
    const rows = await wb.treeRows('Goal Plan');
    assert.deepEqual(rows.slice(0, 3).map((r) => r.replace(/^\d+(\.\d+)*\s+/, '')).map((r) => r.split(' ')[0] + ' ' + r.split(' ')[1]), ['Change the', 'Add the', 'Check the']);
    assert.ok(!rows.some((r) => /Rewrite the project/.test(r)), `abandoned goal hidden: ${rows}`);
    await wb.screenshot('plan-view');
    await wb.page.locator('.pane-header', { hasText: 'Goal Plan' }).hover();
    await wb.page.locator('.pane-header .action-label[aria-label="Show or Hide Abandoned Goals"]').click();
    await wb.page.waitForTimeout(300);
    const all = await wb.treeRows('Goal Plan');
    assert.ok(all.some((r) => /Rewrite the project in TypeScript/.test(r) && /abandoned/.test(r)), `abandoned goal shown: ${all}`);
  });

  await check('the status bar shows prompt tokens over the window and the cached share', async () => {
    const text = await wb.statusBarText(STATUS_ID);
    assert.match(text, /^\S*\s*[\d.]+k?\/[\d.]+k? · \d+% cached$/, text);
    assert.match(text, /\/9\.0k/);
  });

  await check('the Prompt View shows the last prompt; a compressed block expands to its raw original', async () => {
    await wb.runCommand('Context Workbench: Show Last Prompt');
    await wb.page.locator('.tab', { hasText: 'last-prompt.md' }).waitFor();
    const text = await wb.editorText();
    assert.match(text, /──── 1 · system · system/);
    assert.match(text, /LAW-7/);
    await wb.screenshot('prompt-view');
    const lens = wb.page.locator('.codelens-decoration a', { hasText: 'Expand raw#' }).first();
    await lens.waitFor({ timeout: 15_000 });
    await lens.click();
    await wb.page.locator('.tab', { hasText: /\.txt/ }).first().waitFor();
  });

  await check('the DAG webview draws the plan under a nonce CSP', async () => {
    await wb.runCommand('Context Workbench: Show Goal DAG');
    const frame = wb.page.frameLocator('iframe.webview').frameLocator('iframe#active-frame');
    await frame.locator('#dag svg, #dag .node').first().waitFor({ timeout: 30_000 });
    const labels = await frame.locator('#dag').innerText();
    assert.match(labels, /Change the greeting/);
    const csp = await frame.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
    assert.match(csp, /script-src 'nonce-[A-Za-z0-9]+'/);
    assert.doesNotMatch(csp, /https?:/);
    await wb.screenshot('dag-webview');
  });

  await check('a second task (through @workbench where the chat view works, else Run Task)', async () => {
    await wb.runCommand('Context Workbench: Run Task');
    await wb.answerInput(TASK_B);
    await wb.notification(/Task finished/, 120_000);
    assert.match(readFileSync(path.join(workspace, 'src/farewell.js'), 'utf8'), /\/\/ Says goodbye to a person by name\./);
    await wb.clearNotifications();
  });

  await check('the endpoint saw goal tool schemas, CODE_LAW.md, compressed outputs and a prefix-keeping compaction', async () => {
    const agent = endpoint.agentRequests();
    assert.ok(agent.length >= 10, `${agent.length} agent requests`);
    for (const r of agent) {
      const names = r.body.tools.map((t) => t.function.name);
      for (const goalTool of ['goal', 'step', 'read_progress', 'explore']) assert.ok(names.includes(goalTool), `${goalTool} offered`);
      assert.ok(r.body.messages.some((m) => m.role === 'system' && /LAW-7: every exported function/.test(textOf(m))));
    }
    const goal = agent[0].body.tools.find((t) => t.function.name === 'goal');
    assert.deepEqual(Object.keys(goal.function.parameters.properties).sort(), ['abandon', 'add', 'done', 'focus', 'reason']);
    const firstOfB = agent.find((r) => r.task === 1 && r.step === 0);
    const log = firstOfB.body.messages.find((m) => m.role === 'tool' && /INFO step 1: compiled/.test(textOf(m)));
    assert.ok(!log || textOf(log).length < buildLog().length / 2, 'the log read arrives compressed (or compacted away)');
    // A compaction: a request whose history is not the previous one extended, after the engine's
    // own (tool-less) call; everything before the rewritten part is byte-identical.
    const compactions = [];
    for (let i = 1; i < agent.length; i++) {
      const before = agent[i - 1].body.messages.map((m) => JSON.stringify(m));
      const after = agent[i].body.messages.map((m) => JSON.stringify(m));
      const common = before.findIndex((m, k) => m !== after[k]);
      const history = before.length - 1; // the last message of a request is the tail or the input
      if (common >= 0 && common < history - 1) compactions.push({ index: i, common, before: agent[i - 1].raw.length, after: agent[i].raw.length });
    }
    assert.ok(compactions.length > 0, 'some request rewrote earlier history');
    for (const c of compactions) assert.ok(c.common >= 2, `the system prompt and CODE_LAW.md stay byte-identical across the rewrite ${JSON.stringify(c)}`);
  });
} finally {
  await browser?.close().catch(() => {});
  await server?.stop();
  await endpoint.close();
}
const failed = results.filter((r) => !r.ok).length;
console.log(`\n${results.length - failed} passed, ${failed} failed`);
console.log(`e2e: screenshots in ${path.relative(process.cwd(), artifacts)}`);
process.exit(failed === 0 ? 0 : 1);
