// Driving the VS Code workbench in Debian's Chromium with playwright-core, as a person would:
// the command palette, input boxes, notifications, views, the status bar, screenshots.
import { chromium } from 'playwright-core';
import path from 'node:path';

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export async function launchBrowser() {
  return chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS, headless: true });
}

export class WorkbenchPage {
  constructor(page, artifacts) {
    this.page = page;
    this.artifacts = artifacts;
  }

  static async open(browser, url, artifacts) {
    const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
    const page = await context.newPage();
    const workbench = new WorkbenchPage(page, artifacts);
    page.on('console', (m) => {
      if (m.type() === 'error') workbench.consoleErrors.push(m.text());
    });
    workbench.consoleErrors = [];
    await page.goto(url);
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    await page.locator('.statusbar').waitFor({ timeout: 60_000 });
    return workbench;
  }

  async screenshot(name) {
    const file = path.join(this.artifacts, `${name}.png`);
    await this.page.screenshot({ path: file });
    return file;
  }

  /**
   * Run a command from the palette by its title, e.g. `Context Workbench: Run Task`; with
   * `keepFocus` the editor keeps its focus and selection.
   */
  async runCommand(title, { keepFocus = false } = {}) {
    const page = this.page;
    if (!keepFocus) {
      await page.keyboard.press('Escape');
      await page.locator('.monaco-workbench').click({ position: { x: 800, y: 5 } }).catch(() => {});
    }
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 15_000 });
    await input.fill(`>${title}`);
    const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first();
    await row.waitFor({ timeout: 15_000 });
    await input.press('Enter');
  }

  /** Answer an input box (showInputBox / quick pick filter) with `text`. */
  async answerInput(text) {
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 15_000 });
    await input.fill(text);
    await input.press('Enter');
  }

  /** Pick the quick-pick row that contains `text`. */
  async pick(text) {
    const row = this.page.locator('.quick-input-widget .monaco-list-row', { hasText: text }).first();
    await row.waitFor({ timeout: 15_000 });
    await row.click();
  }

  /** Open a workspace file through Quick Open. */
  async openFile(relative) {
    await this.page.keyboard.press('Escape');
    await this.page.keyboard.press('Control+P');
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 15_000 });
    await input.fill(relative);
    await this.page.locator('.quick-input-widget .monaco-list-row', { hasText: path.basename(relative) }).first().waitFor({ timeout: 15_000 });
    await input.press('Enter');
    await this.page.locator('.tab', { hasText: path.basename(relative) }).first().waitFor({ timeout: 15_000 });
    await this.page.locator('.editor-group-container.active .view-lines').click();
  }

  /** Type a command into the active terminal (the panel's terminal view) and run it. */
  async terminalRun(commandLine) {
    await this.runCommand('Terminal: Focus Terminal');
    // Keys typed before xterm has the focus are lost.
    await this.page.waitForFunction(() => document.activeElement?.classList.contains('xterm-helper-textarea'), null, { timeout: 15_000 });
    await this.page.waitForTimeout(500);
    // Whatever the shell was waiting for (a continuation line, a completion prompt) is dropped.
    await this.page.keyboard.press('Control+C');
    await this.page.waitForTimeout(500);
    await this.page.keyboard.type(commandLine);
    await this.page.keyboard.press('Enter');
  }

  /** Accept the simple file dialog (save/open) as proposed. */
  async acceptSimpleDialog() {
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 15_000 });
    await this.page.waitForTimeout(300);
    await input.press('Enter');
  }

  /** Press Cancel on the progress notification whose title contains `title`. */
  async cancelProgress(title) {
    const toast = this.page.locator('.notification-toast', { hasText: title }).first();
    await toast.waitFor({ timeout: 15_000 });
    await toast.locator('.monaco-button, a.monaco-button', { hasText: 'Cancel' }).first().click();
  }

  /** Send `prompt` in the chat view; returns the text of the answer once it stops changing. */
  async askChat(prompt) {
    const input = this.page.locator('.interactive-input-part .monaco-editor').first();
    if (!(await input.isVisible())) await this.page.keyboard.press('Control+Alt+I');
    await input.waitFor({ timeout: 15_000 });
    await input.click();
    await this.page.keyboard.type(prompt);
    await this.page.keyboard.press('Enter');
    const response = this.page.locator('.interactive-item-container.interactive-response').last();
    await response.waitFor({ timeout: 30_000 });
    let previous = '';
    for (let i = 0; i < 120; i++) {
      await this.page.waitForTimeout(1000);
      const text = (await response.innerText()).trim();
      if (text !== '' && text === previous && !(await response.locator('.codicon-loading').count())) return text;
      previous = text;
    }
    return previous;
  }

  /**
   * Wait for a notification whose text matches `pattern`; returns its text. VS Code shows at most
   * three new toasts per 800 ms (its spam protection) and puts the rest in the notification
   * center only: a command that shows a progress notification and then its answer right after
   * another one's lands there. Where no toast comes, look where a person would: in the center.
   */
  async notification(pattern, timeout = 60_000) {
    const deadline = Date.now() + timeout;
    const toast = this.page.locator('.notification-toast', { hasText: pattern }).first();
    for (;;) {
      const left = deadline - Date.now();
      try {
        await toast.waitFor({ timeout: Math.max(1, Math.min(left, 10_000)) });
        return (await toast.innerText()).trim();
      } catch (e) {
        const listed = (await this.centerTexts()).find((text) => pattern.test(text));
        if (listed !== undefined) return listed;
        if (Date.now() >= deadline) throw e;
      }
    }
  }

  /** The texts of the notifications on screen and, when none is, those in the notification center. */
  async notificationTexts() {
    const toasts = (await this.page.locator('.notification-toast').allInnerTexts()).map((t) => t.trim());
    return toasts.length > 0 ? toasts : this.centerTexts();
  }

  /** Open the notification center, read its notifications, and close it again. */
  async centerTexts() {
    await this.runCommand('Notifications: Show Notifications');
    const center = this.page.locator('.notifications-center');
    await center.waitFor({ timeout: 10_000 });
    await this.page.waitForTimeout(300);
    const texts = (await center.locator('.notification-list-item').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
    await this.page.keyboard.press('Escape');
    const open = this.page.locator('.notifications-center.visible');
    if (await open.count()) await this.page.locator('[id="status.notifications"]').first().click();
    await open.waitFor({ state: 'hidden', timeout: 5_000 });
    return texts;
  }

  /** Clear every notification (the toasts and the center), so the next one looked for is new. */
  async clearNotifications() {
    await this.runCommand('Notifications: Clear All Notifications');
  }

  /** Click a button of a modal dialog (showWarningMessage with `modal: true`). */
  async clickDialogButton(label, timeout = 60_000) {
    const button = this.page.locator('.monaco-dialog-box .monaco-button', { hasText: label }).first();
    await button.waitFor({ timeout });
    await button.click();
  }

  /** The text of the status-bar item with this id (`publisher.name.itemId`). */
  async statusBarText(entryId) {
    const item = this.page.locator(`.statusbar-item[id="${entryId}"]`);
    await item.waitFor({ timeout: 30_000 });
    return (await item.innerText()).trim();
  }

  /** Open the activity-bar container with this title and return the rows of its view. */
  /** Show the view container `title` in the side bar; a click on the active one would hide it. */
  async openViewContainer(title) {
    const item = this.page.locator('.activitybar .action-item', { has: this.page.locator(`a[aria-label^="${title}"]`) })
      .or(this.page.locator(`.activitybar .action-item[aria-label^="${title}"]`)).first();
    const shown = (await item.getAttribute('aria-selected')) === 'true' || /\bchecked\b/.test((await item.getAttribute('class')) ?? '');
    if (!shown) await item.click();
  }

  async treeRows(viewTitle) {
    const pane = this.page.locator('.pane', { has: this.page.locator('.pane-header', { hasText: viewTitle }) }).first();
    await pane.waitFor({ timeout: 30_000 });
    return (await pane.locator('.monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
  }

  /** The visible lines of the active editor, in order, with Monaco's non-breaking spaces as spaces. */
  async editorText() {
    return this.page.evaluate(() => {
      const lines = [...document.querySelectorAll('.editor-group-container.active .view-lines .view-line')];
      lines.sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top));
      return lines.map((l) => l.textContent.replace(/\u00a0/g, ' ')).join('\n');
    });
  }
}
