import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BoundedText, stripTerminalControl } from '../src/hosts/terminalText';

test('small output is kept whole', () => {
  const t = new BoundedText(100);
  t.append('hello ');
  t.append('world');
  assert.equal(t.toString(), 'hello world');
  assert.equal(t.truncated, false);
});

test('100 MB of output keeps its head and tail within the bound', () => {
  const t = new BoundedText(1_000_000);
  const line = 'x'.repeat(99) + '\n';
  t.append('FIRST LINE\n');
  for (let i = 0; i < 1_000_000; i++) t.append(line);
  t.append('LAST LINE');
  assert.equal(t.length, 11 + 100_000_000 + 9);
  assert.ok(t.truncated);
  const text = t.toString();
  assert.ok(text.length < 1_000_100);
  assert.ok(text.startsWith('FIRST LINE\n'));
  assert.ok(text.endsWith('LAST LINE'));
  assert.match(text, /\[99000020 characters of output not kept\]/);
});

test('escape sequences and carriage returns are stripped from terminal output', () => {
  assert.equal(stripTerminalControl('\x1b]633;C\x07\x1b[32mok\x1b[0m\r\nnext\rline'), 'ok\nnextline');
});
