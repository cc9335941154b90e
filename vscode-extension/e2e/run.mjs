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
import { checkCompaction, checkToolsAndRules } from './requestChecks.mjs';
import { E2E_WINDOW, TASKS, TASK_A, TASK_B, buildLog } from './scenario.mjs';
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
  'editor.codeLens': true,
  'contextWorkbench.llm.url': endpoint.url,
  'contextWorkbench.llm.model': 'scripted-model',
  // Small enough that the second task's second read of the log crosses the compaction threshold.
  'contextWorkbench.window': E2E_WINDOW,
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
    await wb.runCommand('Context Workbench: Show or Hide Abandoned Goals');
    await wb.page.waitForTimeout(500);
    const all = await wb.treeRows('Goal Plan');
    assert.ok(all.some((r) => /Rewrite the project in TypeScript/.test(r) && /abandoned/.test(r)), `abandoned goal shown: ${all}`);
  });

  await check('the status bar shows prompt tokens over the window and the cached share', async () => {
    const text = await wb.statusBarText(STATUS_ID);
    assert.match(text, /^\S*\s*[\d.]+k?\/[\d.]+k? · \d+% cached$/, text);
    assert.match(text, /\/12k/);
  });

  await check('a second task (through @workbench where the chat view works, else Run Task)', async () => {
    await wb.runCommand('Context Workbench: Run Task');
    await wb.answerInput(TASK_B);
    await wb.notification(/Task finished/, 120_000);
    assert.match(readFileSync(path.join(workspace, 'src/farewell.js'), 'utf8'), /\/\/ Says goodbye to a person by name\./);
    await wb.clearNotifications();
  });

  await check('the Prompt View shows the last prompt; the compaction block expands to the raw messages it replaced', async () => {
    await wb.runCommand('Context Workbench: Show Last Prompt');
    await wb.page.locator('.tab', { hasText: 'last-prompt.md' }).waitFor();
    const text = await wb.editorText();
    assert.match(text, /──── 1 · system · system/);
    assert.match(text, /LAW-7/);
    await wb.screenshot('prompt-view');
    // The compaction block of the second task: its code lens opens the raw messages it replaced.
    await wb.page.locator('.editor-group-container.active .view-lines').click();
    await wb.page.keyboard.press('Control+F');
    await wb.page.keyboard.type('compaction of raw#');
    await wb.page.keyboard.press('Enter');
    await wb.page.keyboard.press('Escape');
    const lens = wb.page.locator('.codelens-decoration a:visible', { hasText: /Expand raw#m\d+\.\.m\d+/ }).first();
    await lens.waitFor({ timeout: 15_000 });
    await wb.screenshot('prompt-view-compaction');
    await lens.click();
    await wb.page.locator('.tab', { hasText: /m\d+\.\.m\d+/ }).first().waitFor();
    await wb.page.waitForTimeout(500);
    assert.match(await wb.editorText(), /raw#m\d+ · tool ────|INFO step 1: compiled module m1/);
  });

  await check('the DAG webview draws the plan under a nonce CSP', async () => {
    await wb.runCommand('Context Workbench: Show Goal DAG');
    const frame = wb.page.frameLocator('iframe.webview').frameLocator('iframe#active-frame');
    await frame.locator('#dag .dag-node').first().waitFor({ timeout: 30_000 });
    const labels = await frame.locator('#dag').innerText();
    assert.match(labels, /Change the greeting/);
    const csp = await frame.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
    const directives = Object.fromEntries(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k, v]));
    assert.deepEqual(directives['default-src'], ["'none'"], csp);
    assert.deepEqual(directives['script-src'].length, 1, csp);
    assert.match(directives['script-src'][0], /^'nonce-[A-Za-z0-9]{16,}'$/, csp);
    assert.deepEqual(directives['connect-src'], ["'none'"], csp);
    const scripts = await frame.locator('script').evaluateAll((all) => all.map((s) => ({ nonce: s.nonce, src: s.getAttribute('src'), inline: s.textContent.slice(0, 80) })));
    const ours = scripts.filter((s) => /\/dist\/dag\/dagView\.js$/.test(s.src ?? ''));
    assert.equal(ours.length, 1, JSON.stringify(scripts));
    assert.equal(`'nonce-${ours[0].nonce}'`, directives['script-src'][0], 'the script carries the nonce');
    await wb.screenshot('dag-webview');
  });

  await check('the endpoint saw the goal tools, CODE_LAW.md, and a compaction of the large read with the prefix byte-identical', async () => {
    const agent = endpoint.agentRequests();
    checkToolsAndRules(agent);
    const goal = agent[0].body.tools.find((t) => t.function.name === 'goal');
    assert.deepEqual(Object.keys(goal.function.parameters.properties).sort(), ['abandon', 'add', 'done', 'focus', 'reason']);
    const found = checkCompaction(agent);
    assert.match(found.block, /span="goal-3"/);
    console.log(`  compaction: ${JSON.stringify(found)}`);
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
