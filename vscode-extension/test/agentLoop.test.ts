// The agent loop against the real engine (the package's Node build) and the scripted endpoint:
// what the model was sent, what the files became.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runTask } from '../src/agent/agentLoop';
import { CodingTools } from '../src/agent/codingTools';
import { CODING_TOOLS } from '../src/agent/toolSpecs';
import { packageBackend } from '../src/engine/packageEngine';
import { OpenAiCompatibleModel } from '../src/llm/openAiCompatible';
import { MemoryFiles } from './memoryFiles';
// @ts-expect-error: plain JavaScript test support, shared with the end-to-end test
import { checkCompaction, checkToolsAndRules } from '../e2e/requestChecks.mjs';
// @ts-expect-error: plain JavaScript test support, shared with the end-to-end test
import { startScriptedEndpoint } from '../e2e/scriptedEndpoint.mjs';
// @ts-expect-error: plain JavaScript test support, shared with the end-to-end test
import { BRANCH_WORK, E2E_ENGINE, E2E_WINDOW, TASKS, TASK_A, TASK_B, TASK_EXPLORE, buildLog } from '../e2e/scenario.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
// In Node the package loads its own .wasm and rank files: nothing to get ready.
const backend = packageBackend(async () => {});

const quiet = { text() {}, toolStarted() {}, toolFinished() {}, prepared() {}, usage() {}, notice() {} };

function filesHost(files: MemoryFiles, model: OpenAiCompatibleModel) {
  return {
    complete: async (r: { messages: Array<{ role: string; content: string }> }) => {
      const reply = await model.chat({ messages: r.messages.map((m) => ({ role: m.role === 'assistant' ? 'assistant' : m.role === 'system' ? 'system' : 'user', content: m.content })), tools: [] });
      return { text: reply.text, usage: reply.usage };
    },
    readFile: (p: string) => files.readFile(p),
    stat: (p: string) => files.stat(p),
    writeFile: (p: string, d: string) => files.writeFile(p, d),
    appendFile: async (p: string, d: string) => files.writeFile(p, (files.files.get(p) ?? '') + d),
    rename: async (a: string, b: string) => {
      files.files.set(b, files.files.get(a) ?? '');
      files.files.delete(a);
    },
    remove: async (p: string) => void files.files.delete(p),
    listDir: (p: string) => files.listDir(p),
    nowMs: () => Date.now(),
  };
}

/** The scripted endpoint playing `tasks`, a model on it, `files` in memory and the coding tools on them (no terminal); closed after `run`. */
async function withScripted(
  tasks: unknown[],
  files: Record<string, string>,
  run: (s: { endpoint: { agentRequests(): any[] }; files: MemoryFiles; model: OpenAiCompatibleModel; tools: CodingTools }) => Promise<void>,
): Promise<void> {
  const endpoint = await startScriptedEndpoint({ tasks });
  try {
    const memory = new MemoryFiles(files);
    await run({ endpoint, files: memory, model: new OpenAiCompatibleModel({ url: endpoint.url, model: 'scripted' }), tools: new CodingTools(memory, { run: async () => undefined }) });
  } finally {
    await endpoint.close();
  }
}

test('two tasks through the loop: files edited, goal tools and CODE_LAW.md sent, the large read compacted with the prefix kept', async () => {
  const fixture = (p: string) => readFileSync(path.resolve(here, '../../e2e/fixture', p), 'utf8');
  await withScripted(TASKS, { 'CODE_LAW.md': fixture('CODE_LAW.md'), 'src/greet.js': fixture('src/greet.js'), 'README.md': fixture('README.md'), 'logs/build.log': buildLog() }, async ({ endpoint, files, model }) => {
    const engine = await backend.create(filesHost(files, model), { window: E2E_WINDOW, ...E2E_ENGINE });
    const commands = { run: async (c: string) => ({ output: `ran: ${c}\ngreet.js farewell.js`, exitCode: 0 }) };
    const options = { engine, model, tools: new CodingTools(files, commands), maxRounds: 20 };

    const a = await runTask(options, TASK_A, quiet);
    assert.equal(a.kind, 'answered', JSON.stringify(a));
    assert.match(files.files.get('src/greet.js') ?? '', /'Hi ' \+ name/);
    assert.match(files.files.get('src/farewell.js') ?? '', /export function farewell/);
    // An answered task's trace lists as completed (the trace picker's label), the next one reopens it.
    const listed = async () => {
      await engine.persist();
      return (await backend.listTraces(filesHost(files, model), '.trace')).traces.map((t) => t.detail.split(' · ')[0]);
    };
    assert.deepEqual(await listed(), ['completed']);
    const b = await runTask(options, TASK_B, quiet);
    assert.equal(b.kind, 'answered', JSON.stringify(b));
    assert.deepEqual(await listed(), ['completed']);
    await engine.recordUserInput('one more thing');
    assert.deepEqual(await listed(), ['running']);
    assert.match(files.files.get('src/farewell.js') ?? '', /\/\/ Says goodbye to a person by name\.\nexport function farewell/);

    const agent = endpoint.agentRequests();
    checkToolsAndRules(agent, engine.goalTools());
    for (const r of agent) {
      const offered = r.body.tools.map((t: { function: { name: string } }) => t.function.name);
      assert.deepEqual(offered.slice(0, CODING_TOOLS.length), CODING_TOOLS.map((t) => t.name));
    }
    const found = checkCompaction(agent);
    assert.match(found.block, /span="goal-3"/, 'the goal that held the first read was compacted');
    engine.dispose();
  });
});

test('a failing model and a cancelled call end the task cleanly, and the engine stays usable', async () => {
  await withScripted(TASKS, { 'README.md': 'x' }, async ({ files, model, tools }) => {
    const engine = await backend.create(filesHost(files, model), {});
    const options = { engine, model, tools, maxRounds: 5 };
    const failed = await runTask(options, 'TASK-FAIL: anything', quiet);
    assert.equal(failed.kind, 'failed');
    assert.match((failed as { message: string }).message, /500.*the scripted model is down/);
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 100);
    const cancelled = await runTask(options, 'TASK-HANG: wait forever', quiet, abort.signal);
    assert.equal(cancelled.kind, 'cancelled', JSON.stringify(cancelled));
    assert.equal(engine.countTokens('hello world'), 2);
    engine.dispose();
  });
});

test('explore runs its branches as parallel sub-agents; the main line keeps only the merge summary (R6.5)', async () => {
  await withScripted(TASKS, { 'CODE_LAW.md': readFileSync(path.resolve(here, '../../e2e/fixture/CODE_LAW.md'), 'utf8'), 'src/greet.js': "export function greet(name) {\n  return 'Hello ' + name;\n}\n" }, async ({ endpoint, files, model, tools }) => {
    const engine = await backend.create(filesHost(files, model), {});
    assert.deepEqual(engine.goalTools().map((t) => t.name), ['goal', 'step', 'read_progress', 'explore']);
    const runs: Array<{ name: string; isError: boolean; output: string }> = [];
    const notices: string[] = [];
    const sink = { ...quiet, notice: (m: string) => notices.push(m), toolFinished: (call: { name: string }, run: { isError: boolean; output: string }) => runs.push({ name: call.name, ...run }) };
    const outcome = await runTask({ engine, model, tools, maxRounds: 6, parallelBranches: 2 }, TASK_EXPLORE, sink);
    assert.equal(outcome.kind, 'answered', JSON.stringify(outcome));
    assert.deepEqual(runs.map((r) => [r.name, r.isError]), [['explore', false]], JSON.stringify(runs));
    const merged = runs[0].output;
    assert.match(merged, /A JSON file would hold a single greeting/);
    assert.match(merged, /Keeping the greeting in greet\(\) is the simplest/);

    const requests = endpoint.agentRequests();
    checkToolsAndRules(requests, engine.goalTools());
    const of = (source: string) => requests.filter((r: { task: number }) => TASKS[r.task]?.match.source === source);
    const [json, code, main] = [of('^BRANCH-JSON'), of('^BRANCH-CODE'), of('^TASK-EXPLORE')];
    assert.deepEqual([json.length, code.length, main.length], [3, 2, 2]);
    assert.ok(code[0].index < json[json.length - 1].index, 'the second branch started before the first finished');
    for (const r of [...json, ...code]) {
      const text = JSON.stringify(r.body.messages);
      assert.ok(!text.includes('TASK-EXPLORE'), 'a branch never sees the main line');
      assert.match(text, /greet\(\) lives in src\/greet\.js/, 'the background reaches the branch');
      assert.ok(!r.body.tools.some((t: { function: { name: string } }) => t.function.name === 'explore'), 'branches do not nest');
    }
    assert.ok(!JSON.stringify(json.map((r: { body: unknown }) => r.body)).includes('listing the sources'), 'branches do not see each other');
    const after = JSON.stringify(main[1].body.messages);
    assert.match(after, /Exploration results/);
    assert.match(after, /A JSON file would hold a single greeting/);
    assert.ok(!after.includes(BRANCH_WORK) && !after.includes("'Hello ' + name"), 'the main line holds no branch work');

    const tree = engine.goalTree();
    assert.deepEqual(tree.goals.map((g) => [g.type, g.status]), [['explore_start', 'completed'], ['explore_merge', 'completed']]);
    assert.deepEqual(tree.branches?.map((b) => [b.id, b.status]), [['A', 'completed'], ['B', 'completed']]);
    assert.ok(notices.includes('Branch A started.') && notices.some((n) => n.startsWith('Branch B: list_dir src')), JSON.stringify(notices));
    engine.dispose();
  });
});

test('a failing branch ends with its error in the merge summary; cancelling the task cancels the running branch', async () => {
  const explore = { name: 'explore', arguments: { branches: ['BRANCH-DOWN: ask a model that is down', 'BRANCH-HANG: ask a model that never answers'] } };
  const tasks = [
    { match: /^TASK-EXPLORE-FAIL/, steps: [{ toolCalls: [explore] }, { text: 'unreachable' }] },
    { match: /^BRANCH-DOWN/, again: true, steps: [{ status: 500, text: 'the scripted model is down' }] },
    { match: /^BRANCH-HANG/, again: true, steps: [{ hang: true }] },
  ];
  await withScripted(tasks, { 'README.md': 'x' }, async ({ files, model, tools }) => {
    const engine = await backend.create(filesHost(files, model), {});
    const abort = new AbortController();
    const sink = { ...quiet, notice: (m: string) => m.startsWith('Branch A finished') && setTimeout(() => abort.abort(), 200) };
    const outcome = await runTask({ engine, model, tools, maxRounds: 5 }, 'TASK-EXPLORE-FAIL: pick one', sink, abort.signal);
    assert.equal(outcome.kind, 'cancelled', JSON.stringify(outcome));
    const branches = engine.goalTree().branches ?? [];
    assert.match(branches[0].summary ?? '', /^The branch failed: .*500.*the scripted model is down/);
    assert.equal(branches[1].summary, 'The branch was cancelled before it finished.');
    const trace = JSON.parse(engine.traceJson());
    const result = trace.messages.flatMap((m: { content: Array<{ type: string; name?: string; output?: string }> }) => m.content).find((p: { type: string; name?: string }) => p.type === 'tool_result' && p.name === 'explore');
    assert.match(result.output, /Exploration results[\s\S]*The branch failed[\s\S]*cancelled before it finished/, 'the explore call has its result: the history stays valid');
    engine.dispose();
  });
});

test('an exploration a closed window left open is closed as interrupted on resume, and the plan explores again', async () => {
  await withScripted(TASKS, { 'src/greet.js': "export function greet(name) {\n  return 'Hello ' + name;\n}\n" }, async ({ files, model, tools }) => {
    // A run that ended inside its exploration: the explore call made, its branches never finished.
    const first = await backend.create(filesHost(files, model), {});
    await first.recordUserInput('Pick a store.');
    const explore = { id: 'call_old', name: 'explore', arguments: JSON.stringify({ branches: ['try redis', 'try sqlite'] }) };
    first.recordAssistant('', [explore]);
    assert.equal(first.callGoalTool(explore.name, explore.arguments).isError, false);
    await first.persist();
    const traceId = first.traceId;
    first.dispose();

    const { engine } = await backend.open(filesHost(files, model), {}, traceId);
    const notices: string[] = [];
    const outcome = await runTask({ engine, model, tools, maxRounds: 6 }, TASK_EXPLORE, { ...quiet, notice: (m: string) => notices.push(m) });
    assert.equal(outcome.kind, 'answered', JSON.stringify(outcome));
    assert.ok(notices.includes('An exploration an earlier run left open is closed: branches A, B ended as interrupted.'), JSON.stringify(notices));
    const branches = engine.goalTree().branches ?? [];
    assert.deepEqual(branches.map((b) => [b.id, b.status]), [['A', 'completed'], ['B', 'completed'], ['C', 'completed'], ['D', 'completed']]);
    assert.match(branches[0].summary ?? '', /interrupted/);
    assert.match(branches[2].summary ?? '', /A JSON file would hold a single greeting/);
    engine.dispose();
  });
});

test('a plain reply with goals open does not end the task: the model is reminded and goes on (R6.8)', async () => {
  const steps = [
    { toolCalls: [{ name: 'goal', arguments: { add: 'read the code, fix the bug' } }, { name: 'goal', arguments: { focus: '1' } }] },
    { text: 'I looked; it seems fine.' },
    { toolCalls: [{ name: 'goal', arguments: { done: 'read parse()' } }, { name: 'goal', arguments: { focus: '2' } }] },
    { toolCalls: [{ name: 'goal', arguments: { done: 'fixed the off-by-one' } }] },
    { text: 'Done.' },
  ];
  await withScripted([{ match: /^TASK-PHASE/, steps }], { 'README.md': 'x' }, async ({ endpoint, files, model, tools }) => {
    const engine = await backend.create(filesHost(files, model), {});
    const notices: string[] = [];
    const sink = { ...quiet, notice: (m: string) => notices.push(m) };
    assert.deepEqual(engine.planMarks().progress.phase, { phase: 'planning' });
    const outcome = await runTask({ engine, model, tools, maxRounds: 8 }, 'TASK-PHASE: fix the bug', sink);
    assert.deepEqual(outcome, { kind: 'answered', text: 'Done.', rounds: 5 });
    assert.ok(notices.includes('The plan still has open goals: the agent goes on.'), JSON.stringify(notices));
    const reminded = endpoint.agentRequests().map((r: { body: unknown }) => JSON.stringify(r.body).includes('the plan still has open goals'));
    assert.deepEqual(reminded, [false, false, true, false, false], 'only the call after the plain reply reminds');
    assert.deepEqual(engine.planMarks().progress, { phase: { phase: 'completed' }, steps: 2 });
    engine.dispose();
  });
});
