// What the extension asks of the context engine. Every answer is the engine's: the extension
// holds no context logic, it only carries these values between VS Code and the model.
import type { ToolSpec } from '../agent/toolSpecs';
import type { WireMessage, WireTool } from '../llm/types';

/** One assembled prompt, in the OpenAI chat serialization, with what it costs. */
export interface PreparedCall {
  messages: WireMessage[];
  tools: WireTool[];
  /** Exact prompt tokens, in the engine's count. */
  tokens: number;
  /** Tokens of the leading messages identical to the previous call's (the cacheable prefix). */
  expectedCachedTokens: number;
  /** Byte of the first difference from the previous call's prompt, if any. */
  firstChangedByte?: number;
  /** Rewrites of earlier prompt made for this call (compactions, prunes). */
  rewrites: Array<{ mechanism: string; position: string }>;
  /** What the engine had to degrade or tell the user. */
  notes: string[];
  /** The engine's layered view, for the Prompt View: each message with its layer, the history
   * message it renders (`source`) or the range a compaction block stands for (`replaces`). */
  view: { messages: Array<{ role: string; layer: string; source?: string; replaces?: string; content: unknown[] }> };
}

export interface GoalToolAnswer { text: string; isError: boolean; branches: string[] }

/** A tool's output as the compressor takes it. */
export interface ToolOutput { tool: string; arguments: string; output: string; exitCode?: number }

export interface CompressedOutput { text: string; family: string; tokensIn: number; tokensOut: number; notes: string[] }

/** Stats of a goal as the engine keeps them. */
export interface GoalStats { message_count: number; total_tokens: number; total_cost: number; preview?: unknown }

/** One goal of the engine's goal tree (the `goal.json` form). */
export interface GoalData {
  id: string | number;
  parent_id?: string | number;
  type: 'normal' | 'explore_start' | 'explore_merge';
  description: string;
  status: 'pending' | 'in_progress' | 'completed' | 'abandoned';
  summary?: string;
  self_stats?: GoalStats;
  cumulative_stats?: GoalStats;
}

/** A revision of the agent's plan: the item it starts at, the goals kept and revised, the open ones it dropped. */
export interface PlanRevisionData { from_item: number; kept: (string | number)[]; revised: (string | number)[]; dropped: string[] }

/** The phase of the work (R6.8): planning, executing the top-level goal at `step` (from 0), completed. */
export type PhaseData = { phase: 'planning' } | { phase: 'executing'; step: number } | { phase: 'completed' };
/** Where the work stands: its phase and how many steps the plan has (the `n` of "step k of n"). */
export type Progress = { phase: PhaseData; steps: number };

/** A branch of an exploration (R6.5): its own line of work, summarised when it finished. */
export interface BranchData { id: string; explore_start_id: string | number; description: string; status: 'exploring' | 'completed'; summary?: string }

/** The engine's goal tree (the `goal.json` form). */
export interface GoalTreeData { mission: string; current_id?: string | number; goals: GoalData[]; completed?: boolean; revisions?: PlanRevisionData[]; branches?: BranchData[] }

/** What the model's tool call did, as the engine records it. */
export interface ToolResultInput { callId: string; name: string; output: string; isError: boolean; exitCode?: number }

/**
 * One running branch of an `explore` call, which the host runs as a sub-agent: its prompt holds
 * its mission, its own messages and its own plan, never the main line's.
 */
export interface BranchLine {
  readonly id: string;
  /** The plan tools offered in a branch: all but `explore` (branches do not nest). */
  goalTools(): ToolSpec[];
  prepareCall(input: { systemPrompt: string; tools: ToolSpec[] }): Promise<PreparedCall>;
  recordAssistant(text: string, toolCalls: Array<{ id: string; name: string; arguments: string }>): void;
  recordToolResult(result: ToolResultInput): void;
  callGoalTool(name: string, argumentsJson: string): { text: string; isError: boolean };
  /** The branch ended with `summary` (clipped by the engine); true when it was the exploration's last. */
  finish(summary: string): boolean;
}

export interface EngineApi {
  readonly traceId: string;
  countTokens(text: string): number;
  recordUserInput(text: string): Promise<void>;
  recordAssistant(text: string, toolCalls: Array<{ id: string; name: string; arguments: string }>): void;
  recordToolResult(result: ToolResultInput): void;
  /** A note for the read result when the file changed since the agent last read it. */
  observeRead(path: string, mtimeMs: number): string | undefined;
  prepareCall(input: { systemPrompt: string; tools: ToolSpec[] }): Promise<PreparedCall>;
  reportUsage(usage: { promptTokens: number; completionTokens: number; cachedTokens?: number }): void;
  goalTools(): ToolSpec[];
  callGoalTool(name: string, argumentsJson: string): GoalToolAnswer;
  /** `recall`: the originals of what the prompt shows compressed, offered to the model beside the plan tools. */
  recallTool(): ToolSpec;
  recall(argumentsJson: string): { text: string; isError: boolean };
  goalTree(): GoalTreeData;
  /** A branch the `explore` call just started. */
  branch(id: string): BranchLine;
  /** Merge the exploration whose branches all finished: the merge summary, the explore call's result. */
  mergeExplore(): string;
  /** Call `listener` on every engine event (goal changes, messages counted); returns the unsubscribe. */
  onEvent(listener: () => void): () => void;
  compressToolOutput(input: ToolOutput): CompressedOutput;
  /** Spans (a goal's work) that ended, newest first, for the user to compact now. */
  endedSpans(): Array<{ id: string; goal: string; outcome?: string }>;
  /** Compact an ended span now; what it did, for the user. */
  compactSpan(id: string): Promise<string>;
  /** Compact the uncompacted tail now; what it did, for the user (an error when there is nothing to compact). */
  compactTail(): Promise<string>;
  /** What the views show beside the goal tree: the numbers the model sees for each goal id (abandoned ones left out) and the phase of the work (R6.8). */
  planMarks(): { numbers: Record<string, string>; progress: Progress };
  /** Whether the model's plain reply just recorded ends the task: not while goals are open, until the model, reminded of them, answers plainly again (R6.8). */
  replyEndsTask(): boolean;
  /** The raw trace as JSON text. */
  traceJson(): string;
  /** The raw original of a history message (`raw#<id>`) as text, parts joined as the prompt view shows them. */
  rawMessageText(id: string): string | undefined;
  /** The task is answered: the trace lists as completed until the next user input. */
  completeTrace(): void;
  /** Write what changed since the last save to the trace folder. */
  persist(): Promise<void>;
  dispose(): void;
}

/** A trace kept under the trace folder. */
export interface TraceSummary { traceId: string; task: string; detail: string }

/** The engine's constructors over a host: a new trace, a resumed one, the list of those kept. */
export interface EngineBackend {
  create(host: unknown, config: Record<string, unknown>): Promise<EngineApi>;
  /** Resume `traceId` from the trace folder; `notes` say what was repaired or skipped. */
  open(host: unknown, config: Record<string, unknown>, traceId: string): Promise<{ engine: EngineApi; notes: string[] }>;
  /** The traces kept under `root`, and notes on what could not be listed (a newer format, damage). */
  listTraces(host: unknown, root: string): Promise<{ traces: TraceSummary[]; notes: string[] }>;
  /** Exact token counts in the default encoding, without a trace. */
  countTokens(text: string): Promise<number>;
  /** The compressor under `config`, on an engine of its own: no trace, no files, no model. */
  compressToolOutput(config: Record<string, unknown>, input: ToolOutput): Promise<CompressedOutput>;
}
