// End to end in a real VS Code (code-server from npm) driven by Chromium: the .vsix installed,
// the fixture workspace opened, the agent run against the scripted endpoint through Run Task and
// @workbench, the views and commands checked as a person sees them. Screenshots go to
// tests/artifacts/vscode/ (gitignored). Prints "N passed, N failed".
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCodeServer } from './codeServer.mjs';
import { CLAUDE_CODE_CHECKS, claudeCodeChecks } from './claudeCodeChecks.mjs';
import { LIVE_CHECKS, liveSessionChecks } from './liveSessionChecks.mjs';
import { RESTRICTED_CHECKS, restrictedModeChecks } from './restrictedModeChecks.mjs';
import { checkCompaction, checkMention, checkToolsAndRules } from './requestChecks.mjs';
import { BRANCH_WORK, E2E_ENGINE, E2E_WINDOW, TASKS, TASK_A, TASK_B, TASK_EXPLORE, buildLog } from './scenario.mjs';
import { startScriptedEndpoint, textOf } from './scriptedEndpoint.mjs';
import { until } from './until.mjs';
import { WorkbenchPage, launchBrowser } from './workbenchPage.mjs';

const extensionRoot = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const artifacts = path.resolve(extensionRoot, '../tests/artifacts/vscode');
const vsix = path.join(extensionRoot, 'dist/context-workbench.vsix');
const STATUS_ID = 'context-workbench.context-workbench.contextWorkbench.status';
const EXTENSION_ID = 'context-workbench.context-workbench';

/** The activation events the extension host of `server` has activated this extension by. */
const ourActivations = (server) => server.activations().filter((a) => a.id === EXTENSION_ID).map((a) => a.event);

/**
 * A .vsix of the same build without the desktop entry, so VS Code must run the web bundle
 * (`browser`) in its web worker extension host.
 */
function packageWebOnly(dir) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const name of ['README.md', 'LICENSE', '.vscodeignore', 'media', 'dist/web', 'dist/engine', 'dist/dag']) {
    cpSync(path.join(extensionRoot, name), path.join(dir, name), { recursive: true });
  }
  const manifest = JSON.parse(readFileSync(path.join(extensionRoot, 'package.json'), 'utf8'));
  delete manifest.main;
  delete manifest.devDependencies;
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  const out = path.join(dir, 'web-only.vsix');
  execFileSync(path.join(extensionRoot, 'node_modules/.bin/vsce'), ['package', '--out', out], { cwd: dir, stdio: 'pipe' });
  return out;
}

/** The test's language model provider extension (`e2e/lm-provider`) as a .vsix in `dir`. */
function packageLanguageModelProvider(dir) {
  rmSync(dir, { recursive: true, force: true });
  cpSync(path.join(extensionRoot, 'e2e/lm-provider'), dir, { recursive: true });
  const out = path.join(dir, 'scripted-lm-provider.vsix');
  const flags = ['--no-dependencies', '--skip-license', '--allow-missing-repository', '--out', out];
  execFileSync(path.join(extensionRoot, 'node_modules/.bin/vsce'), ['package', ...flags], { cwd: dir, stdio: 'pipe' });
  return out;
}

/**
 * On `page`, a task whose model fails (HTTP 500), then one whose model never answers, cancelled:
 * both reported, and the hanging request closed. Returns that request.
 */
async function failThenCancel(page) {
  await page.runCommand('Context Workbench: Run Task');
  await page.answerInput('TASK-FAIL: anything');
  await page.notification(/The task failed: .*500.*the scripted model is down/);
  await page.clearNotifications();
  await page.runCommand('Context Workbench: Run Task');
  await page.answerInput('TASK-HANG: wait for ever');
  await page.page.waitForTimeout(1500);
  await page.cancelProgress('running the task');
  await page.notification(/Cancelled after \d+ model call/);
  await page.clearNotifications();
  const hanging = endpoint.requests.at(-1);
  for (let i = 0; i < 20 && !hanging.closedByClient; i++) await page.page.waitForTimeout(250);
  assert.ok(hanging.closedByClient, 'Cancel closed the request to the model');
  return hanging;
}

/** Every file under `dir` with its bytes, to show that nothing was written. */
function snapshot(dir) {
  const out = {};
  for (const name of readdirSync(dir, { recursive: true })) {
    const file = path.join(dir, name);
    if (statSync(file).isFile()) out[name] = readFileSync(file, 'utf8');
  }
  return out;
}

const results = [];
async function check(name, body) {
  // E2E_ONLY=<regex> runs only the checks whose name matches it (while working on one or a few).
  if (process.env.E2E_ONLY && !new RegExp(process.env.E2E_ONLY).test(name)) return;
  const started = Date.now();
  try {
    await body();
    results.push({ name, ok: true });
    console.log(`ok - ${name} (${Date.now() - started} ms)`);
  } catch (e) {
    results.push({ name, ok: false });
    console.log(`not ok - ${name}\n  ${String(e.stack ?? e).split('\n').slice(0, 6).join('\n  ')}`);
    // What the user saw instead: the notifications on screen when the check failed.
    const shown = await wb?.notificationTexts().catch(() => []);
    for (const text of shown ?? []) console.log(`  notification: ${text.replace(/\s+/g, ' ')}`);
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
  'contextWorkbench.engine': E2E_ENGINE,
};
let server;
let browser;
let wb;
try {
  server = await startCodeServer({ runDir, vsix, workspace, settings });
  browser = await launchBrowser();
  wb = await WorkbenchPage.open(browser, server.folderUrl, artifacts);
  // The chat view opens beside the editor on start; the screenshots need the room.
  await wb.runCommand('View: Hide Secondary Side Bar').catch(() => {});

  await check('a folder without a trace: the extension is not activated at start-up (no status bar item) until a command or view asks', async () => {
    // Start-up has finished once the built-in extensions that wait for it have been activated:
    // under the old onStartupFinished this extension would have been too.
    await until('start-up has finished in the extension host', async () => server.activations().some((a) => a.event === 'onStartupFinished'), 60_000);
    await wb.page.waitForTimeout(3000);
    assert.deepEqual(ourActivations(server), [], 'not activated at start-up');
    assert.equal(await wb.page.locator(`.statusbar-item[id="${STATUS_ID}"]`).count(), 0, 'no status bar item before the extension is asked');
  });

  await check('Run Task runs the agent: files edited, command confirmed, task finished', async () => {
    await wb.runCommand('Context Workbench: Run Task');
    await wb.answerInput(TASK_A);
    await wb.clickDialogButton('Run', 120_000);
    await wb.notification(/Task finished after \d+ model calls/, 120_000);
    assert.match(readFileSync(path.join(workspace, 'src/greet.js'), 'utf8'), /'Hi ' \+ name/);
    assert.match(readFileSync(path.join(workspace, 'src/farewell.js'), 'utf8'), /export function farewell\(name\)/);
    await wb.clearNotifications();
    // The command the user ran is what activated the extension, and its status bar item came with it.
    assert.deepEqual(ourActivations(server), ['onCommand:contextWorkbench.runTask']);
    await wb.statusBarText(STATUS_ID);
  });

  await check('the Goal Plan view renders the plan; abandoned goals show behind the toggle', async () => {
    await wb.openViewContainer('Context Workbench');
    const rows = await wb.treeRows('Goal Plan');
    assert.deepEqual(rows.slice(0, 3).map((r) => r.replace(/^\d+(\.\d+)*\s+/, '')).map((r) => r.split(' ')[0] + ' ' + r.split(' ')[1]), ['Change the', 'Add the', 'Check the']);
    assert.ok(!rows.some((r) => /Rewrite the project/.test(r)), `abandoned goal hidden: ${rows}`);
    await wb.screenshot('plan-view');
    await wb.runCommand('Context Workbench: Show or Hide Abandoned Goals');
    let all = [];
    for (let i = 0; i < 20 && !all.some((r) => /Rewrite the project in TypeScript/.test(r)); i++) {
      await wb.page.waitForTimeout(250);
      all = await wb.treeRows('Goal Plan');
    }
    assert.ok(all.some((r) => /Rewrite the project in TypeScript/.test(r) && /abandoned/.test(r)), `abandoned goal shown: ${all}`);
    await wb.screenshot('plan-view-abandoned');
  });

  await check('the status bar shows prompt tokens over the window and the cached share', async () => {
    const text = await wb.statusBarText(STATUS_ID);
    assert.match(text, /^\S*\s*[\d.]+k?\/[\d.]+k? · \d+% cached$/, text);
    assert.match(text, /\/12k/);
  });

  await check('a second task through @workbench in the chat view, or through Run Task where chat needs a sign-in', async () => {
    const answer = await wb.askChat(`@workbench ${TASK_B}`);
    assert.match(answer, /Context Workbench/, `the chat view routed the request to @workbench: ${answer}`);
    if (/Language model unavailable/.test(answer)) {
      // This VS Code build runs chat requests only once a Copilot account is signed in (whatever
      // model is picked), which needs the network: the same loop runs through Run Task.
      console.log('  @workbench is registered, but this build gates chat behind a Copilot sign-in; TASK-B runs through Run Task');
      await wb.runCommand('Context Workbench: Run Task');
      await wb.answerInput(TASK_B);
      await wb.notification(/Task finished/, 120_000);
    } else {
      assert.match(answer, /Task finished after \d+ model calls/, answer);
    }
    assert.match(readFileSync(path.join(workspace, 'src/farewell.js'), 'utf8'), /\/\/ Says goodbye to a person by name\./);
    await wb.clearNotifications();
    await wb.runCommand('View: Hide Secondary Side Bar').catch(() => {});
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

  await check('explore in the agent: two branches run as sub-agents, the Goal Plan shows them, the main line keeps only the merge summary (R6.5)', async () => {
    await wb.runCommand('View: Close All Editors');
    await wb.runCommand('Context Workbench: Run Task');
    await wb.answerInput(TASK_EXPLORE);
    await wb.notification(/Task finished/, 120_000);
    await wb.clearNotifications();
    await wb.openViewContainer('Context Workbench');
    let rows = [];
    for (let i = 0; i < 40 && !rows.some((r) => /Branch B: BRANCH-CODE/.test(r)); i++) {
      await wb.page.waitForTimeout(250);
      rows = await wb.treeRows('Goal Plan');
    }
    assert.ok(rows.some((r) => /Branch A: BRANCH-JSON.*finished/.test(r)) && rows.some((r) => /Branch B: BRANCH-CODE.*finished/.test(r)), `the branches are in the plan: ${rows}`);
    await wb.screenshot('plan-view-branches');
    const requests = endpoint.agentRequests();
    const of = (source) => requests.filter((r) => TASKS[r.task]?.match.source === source);
    assert.deepEqual([of('^BRANCH-JSON').length, of('^BRANCH-CODE').length], [3, 2], 'both branches ran to their answers');
    const after = JSON.stringify(of('^TASK-EXPLORE').at(-1).body.messages);
    assert.match(after, /Exploration results[\s\S]*A JSON file would hold a single greeting[\s\S]*Keeping the greeting in greet\(\)/);
    assert.ok(!after.includes(BRANCH_WORK), 'the main line holds only the merge summary');
  });

  await check('the DAG webview draws the plan under a nonce CSP', async () => {
    await wb.runCommand('View: Close All Editors');
    await wb.runCommand('View: Hide Panel').catch(() => {});
    await wb.runCommand('Context Workbench: Show Goal DAG');
    const frame = wb.page.frameLocator('iframe.webview').frameLocator('iframe#active-frame');
    await frame.locator('#dag .dag-node').first().waitFor({ timeout: 30_000 });
    const labels = await frame.locator('#dag').innerText();
    assert.match(labels, /Change the greeting/);
    assert.equal(await frame.locator('#dag .dag-branch').count(), 2, 'the exploration draws its two branches');
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
    await wb.page.waitForTimeout(500);
    await wb.screenshot('dag-webview');
  });

  await check('the endpoint saw the @mention reminder, the goal tools (explore on the main line only), CODE_LAW.md, and a compaction of the large read with the prefix byte-identical', async () => {
    const agent = endpoint.agentRequests();
    checkToolsAndRules(agent);
    const goal = agent[0].body.tools.find((t) => t.function.name === 'goal');
    assert.deepEqual(Object.keys(goal.function.parameters.properties).sort(), ['abandon', 'add', 'done', 'focus', 'reason']);
    checkMention(agent);
    const found = checkCompaction(agent);
    assert.match(found.block, /span="goal-3"/);
    console.log(`  compaction: ${JSON.stringify(found)}`);
  });

  await check('the trace is saved under .trace/ by the engine', async () => {
    // The traces are the store's directories (it also keeps a .gitignore of itself).
    const traces = readdirSync(path.join(workspace, '.trace'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    assert.equal(traces.length, 1, `one trace: ${traces}`);
    const meta = JSON.parse(readFileSync(path.join(workspace, '.trace', traces[0], 'meta.json'), 'utf8'));
    assert.match(meta.mission, /^TASK-A/);
    assert.ok(readdirSync(path.join(workspace, '.trace', traces[0], 'messages')).length > 20);
  });

  await check('Compress Selection: the engine compresses a selected log as command output', async () => {
    await wb.openFile('logs/build.log');
    await wb.page.keyboard.press('Control+A');
    await wb.runCommand('Context Workbench: Compress Selection as Tool Output', { keepFocus: true });
    await wb.pick('Command output');
    const text = await wb.notification(/compressed the selection/);
    const [, tokensIn, tokensOut] = /(\d+) → (\d+) tokens/.exec(text);
    assert.ok(Number(tokensOut) * 3 < Number(tokensIn), text);
    // The result is a read-only document, not a dirty Untitled editor.
    await wb.page.locator('.tab', { hasText: 'compressed-1.txt' }).waitFor();
    assert.equal(await wb.page.locator('.tab', { hasText: 'Untitled' }).count(), 0);
    await wb.clearNotifications();
  });

  await check("Compress Terminal's Last Output: the last command of the active terminal, compressed", async () => {
    await wb.terminalRun('seq 1 20000');
    await wb.page.waitForTimeout(1500);
    await wb.runCommand("Context Workbench: Compress Terminal's Last Output");
    const text = await wb.notification(/compressed `seq 1 20000`/);
    const [, tokensIn, tokensOut] = /(\d+) → (\d+) tokens/.exec(text);
    assert.ok(Number(tokensOut) * 10 < Number(tokensIn), text);
    await wb.clearNotifications();
  });

  await check('bad input: a 100 MB terminal output is compressed from its bounded head and tail', async () => {
    const done = path.join(runDir, 'hundred-mb.done');
    await wb.terminalRun(`yes 0123456789012345678901234567890123456789012345678 | head -c 100000000; echo; touch ${done}`);
    // The pty waits for the page to render the output: minutes on a loaded machine.
    for (let i = 0; i < 300 && !existsSync(done); i++) await wb.page.waitForTimeout(1000);
    assert.ok(existsSync(done), 'the 100 MB command finished');
    // The workbench renders all of it in the terminal: give the page time to catch up.
    let text = '';
    for (let i = 0; i < 30 && !/compressed `yes /.test(text); i++) {
      await wb.page.waitForTimeout(3000);
      try {
        await wb.page.locator('.part.editor').click({ position: { x: 40, y: 40 }, timeout: 10_000 });
        await wb.runCommand("Context Workbench: Compress Terminal's Last Output");
        text = await wb.notification(/Context Workbench:? (compressed|no finished command)/, 30_000);
      } catch (e) {
        text = `busy: ${e.message.split('\n')[0]}`;
      }
      await wb.clearNotifications().catch(() => {});
    }
    const [, chars, tokensIn, tokensOut] = /compressed `yes .*` \((\d+) characters; head and tail kept\): (\d+) → (\d+) tokens/.exec(text) ?? [];
    assert.ok(Number(chars) >= 100_000_000, text);
    assert.ok(Number(tokensOut) < 2_000 && Number(tokensIn) > 100_000, text);
    await wb.runCommand('Context Workbench: Show Last Prompt');
    await wb.page.locator('.tab', { hasText: 'last-prompt.md' }).waitFor();
  });

  await check('Compact the Tail Now: the user picks an ended goal, then the tail, and the engine compacts each', async () => {
    await wb.runCommand('Context Workbench: Compact the Tail Now');
    await wb.pick('Change the greeting');
    const text = await wb.notification(/tail_compaction of messages \d+–\d+ \((middle|tail)\)/);
    assert.match(text, /\d+ → \d+ tokens/);
    await wb.clearNotifications();
    await wb.runCommand('Context Workbench: Compact the Tail Now');
    await wb.pick('The uncompacted tail');
    // The newest kept turns stay; the oldest uncompacted turns before them are the window
    // (`middle` when more than those kept follow it), compacted on request even where the cost
    // model would wait (it reports the tokens either way).
    const tail = await wb.notification(/tail_compaction of messages \d+–\d+ \((middle|tail)\)/);
    assert.match(tail, /\d+ → \d+ tokens/);
    await wb.clearNotifications();
  });

  await check('Show Raw Trace and Export Trace', async () => {
    await wb.runCommand('Context Workbench: Show Raw Trace');
    await wb.page.locator('.tab', { hasText: /raw-trace-.*\.json/ }).waitFor();
    await wb.page.waitForTimeout(800);
    assert.match(await wb.editorText(), /"mission": "TASK-A/);
    assert.equal(await wb.page.locator('.tab', { hasText: 'Untitled' }).count(), 0, 'read-only, not an Untitled editor');
    await wb.runCommand('Context Workbench: Export Trace');
    await wb.acceptSimpleDialog();
    await wb.notification(/trace exported to trace-.*\.json/);
    const exported = readdirSync(workspace).find((f) => /^trace-.*\.json$/.test(f));
    assert.ok(exported, 'the export is in the workspace');
    assert.match(JSON.parse(readFileSync(path.join(workspace, exported), 'utf8')).mission, /^TASK-A/);
    await wb.clearNotifications();
  });

  await check('Open Trace Folder and Replay: a saved trace reopens; one from a newer version is refused, untouched', async () => {
    const traceRoot = path.join(workspace, '.trace');
    const [saved] = readdirSync(traceRoot, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    const future = path.join(traceRoot, 'from-the-future');
    cpSync(path.join(traceRoot, saved), future, { recursive: true });
    const meta = JSON.parse(readFileSync(path.join(future, 'meta.json'), 'utf8'));
    writeFileSync(path.join(future, 'meta.json'), JSON.stringify({ ...meta, trace_id: 'from-the-future', version: 999 }));
    const before = snapshot(future);
    await wb.runCommand('Context Workbench: Open Trace Folder and Replay');
    const refused = await wb.notification(/from-the-future.*(version|newer)/i);
    await wb.pick(saved);
    await wb.notification(new RegExp(`trace ${saved} opened: \\d+ goals`));
    const rows = await wb.treeRows('Goal Plan');
    assert.ok(rows.some((r) => /Comment farewell\(\)/.test(r)), `the replayed plan is shown: ${rows}`);
    assert.deepEqual(snapshot(future), before, `the newer trace is not modified (${refused})`);
    await wb.clearNotifications();
  });

  await check('bad input: paths outside the workspace, through a symbolic link or `..`, are refused to the model', async () => {
    symlinkSync('/etc', path.join(workspace, 'outside-link'));
    writeFileSync(path.join(runDir, 'secret.txt'), 'not for the agent');
    try {
      await wb.runCommand('Context Workbench: Run Task');
      await wb.answerInput('TASK-ESCAPE: read what lies outside');
      await wb.notification(/Task finished/, 60_000);
      const last = endpoint.agentRequests().at(-1).body.messages;
      const results = last.filter((m) => m.role === 'tool').slice(-3).map(textOf);
      assert.match(results[0], /symbolic link leads outside the workspace/, results[0]);
      assert.match(results[1], /leaves the workspace/, results[1]);
      assert.match(results[2], /is absolute; give a path relative to the workspace/, results[2]);
      assert.ok(!results.some((r) => r.includes('not for the agent')));
      assert.ok(!existsSync('/tmp/escaped.txt'));
    } finally {
      rmSync(path.join(workspace, 'outside-link'), { force: true });
      await wb.clearNotifications();
    }
  });

  await check('bad input: a model that errors, a cancelled request', async () => {
    await failThenCancel(wb);
  });

  await check("after a reload the agent's trace is back in the Goal Plan, the Prompt View and the status bar; Show Raw Trace shows it (#19)", async () => {
    await wb.page.context().close();
    wb = await WorkbenchPage.open(browser, server.folderUrl, artifacts);
    await wb.runCommand('View: Hide Secondary Side Bar').catch(() => {});
    await wb.openViewContainer('Context Workbench');
    let rows = [];
    for (let i = 0; i < 40 && !rows.some((r) => /Change the greeting/.test(r)); i++) {
      await wb.page.waitForTimeout(500);
      rows = await wb.treeRows('Goal Plan').catch(() => []);
    }
    assert.ok(rows.some((r) => /Change the greeting/.test(r)), `the plan is back: ${rows}`);
    assert.match(await wb.statusBarText(STATUS_ID), /^\S*\s*[\d.]+k? tokens · \d+% cached$/);
    await wb.runCommand('Context Workbench: Show Last Prompt');
    await wb.page.locator('.tab', { hasText: 'last-prompt.md' }).waitFor();
    await wb.page.waitForTimeout(800);
    const text = await wb.editorText();
    assert.match(text, /# Prompt of the newest call of Context Workbench agent · TASK-A/);
    assert.match(text, /LAW-7/);
    await wb.screenshot('after-reload');
    cpSync(path.join(artifacts, 'after-reload.png'), path.join(extensionRoot, 'docs/after-reload.png'));
    await wb.runCommand('Context Workbench: Show Raw Trace');
    await wb.page.locator('.tab', { hasText: /raw-trace-.*\.json/ }).waitFor();
    await wb.page.waitForTimeout(800);
    assert.match(await wb.editorText(), /"mission": "TASK-A/);
  });

  await check('bad input: a window without a folder gets a clear notification', async () => {
    const empty = await WorkbenchPage.open(browser, `${server.url}?ew=true`, artifacts);
    try {
      await empty.page.waitForTimeout(3000);
      await empty.runCommand('Context Workbench: Run Task');
      await empty.answerInput('TASK-B: no folder');
      await empty.notification(/needs an open folder/);
    } finally {
      await empty.page.context().close();
    }
  });

  await check('bad input: no model (no endpoint set, none from the Language Model API) gets a clear notification', async () => {
    // A newcomer's workspace, with no trace yet (a trace would come back into the Goal Plan).
    const fresh = path.join(runDir, 'no-model-workspace');
    cpSync(path.join(extensionRoot, 'e2e/fixture'), fresh, { recursive: true });
    const bare = await startCodeServer({ runDir: path.join(runDir, 'no-model'), vsix, workspace: fresh, settings: { ...settings, 'contextWorkbench.llm.url': '' } });
    const page = await WorkbenchPage.open(browser, bare.folderUrl, artifacts);
    try {
      // The Goal Plan's welcome says what to set up rather than offering a task that cannot run.
      // With no trace in the folder, opening the view is what activates the extension.
      await page.openViewContainer('Context Workbench');
      await page.statusBarText(STATUS_ID);
      assert.deepEqual(ourActivations(bare), ['onView:contextWorkbench.goalPlan']);
      await page.page.getByText('No model is set up yet').waitFor({ timeout: 30_000 });
      assert.ok(await page.page.getByRole('button', { name: 'Set API Key' }).count() > 0, 'the welcome offers the key');
      await page.runCommand('Context Workbench: Run Task');
      await page.answerInput('TASK-NOMODEL: anything');
      await page.notification(/No language model .*is available/);
    } finally {
      await page.page.context().close();
      await bare.stop();
    }
  });

  await check('the Language Model API: with no endpoint set, the model another extension provides runs the agent; its input limit is the window; errors and Cancel go through the API', async () => {
    const provider = packageLanguageModelProvider(path.join(runDir, 'lm-provider'));
    const lmSettings = { ...settings, 'contextWorkbench.llm.url': '', 'contextWorkbench.llm.model': 'scripted-lm', 'contextWorkbench.window': 0, 'e2eScriptedModel.url': endpoint.url };
    const lm = await startCodeServer({ runDir: path.join(runDir, 'lm-api'), vsix: [vsix, provider], workspace, settings: lmSettings });
    const page = await WorkbenchPage.open(browser, lm.folderUrl, artifacts);
    try {
      // The folder holds the traces of the tasks before: the extension starts with the window.
      await page.statusBarText(STATUS_ID);
      assert.deepEqual(ourActivations(lm), ['workspaceContains:.trace/**']);
      const first = endpoint.requests.length;
      await page.runCommand('Context Workbench: Run Task');
      await page.answerInput('TASK-LM: write notes/lm.md');
      await page.notification(/Task finished after \d+ model calls/, 120_000);
      assert.match(readFileSync(path.join(workspace, 'notes/lm.md'), 'utf8'), /Language Model API/);
      const requests = endpoint.requests.slice(first).filter((r) => r.kind === 'agent');
      assert.equal(requests.length, 4, 'one request per scripted step');
      assert.ok(requests.every((r) => r.headers['x-via'] === 'vscode.lm'), 'every call went through vscode.lm and the provider');
      assert.ok(requests.every((r) => r.body.tools.some((t) => t.function.name === 'goal')), 'the goal tools reached the model as Language Model API tools');
      assert.ok(requests[1].body.messages.some((m) => m.role === 'tool' && /tiny project/.test(textOf(m))), 'the tool results went back as tool result parts');
      assert.match(await page.statusBarText(STATUS_ID), /\/16k · /, "the window is the model's maxInputTokens");
      await page.clearNotifications();
      const cancelled = await failThenCancel(page);
      assert.equal(cancelled.headers['x-via'], 'vscode.lm', "Cancel reached the provider's request through the API's token");
    } finally {
      await page.page.context().close();
      await lm.stop();
    }
  });

  await check('the web build: the same agent in the browser extension host (the .wasm bytes read through workspace.fs); Start Proxy explains that a browser cannot listen', async () => {
    const webVsix = packageWebOnly(path.join(runDir, 'web-only'));
    const web = await startCodeServer({ runDir: path.join(runDir, 'web'), vsix: webVsix, workspace, settings });
    const page = await WorkbenchPage.open(browser, web.folderUrl, artifacts);
    try {
      await page.statusBarText(STATUS_ID);
      await page.runCommand('Context Workbench: Run Task');
      await page.answerInput('TASK-WEB: write notes/web.md');
      await page.notification(/Task finished after \d+ model calls/, 120_000);
      assert.match(readFileSync(path.join(workspace, 'notes/web.md'), 'utf8'), /web extension host/);
      // No proxy in a browser: the command says why and what to run instead.
      await page.clearNotifications();
      await page.runCommand('Context Workbench: Start Proxy for Other Agents');
      await page.notification(/a browser cannot listen for connections.*npx context-workbench proxy/);
      // The installed extension has no desktop entry at all: only the web bundle can have run.
      const installed = readdirSync(path.join(runDir, 'web/extensions')).find((d) => d.startsWith('context-workbench.'));
      const manifest = JSON.parse(readFileSync(path.join(runDir, 'web/extensions', installed, 'package.json'), 'utf8'));
      assert.equal(manifest.main, undefined);
      assert.ok(!existsSync(path.join(runDir, 'web/extensions', installed, 'dist/extension.js')));
      assert.ok(existsSync(path.join(runDir, 'web/extensions', installed, 'dist/web/extension.js')));
    } finally {
      await page.page.context().close();
      await web.stop();
    }
  });

  // A folder VS Code does not trust, in a code-server of its own with workspace trust on.
  if (RESTRICTED_CHECKS.some((name) => !process.env.E2E_ONLY || new RegExp(process.env.E2E_ONLY).test(name))) {
    await restrictedModeChecks({ check, browser, artifacts, runDir, vsix, settings });
  }
  // Sessions other processes write, in a code-server of their own (skipped when E2E_ONLY selects none of them).
  if (LIVE_CHECKS.some((name) => !process.env.E2E_ONLY || new RegExp(process.env.E2E_ONLY).test(name))) {
    await liveSessionChecks({ check, browser, artifacts, runDir, vsix, settings });
  }
  if (CLAUDE_CODE_CHECKS.some((name) => !process.env.E2E_ONLY || new RegExp(process.env.E2E_ONLY).test(name))) {
    await claudeCodeChecks({ check, browser, artifacts, runDir, vsix, settings });
  }
} finally {
  await browser?.close().catch(() => {});
  await server?.stop();
  await endpoint.close();
  if (!process.env.E2E_KEEP) rmSync(runDir, { recursive: true, force: true });
}
const failed = results.filter((r) => !r.ok).length;
console.log(`\n${results.length - failed} passed, ${failed} failed`);
console.log(`e2e: screenshots in ${path.relative(process.cwd(), artifacts)}`);
process.exit(failed === 0 ? 0 : 1);
