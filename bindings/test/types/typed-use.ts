// Compiled by test/types.test.mjs with `tsc --noEmit`: a typed use of the package as an embedder
// writes it. Each @ts-expect-error must stay an error, so loose typings fail the test too.
import {
  ContextEngine, ContextWorkbenchError, ReplaySession, TraceStore, memoryHost, nodeFsHost, openAiCompatibleLlm,
  type EngineEvent, type Host, type PreparedCall,
} from 'context-workbench';

export async function embed(): Promise<number> {
  const llm = openAiCompatibleLlm({ url: 'http://127.0.0.1:8080', model: 'local' });
  const host: Host = nodeFsHost('.', { llm });
  const engine = await ContextEngine.create(host, { window: 128_000, workbench: { keep_turns: 2 } });
  const tokens: number = engine.countTokens('hello');
  engine.record({ role: 'user', content: 'fix it' });
  engine.recordToolResult({ call_id: 'c1', name: 'Bash', status: 'ok', output: 'ok', exit_code: 0 });
  const call: PreparedCall = await engine.prepareCall({ system_prompt: 'agent', tools: engine.goalTools() }, 'anthropic');
  if (call.format === 'anthropic') call.request.messages.forEach((m) => m);
  if (call.format === 'react') call.request.toUpperCase();
  const stop = engine.subscribe((event: EngineEvent) => {
    if (event.type === 'goal_added') event.goal.description.trim();
  }, { since: 0 });
  stop();
  const plan = engine.callGoalTool('goal', { add: 'a, b' });
  const ok: boolean = plan.is_error;
  const board = engine.stateBoard();
  board.confirmed_facts.map((f) => f.evidence);
  try {
    await engine.compactSpan('x');
    await engine.compactTail();
  } catch (e) {
    if (e instanceof ContextWorkbenchError) e.code.toUpperCase();
  }
  const { engine: resumed, notes } = await ContextEngine.open(host, undefined, { traceId: 'session-1' });
  const saved: number = (await resumed.persist()).files_written + notes.length;
  const store = await TraceStore.create(host, { root: '.trace' });
  const traces = await store.listTraces();
  traces.traces.map((t) => t.trace_id + saved);
  const replay = await ReplaySession.create('a.jsonl', '');
  const step = replay.step();
  if (step) step.call.messages.map((m) => m.replaces?.[0]);
  replay.dispose();
  engine.dispose();
  // @ts-expect-error counts are numbers, never BigInt
  const big: bigint = engine.countTokens('x');
  // @ts-expect-error a message needs a role
  engine.record({ content: 'x' });
  // @ts-expect-error formats are named
  await engine.prepareCall({}, 'xml');
  // @ts-expect-error hosts need every method
  await ContextEngine.create({ complete: async () => ({ text: '' }) });
  memoryHost({ files: { 'a.txt': 'x' } });
  return tokens + (ok ? 1 : 0) + Number(big);
}
