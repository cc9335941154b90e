//! Context Workbench: a context engine for coding agents.
//!
//! It sits between an agent loop and its LLM and keeps what the model sees small, true and
//! cache-friendly, while the full raw history stays on disk for audit.
//!
//! The core is sans-IO: everything outside (the LLM, the file system, the clock) goes through
//! the one [`Host`] trait, implemented by the CLI (`workbench_cli::native`), the tests (the
//! `context-workbench-testing` crate) and JavaScript (`src/wasm/`, behind the `wasm` feature).
//! Most of the engine is pure synchronous functions; only the orchestrating methods of
//! [`Engine`] are `async`.
//!
//! - [`model`]: traces, messages, rounds, spans; their serde form is the persisted format.
//! - [`tokens`]: exact token counts with tiktoken-rs, safe on any input.
//! - [`config`]: the one configuration schema shared by every front end.
//! - [`goals`]: the goal tree, its tools (`goal`, `step`, `explore`), numbering and events.
//! - [`engine`]: the façade.
//! - [`store`]: the trace store on the host's file system, resume, and the query API.
//! - [`replay`]: replays recorded trajectories through context strategies, with exact metrics.
//! - [`proxy`]: the engine in front of an agent's provider API (`workbench proxy`).

pub mod compress;
pub mod config;
pub mod dashboard;
pub mod engine;
pub mod error;
pub mod goals;
pub mod history;
pub mod host;
pub mod import;
pub mod js_forms;
pub mod model;
pub mod paths;
pub mod prompt;
pub mod proxy;
pub mod replay;
pub mod store;
pub mod tokens;
pub mod workbench;

#[cfg(test)]
mod ts_types;

#[cfg(all(feature = "wasm", target_arch = "wasm32"))]
pub mod wasm;

pub use config::Config;
pub use engine::{Engine, MessageDraft};
pub use error::{Error, Result};
pub use host::{Host, HostError, HostErrorKind};
pub use tokens::{Encoding, TokenCounter};
#[cfg(all(feature = "wasm", target_arch = "wasm32"))]
pub use wasm::ContextEngine;
