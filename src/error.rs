//! The one error type of the engine, with a stable machine-readable `code()`.

use crate::host::HostError;

/// Everything that can go wrong on a path from the outside.
///
/// Messages are lowercase and carry the data needed to act on them; `code()` is stable and is
/// what JavaScript sees as `error.code`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Host(#[from] HostError),
    #[error("invalid config: {0}")]
    Config(String),
    #[error("invalid input: {0}")]
    InvalidInput(String),
    #[error("unsupported format version {found} (this build reads up to {supported})")]
    UnsupportedVersion { found: u32, supported: u32 },
    #[error("the engine is busy: {0}")]
    Busy(String),
    /// The prompt does not fit the window even after compaction: `layer` says what does not fit
    /// (the system prompt and tools, the project rules, the user's own messages).
    #[error(
        "context overflow: {layer} need {needed} tokens, {} more than the window of {window}",
        needed.saturating_sub(*window)
    )]
    ContextOverflow { layer: String, needed: usize, window: usize },
    /// A rank file refused, or an encoding whose ranks are neither embedded nor loaded
    /// (`tokens::load_ranks`).
    #[error(transparent)]
    Tokens(#[from] context_workbench_tokens::Error),
    /// A trajectory file that matches no known format, or is truncated or malformed.
    #[error("{file}: line {line}: {message}")]
    Trajectory { file: String, line: usize, message: String },
}

impl Error {
    /// A stable identifier for the kind of error (`host_not_found`, `invalid_config`, …).
    pub fn code(&self) -> &'static str {
        match self {
            Error::Host(e) => e.kind.code(),
            Error::Config(_) => "invalid_config",
            Error::InvalidInput(_) => "invalid_input",
            Error::UnsupportedVersion { .. } => "unsupported_version",
            Error::Busy(_) => "busy",
            Error::Trajectory { .. } => "invalid_trajectory",
            Error::ContextOverflow { .. } => "context_overflow",
            Error::Tokens(e) => e.code(),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
