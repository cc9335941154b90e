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
//! The modules (each has a section in `docs/ARCHITECTURE.md`; a tidy test keeps this list, that
//! document's code map and the declarations below the same):
//!
//! - [`host`]: the [`Host`] trait and the types that cross it.
//! - [`error`]: the one error enum, with a stable code for every face.
//! - [`model`]: traces, messages, rounds, spans; their serde form is the persisted format.
//! - [`tokens`]: exact token counts (the tokenizer crate, `crates/tokens`, re-exported) and the engine's counter.
//! - [`paths`]: what a workspace path means, the one rule every host applies.
//! - [`config`]: the one configuration schema shared by every front end.
//! - [`compress`]: the history forms of tool outputs.
//! - [`prompt`]: the prompt view, its layers and its wire formats.
//! - [`history`]: the history view with every rewrite on record, compaction, pruning, repair.
//! - [`workbench`]: the state board, compressed blocks, the cache cost model, `recall`.
//! - [`goals`]: the goal tree, its tools (`goal`, `step`, `explore`), numbering and events.
//! - [`engine`]: the façade.
//! - [`store`]: the trace store on the host's file system, resume, and the query API.
//! - [`replay`]: replays recorded trajectories through context strategies, with exact metrics.
//! - [`import`]: the agent log formats read into trajectories.
//! - [`proxy`]: the engine in front of an agent's provider API (`workbench proxy`).
//! - [`dashboard`]: the dashboard's page, embedded, and how it is served.
//! - `js_forms` (the wasm face and tests only): the forms only the wasm face exchanges with JavaScript.
//! - `wasm` (feature `wasm`, wasm32 only): the wasm-bindgen face.
//! - `ts_types` (tests only): the TypeScript declarations, generated and checked.

pub mod compress;
pub mod config;
pub mod dashboard;
pub mod engine;
pub mod error;
pub mod goals;
pub mod history;
pub mod host;
pub mod import;
pub mod model;
pub mod paths;
pub mod prompt;
pub mod proxy;
pub mod replay;
pub mod store;
pub mod tokens;
pub mod workbench;

#[cfg(any(test, all(feature = "wasm", target_arch = "wasm32")))]
// Natively, only the TypeScript declarations' test reads its types.
#[cfg_attr(not(all(feature = "wasm", target_arch = "wasm32")), allow(dead_code))]
mod js_forms;
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
