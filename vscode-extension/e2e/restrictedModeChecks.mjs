// The extension in a folder VS Code does not trust (Restricted Mode), in a code-server of its own
// with workspace trust on: the views show a trace the engine saved there, read-only; Run Task and
// Start Proxy explain that the folder must be trusted, with the button to the trust editor; once
// trust is granted there, the same window runs the agent, without a reload.
import assert from 'node:assert/strict';
import { copyFileSync, cpSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ContextEngine, nodeFsHost } from 'context-workbench';
import { startCodeServer } from './codeServer.mjs';
import { until } from './until.mjs';
import { WorkbenchPage } from './workbenchPage.mjs';

const extensionRoot = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const STATUS_ID = 'context-workbench.context-workbench.contextWorkbench.status';

export const RESTRICTED_CHECKS = [
  'Restricted Mode: the Goal Plan, the status bar and the Prompt View show the saved trace read-only; Run Task and Start Proxy explain that the folder must be trusted',
  "Restricted Mode: trust granted from the explanation's button, the same window runs the agent without a reload",
];

/** A trace the engine saved in `workspace`: a task with a plan and the prompt of its first call. */
async function savedTrace(workspace) {
  const { engine } = await ContextEngine.open(nodeFsHost(workspace), undefined, { traceId: 'saved-task' });
  engine.record({ role: 'user', content: 'TASK-SAVED: tidy the greeting' });
  engine.callGoalTool('goal', { add: 'Read src/greet.js, Tidy the greeting' });
  engine.callGoalTool('goal', { focus: '1' });
  await engine.prepareCall({ system_prompt: 'You are a coding agent.' });
  await engine.persist();
  engine.dispose();
}

/** The Goal Plan pane's header (its title and description). */
async function planHeader(page) {
  return ((await page.page.locator('.pane-header', { hasText: 'Goal Plan' }).first().textContent()) ?? '').replace(/\s+/g, ' ');
}

export async function restrictedModeChecks({ check, browser, artifacts, runDir, vsix, settings }) {
  const workspace = path.join(runDir, 'untrusted-workspace');
  cpSync(path.join(extensionRoot, 'e2e/fixture'), workspace, { recursive: true });
  await savedTrace(workspace);
  const trusting = {
    ...settings,
    'security.workspace.trust.enabled': true,
    // No modal question at start: the folder opens in Restricted Mode, as after "Don't Trust".
    'security.workspace.trust.startupPrompt': 'never',
  };
  const server = await startCodeServer({ runDir: path.join(runDir, 'untrusted'), vsix, workspace, settings: trusting, trust: true });
  const page = await WorkbenchPage.open(browser, server.folderUrl, artifacts);
  try {
    await page.runCommand('View: Hide Secondary Side Bar').catch(() => {});

    await check(RESTRICTED_CHECKS[0], async () => {
      await page.page.getByText('Restricted Mode').first().waitFor({ timeout: 30_000 });
      await page.openViewContainer('Context Workbench');
      const rows = await until('the saved plan in the Goal Plan', async () => {
        const r = await page.treeRows('Goal Plan');
        return r.some((row) => /Read src\/greet\.js/.test(row)) && r;
      });
      assert.ok(rows.some((r) => /Tidy the greeting/.test(r)), `${rows}`);
      assert.match(await planHeader(page), /read-only \(Restricted Mode\)/i);
      assert.ok(await page.page.getByText('Read-only (Restricted Mode) · Now: Read src/greet.js').count() > 0, 'the Goal Plan says it is read-only');
      assert.match(await page.statusBarText(STATUS_ID), /tokens · \d+% cached/);
      await page.runCommand('Context Workbench: Show Last Prompt');
      await page.page.locator('.tab', { hasText: 'last-prompt.md' }).waitFor();
      await page.page.waitForTimeout(800);
      assert.match(await page.editorText(), /TASK-SAVED: tidy the greeting/);
      await page.runCommand('View: Close All Editors');

      await page.runCommand('Context Workbench: Run Task');
      const explained = await page.notification(/Run Task needs a trusted folder/);
      assert.match(explained, /Restricted Mode/);
      assert.match(explained, /Manage Workspace Trust/, 'the explanation offers the trust editor');
      // No input box asks for a task (the palette that ran the command has closed).
      await page.page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 });
      await page.screenshot('restricted-mode');
      copyFileSync(path.join(artifacts, 'restricted-mode.png'), path.join(extensionRoot, 'docs/restricted-mode.png'));
      await page.clearNotifications();
      await page.runCommand('Context Workbench: Start Proxy for Other Agents');
      await page.notification(/Start Proxy needs a trusted folder/);
      await page.clearNotifications();
    });

    await check(RESTRICTED_CHECKS[1], async () => {
      await page.runCommand('Context Workbench: Run Task');
      const toast = page.page.locator('.notification-toast', { hasText: 'needs a trusted folder' }).first();
      await toast.waitFor({ timeout: 30_000 });
      await toast.locator('.monaco-button', { hasText: 'Manage Workspace Trust' }).first().click();
      // VS Code's trust editor (a modal editor): its Trust button trusts the folder.
      await page.page.getByText('You are in Restricted Mode').first().waitFor({ timeout: 30_000 });
      await page.screenshot('restricted-mode-trust-editor');
      await page.page.locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust$/ }).first().click();
      await until('the Goal Plan in full mode', async () => !/read-only/i.test(await planHeader(page)) && (await page.page.getByText('Read-only (Restricted Mode)').count()) === 0);
      await page.runCommand('View: Close All Editors');
      await page.runCommand('Context Workbench: Run Task');
      await page.page.locator('.quick-input-widget input:visible').waitFor({ timeout: 15_000 });
      await page.screenshot('trusted-after-grant');
      await page.page.keyboard.press('Escape');
    });
  } finally {
    await page.page.context().close();
    await server.stop();
  }
}
