//! What the proxy needs of a provider's API, as one trait. Each API is one module that implements
//! it: `anthropic.rs` (Messages), `openai.rs` (Chat Completions), `responses.rs` (Responses),
//! `gemini.rs`; `providers.rs` says which a [`Format`](super::route::Format) is, and `route.rs`
//! names the formats and their paths. Nothing else in the proxy chooses by format.

use super::reply::ReplyFormat;
use super::request::{ClientRequest, RequestError};
use super::wire::RawObject;
use crate::prompt::PromptView;
use crate::tokens::TokenCounter;
use crate::workbench::cost::CacheTtl;

pub trait Api: Sync {
    /// Read a request body sent to `path` (without its query) into the engine's form; `counter`
    /// estimates what opaque blocks cost.
    fn parse_request(&self, body: RawObject, path: &str, counter: &TokenCounter)
    -> Result<ClientRequest, RequestError>;

    /// The upstream's body: the agent's request with the engine's prompt `view` in place of its
    /// own; `ttl`, the lifetime the engine chose for its cache breakpoints.
    fn upstream_body(&self, request: &ClientRequest, view: &PromptView, ttl: CacheTtl) -> String;

    /// The cache lifetime the agent's request set on its breakpoints, in an API that has them.
    fn agent_cache_ttl(&self, _request: &ClientRequest) -> Option<CacheTtl> {
        None
    }

    /// Whether the engine chooses its breakpoints' lifetimes (an API where they can differ).
    fn chooses_cache_ttl(&self) -> bool {
        false
    }

    /// A reader of one reply's content.
    fn reply(&self) -> Box<dyn ReplyFormat>;

    /// The server-sent event that tells the agent its stream ended in an error, as the API's
    /// servers send one.
    fn stream_error(&self, message: &str) -> String;
}
