// Generated from the Rust types by src/ts_types.rs (ts-rs): do not edit.
// Regenerate with `UPDATE_TS_TYPES=1 cargo test --lib ts_types`.

/**
 * A goal touched by an event: its cumulative stats always, the rest when the event changed it.
 */
export type AffectedGoal = { goal_id: GoalId, status?: GoalStatus, summary?: string, self_stats?: GoalStats, cumulative_stats: GoalStats, };

/**
 * A code anchor: a snippet copied from observed content, with where it came from.
 */
export type Anchor = { path: string, start_line: number, end_line: number, snippet: string, };

/**
 * An archived summary (R4.5), or the notice of a hard truncation when the summary failed (R4.6).
 */
export type ArchivedSummary = {
  /**
   * The summary text as the prompt shows it.
   */
  text: string,
  /**
   * Raw messages `start..end` are replaced by it.
   */
  start: number, end: number,
  /**
   * No summary could be made: the range was dropped, `text` says so.
   */
  truncated: boolean,
};

/**
 * One assembled prompt and what it costs; saved as a trace's `prompt.json` and read back by
 * viewers ([`crate::store::live`]).
 */
export type Assembly = {
  /**
   * The call's number ([`CallInput::call`]); 0 before the engine numbered it (a `prompt.json`
   * of an earlier build, a branch's prompt).
   */
  call: number, view: PromptView,
  /**
   * Exact tokens in the configured encoding, chat overhead included.
   */
  tokens: number,
  /**
   * What the placement of the dynamic tail costs (R2.4): the tokens re-sent without the cache
   * whenever the tail changes. At the tail, the tail's own tokens; in the system prompt, the
   * whole prompt, since everything after its first change is re-sent. (Absent from the
   * `prompt.json` that earlier builds of the VS Code extension wrote.)
   */
  tail_rewrite_tokens: number,
  /**
   * Byte offset of the first difference from the previous call's prompt (its canonical JSON);
   * `None` on the first call or when nothing changed.
   */
  first_changed_byte: number | null,
  /**
   * What a provider's prefix cache can serve of this prompt (R5.5's expected cached share is
   * this over `tokens`): the tokens of the tools and the leading messages that lie wholly
   * before the first changed byte (none when the tools changed). A message's layer is not
   * sent, so a user input that became history still counts.
   */
  expected_cached_tokens: number,
  /**
   * Rewrites of earlier prompt made for this call, with their cost (R5.4, R5.9).
   */
  rewrites: Array<RewriteRecord>,
  /**
   * What the assembly had to degrade (a tail over its budget, say).
   */
  notes: Array<string>,
  /**
   * This call's cost beside the agent's own prompt's, and the session's totals of both
   * (zero in a `prompt.json` of an earlier build).
   */
  cost: CallCost,
};

/**
 * A branch of an exploration, as the main line knows it (seed 002's `BranchContext` without
 * its own goal tree and messages, which the branch's own [`GoalTree`] holds).
 */
export type Branch = {
  id: BranchId, explore_start_id: GoalId, description: string, status: BranchStatus, summary?: string,
  /**
   * The agent's tool call that started it, when it is one of the agent's own sub-agents.
   */
  call_id?: string,
  /**
   * What the branch starts from beside its description (the `explore` call's `background`).
   */
  background?: string,
};

/**
 * One branch in detail: its metadata, its own goal tree and its messages.
 */
export type BranchDetail = {
  goal_tree: GoalTreeView, messages: Array<Message>, notes?: Array<string>, cumulative_stats: GoalStats, goal_count: number, message_count: number, id: BranchId, explore_start_id: GoalId, description: string, status: BranchStatus, summary?: string,
  /**
   * The agent's tool call that started it, when it is one of the agent's own sub-agents.
   */
  call_id?: string,
  /**
   * What the branch starts from beside its description (the `explore` call's `background`).
   */
  background?: string,
};

/**
 * A sub-agent branch (R6.5); `None` on a message means the main line.
 */
export type BranchId = string;

/**
 * A branch's `meta.json`: the main line's record of it and its totals.
 */
export type BranchMeta = {
  cumulative_stats: GoalStats, goal_count: number, message_count: number, id: BranchId, explore_start_id: GoalId, description: string, status: BranchStatus, summary?: string,
  /**
   * The agent's tool call that started it, when it is one of the agent's own sub-agents.
   */
  call_id?: string,
  /**
   * What the branch starts from beside its description (the `explore` call's `background`).
   */
  background?: string,
};

/**
 * A sub-agent's caller: its trace and the tool call that started the sub-agent.
 */
export type BranchOf = { trace_id: string, call_id: string, };

export type BranchStatus = "exploring" | "completed";

/**
 * A branch as the trace shows it.
 */
export type BranchSummary = {
  last_message: MessagePreview | null, cumulative_stats: GoalStats, goal_count: number, message_count: number, id: BranchId, explore_start_id: GoalId, description: string, status: BranchStatus, summary?: string,
  /**
   * The agent's tool call that started it, when it is one of the agent's own sub-agents.
   */
  call_id?: string,
  /**
   * What the branch starts from beside its description (the `explore` call's `background`).
   */
  background?: string,
};

/**
 * A cached prefix's lifetime at the provider (Anthropic's `cache_control.ttl`); every use
 * refreshes it.
 */
export type CacheTtl = "5m" | "1h";

/**
 * One call's cost beside the counterfactual: what the agent's own prompt (every message it
 * sent, as it sent them) would have cost with the provider's prefix cache. Prices are the
 * configuration's, relative to one uncached input token; totals run over the session so far,
 * this call included. The engine answers to them: it never lets its total pass the agent's
 * by a rewrite (docs/engine.md, "Never worse than none").
 */
export type CallCost = {
  /**
   * The agent's own prompt: its tokens, and those a prefix cache would serve (its leading
   * messages unchanged since its previous prompt).
   */
  agent_tokens: number, agent_cached_tokens: number,
  /**
   * This call's cost of the agent's prompt and of the prompt sent.
   */
  agent_cost: number, sent_cost: number,
  /**
   * The session's totals of both, this call included.
   */
  agent_total: number, sent_total: number,
  /**
   * The lifetime this call's cache breakpoints were written for ([`choose_cache_ttl`], or the
   * agent's own).
   */
  cache_ttl: CacheTtl,
  /**
   * The lifetime the agent's own breakpoints asked for (the provider's default when none).
   */
  agent_cache_ttl: CacheTtl,
  /**
   * What the sent prompt would have cost more with 5-minute breakpoints only (negative: the
   * 1-hour choice cost more), this call and the session's total.
   */
  ttl_saving: number, ttl_saving_total: number,
};

/**
 * One call in dollars: the agent's own request and what was sent (the same request for a call
 * the engine did not manage), and the prices used.
 */
export type CallDollars = {
  agent: number, sent: number, basis: CostBasis,
  /**
   * The price row (a model name) and the day its prices were read.
   */
  priced_as: string, prices_read_on: string,
  /**
   * What the cache lifetime the engine chose saved against 5-minute breakpoints only
   * ([`CallCost::ttl_saving`] at this model's input price; negative: it cost more).
   */
  ttl_saving?: number, note?: string | null,
};

/**
 * What the embedder supplies for one call besides the recorded history.
 */
export type CallInput = {
  /**
   * L1: the system prompt.
   */
  system_prompt?: string,
  /**
   * L1: the tools offered.
   */
  tools?: Array<ToolSpec>,
  /**
   * The dynamic tail: plan/todo recap, state board, reminders; redrawn every call.
   */
  tail?: Array<string>,
  /**
   * R2.4's option: put the tail at the end of the system prompt instead (it then moves the
   * first changed byte to the system prompt whenever it changes).
   */
  tail_in_system?: boolean,
  /**
   * The caller's number for this call, as its own records name it (the proxy's, as in
   * `calls.jsonl`); numbers only grow. The engine's own count of its calls by default.
   */
  call?: number | null,
  /**
   * The lifetime the caller's own cache breakpoints set (an agent's `"ttl"`): the call is
   * priced for it. Unset: five minutes, the provider's default, or with
   * `choose_cache_ttl` the engine's choice from the session's gaps between calls.
   */
  cache_ttl?: CacheTtl | null,
  /**
   * The caller writes its breakpoints for the lifetime the engine chooses
   * (`workbench::cost::choose_cache_ttl`), reported as the call's
   * `cost.cache_ttl` (the proxy does for Anthropic).
   */
  choose_cache_ttl?: boolean,
};

/**
 * A finished span to export: a child of its session (`parent_span_id`, a span never exported
 * itself), so every call of a session shares one trace.
 */
export type CallSpan = {
  /**
   * `chat MODEL`, as the GenAI conventions name an inference span.
   */
  name: string,
  /**
   * 32 lowercase hex digits, derived from the session's trace id.
   */
  trace_id: string,
  /**
   * 16 lowercase hex digits, derived from the session's trace id.
   */
  parent_span_id: string,
  /**
   * Milliseconds since the Unix epoch, by the host's clock.
   */
  start_ms: number, end_ms: number,
  /**
   * Why the call failed (a status other than 2xx, a reply cut short), for the span's
   * error status; `None`: it succeeded.
   */
  error: string | null,
  /**
   * In a fixed order.
   */
  attributes: Array<[string, SpanValue]>,
};

/**
 * What calls cost and saved: the sums of [`Totals`] and their ratios (its serde form).
 */
export type CallTotals = {
  /**
   * The agent's own cost less what was sent, in USD (negative: dearer).
   */
  saving_usd: number,
  /**
   * [`Totals::saving`].
   */
  saving: number,
  /**
   * [`saving_words`], and its part a status bar shows ([`saving_brief`]).
   */
  saving_text: string, saving_brief: string,
  /**
   * [`saving_lines`].
   */
  saving_lines: Array<string>,
  /**
   * [`Totals::cached_share`].
   */
  cached_share: number | null,
  /**
   * [`Totals::expected_cached_share`].
   */
  expected_cached_share: number | null,
  /**
   * [`cache_note`].
   */
  cache_note: string | null, sessions: number, calls: number, side_calls: number,
  /**
   * Prompt tokens the agent sent and the upstream received (the engine's counts).
   */
  client_tokens: number, prompt_tokens: number,
  /**
   * The calls whose usage the provider reported, and its reported prompt tokens and cache
   * reads over them.
   */
  reported_calls: number, reported_prompt_tokens: number, cache_read_tokens: number,
  /**
   * What the engine expected the provider to read from its cache, over the main calls.
   */
  expected_cached_tokens: number,
  /**
   * USD: what was sent and what the agent's own requests would have cost, over the priced
   * calls.
   */
  sent_usd: number, agent_usd: number,
  /**
   * What the cache lifetimes the engine chose saved against 5-minute breakpoints only, in USD.
   */
  ttl_saving_usd: number,
  /**
   * Calls priced from the engine's counts (no usable usage reported), calls without a price
   * (a model the price table lacks, a record older than the dollars), and calls no model
   * answered (no reply, or not a success: they cost nothing).
   */
  estimated_calls: number, unpriced_calls: number, no_model_calls: number,
};

/**
 * One replayed call.
 */
export type CallView = {
  /**
   * The recorded call's number, from 0.
   */
  call: number,
  /**
   * How many of the trajectory's messages the recorded call's prompt held.
   */
  history: number,
  /**
   * Prompt tokens the engine counted (the unmanaged history's when it fell back).
   */
  tokens: number,
  /**
   * Tokens of the recorded history's messages at this call: what the unmanaged prompt holds
   * (the chart's baseline).
   */
  raw_tokens: number, expected_cached_tokens: number, messages: Array<ViewMessage>, rewrites: Array<RewriteRecord>, notes: Array<string>,
  /**
   * The engine could not prepare this call: the unmanaged history stands in, and this says why.
   */
  fallback?: string,
  /**
   * The board's version after the call (its content: [`ReplaySession::board`]).
   */
  board_version: number,
};

/**
 * Why a connection to the upstream failed, as far as a shell's HTTP client tells.
 */
export type Cause = "cannot_connect" | "timed_out" | "other";

/**
 * One message of a [`CompletionRequest`], in the plain role/content shape every provider accepts.
 */
export type ChatMessage = { role: string, content: string, };

/**
 * The LLM's reply.
 */
export type Completion = { text: string, usage?: Usage, };

/**
 * A request to the host's LLM. The host picks the model; the engine says what it needs.
 */
export type CompletionRequest = {
  messages: Array<ChatMessage>,
  /**
   * Upper bound on the reply's tokens, when the engine needs one.
   */
  maxOutputTokens?: number,
  /**
   * How long the engine will wait; hosts should give up after it.
   */
  timeoutMs?: number,
  /**
   * Why the engine asks (`summary`, `state_update`, …), for the host's logs and routing.
   */
  purpose: string,
};

export type CompressConfig = {
  /**
   * LS: entries listed after the counts.
   */
  ls_entries: number,
  /**
   * Glob: hits listed after the count (R3.2: 5-10).
   */
  glob_hits: number,
  /**
   * Grep: matching lines kept, with file and line number.
   */
  grep_matches: number,
  /**
   * Read: lines of the read range kept at most …
   */
  read_lines: number,
  /**
   * … within this share of the read's tokens (at least `summary_tokens`).
   */
  read_share: number,
  /**
   * Edit: lines of the key snippet; a diff with more changed lines is summarised.
   */
  edit_snippet_lines: number,
  /**
   * Write: first lines of a written file kept (R3.2: 20-50).
   */
  write_lines: number,
  /**
   * Bash: last lines of stderr kept.
   */
  stderr_tail_lines: number,
  /**
   * Bash stdout and unknown tools' outputs are summarised in about this many tokens of
   * head, tail and error lines (beside the exit code, assertions and stderr tail).
   */
  summary_tokens: number,
  /**
   * Lines longer than this many characters are cut in the middle.
   */
  max_line_chars: number,
  /**
   * The history form is at most `max(share × input tokens, min_tokens)` tokens …
   */
  budget_share: number, min_tokens: number,
  /**
   * … and never more than this (failing test names excepted: they are always kept).
   */
  max_tokens: number,
  /**
   * Tool name (case-insensitive) → family, on top of the built-in names.
   */
  tool_families: { [key in string]: Family },
};

/**
 * The history form of a tool output.
 */
export type Compressed = {
  family: Family, text: string, tokens_in: number, tokens_out: number,
  /**
   * What was removed or changed; empty when the output is kept as it was.
   */
  notes: Array<string>,
  /**
   * For structured `{status, data, error, …}` results: the kept fields (R3.3).
   */
  structured?: unknown,
};

/**
 * The content of a COMPRESSED_TURNS block.
 */
export type CompressedTurns = {
  version: number, replaces: Replaces, goal: string, what_we_learned: Array<Learned>, anchors: Array<Anchor>, exec_assertions: Array<string>, open_questions: Array<string>, next_actions: Array<string>,
  /**
   * The files the window touched, one line each (written by code, `index.rs`).
   */
  files?: Array<string>,
  /**
   * The code names the window worked with, most salient first (written by code).
   */
  names?: Array<string>,
  /**
   * Where a file reader finds the originals as plain text, when the trace is stored: the
   * files of the first and last message replaced.
   */
  originals?: [string, string],
};

/**
 * One part of a message's content.
 */
export type ContentPart = { "type": "text", text: string, } | { "type": "reasoning", text: string, signature?: string, } | { "type": "tool_call" } & ToolCall | { "type": "tool_result" } & ToolResult | { "type": "opaque" } & OpaquePart;

/**
 * How a call's dollars were found.
 */
export type CostBasis = "reported" | "estimated" | "no_model";

export type DirEntry = { name: string, isDir: boolean, };

/**
 * The BPE encodings the engine can count with.
 */
export type Encoding = "o200k_base" | "cl100k_base";

/**
 * How a reply's body ended.
 */
export type End = "done" | "agent_gone" | "broke_off" | { "silent": number } | "stopped";

/**
 * One event: an id, increasing by one from 1 within a log, and what happened.
 * Serialized flat: `{"id": 3, "type": "goal_added", "goal": {…}, …}`.
 */
export type EngineEvent = { id: number, } & ({ "type": "goal_added", goal: Goal, parent_id?: GoalId, } | { "type": "goal_updated", branch_id?: BranchId, goal_id: GoalId, updates: GoalUpdates, affected_goals: Array<AffectedGoal>, current_id?: GoalId, } | { "type": "goal_removed", branch_id?: BranchId, goal_id: GoalId, removed: Array<GoalId>, affected_goals: Array<AffectedGoal>, current_id?: GoalId, } | { "type": "message_added", message_id?: MessageId, goal_id: GoalId, affected_goals: Array<AffectedGoal>, } | { "type": "trace_completed", stats: GoalStats, } | { "type": "branch_started", explore_start_id: GoalId, branch: Branch, } | { "type": "branch_goal_added", branch_id: BranchId, goal: Goal, } | { "type": "branch_message_added", branch_id: BranchId, message_id?: MessageId, goal_id: GoalId, affected_goals: Array<AffectedGoal>, } | { "type": "branch_completed", branch_id: BranchId, summary: string, } | { "type": "explore_completed", explore_start_id: GoalId, merge_goal_id: GoalId, merge_summary: string, selected_branch?: BranchId, } | { "type": "plan_revised", revision: PlanRevision, });

/**
 * The events after an id.
 */
export type EventsPage = { trace_id: string, events: Array<EngineEvent>, last_event_id: number, notes?: Array<string>, };

/**
 * What the shell is to do, in order.
 */
export type ExchangeEffect = { "effect": "read_body", limit: number, timeout_ms: number, } | { "effect": "read", away: boolean, } | { "effect": "log", line: string, } | { "effect": "answer", status: number, body: string, close: boolean, drain_ms: number, } | { "effect": "take_turn", key: SessionKey, } | { "effect": "prepare", key: SessionKey, notes: Array<string>, opening: ProxyCallRecord | null, } | { "effect": "count_side_call", agent_session: string, record: ProxyCallRecord, } | { "effect": "send", url: string, prepared: boolean, plain: boolean, } | { "effect": "read_reply", limit: number, } | { "effect": "respond", status: number, } | { "effect": "give" } | { "effect": "give_text", text: string, } | { "effect": "finish", status: number, outcome: unknown, } | { "effect": "await_record" } | { "effect": "end_reply" } | { "effect": "called" } | { "effect": "close" } | { "effect": "done" };

/**
 * What happened, as the shell tells the exchange.
 */
export type ExchangeEvent = { "event": "body_read", bytes: number, } | { "event": "body_refused" } | { "event": "body_timed_out" } | { "event": "read", verdict: unknown, } | { "event": "unreadable", why: string, } | { "event": "turn_taken", notes: Array<string>, } | { "event": "prepared", rewritten: boolean, } | { "event": "session_gone", why: string, } | { "event": "answered", status: number, content_type: string | null, content_length: number | null, } | { "event": "failed", failure: Failure, } | { "event": "reply_read", body: string, } | { "event": "ended", end: End, } | { "event": "recorded", record: (ProxyCallRecord & { trace_id: string }) | null, } | { "event": "not_recorded", why: string, } | { "event": "broke", why: string, };

/**
 * A claim and the pointers that prove it (`file:src/a.py:L40-L55`, `cmd#12 exit=1`,
 * `test#3 failed: …`). A fact whose evidence does not resolve is kept as unknown.
 */
export type Fact = { text: string, evidence: Array<string>, };

/**
 * Why the upstream gave no reply.
 */
export type Failure = { "unreachable": Cause } | "timeout" | "stopped" | "agent_gone";

/**
 * A call sent as the agent's own after the upstream refused the engine's form of it.
 */
export type Fallback = {
  call: number,
  /**
   * The refusal, as the call's note says it.
   */
  why: string,
};

/**
 * The families of R3.2, each with its own history rule.
 */
export type Family = "ls" | "glob" | "grep" | "read" | "edit" | "write" | "bash" | "todo_write" | "default";

export type FileContent = { text: string, mtimeMs: number, };

export type FileStat = { isDir: boolean, size: number, mtimeMs: number, };

/**
 * One goal (R6.1).
 */
export type Goal = {
  /**
   * A plain counter from 1, whatever the level, branch or status.
   */
  id: GoalId, parent_id?: GoalId,
  /**
   * The branch whose tree this goal belongs to; `None` on the main line.
   */
  branch_id?: BranchId, type: GoalType, description: string, reason: string, status: GoalStatus,
  /**
   * The summary given on completion, or the reason given on abandon.
   */
  summary?: string, branch_ids?: Array<BranchId>, explore_start_id?: GoalId, merge_summary?: string, selected_branch?: BranchId, self_stats: GoalStats, cumulative_stats: GoalStats,
};

/**
 * Limits on what the tools accept.
 */
export type GoalConfig = {
  /**
   * Branches one `explore` call may start.
   */
  max_branches: number,
  /**
   * Characters of one goal or branch description.
   */
  max_description_chars: number,
  /**
   * Characters of a summary, an abandon reason or an add reason.
   */
  max_summary_chars: number,
  /**
   * Goals the tree holds, abandoned ones included.
   */
  max_goals: number,
  /**
   * Levels of nesting (`1.2.3` is level 3).
   */
  max_depth: number,
};

/**
 * A goal's internal id: a plain counter (R6.1), not the display number.
 */
export type GoalId = string;

/**
 * The messages of one goal of the main line (the detail of a DAG edge).
 */
export type GoalMessages = { trace_id: string, goal_id: GoalId, messages: Array<Message>, notes?: Array<string>, };

/**
 * The plan as the model and a viewer see it.
 */
export type GoalPlan = {
  /**
   * The plan block of the prompt's tail (R2.2).
   */
  prompt: string,
  /**
   * The brief todo list (R6.7).
   */
  todo: string,
  /**
   * Every goal's number (abandoned ones included), by goal id.
   */
  numbers: { [key in string]: string },
  /**
   * The numbers the model sees: abandoned goals and what is under them left out.
   */
  display_numbers: { [key in string]: string },
  /**
   * The phase of the work (R6.8).
   */
  phase: Phase,
  /**
   * How many steps the plan has (the `n` of "step k of n").
   */
  steps: number,
};

/**
 * Statistics of a goal's messages. `self_stats` counts the goal's own messages,
 * `cumulative_stats` those of the goal and all its descendants.
 */
export type GoalStats = { message_count: number, total_tokens: number, total_cost: number, preview?: string, };

export type GoalStatus = "pending" | "in_progress" | "completed" | "abandoned";

/**
 * What a plan tool call returns to the model.
 */
export type GoalToolResult = {
  /**
   * The tool result text: what changed and the plan, or what to do instead.
   */
  text: string,
  /**
   * True when the call was refused; the tree is then unchanged.
   */
  is_error: boolean,
  /**
   * Branches an `explore` call started, for the host to run as sub-agents.
   */
  branches: Array<string>,
};

/**
 * The goal tree of the main line or of one branch.
 */
export type GoalTree = {
  /**
   * Format version of `goal.json` (see [`GOAL_TREE_FORMAT_VERSION`]).
   */
  version: number, mission: string,
  /**
   * Set on a branch's own tree: its goals carry this branch id and its events are `branch_*`.
   */
  branch_id?: BranchId, current_id?: GoalId, goals: Array<Goal>, branches?: Array<Branch>,
  /**
   * The revisions of the agent's plan, oldest first.
   */
  revisions?: Array<PlanRevision>,
  /**
   * The next goal id.
   */
  next_id: number,
  /**
   * How many branch ids were handed out (`A`, `B`, … `Z`, `AA` …).
   */
  next_branch: number, completed: boolean,
};

/**
 * A goal tree as the API shows it.
 */
export type GoalTreeView = {
  mission: string, current_id: GoalId | null, goals: Array<Goal>,
  /**
   * The explorations' branches: the model's `explore` calls, or the agent's own sub-agents.
   */
  branches?: Array<Branch>,
  /**
   * The revisions of the agent's plan, oldest first.
   */
  revisions?: Array<PlanRevision>,
  /**
   * The phase of the work (R6.8).
   */
  phase: Phase,
  /**
   * How many steps the plan has (the `n` of "step k of n").
   */
  steps: number,
};

export type GoalType = "normal" | "explore_start" | "explore_merge";

/**
 * The new state of the goal an update is about.
 */
export type GoalUpdates = { status: GoalStatus, summary?: string, };

/**
 * The prompt's view of the history.
 */
export type HistoryView = {
  /**
   * Tool outputs of messages before this index belong to finished rounds and are shown in
   * their history form.
   */
  settled: number,
  /**
   * History forms of settled tool outputs, by message index.
   */
  forms: { [key in number]: string },
  /**
   * The archived summary and the raw range it replaces.
   */
  summary: ArchivedSummary | null,
  /**
   * Tool messages whose output the prune stage replaced by a placeholder.
   */
  pruned: Array<number>,
  /**
   * Tool outputs (and observations) shown in a bounded form, by message index: from their
   * first sight when they are larger than the configured share of the window, or bounded
   * further when the prompt would not fit the window otherwise. The original stays in the raw
   * trace.
   */
  bounded?: { [key in number]: string },
  /**
   * Messages before this index were judged at first sight by a prepared call: an output
   * bounded on arrival is shown whole again when the prompt holding it whole stays under the
   * compaction threshold (what the agent's own prompt keeps, the engine keeps).
   */
  sighted: number,
  /**
   * Compactions that failed in a row; at [`MAX_FAILED_COMPACTIONS`] automatic compaction stops.
   */
  failed_compactions: number,
  /**
   * Tail compactions in order; their ranges do not overlap and only grow towards the end.
   */
  blocks: Array<TailBlock>,
  /**
   * The state board after every delta so far (R5.2).
   */
  board: StateBoard,
  /**
   * Code lines the blocks already show, so a later block does not repeat them.
   */
  anchored: { [key in string]: { [key in number]: string } },
  /**
   * Every rewrite of earlier prompt, with what it cost (R5.9).
   */
  rewrites: Array<RewriteRecord>,
  /**
   * Raw messages the agent withdrew (see [`HistoryView::withdraw`]), in order, never touching
   * (a withdrawal that starts where the previous one ended extends it): the prompt shows none
   * of them.
   */
  withdrawn?: Array<Withdrawal>,
};

/**
 * The layers of R2.1, in the order they are sent.
 */
export type Layer = "system" | "rules" | "history" | "input" | "tail";

/**
 * A conclusion and the evidence pointers behind it.
 */
export type Learned = { conclusion: string, evidence: Array<string>, };

/**
 * A message of a trace, with the metadata of R1.2.
 */
export type Message = {
  id: MessageId, trace_id: TraceId, branch_id?: BranchId, role: Role,
  /**
   * Global order within the trace, from 0.
   */
  sequence: number, goal_id?: GoalId, span_id?: SpanId,
  /**
   * For tool messages: the call this result answers.
   */
  tool_call_id?: ToolCallId, content: Array<ContentPart>,
  /**
   * Generated by the system (R1.2): see [`Message::describe`].
   */
  description: string,
  /**
   * Tokens of this message in the engine's encoding, chat overhead included.
   */
  tokens?: number, cost?: number, created_at_ms: number,
};

/**
 * One message of a trace; `m` + the zero-padded sequence number when the engine assigns it.
 */
export type MessageId = string;

/**
 * A message to record: `content` is a string (one text part) or content parts.
 */
export type MessageInput = { role: Role, content: string | Array<ContentPart>, goal_id?: GoalId, span_id?: SpanId, tool_call_id?: ToolCallId, };

/**
 * The newest message of a branch, for a preview.
 */
export type MessagePreview = { message_id: string, role: Role, content: string, created_at: number, };

/**
 * One model's list prices, USD per million tokens.
 */
export type ModelPrice = {
  input: number, cache_read: number,
  /**
   * A cache write with the provider's default lifetime (5 minutes at Anthropic; OpenAI and
   * Gemini charge none: the input price).
   */
  cache_write: number,
  /**
   * A cache write for an hour (Anthropic's `"ttl": "1h"`).
   */
  cache_write_1h: number, output: number,
};

/**
 * Prices the configuration adds to the engine's table or puts in place of its rows, by model
 * name without its date suffix (`claude-sonnet-4-5`, `gpt-4.1`), and the day they were read.
 */
export type ModelPrices = {
  /**
   * `YYYY-MM-DD`; the figures priced by these rows say it.
   */
  read_on: string | null, models: { [key in string]: ModelPrice },
};

/**
 * A provider's content block kept as it came: never read, never rewritten, counted by `tokens`.
 */
export type OpaquePart = {
  /**
   * The block's own type (`image`, `document`, `redacted_thinking`, `image_url`, …).
   */
  kind: string,
  /**
   * The block as compact JSON text, as the provider's client sent it (cache breakpoints
   * removed); serializers send it back as it is.
   */
  json: string,
  /**
   * What the block costs in prompt tokens, estimated when it was recorded.
   */
  tokens: number,
};

/**
 * What `persist` wrote.
 */
export type PersistReport = {
  files_written: number, bytes_written: number,
  /**
   * Secrets replaced in what was written.
   */
  redactions: number,
};

export type Phase = { "phase": "planning" } | { "phase": "executing", step: number, } | { "phase": "completed" };

/**
 * A revision of the agent's plan (R6.9): the list it wrote differs from the previous one
 * before that one's end, with items added or open ones dropped.
 */
export type PlanRevision = {
  /**
   * The first item (from 1) that differs from the previous plan.
   */
  from_item: number,
  /**
   * The goals of the items before it, kept as they were.
   */
  kept: Array<GoalId>,
  /**
   * The goals of the items from it on: revised.
   */
  revised: Array<GoalId>,
  /**
   * The open goals the new plan no longer holds, by description: abandoned, or removed when
   * they never ran.
   */
  dropped: Array<string>,
};

/**
 * Prices relative to one uncached input token.
 */
export type Prices = {
  uncached_input: number, cache_read: number, cache_write: number,
  /**
   * A cache write with a 1-hour lifetime (Anthropic's `"ttl": "1h"`).
   */
  cache_write_1h: number, output: number,
};

/**
 * A step of a long operation, or a notice the user should see (R4.5, R4.6).
 */
export type Progress = {
  /**
   * `compaction`, …
   */
  operation: string, message: string,
  /**
   * The operation has ended (successfully or not).
   */
  done: boolean,
};

/**
 * The wire format a prepared call is serialized to.
 */
export type PromptFormat = "openai" | "anthropic" | "react";

/**
 * One message of an assembled prompt.
 */
export type PromptMessage = {
  /**
   * `System`, `User`, `Assistant` or `Tool`; archived summaries are sent as `System` (R4.1).
   */
  role: Role, content: Array<ContentPart>, layer: Layer,
  /**
   * The history message this renders, when it renders one (its original is `raw#<id>`).
   */
  source?: MessageId,
  /**
   * For a compaction block: the history messages it stands for, as `recall` names them
   * (`m000022..m000025`). Never sent.
   */
  replaces?: string,
};

/**
 * Everything one call sends. Invariant (checked by assembly): every tool call is answered by
 * exactly one tool result in the messages that immediately follow its assistant message, and
 * every tool result answers a call.
 */
export type PromptView = { messages: Array<PromptMessage>, tools: Array<ToolSpec>, };

/**
 * The proxy (`workbench proxy`, [`crate::proxy`]).
 */
export type ProxyConfig = {
  /**
   * The largest request body the proxy reads, in bytes; a larger one is refused (413) in the
   * provider's error shape.
   */
  max_body_bytes: number,
  /**
   * A request without tools and without an assistant turn (a title, a one-shot
   * classification such as Claude Code's auto-mode check, whatever its size) is a side call:
   * it passes through unmanaged and opens no session. Off, every conversation route is
   * managed.
   */
  side_calls: boolean,
  /**
   * How long the upstream may take to start answering, and then between two pieces of its
   * reply, in milliseconds.
   */
  upstream_timeout_ms: number,
  /**
   * Conversations held at once; past it, the least recently used idle one is saved and closed.
   */
  max_sessions: number,
  /**
   * How long a request's headers may take to arrive, in milliseconds; a connection that
   * sends none in time is closed (half-open connections cannot hold the proxy's descriptors).
   */
  header_timeout_ms: number,
  /**
   * How long a request's body may take to arrive, in milliseconds; a client that declares a
   * body and stalls gets a 408 instead of holding its connection.
   */
  body_timeout_ms: number,
  /**
   * At a stop (Ctrl-C, SIGTERM, an editor closing), how long the requests in flight may take
   * to finish before they are cut short (their agents get an error in the provider's shape),
   * in milliseconds, so that every session is saved in time.
   */
  shutdown_grace_ms: number,
  /**
   * Whether the proxy manages this project's conversations; off, every request goes upstream
   * as its agent sent it (logged as unmanaged). One request is left unmanaged by its header
   * `x-workbench: off`.
   */
  manage: boolean,
  /**
   * An OpenTelemetry collector's OTLP/HTTP address (`http://localhost:4318`, its traces at
   * `/v1/traces`, or the traces URL itself): one span per call is exported there
   * (docs/telemetry.md). Empty: none. `--otlp URL` overrides it.
   */
  otlp: string,
};

export type PruneConfig = {
  /**
   * Prune only when at least this many tokens would be freed (PRUNE_MINIMUM).
   */
  minimum: number,
  /**
   * Tool output tokens kept untouched behind the newest turns (PRUNE_PROTECT).
   */
  protect: number,
  /**
   * Tools whose outputs are never pruned.
   */
  protected_tools: Array<string>,
};

/**
 * What a `recall` call returns to the model.
 */
export type RecallResult = {
  /**
   * The original (numbered lines), or what was wrong and what exists.
   */
  text: string,
  /**
   * True when the call was refused; nothing changed either way.
   */
  is_error: boolean,
};

/**
 * An item of a reply that failed its check, and why.
 */
export type Rejection = { item: string, reason: string, };

/**
 * One repair: the message it is about (its id in the repaired history) and what was done.
 */
export type RepairNote = { message: MessageId, what: string, };

/**
 * Which turns a block replaces: turn indices (inclusive) and the raw message range.
 */
export type Replaces = {
  start_turn: number, end_turn: number,
  /**
   * Raw message ids, first and last, to find the originals in the raw trace.
   */
  first_message: string, last_message: string, span_id?: string,
};

/**
 * What [`ReplaySession::step`] hands out: the call, and the texts first seen on it.
 */
export type ReplayStep = {
  call: CallView,
  /**
   * The id of the first new text; the others follow in order.
   */
  texts_from: number, texts: Array<string>,
};

/**
 * The replay's totals of the unmanaged prompt (`raw`) and of the `workbench` strategy.
 */
export type ReplaySummary = { raw: ReplayTotals, workbench: ReplayTotals, };

/**
 * Sums over calls (or over trajectories): the peak is a maximum, everything else a sum.
 */
export type ReplayTotals = { calls: number, prompt_tokens: number, cached: number, written: number, aux_output_tokens: number, cost: number, peak_prompt_tokens: number, above_window: number, rewrites: number, fallbacks: number, edits_counted: number, edits_kept: number, refs_counted: number, refs_kept: number, };

export type ResolvedConfig = {
  /**
   * Token encoding for every count (R10.1).
   */
  encoding: Encoding,
  /**
   * The model's context window in tokens (R10.2).
   */
  window: number,
  /**
   * Share of the window at which compaction triggers (R4.4, R10.2).
   */
  compact_threshold: number,
  /**
   * An absolute cap on prompt tokens, below the window; `None` means `window × threshold` only.
   */
  max_prompt_tokens: number | null,
  /**
   * How many of the newest rounds compaction always keeps (R4.3).
   */
  min_rounds_kept: number,
  /**
   * Budget for the dynamic tail (plan, board, reminders) in tokens (R2.4).
   */
  dynamic_tail_budget: number,
  /**
   * How long a summary may take before the fallback of R4.6, in milliseconds.
   */
  summary_timeout_ms: number,
  /**
   * After a compaction, tokens of recently touched files read back into the prompt.
   */
  rehydrate_tokens: number,
  /**
   * The tool an `@path` reminder tells the model to read with (R7.1); unset, the first tool
   * of the read family offered on the last call, and no tool is named before the first call.
   */
  read_tool: string | null,
  /**
   * Relative prices per token, used by the cache cost model (R5.5) and the replay.
   */
  prices: Prices,
  /**
   * Dollar prices by model, added to or put in place of the engine's table
   * (`src/proxy/dollars.rs`): what `workbench stats`, the dashboard and the editor report.
   */
  model_prices: ModelPrices,
  /**
   * The prune stage (R4.7).
   */
  prune: PruneConfig,
  /**
   * Tool-output compression limits and tool-name mapping (R3.2).
   */
  compress: CompressConfig,
  /**
   * Tail compaction, the state board and the cache cost model (R5).
   */
  workbench: WorkbenchConfig,
  /**
   * Limits of the goal tree's tools (R6).
   */
  goals: GoalConfig,
  /**
   * Where and how traces are persisted (R8).
   */
  store: StoreConfig,
  /**
   * The proxy in front of an agent's provider (`workbench proxy`).
   */
  proxy: ProxyConfig,
};

/**
 * The numbers behind one rewrite decision, reported with every compaction.
 */
export type RewriteCost = {
  /**
   * Prompt tokens before the first changed position, still served from the cache.
   */
  kept_prefix_tokens: number,
  /**
   * Tokens from the first changed position to the end, before and after the rewrite.
   */
  tokens_before: number, tokens_after: number,
  /**
   * What the next call pays extra for the rewrite: the new tail written instead of the old one read.
   */
  one_off_cost: number,
  /**
   * What every later call saves: the removed tokens no longer read from the cache.
   */
  saving_per_call: number,
  /**
   * How many later calls the model assumes.
   */
  horizon: number,
};

/**
 * Where a rewrite changed the prompt.
 */
export type RewritePosition = "tail" | "middle";

/**
 * A rewrite of earlier prompt, as the engine reports it.
 */
export type RewriteRecord = {
  /**
   * The number of the call (0-based `prepare_call`) it happened on.
   */
  call: number,
  /**
   * `tail_compaction`, `prune`, `summary` or `truncation`.
   */
  mechanism: string, position: RewritePosition,
  /**
   * The raw messages it replaced.
   */
  start: number, end: number,
  /**
   * Why: the triggers that nominated it.
   */
  reasons: Array<string>, cost: RewriteCost,
  /**
   * Output tokens an LLM spent on it (a summary, an LLM-written block); 0 without one.
   */
  output_tokens: number, notes: Array<string>,
};

export type Role = "system" | "user" | "assistant" | "tool" | "summary" | "observation";

/**
 * Which conversation a request belongs to: the agent's session id when it sends one (Claude
 * Code's `metadata.user_id`, an `x-session-id`-like header) and a hash of the first message
 * (which tells a session's sub-agents apart); without a session id, the hash also covers the
 * system prompt and the tools' names. In team mode, the member who sent it too: two people's
 * identical conversations are two sessions.
 */
export type SessionKey = {
  agent_session: string | null,
  /**
   * A hash; 16 hex digits in its serde form (JavaScript's numbers hold 53 bits).
   */
  conversation: string,
  /**
   * The team member who signed the request in (team mode only).
   */
  person?: string,
};

/**
 * A span marked by the orchestrator with `SPAN_START(id, goal)` / `SPAN_END(id, outcome)`.
 */
export type Span = { id: SpanId, goal: string, start: MessageId, end?: MessageId, outcome?: string, };

/**
 * A span marked by the orchestrator (R5.7).
 */
export type SpanId = string;

/**
 * One attribute's value, typed as OTLP types it.
 */
export type SpanValue = boolean | number | number | string | Array<string>;

/**
 * The board: every delta applied in order.
 */
export type StateBoard = {
  /**
   * The version of the newest delta applied.
   */
  version: number, current_goal: string, goal_shift_reason: string | null, confirmed_facts: Array<Fact>, unknown: Array<string>, open_questions: Array<string>, anchors: Array<Anchor>, exec_assertions: Array<string>, status: string, next_actions: Array<string>,
  /**
   * Conflicts merged so far, newest last: `v5 goal changed without a reason`, ….
   */
  conflicts: Array<string>,
};

/**
 * STATE_DELTA vN: what changed in the board. Empty fields leave the board as it is.
 */
export type StateDelta = {
  /**
   * Assigned by the engine when the delta is applied.
   */
  version?: number, current_goal?: string | null, goal_shift_reason?: string | null, confirmed_facts?: Array<Fact>,
  /**
   * Claims whose evidence did not check out, kept with the reason (R5.6).
   */
  unknown?: Array<string>, open_questions?: Array<string>, anchors?: Array<Anchor>, exec_assertions?: Array<string>, status?: string | null, next_actions?: Array<string>,
};

/**
 * What became of a delta.
 */
export type StateUpdate = {
  /**
   * The board's version after the delta.
   */
  version: number,
  /**
   * The history message it was appended as.
   */
  message: MessageId,
  /**
   * Items whose evidence did not check out: anchors dropped, facts marked unknown.
   */
  rejected: Array<Rejection>,
  /**
   * Conflicts with earlier versions, merged and marked.
   */
  conflicts: Array<string>, notes: Array<string>,
};

/**
 * One step (seed 004's `Step`, its automatic fields only).
 */
export type Step = {
  /**
   * The message id, or `goal-<id>` for a goal.
   */
  step_id: string, step_type: StepType, status: StepStatus,
  /**
   * The message's sequence; `None` for goals.
   */
  sequence?: number, parent_id?: string, description: string, data?: Record<string, unknown>,
  /**
   * Only on evaluations.
   */
  summary?: string, duration_ms?: number, cost?: number, tokens?: number, created_at_ms?: number,
};

export type StepStatus = "planned" | "in_progress" | "completed" | "failed" | "skipped";

export type StepType = "goal" | "thought" | "evaluation" | "response" | "action" | "result";

/**
 * The trace store (R8.1).
 */
export type StoreConfig = {
  /**
   * The trace root, workspace-relative.
   */
  root: string,
  /**
   * Replace common secret shapes (provider keys, tokens, `Authorization:` values, password
   * variables, private keys) before anything is written.
   */
  redact: boolean,
  /**
   * More regexes whose matches are redacted, on top of the built-in ones.
   */
  redact_patterns: Array<string>,
  /**
   * History forms and blocks name the plain-text copy of their originals (`raw/<id>.txt`), for
   * agents that read files but have no `recall` tool (the proxy's). The copies are written
   * either way.
   */
  name_originals: boolean,
  /**
   * Put before those names, when the agent reads files by absolute path (Claude Code's Read
   * does): the workspace's absolute path. Empty: the names are workspace-relative.
   */
  originals_base: string,
};

/**
 * One tail compaction (R5.4): raw messages `start..end` shown as a COMPRESSED_TURNS block
 * followed by the STATE_DELTA it produced. The texts are stored as sent, so the prompt keeps
 * the same bytes on every later call.
 */
export type TailBlock = {
  start: number, end: number, text: string,
  /**
   * The STATE_DELTA as sent; empty (nothing sent) when the delta says nothing.
   */
  delta_text: string,
  /**
   * `extractive` or `llm`.
   */
  compactor: string, content: CompressedTurns,
  /**
   * The STATE_DELTA, its `version` set.
   */
  delta: StateDelta & { version: number },
};

/**
 * A count and whether it is the calibrated estimate rather than the exact figure.
 */
export type TokenCount = { tokens: number, estimated: boolean, };

export type ToolCall = {
  id: ToolCallId, name: string,
  /**
   * The arguments exactly as the model produced them (usually JSON text).
   */
  arguments: string,
};

/**
 * The id the provider gave a tool call, linking the call to its result.
 */
export type ToolCallId = string;

/**
 * A tool output to compress (R3).
 */
export type ToolOutputInput = {
  tool: string, arguments?: string, output: string, stderr?: string, exit_code?: number, is_error?: boolean,
  /**
   * The raw trace message that keeps the original, cited as `raw#<id>`.
   */
  raw_id?: string,
};

export type ToolResult = { call_id: ToolCallId, name: string, status: ToolStatus, output: string, stderr?: string, exit_code?: number, };

/**
 * A tool the model may call, as a JSON-schema function.
 */
export type ToolSpec = {
  name: string, description: string,
  /**
   * JSON schema of the arguments object.
   */
  parameters: Record<string, unknown>,
};

export type ToolStatus = "ok" | "error";

/**
 * One agent session: its messages in sequence order and the spans marked over them.
 */
export type Trace = {
  /**
   * Format version of the serialized trace (see [`TRACE_FORMAT_VERSION`]).
   */
  version: number, id: TraceId, mission: string, metadata: Record<string, unknown>, messages: Array<Message>, spans: Array<Span>,
};

/**
 * A trace with its main-line goal tree and its branches' metadata (not their goals).
 */
export type TraceDetail = { trace: TraceMeta, goal_tree: GoalTreeView, branches: { [key in string]: BranchSummary }, last_event_id: number, notes?: Array<string>, };

/**
 * One agent session.
 */
export type TraceId = string;

/**
 * `{"traces": [...]}`, newest first.
 */
export type TraceList = { traces: Array<TraceMeta>, notes?: Array<string>, };

/**
 * `meta.json`: what the list of traces shows without reading anything else.
 */
export type TraceMeta = {
  version: number, trace_id: string, mission: string,
  /**
   * Milliseconds since the Unix epoch, from the host clock.
   */
  created_at: number, updated_at: number, message_count: number,
  /**
   * `running` (a host has it open), `completed` (its task was answered), `finished` (its
   * conversation ended with the agent's answer), `stopped` (closed mid-task: the proxy
   * stopped, say) or `interrupted` (its host was killed; found at the next start).
   */
  status: string, branch_count: number, event_count: number,
  /**
   * The prompt calls prepared so far.
   */
  calls: number,
  /**
   * The trace this one goes on from: the agent compacted its own history (Claude Code's
   * `/compact`), and its session went on here with the summary.
   */
  continues?: string | null,
  /**
   * The call of another trace that started this one: a sub-agent (Claude Code's `Agent`
   * tool) runs as a branch of its caller's session.
   */
  branch_of?: BranchOf | null,
  /**
   * Calls the upstream refused as invalid in the engine's form, which the proxy's safety net
   * sent again as the agent's own: their cause is to be found.
   */
  fallbacks?: Array<Fallback>,
  /**
   * The team member whose session it is (team mode: the proxy's signed-in person).
   */
  person?: string,
};

/**
 * One agent context of the imported file.
 */
export type TrajectoryInfo = { name: string, format: string, messages: number, calls: number, notes: Array<string>, };

/**
 * Token usage as the provider reported it (R10.1: preferred over the engine's own count).
 */
export type Usage = { promptTokens: number, completionTokens: number, cachedTokens?: number, };

/**
 * What a prompt message is.
 */
export type ViewKind = "system" | "rules" | "message" | "block" | "delta" | "summary" | "tail";

/**
 * One message of a call's prompt.
 */
export type ViewMessage = {
  role: "system" | "user" | "assistant" | "tool", kind: ViewKind,
  /**
   * The id of its text among the session's texts.
   */
  text: number,
  /**
   * Tokens of the text plus the per-message overhead.
   */
  tokens: number,
  /**
   * The index of the raw message it renders.
   */
  source?: number,
  /**
   * A recorded message shown otherwise than as recorded (a pruned output, say).
   */
  altered?: boolean,
  /**
   * For a block or a summary: the raw messages `[start, end)` it stands for.
   */
  replaces?: [number, number],
};

/**
 * Raw messages `start..end`, which the agent sent again changed from `start` on (aider renders
 * the files it shows and its format reminder anew at each call): its new version was recorded
 * after them.
 */
export type Withdrawal = { start: number, end: number, };

/**
 * Tail compaction (R5.4, R5.5) and the state board (R5.3).
 */
export type WorkbenchConfig = {
  /**
   * Tail compaction on or off (the prompt then only changes through R4's emergency path).
   */
  tail_compaction: boolean,
  /**
   * Put the goal tree's plan at the head of the dynamic tail once the model has a plan (R2.2).
   */
  plan_in_tail: boolean,
  /**
   * Remind the model to update its plan when a sub-task looks delivered without it (R6.10).
   */
  todo_probe: boolean,
  /**
   * Ask the host's LLM to write blocks (TAIL_COMPACTION); the embedded compactor is used when
   * this is off, when the host has no LLM, or when its reply is invalid twice.
   */
  llm_compactor: boolean,
  /**
   * R5.5: this many tool calls since the last compaction nominate one.
   */
  trigger_tool_calls: number,
  /**
   * R5.5: raw tool output above this share of the uncompacted tail nominates one.
   */
  raw_output_share: number,
  /**
   * R5.4: the newest turns always kept verbatim after the block.
   */
  keep_turns: number,
  /**
   * A window holds at least this many turns, and at most `max_turns` (R5.4's 12-30).
   */
  min_turns: number, max_turns: number,
  /**
   * Budget of a COMPRESSED_TURNS block without its anchors (R5.4: ≤ 800).
   */
  block_tokens: number,
  /**
   * Budget of the anchors a block carries: observed code the agent is working on, verbatim.
   * Block budgets are capped by shares of the window ([`WorkbenchConfig::for_window`]).
   */
  anchor_tokens: number,
  /**
   * Budget of a block's index: the files the window touched and the code names it used.
   */
  index_tokens: number,
  /**
   * Budget of one STATE_DELTA (R5.3: ≤ 250).
   */
  delta_tokens: number,
  /**
   * Rewrites of earlier prompt are batched so that at most one happens in this many calls,
   * unless the window forces one.
   */
  min_calls_between_rewrites: number,
  /**
   * The cost model assumes this many calls still to come at least, and at most `max_horizon`
   * (between, as many as were made so far).
   */
  min_horizon: number, max_horizon: number,
  /**
   * The share of the calls made so far that a session is all but sure still to make: a
   * rewrite whose one-off cost is more than the session saved so far must earn the rest back
   * within them (docs/engine.md, "Never worse than none").
   */
  sure_horizon_share: number,
  /**
   * The lengths (in calls) of earlier runs of the same agent family. Given at least
   * [`FAMILY_SAMPLE`], the calls a session is all but sure still to make are what the shortest
   * tenth of those that lasted longer (and the session itself) went on for, not
   * `sure_horizon_share`.
   */
  family_runs: Array<number>,
  /**
   * A tool output larger than this share of the window is bounded to its history form when it
   * is recorded, even inside the open round (the exception to R3.1 that keeps every prompt
   * within the window), and shown whole from the next call on only while the prompt holding it
   * whole stays under the compaction threshold with room for as much again; the original stays
   * in the raw trace.
   */
  first_sight_share: number,
};
