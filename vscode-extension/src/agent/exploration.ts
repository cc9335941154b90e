// Explore branches (R6.5): each branch of an `explore` call runs here as a sub-agent on the same
// model and tools, its messages and plan kept apart by the engine, up to `parallelBranches` at a
// time. The merge summary of all of them is the explore call's result: all the main line keeps.
import type { BranchLine, EngineApi } from '../engine/engineApi';
import type { ChatModel } from '../llm/types';
import { ModelError } from '../llm/types';
import type { CodingTools } from './codingTools';
import { toolCallLine } from './outcomeText';
import { CODING_TOOLS } from './toolSpecs';
import { errorText } from '../errorText';

export const BRANCH_PROMPT = [
  'You are a coding agent exploring one approach of a larger task, through tools, in the user\'s workspace.',
  'Your first message says which approach; find out what the main agent needs to choose it or not.',
  'Paths are relative to the workspace root. End with a short answer: what you found, tried and recommend.',
  'That answer is all the main agent sees of your work.',
].join('\n');

export interface ExplorationOptions {
  engine: EngineApi;
  model: ChatModel;
  tools: CodingTools;
  /** Most model calls each branch may make. */
  maxRounds: number;
  /** Most branches running at once. */
  parallelBranches: number;
}

/** Run the branches `explore` started, then merge them; the merge summary. */
export async function runExploration(options: ExplorationOptions, branches: string[], notice: (message: string) => void, signal?: AbortSignal): Promise<string> {
  const waiting = [...branches];
  const worker = async () => {
    for (let id = waiting.shift(); id !== undefined; id = waiting.shift()) {
      const branch = options.engine.branch(id);
      notice(`Branch ${id} started.`);
      const summary = await branchAnswer(options, branch, notice, signal).catch((e) => `The branch failed: ${errorText(e)}`);
      branch.finish(summary);
      notice(`Branch ${id} finished: ${firstLine(summary)}`);
    }
  };
  const running = Math.max(1, Math.min(options.parallelBranches, branches.length));
  await Promise.all(Array.from({ length: running }, worker));
  return options.engine.mergeExplore();
}

/**
 * Close an exploration a previous run left open (the window closed while its branches ran): no
 * branch of it runs any more, so each open one ends saying so and the exploration merges, and
 * the plan can explore again. What was done, for the user; nothing when none was open.
 */
export function closeInterruptedExploration(engine: EngineApi): string | undefined {
  const open = (engine.goalTree().branches ?? []).filter((b) => b.status === 'exploring').map((b) => b.id);
  if (open.length === 0) return undefined;
  try {
    for (const id of open) engine.branch(id).finish(INTERRUPTED);
    engine.mergeExplore();
    return `An exploration an earlier run left open is closed: branch${open.length > 1 ? 'es' : ''} ${open.join(', ')} ended as interrupted.`;
  } catch (e) {
    return `An exploration an earlier run left open could not be closed: ${errorText(e)}`;
  }
}

/** One branch's loop: its answer once it replies without tool calls, or why it stopped. */
async function branchAnswer(options: ExplorationOptions, branch: BranchLine, notice: (message: string) => void, signal?: AbortSignal): Promise<string> {
  const goalToolNames = new Set(branch.goalTools().map((t) => t.name));
  const offered = [...CODING_TOOLS, ...branch.goalTools()];
  for (let round = 0; round < options.maxRounds; round++) {
    if (signal?.aborted) return CANCELLED;
    const call = await branch.prepareCall({ systemPrompt: BRANCH_PROMPT, tools: offered });
    let reply;
    try {
      reply = await options.model.chat({ messages: call.messages, tools: call.tools, signal });
    } catch (e) {
      if (e instanceof ModelError && e.code === 'cancelled') return CANCELLED;
      throw e;
    }
    branch.recordAssistant(reply.text, reply.toolCalls);
    if (reply.toolCalls.length === 0) return reply.text.trim() || 'The branch ended without an answer.';
    for (const toolCall of reply.toolCalls) {
      notice(`Branch ${branch.id}: ${toolCallLine(toolCall.name, toolCall.arguments)}`);
      const run = goalToolNames.has(toolCall.name)
        ? { ...branch.callGoalTool(toolCall.name, toolCall.arguments), exitCode: undefined }
        : await options.tools.run(toolCall.name, toolCall.arguments, signal).then((r) => ({ text: r.output, isError: r.isError, exitCode: r.exitCode }));
      branch.recordToolResult({ callId: toolCall.id, name: toolCall.name, output: run.text, isError: run.isError, exitCode: run.exitCode });
    }
  }
  return `The branch stopped after ${options.maxRounds} model calls without an answer.`;
}

const CANCELLED = 'The branch was cancelled before it finished.';
const INTERRUPTED = 'The branch was interrupted before it finished (its run ended with the window).';

function firstLine(text: string): string {
  const line = text.split('\n')[0];
  return line.length > 100 ? `${line.slice(0, 97)}…` : line;
}
