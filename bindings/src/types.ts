// The types of what crosses the boundary, generated from the Rust types (src/wasm/types_data.ts)
// or declared next to them (src/wasm/types.rs), in the glue's .d.ts; re-exported here so the
// package has one place for them.
export type {
  AffectedGoal, Anchor, AnthropicRequest, Assembly, Branch, BranchDetail, BranchMeta, CallInput, CallView,
  ChatMessage, Completion, CompletionRequest, Compressed, Config, ContentPart, DirEntry, EngineEvent, EventsPage,
  Fact, Family, FileContent, FileStat, Goal, GoalMessages, GoalPlan, GoalStats, GoalStatus, GoalToolResult,
  GoalTree, GoalTreeView, HistoryView, Host, Layer, Message, MessageInput, MessagePreview, OpenAiRequest, PersistReport,
  PreparedCall, Progress, PromptFormat, ProxyCallRecord, PromptMessage, PromptView, RecallResult, RepairNote, ReplayStep, ReplaySummary, ReplayTotals, RewriteCost,
  RewriteRecord, Role, Span, StateBoard, StateDelta, StateUpdate, Step, ToolCall, ToolOutputInput, ToolResult,
  TailBlock, TokenCount, ToolSpec, Trace, TraceDetail, TraceList, TraceMeta, TrajectoryInfo, Usage, ViewKind, ViewMessage,
  ArchivedSummary, BranchId, BranchStatus, BranchSummary, CompressConfig, CompressedTurns, Encoding, GoalConfig, GoalId,
  GoalType, GoalUpdates, Learned, MessageId, OpaquePart, Prices, ProxyConfig, PruneConfig, Rejection, Replaces,
  ResolvedConfig, RewritePosition, SpanId, StepStatus, StepType, StoreConfig, ToolCallId, ToolStatus, TraceId,
  WorkbenchConfig,
} from './wasm/context_workbench.js';
