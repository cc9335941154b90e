// The package's typings: test/types/typed-use.ts, a typed use of the API resolved through the
// package's own `exports`, must compile (and its @ts-expect-error lines must stay errors).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

test('a typed use of the package compiles against its .d.ts', () => {
  const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));
  const project = fileURLToPath(new URL('types/tsconfig.json', import.meta.url));
  const result = spawnSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stdout + result.stderr);
});
