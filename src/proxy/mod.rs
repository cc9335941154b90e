//! The proxy's translation core: the engine in front of an agent that speaks a provider's API
//! (Anthropic Messages, OpenAI Chat Completions). Sans-IO like the rest of the crate: request
//! bytes in, the upstream's request out; the upstream's reply bytes in (they go to the agent
//! unchanged), what the engine records out. The CLI's `workbench proxy` drives it with a server
//! and an HTTP client; a JS host can drive the same API from wasm.
//!
//! One request goes through it like this:
//! 1. [`route::classify`] says whether it is a conversation turn ([`Route::Managed`]) or goes
//!    upstream as it came ([`Route::Passthrough`]).
//! 2. [`ClientRequest::parse`] reads it into the engine's model (every field kept);
//!    [`ClientRequest::is_side_call`] spots calls to pass through (a title, a classification).
//! 3. [`ClientRequest::session_key`] names its conversation; the caller keeps one
//!    [`conversation::Conversation`] per key, which holds its [`ProxySession`]s and opens a new
//!    one when the request departs from every recorded history.
//! 4. [`ProxySession::prepare`] records the new messages and builds the upstream's body.
//! 5. [`ReplyReader`] reads the reply as it passes; [`ProxySession::finish`] reports its usage
//!    and keeps it; [`ProxySession::close`] saves the session.

mod anthropic;
pub mod conversation;
pub mod errors;
mod openai;
pub mod reply;
pub mod report;
pub mod request;
pub mod route;
pub mod session;
pub mod sse;
pub mod wire;

#[cfg(test)]
mod tests;

pub use anthropic::MAX_BREAKPOINTS;
pub use errors::{error_body, stream_error_event};
pub use reply::{ProviderUsage, ReplyOutcome, ReplyReader};
pub use request::{ClientMessage, ClientRequest, RequestError, SessionKey, agent_name};
pub use route::{Format, Route, classify, upstream_url};
pub use session::{CALLS_FILE, CallRecord, Extension, Prepared, ProxySession};

use crate::config::Config;

/// The engine's configuration for proxied sessions: `config` with its LLM compactor off when
/// the host has no LLM of its own (the embedded compactor then writes blocks, as in the replay).
pub fn session_config(mut config: Config, host_has_llm: bool) -> Config {
    if !host_has_llm {
        config.workbench.llm_compactor = false;
    }
    config
}
