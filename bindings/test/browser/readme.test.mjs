// The README's browser recipe as a user pastes it: the block after `<!-- readme-test: browser -->`
// in the package's own README.md (bindings/README.md) becomes a page saved beside a `node_modules/context-workbench`
// (this package's build, copied there as npm would install it), served from 127.0.0.1 and opened in Chromium; what it logs is what
// the README says it logs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBrowser } from './chromium.mjs';

const bindings = fileURLToPath(new URL('../../', import.meta.url));
const readme = readFileSync(path.join(bindings, 'README.md'), 'utf8');

let chrome;
before(async () => { chrome = await startBrowser(); });
after(async () => { await chrome?.close(); });

test('the README browser recipe runs as pasted and logs what the README says', async () => {
  const block = readme.match(/<!-- readme-test: browser -->\s*```html\n([\s\S]*?)\n```/)?.[1];
  assert.ok(block, 'bindings/README.md has an html block marked `readme-test: browser`');
  const site = path.join(bindings, 'test-artifacts/readme-site');
  rmSync(site, { recursive: true, force: true });
  const installed = path.join(site, 'node_modules/context-workbench');
  mkdirSync(installed, { recursive: true });
  for (const entry of ['package.json', 'dist']) cpSync(path.join(bindings, entry), path.join(installed, entry), { recursive: true });
  writeFileSync(path.join(site, 'index.html'), `<!doctype html>\n<title>recipe</title>\n${block}\n`);

  const page = await chrome.browser.newPage();
  const logged = [];
  const errors = [];
  page.on('console', (m) => logged.push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${chrome.url}/bindings/test-artifacts/readme-site/index.html`);
  await page.waitForFunction(() => document.readyState === 'complete');
  for (let i = 0; i < 100 && !logged.some((l) => l.startsWith('prepared')) && errors.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.deepEqual(errors, []);
  const said = readme.match(/<!-- readme-test: browser -->[\s\S]*?It logs `([^`]+)`/)?.[1];
  assert.ok(said, 'the README states what the page logs');
  assert.deepEqual(logged.filter((l) => l.startsWith('prepared')), [said]);
  const saved = await page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    const project = await root.getDirectoryHandle('my-project');
    const traces = await project.getDirectoryHandle('.trace');
    const names = [];
    for await (const name of traces.keys()) names.push(name);
    return names;
  });
  assert.deepEqual(saved.sort(), ['.gitignore', 'session-1'], "the trace is saved in the origin-private file system, beside the store's .gitignore");
  await page.close();
});
