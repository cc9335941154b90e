import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type CommandRunner, CodingTools } from '../src/agent/codingTools';
import { MemoryFiles } from './memoryFiles';

const declined: CommandRunner = { run: async () => undefined };

function tools(initial: Record<string, string>, commands: CommandRunner = declined) {
  const files = new MemoryFiles(initial);
  return { files, tools: new CodingTools(files, commands) };
}

test('read_file numbers lines and pages with offset/limit', async () => {
  const { tools: t } = tools({ 'a.txt': 'one\ntwo\nthree\n' });
  assert.equal((await t.run('read_file', '{"path":"a.txt"}')).output, '     1\tone\n     2\ttwo\n     3\tthree');
  const page = await t.run('read_file', '{"path":"a.txt","offset":2,"limit":1}');
  assert.equal(page.output, '     2\ttwo\n… 1 more lines (use offset 3)');
  assert.equal((await t.run('read_file', '{"path":"missing.txt"}')).isError, true);
});

test('the search tools skip the trace folder they are given, by its path', async () => {
  const files = new MemoryFiles({ 'src/a.ts': 'answer', 'out/traces/t1/meta.json': '{"mission":"answer"}', 'docs/traces/notes.md': 'answer' });
  const skipping = new CodingTools(files, declined, ['out/traces']);
  assert.deepEqual((await skipping.run('grep', '{"pattern":"answer"}')).output.split('\n').sort(), ['docs/traces/notes.md:1:answer', 'src/a.ts:1:answer']);
  assert.doesNotMatch((await skipping.run('glob', '{"pattern":"**/*.json"}')).output, /meta\.json/);
  assert.match((await new CodingTools(files, declined).run('glob', '{"pattern":"**/*.json"}')).output, /out\/traces\/t1\/meta\.json/, 'without it the folder is searched');
});

test('edit_file replaces exactly one occurrence unless told otherwise', async () => {
  const { files, tools: t } = tools({ 'a.ts': 'let x = 1;\nlet y = 1;\n' });
  const ambiguous = await t.run('edit_file', JSON.stringify({ path: 'a.ts', old_string: '= 1', new_string: '= 2' }));
  assert.match(ambiguous.output, /occurs 2 times/);
  assert.equal(files.files.get('a.ts'), 'let x = 1;\nlet y = 1;\n', 'a refused edit leaves the file alone');
  await t.run('edit_file', JSON.stringify({ path: 'a.ts', old_string: 'x = 1', new_string: 'x = $&2' }));
  assert.equal(files.files.get('a.ts'), 'let x = $&2;\nlet y = 1;\n', 'replacement text is literal');
  await t.run('edit_file', JSON.stringify({ path: 'a.ts', old_string: '1', new_string: '3', replace_all: true }));
  assert.equal(files.files.get('a.ts'), 'let x = $&2;\nlet y = 3;\n');
});

test('glob, grep and list_dir walk the tree but not node_modules or .git', async () => {
  const { tools: t } = tools({ 'src/a.ts': 'export const answer = 42;\n', 'src/deep/b.ts': 'const Answer = 1;\n', 'node_modules/x/c.ts': 'answer', 'README.md': 'answer here' });
  assert.equal((await t.run('glob', '{"pattern":"**/*.ts"}')).output, 'src/a.ts\nsrc/deep/b.ts');
  assert.equal((await t.run('grep', '{"pattern":"answer","glob":"*.ts"}')).output, 'src/a.ts:1:export const answer = 42;');
  assert.equal((await t.run('grep', '{"pattern":"answer","path":"src","ignore_case":true}')).output.split('\n').length, 2);
  assert.equal((await t.run('list_dir', '{"path":"."}')).output, 'README.md\nnode_modules/\nsrc/');
  assert.match((await t.run('grep', '{"pattern":"("}')).output, /invalid regular expression/);
});

test('bad calls are error results, never exceptions', async () => {
  const { tools: t } = tools({});
  assert.match((await t.run('read_file', 'not json')).output, /not a JSON object/);
  assert.match((await t.run('read_file', '[]')).output, /not a JSON object/);
  assert.match((await t.run('read_file', '{}')).output, /missing string argument "path"/);
  assert.match((await t.run('teleport', '{}')).output, /no tool named teleport/);
});

test('run_command reports the exit code, and a declined command says so', async () => {
  const { tools: t } = tools({}, { run: async (c: string) => ({ output: `ran ${c}`, exitCode: 3 }) });
  assert.deepEqual(await t.run('run_command', '{"command":"make"}'), { output: 'ran make', isError: true, exitCode: 3 });
  const { tools: d } = tools({});
  assert.deepEqual(await d.run('run_command', '{"command":"rm -rf /"}'), { output: 'the user declined to run this command', isError: true });
});
