// The agent loop: the engine assembles every prompt, the model answers, tools run, and every
// message and result goes back into the engine. No context decisions are made here.
import type { EngineApi, PreparedCall } from '../engine/engineApi';
import type { ChatModel, ChatUsage, ToolCall } from '../llm/types';
import { ModelError } from '../llm/types';
import type { CodingTools, ToolRun } from './codingTools';
import { closeInterruptedExploration, runExploration } from './exploration';
import { CODING_TOOLS } from './toolSpecs';
import { errorText } from '../errorText';

export const SYSTEM_PROMPT = [
  'You are a coding agent working in the user\'s workspace through tools.',
  'Read before you edit; make the smallest change that does the task; run commands only when they help.',
  'Keep a plan with the goal tools: set goals for the task, mark each done or abandoned as you go.',
  'Paths are relative to the workspace root. When the task is done, answer with a short summary.',
].join('\n');

/** Where a run reports what happens, for the chat view, the output channel and the views. */
export interface TaskSink {
  text(delta: string): void;
  toolStarted(call: ToolCall): void;
  toolFinished(call: ToolCall, run: ToolRun): void;
  prepared(call: PreparedCall): void;
  usage(usage: ChatUsage | undefined, call: PreparedCall): void;
  notice(message: string): void;
}

export type TaskOutcome =
  | { kind: 'answered'; text: string; rounds: number }
  | { kind: 'round_limit'; rounds: number }
  | { kind: 'cancelled'; rounds: number }
  | { kind: 'failed'; rounds: number; message: string };

export interface AgentLoopOptions {
  engine: EngineApi;
  model: ChatModel;
  tools: CodingTools;
  maxRounds: number;
  /** Most explore branches running at once (default 2). */
  parallelBranches?: number;
  systemPrompt?: string;
}

export async function runTask(options: AgentLoopOptions, task: string, sink: TaskSink, signal?: AbortSignal): Promise<TaskOutcome> {
  const { engine, model, tools, maxRounds } = options;
  const goalToolNames = new Set(engine.goalTools().map((t) => t.name));
  const recallTool = engine.recallTool();
  const offered = [...CODING_TOOLS, ...engine.goalTools(), recallTool];
  const closed = closeInterruptedExploration(engine);
  if (closed) sink.notice(closed);
  await engine.recordUserInput(task);
  let rounds = 0;
  while (rounds < maxRounds) {
    if (signal?.aborted) return { kind: 'cancelled', rounds };
    rounds++;
    let call: PreparedCall;
    try {
      call = await engine.prepareCall({ systemPrompt: options.systemPrompt ?? SYSTEM_PROMPT, tools: offered });
    } catch (e) {
      return { kind: 'failed', rounds, message: `the engine could not assemble the prompt: ${errorText(e)}` };
    }
    sink.prepared(call);
    for (const note of call.notes) sink.notice(note);
    let reply;
    try {
      reply = await model.chat({ messages: call.messages, tools: call.tools, onText: (d) => sink.text(d), signal });
    } catch (e) {
      if (e instanceof ModelError && e.code === 'cancelled') return { kind: 'cancelled', rounds };
      return { kind: 'failed', rounds, message: errorText(e) };
    }
    if (reply.usage) engine.reportUsage(reply.usage);
    sink.usage(reply.usage, call);
    engine.recordAssistant(reply.text, reply.toolCalls);
    if (reply.toolCalls.length === 0) {
      // A plain reply with goals open goes on: the next prompt reminds the model of them.
      if (!engine.replyEndsTask()) {
        sink.notice('The plan still has open goals: the agent goes on.');
        continue;
      }
      // The task is done: its trace lists as completed (the next task reopens it).
      engine.completeTrace();
      return { kind: 'answered', text: reply.text, rounds };
    }
    for (const toolCall of reply.toolCalls) {
      sink.toolStarted(toolCall);
      const run = goalToolNames.has(toolCall.name)
        ? await goalToolRun(options, toolCall, sink, signal)
        : toolCall.name === recallTool.name
          ? goalRun(engine.recall(toolCall.arguments))
          : await runCodingTool(engine, tools, toolCall, signal);
      engine.recordToolResult({ callId: toolCall.id, name: toolCall.name, output: run.output, isError: run.isError, exitCode: run.exitCode });
      sink.toolFinished(toolCall, run);
    }
  }
  return { kind: 'round_limit', rounds };
}

function goalRun(answer: { text: string; isError: boolean }): ToolRun {
  return { output: answer.text, isError: answer.isError };
}

/** A plan tool's run; an `explore` call runs its branches, and its result is their merge summary. */
async function goalToolRun(options: AgentLoopOptions, call: ToolCall, sink: TaskSink, signal?: AbortSignal): Promise<ToolRun> {
  const answer = options.engine.callGoalTool(call.name, call.arguments);
  if (answer.isError || answer.branches.length === 0) return goalRun(answer);
  const exploration = { ...options, parallelBranches: options.parallelBranches ?? 2 };
  try {
    return { output: await runExploration(exploration, answer.branches, (m) => sink.notice(m), signal), isError: false };
  } catch (e) {
    return { output: `The exploration could not merge: ${errorText(e)}`, isError: true };
  }
}

/** A coding tool's run; a read also tells the engine the file's time, for its freshness note. */
async function runCodingTool(engine: EngineApi, tools: CodingTools, call: ToolCall, signal?: AbortSignal): Promise<ToolRun> {
  const run = await tools.run(call.name, call.arguments, signal);
  if (call.name === 'read_file' && !run.isError && run.mtimeMs !== undefined && run.path) {
    const note = engine.observeRead(run.path, run.mtimeMs);
    if (note) return { ...run, output: `${note}\n${run.output}` };
  }
  return run;
}
