import { test } from 'node:test';
import assert from 'node:assert/strict';
import { globToRegExp, matcherFor } from '../src/agent/globPattern';

test('** spans folders, * and ? stay within one', () => {
  const r = globToRegExp('src/**/*.ts');
  assert.ok(r.test('src/a.ts'));
  assert.ok(r.test('src/x/y/a.ts'));
  assert.ok(!r.test('src/a.js'));
  assert.ok(!r.test('lib/src/a.ts'));
  assert.ok(globToRegExp('a?.md').test('ab.md'));
  assert.ok(!globToRegExp('a*.md').test('a/b.md'));
});

test('braces and classes', () => {
  const r = globToRegExp('*.{js,mjs}');
  assert.ok(r.test('a.js') && r.test('a.mjs') && !r.test('a.ts'));
  assert.ok(globToRegExp('[ab].txt').test('a.txt'));
  assert.ok(!globToRegExp('[!ab].txt').test('a.txt'));
  assert.ok(globToRegExp('a.b+c').test('a.b+c'));
  assert.throws(() => globToRegExp('{a,b'), /unbalanced/);
});

test('a pattern without a slash matches at any depth', () => {
  const m = matcherFor('*.md');
  assert.ok(m('README.md') && m('docs/x/y.md'));
  assert.ok(!matcherFor('docs/*.md')('other/docs/a.md'));
});
