//! What the proxy needs of a provider's API, as one table. Each API's module fills it once:
//! `anthropic.rs` (Messages), `openai.rs` (Chat Completions), `responses.rs` (Responses),
//! `gemini.rs`; `providers.rs` says which a [`Format`](super::route::Format) is, and `route.rs`
//! names the formats and their paths. Nothing else in the proxy chooses by format.

use super::reply::ReplyFormat;
use super::request::{ClientRequest, RequestError};
use super::wire::RawObject;
use crate::prompt::PromptView;
use crate::tokens::TokenCounter;
use crate::workbench::cost::CacheTtl;

/// One API as the proxy uses it: the functions and facts its module fills in once.
pub struct Api {
    /// Read a request body sent to a path (without its query) into the engine's form; the
    /// counter estimates what opaque blocks cost.
    pub parse_request: fn(RawObject, &str, &TokenCounter) -> Result<ClientRequest, RequestError>,
    /// The upstream's body: the agent's request with the engine's prompt view in place of its
    /// own, with the lifetime the engine chose for its cache breakpoints.
    pub upstream_body: fn(&ClientRequest, &PromptView, CacheTtl) -> String,
    /// The cache lifetime the agent's request set on its breakpoints, in an API that has them.
    pub agent_cache_ttl: fn(&ClientRequest) -> Option<CacheTtl>,
    /// Whether the engine chooses its breakpoints' lifetimes (an API where they can differ).
    pub chooses_cache_ttl: bool,
    /// A reader of one reply's content.
    pub reply: fn() -> Box<dyn ReplyFormat>,
    /// The server-sent event that tells the agent its stream ended in an error, as the API's
    /// servers send one.
    pub stream_error: fn(&str) -> String,
}
