import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from 'context-workbench';
import { PathRefused, isInsideAny, normalizeRelative, splitFolder } from '../src/hosts/workspacePaths';

test.before(() => init());

test('relative paths are normalized to / without dots', () => {
  assert.equal(normalizeRelative('src/./a.ts'), 'src/a.ts');
  assert.equal(normalizeRelative('src\\lib\\b.ts'), 'src/lib/b.ts');
  assert.equal(normalizeRelative('src/lib/../a.ts'), 'src/a.ts');
  assert.equal(normalizeRelative('.'), '');
  assert.equal(normalizeRelative(''), '');
  assert.equal(normalizeRelative('a//b/'), 'a/b');
});

test('paths that leave the workspace are refused with outside_workspace', () => {
  for (const bad of ['../x', 'a/../../x', '/etc/passwd', 'C:\\Windows', 'c:/x', 'file:///etc/passwd', '..', 'a/\0b']) {
    assert.throws(() => normalizeRelative(bad), (e: unknown) => e instanceof PathRefused && e.code === 'outside_workspace', bad);
  }
});

test('a resolved path is inside a root only below it, not beside it', () => {
  assert.ok(isInsideAny('/w/project/a.ts', ['/w/project']));
  assert.ok(isInsideAny('/w/project', ['/w/project/']));
  assert.ok(!isInsideAny('/w/project-other/a.ts', ['/w/project']));
  assert.ok(!isInsideAny('/etc/passwd', ['/w/project', '/w/other']));
  assert.ok(isInsideAny('/w/other/x', ['/w/project', '/w/other']));
});

test('with several folders a path names its folder first', () => {
  assert.deepEqual(splitFolder('src/a.ts', ['only']), { folder: 0, rest: 'src/a.ts' });
  assert.deepEqual(splitFolder('api/src/a.ts', ['web', 'api']), { folder: 1, rest: 'src/a.ts' });
  assert.throws(() => splitFolder('docs/a.md', ['web', 'api']), /starts with one of web, api/);
});
