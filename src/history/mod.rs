//! History management (R4, R7): rounds, repair of malformed histories, `@file` mentions and
//! file freshness.

pub mod compaction;
pub mod mentions;
pub(crate) mod prune;
pub mod repair;
pub mod view;

pub use view::{ArchivedSummary, HistoryView, MAX_FAILED_COMPACTIONS};
