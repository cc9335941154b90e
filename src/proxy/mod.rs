//! The proxy's translation core: the engine in front of an agent that speaks a provider's API
//! (Anthropic Messages, OpenAI Chat Completions and Responses, Gemini). Sans-IO like the rest of the crate: request
//! bytes in, the upstream's request out; the upstream's reply bytes in (they go to the agent
//! unchanged), what the engine records out. The CLI's `workbench proxy` drives it with a server
//! and an HTTP client; a JS host can drive the same API from wasm.
//!
//! Every decision is here, once; the shells (`workbench proxy` in `crates/workbench-cli`, the
//! npm package's `startProxy`) move bytes and keep timers. One request is an [`Exchange`], a
//! sans-IO state machine: the shell feeds it what happened and carries out the effects it returns.
//! 1. The [`Gateway`] (shared by every request) routes it ([`route::classify`]), checks the body it
//!    declares and reads it ([`Gateway::read`]): forward it as it came (other routes, side
//!    calls, shapes the engine does not read), answer it (a malformed request, in the provider's
//!    error shape), or manage it under its conversation's [`SessionKey`].
//! 2. The shell keeps a [`SessionTable`] of keys (the least recently used idle one makes room)
//!    and runs each key's engines in a [`Worker`]: [`Worker::prepare`] records the new messages
//!    in the session whose history the request extends (`conversation.rs`) and
//!    builds the upstream's body ([`ProxySession::prepare`]).
//! 3. A [`ReplyPump`] reads the reply as it passes to the agent; [`Worker::finish`] reports its
//!    usage and keeps it; [`Worker::close`] saves the sessions. Every log line is the
//!    [`Gateway`]'s (`report.rs`); with `--otlp`, the shell exports each call as the span
//!    [`telemetry::call_span`] describes.
//!
//! The front door: what the shells, the wasm face and the tests use is re-exported here, beside
//! the modules they name (`args`, `gateway`, `providers`, `stats`, `team`, `telemetry`,
//! `worker`); the rest is the crate's own.

mod agents;
mod anthropic;
pub(crate) mod api;
pub mod args;
pub(crate) mod conversation;
pub(crate) mod dollars;
pub(crate) mod errors;
pub(crate) mod exchange;
pub mod gateway;
mod gemini;
mod openai;
pub mod providers;
pub(crate) mod pump;
pub(crate) mod record;
pub(crate) mod reply;
pub(crate) mod report;
pub(crate) mod request;
mod responses;
pub(crate) mod route;
pub(crate) mod session;
pub(crate) mod sse;
pub mod stats;
mod subagents;
pub(crate) mod table;
pub mod team;
pub mod telemetry;
pub(crate) mod upstreams;
pub(crate) mod wire;
pub mod worker;

pub use agents::agent_name;
pub use anthropic::MAX_BREAKPOINTS;
pub use errors::error_body;
pub use exchange::{Effect, Event, Exchange};
pub use gateway::{Answer, Decision, Gateway, RequestHead, SideCall, ThreadTrouble, Verdict};
pub use pump::{Cause, End, Ending, Failure, ReplyPump};
pub use record::{CALLS_FILE, CallRecord};
pub use reply::{ProviderUsage, ReplyOutcome, ReplyReader};
pub use request::{ClientMessage, ClientRequest, RequestError, SessionKey};
pub use route::{DASHBOARD_PATH, Format, HeaderHints, Provider, Route, classify, dashboard_path, upstream_url};
pub use session::{Extension, Prepared, ProxySession};
pub use table::SessionTable;
pub use upstreams::Upstreams;
pub use worker::{Shared, TraceIds, Worker};

use crate::config::Config;

/// The engine's configuration for proxied sessions: `config` with its LLM compactor off when
/// the host has no LLM of its own (the embedded compactor then writes blocks, as in the replay).
pub fn session_config(mut config: Config, host_has_llm: bool) -> Config {
    if !host_has_llm {
        config.workbench.llm_compactor = false;
    }
    config
}
