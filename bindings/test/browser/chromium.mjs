// Headless Chromium for the browser tests and the start-up benchmark: Debian's /usr/bin/chromium
// driven by playwright-core (Playwright cannot download its own browser here), and the package
// served from 127.0.0.1.
import { chromium } from 'playwright-core';
import { fileURLToPath } from 'node:url';
import { serve } from '../../scripts/serve.mjs';

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run'];

/** The repository served on 127.0.0.1 (the package at /bindings/) and a launched browser; `close()` ends both. */
export async function startBrowser() {
  const server = await serve(fileURLToPath(new URL('../../../', import.meta.url)));
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
  return {
    url: server.url,
    browser,
    /** A new page that records uncaught errors and unhandled rejections in `errors`. */
    async page(path = '/bindings/test/browser/blank.html') {
      const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
      page.errors = [];
      page.on('pageerror', (error) => page.errors.push(error.message));
      await page.goto(`${server.url}${path}`);
      return page;
    },
    async close() {
      await browser.close();
      await server.close();
    },
  };
}
