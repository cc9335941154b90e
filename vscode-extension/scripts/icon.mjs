// Draw the extension's icon, media/icon.png (128×128, what package.json's `icon` names), from
// scripts/icon.svg with headless Chromium (playwright-core; CHROMIUM or /usr/bin/chromium).
// Run it after changing the SVG: node scripts/icon.mjs
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const media = (name) => fileURLToPath(new URL(`../media/${name}`, import.meta.url));
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--headless', '--no-sandbox'] });
try {
  const page = await browser.newPage({ viewport: { width: 128, height: 128 }, deviceScaleFactor: 1 });
  const svg = readFileSync(new URL('icon.svg', import.meta.url), 'utf8');
  await page.setContent(`<body style="margin:0;background:transparent">${svg}</body>`);
  await page.locator('svg').screenshot({ path: media('icon.png'), omitBackground: true });
} finally {
  await browser.close();
}
