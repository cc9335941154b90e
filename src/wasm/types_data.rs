//! TypeScript declarations of the engine's data as JavaScript receives it: the serde form of
//! the Rust types (the persisted JSON's snake_case field names), emitted into the `.d.ts`.
//! The npm package's tests check these shapes at run time and type-check a use of them.

use wasm_bindgen::prelude::wasm_bindgen;

#[wasm_bindgen(typescript_custom_section)]
const MESSAGES_TS: &'static str = r#"
export type Role = "system" | "user" | "assistant" | "tool" | "summary";
export interface ToolCall { id: string; name: string; /** As the model wrote them (usually JSON). */ arguments: string; }
export interface ToolResult {
  call_id: string; name: string; status: "ok" | "error"; output: string; stderr?: string; exit_code?: number;
}
export type ContentPart =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string; signature?: string }
  | ({ type: "tool_call" } & ToolCall)
  | ({ type: "tool_result" } & ToolResult)
  /** A provider's block the engine keeps as it came (an image, a document): `json` is sent back as it is. */
  | { type: "opaque"; kind: string; json: string; tokens: number };

/** A recorded message (R1.2). */
export interface Message {
  id: string; trace_id: string; branch_id?: string; role: Role; sequence: number;
  goal_id?: string; span_id?: string; tool_call_id?: string; content: ContentPart[];
  description: string; tokens?: number; cost?: number; created_at_ms: number;
}
/** A message to record: `content` is a string (one text part) or content parts. */
export interface MessageInput {
  role: Role; content: string | ContentPart[]; goal_id?: string; span_id?: string; tool_call_id?: string;
}
export interface Span { id: string; goal: string; start: string; end?: string; outcome?: string; }
export interface Trace {
  version: number; id: string; mission: string; metadata: Record<string, unknown>; messages: Message[]; spans: Span[];
}
export interface RepairNote { message: string; what: string; }
"#;

#[wasm_bindgen(typescript_custom_section)]
const PROMPT_TS: &'static str = r#"
/** A tool the model may call, as a JSON-schema function. */
export interface ToolSpec { name: string; description: string; parameters: Record<string, unknown>; }
/** What the embedder supplies for one call besides the recorded history. */
export interface CallInput {
  system_prompt?: string; tools?: ToolSpec[];
  /** The dynamic tail (reminders …), after the plan and board the engine adds. */
  tail?: string[];
  /** Put the tail at the end of the system prompt instead (R2.4); costs cache. */
  tail_in_system?: boolean;
}
export type Layer = "system" | "rules" | "history" | "input" | "tail";
export interface PromptMessage {
  role: Role; content: ContentPart[]; layer: Layer; /** The recorded message it renders (`raw#<id>`). */ source?: string;
}
export interface PromptView { messages: PromptMessage[]; tools: ToolSpec[]; }
export interface RewriteCost {
  kept_prefix_tokens: number; tokens_before: number; tokens_after: number;
  one_off_cost: number; saving_per_call: number; horizon: number;
}
/** A rewrite of earlier prompt (R5.4, R5.9) with its cost. */
export interface RewriteRecord {
  call: number; mechanism: string; position: "tail" | "middle"; start: number; end: number;
  reasons: string[]; cost: RewriteCost; output_tokens: number; notes: string[];
}
export interface Assembly {
  view: PromptView;
  /** Exact tokens in the configured encoding, chat overhead included. */
  tokens: number;
  tail_rewrite_tokens: number;
  /** Byte offset of the first change since the previous call; `null` on the first call or none. */
  first_changed_byte: number | null;
  expected_cached_tokens: number;
  rewrites: RewriteRecord[];
  notes: string[];
}
export type PromptFormat = "openai" | "anthropic" | "react";
/** OpenAI chat completions: `{messages, tools?}`. */
export interface OpenAiRequest { messages: Array<Record<string, unknown>>; tools?: Array<Record<string, unknown>>; }
/** Anthropic messages: `{system?, messages, tools?}` with cache breakpoints. */
export interface AnthropicRequest {
  system?: Array<Record<string, unknown>>; messages: Array<Record<string, unknown>>; tools?: Array<Record<string, unknown>>;
}
/** An assembled prompt and its request in one serialization (R2.3). */
export type PreparedCall = Assembly & (
  | { format: "openai"; request: OpenAiRequest }
  | { format: "anthropic"; request: AnthropicRequest }
  | { format: "react"; request: string }
);
/** A tool output to compress (R3). */
export interface ToolOutputInput {
  tool: string; arguments?: string; output: string; stderr?: string; exit_code?: number; is_error?: boolean;
  /** The raw trace message that keeps the original, cited as `raw#<id>`. */
  raw_id?: string;
}
export type Family = "ls" | "glob" | "grep" | "read" | "edit" | "write" | "bash" | "todo_write" | "default";
export interface Compressed {
  family: Family; text: string; tokens_in: number; tokens_out: number; notes: string[]; structured?: unknown;
}
"#;

#[wasm_bindgen(typescript_custom_section)]
const STATE_TS: &'static str = r#"
export interface Anchor { path: string; start_line: number; end_line: number; snippet: string; }
/** A claim with pointers that prove it (`file:src/a.py:L40-L55`, `cmd#12 exit=1`). */
export interface Fact { text: string; evidence: string[]; }
/** The state board (R5.2). */
export interface StateBoard {
  version: number; current_goal: string; goal_shift_reason: string | null; confirmed_facts: Fact[];
  unknown: string[]; open_questions: string[]; anchors: Anchor[]; exec_assertions: string[];
  status: string; next_actions: string[]; conflicts: string[];
}
/** STATE_DELTA (R5.3); empty fields leave the board as it is. */
export interface StateDelta {
  current_goal?: string; goal_shift_reason?: string; confirmed_facts?: Fact[]; unknown?: string[];
  open_questions?: string[]; anchors?: Anchor[]; exec_assertions?: string[]; status?: string; next_actions?: string[];
}
/** One COMPRESSED_TURNS block (R5.4): raw messages `start..end` (indices) shown as `text`, then
 * the STATE_DELTA `delta_text` it produced. */
export interface TailBlock {
  start: number; end: number; text: string; delta_text: string; compactor: "extractive" | "llm" | string;
  content: {
    version: number;
    replaces: { start_turn: number; end_turn: number; first_message: string; last_message: string; span_id?: string };
    goal: string; what_we_learned: Array<{ conclusion: string; evidence: string[] }>; anchors: Anchor[];
    exec_assertions: string[]; open_questions: string[]; next_actions: string[];
    files?: string[]; names?: string[]; originals?: [string, string];
  };
  delta: StateDelta & { version: number };
}
/** How the prompt shows the recorded history: what replaced what, and at what cost (R5.1, R5.9). */
export interface HistoryView {
  /** Tool outputs of messages before this index are in finished rounds. */ settled: number;
  /** History forms of settled tool outputs, by message index. */ forms: Record<string, string>;
  summary: { text: string; start: number; end: number; truncated: boolean } | null;
  /** Tool messages whose output the prune stage replaced. */ pruned: number[];
  failed_compactions: number; blocks: TailBlock[]; board: StateBoard;
  /** Code lines the blocks already show: path → line number → text. */ anchored: Record<string, Record<string, string>>;
  rewrites: RewriteRecord[];
}
export interface StateUpdate {
  version: number; message: string; rejected: Array<{ item: string; reason: string }>; conflicts: string[]; notes: string[];
}
"#;

#[wasm_bindgen(typescript_custom_section)]
const GOALS_TS: &'static str = r#"
export interface GoalStats { message_count: number; total_tokens: number; total_cost: number; /** `read → edit × 2` */ preview?: string; }
export type GoalStatus = "pending" | "in_progress" | "completed" | "abandoned";
export interface Goal {
  id: string; parent_id?: string; branch_id?: string; type: "normal" | "explore_start" | "explore_merge";
  description: string; reason: string; status: GoalStatus; summary?: string; branch_ids?: string[];
  explore_start_id?: string; merge_summary?: string; selected_branch?: string;
  self_stats: GoalStats; cumulative_stats: GoalStats;
}
export interface Branch {
  id: string; explore_start_id: string; description: string; status: "exploring" | "completed"; summary?: string;
}
/** The goal tree in its persisted form (`goal.json`). */
export interface GoalTree {
  version: number; mission: string; branch_id?: string; current_id?: string; goals: Goal[];
  branches?: Branch[]; next_id: number; next_branch: number; completed: boolean;
}
export interface GoalPlan {
  /** The plan block of the tail (R2.2). */ prompt: string;
  /** The brief todo list. */ todo: string;
  /** Every goal's number by id, abandoned ones included. */ numbers: Record<string, string>;
  /** The numbers the model sees. */ display_numbers: Record<string, string>;
}
export interface GoalToolResult {
  /** The tool result for the model. */ text: string;
  /** The call was refused; the tree is unchanged. */ is_error: boolean;
  /** Branches an `explore` call started, for the host to run as sub-agents. */ branches: string[];
}
/** What `recall` returns: the original (numbered lines), or what was wrong and what exists. */
export interface RecallResult {
  /** The tool result for the model. */ text: string;
  /** The call was refused; nothing changed either way. */ is_error: boolean;
}
export interface Step {
  step_id: string; step_type: "goal" | "thought" | "evaluation" | "response" | "action" | "result";
  status: "planned" | "in_progress" | "completed" | "failed" | "skipped"; sequence?: number; parent_id?: string;
  description: string; data?: Record<string, unknown>; summary?: string; duration_ms?: number; cost?: number;
  tokens?: number; created_at_ms?: number;
}
export interface AffectedGoal {
  goal_id: string; status?: GoalStatus; summary?: string; self_stats?: GoalStats; cumulative_stats: GoalStats;
}
/** An event (R8.2): ids increase by one from 1. */
export type EngineEvent = { id: number } & (
  | { type: "goal_added"; goal: Goal; parent_id?: string }
  | { type: "goal_updated"; branch_id?: string; goal_id: string; updates: { status: GoalStatus; summary?: string };
      affected_goals: AffectedGoal[]; current_id?: string }
  | { type: "goal_removed"; branch_id?: string; goal_id: string; removed: string[]; affected_goals: AffectedGoal[];
      current_id?: string }
  | { type: "message_added"; message_id?: string; goal_id: string; affected_goals: AffectedGoal[] }
  | { type: "trace_completed"; stats: GoalStats }
  | { type: "branch_started"; explore_start_id: string; branch: Branch }
  | { type: "branch_goal_added"; branch_id: string; goal: Goal }
  | { type: "branch_message_added"; branch_id: string; message_id?: string; goal_id: string; affected_goals: AffectedGoal[] }
  | { type: "branch_completed"; branch_id: string; summary: string }
  | { type: "explore_completed"; explore_start_id: string; merge_goal_id: string; merge_summary: string;
      selected_branch?: string }
);
"#;

#[wasm_bindgen(typescript_custom_section)]
const REPLAY_TS: &'static str = r#"
export interface TrajectoryInfo { name: string; format: string; messages: number; calls: number; notes: string[]; }
export type ViewKind = "system" | "rules" | "message" | "block" | "delta" | "summary" | "tail";
export interface ViewMessage {
  role: "system" | "user" | "assistant" | "tool"; kind: ViewKind;
  /** The id of its text (see `ReplayStep.texts`). */ text: number;
  tokens: number;
  /** The index of the raw message it renders. */ source?: number;
  /** Shown otherwise than recorded (a pruned output). */ altered?: boolean;
  /** For a block or summary: the raw messages `[start, end)` it stands for. */ replaces?: [number, number];
}
export interface CallView {
  call: number; history: number; tokens: number; /** The recorded history's tokens at this call (the unmanaged prompt). */ raw_tokens: number; expected_cached_tokens: number; messages: ViewMessage[];
  rewrites: RewriteRecord[]; notes: string[]; fallback?: string; board_version: number;
}
export interface ReplayStep { call: CallView; /** Id of the first new text. */ texts_from: number; texts: string[]; }
/** One strategy's totals over a trajectory, as `workbench replay` reports them (cost in uncached-input-token units). */
export interface ReplayTotals {
  calls: number; prompt_tokens: number; cached: number; written: number; aux_output_tokens: number; cost: number;
  peak_prompt_tokens: number; above_window: number; rewrites: number; fallbacks: number;
  edits_counted: number; edits_kept: number; refs_counted: number; refs_kept: number;
}
/** The replay's figures: the unmanaged prompt's and the workbench's. */
export interface ReplaySummary { raw: ReplayTotals; workbench: ReplayTotals; }
"#;

#[wasm_bindgen(typescript_custom_section)]
const STORE_TS: &'static str = r#"
/** What a save wrote. */
export interface PersistReport { files_written: number; bytes_written: number; /** Secrets replaced. */ redactions: number; }
/** A trace's `meta.json`. */
export interface TraceMeta {
  version: number; trace_id: string; mission: string; created_at: number; updated_at: number; message_count: number;
  status: "running" | "completed" | string; branch_count: number; event_count: number; calls: number;
}
export interface GoalTreeView { mission: string; current_id: string | null; goals: Goal[]; }
export type BranchMeta = Branch & { cumulative_stats: GoalStats; goal_count: number; message_count: number };
export interface MessagePreview { message_id: string; role: Role; content: string; created_at: number; }
export interface TraceList { traces: TraceMeta[]; notes?: string[]; }
export interface TraceDetail {
  trace: TraceMeta; goal_tree: GoalTreeView; branches: Record<string, BranchMeta & { last_message: MessagePreview | null }>;
  last_event_id: number; notes?: string[];
}
export interface GoalMessages { trace_id: string; goal_id: string; messages: Message[]; notes?: string[]; }
export type BranchDetail = BranchMeta & { goal_tree: GoalTreeView; messages: Message[]; notes?: string[] };
export interface EventsPage { trace_id: string; events: EngineEvent[]; last_event_id: number; notes?: string[]; }
/** One line of a proxied session's `calls.jsonl`: what the agent sent, what went upstream, what the provider reported. */
export interface ProxyCallRecord {
  call: number; at_ms: number; model: string; /** The agent's User-Agent product (`claude-cli/2.1.328`), or empty. */ agent: string;
  stream: boolean; /** The engine's prompt went upstream (else `notes` say why not). */ managed: boolean;
  messages: number; new_messages: number; /** Prompt tokens the agent sent. */ client_tokens: number;
  /** Prompt tokens the upstream received. */ prompt_tokens: number; expected_cached_tokens: number;
  first_changed_byte?: number; rewrites: string[]; status?: number; completed: boolean;
  usage?: { input_tokens: number; cache_read_tokens: number; cache_write_tokens: number; output_tokens: number };
  notes: string[];
}
"#;
