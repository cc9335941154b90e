import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// The tests run from dist/test/, beside the bundles the build wrote.
const bundle = (relative: string) => readFileSync(fileURLToPath(new URL(`../${relative}`, import.meta.url)), 'utf8');

test("the web bundle holds no proxy and no Node server modules; the desktop one starts the package's proxy", () => {
  const web = bundle('web/extension.js');
  for (const name of ['context-workbench/proxy', 'node:http', 'require("http")', 'node:net', 'startPackageProxy']) assert.ok(!web.includes(name), `the web bundle mentions ${name}`);
  assert.ok(web.includes('a browser cannot listen for connections'), 'the web bundle explains why there is no proxy');
  assert.ok(bundle('extension.js').includes('startPackageProxy'));
});
