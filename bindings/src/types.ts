// The types of what crosses the boundary, declared next to their Rust definitions (src/wasm/)
// and generated into the glue's .d.ts; re-exported here so the package has one place for them.
export type {
  AffectedGoal, Anchor, AnthropicRequest, Assembly, Branch, CallInput, CallView, ChatMessage, Completion,
  CompletionRequest, Compressed, Config, ContentPart, DirEntry, EngineEvent, Fact, Family, FileContent, FileStat,
  Goal, GoalPlan, GoalStats, GoalStatus, GoalToolResult, GoalTree, Host, Layer, Message, MessageInput,
  OpenAiRequest, PreparedCall, Progress, PromptFormat, PromptMessage, PromptView, RepairNote, ReplayStep, RewriteCost,
  RewriteRecord, Role, Span, StateBoard, StateDelta, StateUpdate, Step, ToolCall, ToolOutputInput, ToolResult,
  ToolSpec, Trace, TrajectoryInfo, Usage, ViewKind, ViewMessage,
} from './wasm/context_workbench.js';
