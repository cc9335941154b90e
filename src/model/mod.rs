//! The data model (R1): traces, messages and their content, rounds and spans.
//!
//! The serde form of these types is the persisted format; [`trace::TRACE_FORMAT_VERSION`]
//! versions it.

mod actions;
mod ids;
mod message;
mod references;
mod trace;

pub use actions::{TextAction, as_tool_output, reported_run, text_actions};
pub use ids::{BranchId, GoalId, MessageId, SpanId, ToolCallId, TraceId};
pub use message::{
    ContentPart, Message, OpaquePart, Role, ToolCall, ToolResult, ToolStatus, tool_calls_by_id, without_reminders,
};
pub use references::{argument_texts, is_code_identifier, references_in};
pub use trace::{Round, Span, TRACE_FORMAT_VERSION, Trace, rounds};
