//! The trace store (R8): everything the engine records, persisted through the host's file
//! system under a trace root (`.trace/` by default), crash-safe, secrets redacted, and read back
//! for an exact resume and by the query API.
//!
//! Crash safety: a file that is replaced (`meta.json`, `goal.json`, `state.json`, each message)
//! is written under a temporary name and renamed over the old one, so it is either whole or
//! absent; logs (`events.jsonl`, `log.jsonl`, `rewrites.jsonl`, `snapshots.jsonl`) are only
//! appended, one record per line, and a torn last line is skipped with a note on load. Nothing
//! already written is rewritten in place. The engine side is `Engine::open` / `Engine::persist`.

pub mod api;
pub(crate) mod compactions;
pub(crate) mod jsonl;
pub mod layout;
pub mod live;
pub mod load;
pub(crate) mod lookup;
pub mod query;
pub(crate) mod records;
pub mod recover;
pub(crate) mod redact;
pub(crate) mod status;

pub use layout::{DEFAULT_ROOT, TraceDir, check_id};
pub use live::{LiveTraces, SessionState, SessionSummary};
pub use lookup::{Needle, Original, Originals, PromptPage, SearchHit, SearchPage, message_ids};
pub use query::{BranchDetail, CallsPage, EventsPage, GoalMessages, GoalTreeView, TraceDetail, TraceList, TraceStore};
pub use records::{
    AgentSnapshot, BRANCH_OF_KEY, BranchMeta, BranchOf, CONTINUES_KEY, FALLBACKS_KEY, Fallback, INTERRUPTED, LogEntry,
    PERSON_KEY, STORE_FORMAT_VERSION, SessionEnd, TraceMeta,
};
pub use redact::Redactor;
pub use status::{IDLE_MS, shown_status};
