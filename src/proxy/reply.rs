//! The upstream's reply, read as it passes to the agent unchanged: streamed (server-sent
//! events) or whole, in either format. What comes out is what the engine records: the reply's
//! content when it completed, the provider's usage with its cache reads and writes, and why it
//! did not complete. Bounded: past the limit nothing more is kept and the reply is not recorded.
//! What is each API's own (its events, its whole body, where its content is) is a [`ReplyFormat`]
//! that the API's module implements; this reads the bytes, the events and the limit for all.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::sse::{SseEvent, SseParser};
use crate::host::Usage;
use crate::model::ContentPart;
use crate::tokens::TokenCounter;

/// Token usage as the provider reported it for one reply.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderUsage {
    /// Prompt tokens read without the cache (Anthropic's `input_tokens`; OpenAI's
    /// `prompt_tokens` less its cached ones).
    pub input_tokens: u64,
    /// Prompt tokens read from the cache (`cache_read_input_tokens`, `cached_tokens`).
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the cache (`cache_creation_input_tokens`; OpenAI reports none).
    pub cache_write_tokens: u64,
    /// Those of them written for an hour (`cache_creation.ephemeral_1h_input_tokens`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_1h_tokens: u64,
    pub output_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ProviderUsage {
    /// The usage of an API that reports every prompt token with the cached ones among them
    /// (OpenAI, Gemini): the uncached input is the prompt less the cached tokens, never below
    /// zero, and nothing is written to the cache.
    pub fn with_cached(prompt: u64, cached: u64, output: u64) -> ProviderUsage {
        ProviderUsage {
            input_tokens: prompt.saturating_sub(cached),
            cache_read_tokens: cached,
            cache_write_tokens: 0,
            cache_write_1h_tokens: 0,
            output_tokens: output,
        }
    }

    /// Every prompt token, cached or not.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
    }

    /// The share of the prompt read from the cache.
    pub fn cached_share(&self) -> f64 {
        let prompt = self.prompt_tokens();
        if prompt == 0 { 0.0 } else { self.cache_read_tokens as f64 / prompt as f64 }
    }

    /// The engine's form (R10: its compaction trigger prefers it to its own count).
    pub fn to_engine(self) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens(),
            completion_tokens: self.output_tokens,
            cached_tokens: self.cache_read_tokens,
        }
    }
}

/// What a reply came to (passed as JSON between the threads of a proxy that runs its engines on
/// workers).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplyOutcome {
    /// The reply ended as the provider ends a reply (`message_stop`, `[DONE]`, a whole body).
    pub completed: bool,
    /// Its content, read as the engine records an assistant message.
    pub parts: Vec<ContentPart>,
    pub usage: Option<ProviderUsage>,
    pub stop_reason: Option<String>,
    /// Why it did not complete: an error status, an `error` event, a cut stream, a reply over
    /// the limit. Never the body of an error (it may echo what the agent sent).
    pub error: Option<String>,
    /// It answers the agent's own request, sent once the upstream refused the engine's as
    /// invalid: the note saying so (see the proxy's safety net, `Exchange`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
}

/// What reading a reply found so far, whatever its API.
#[derive(Debug, Default)]
pub struct ReplyFacts {
    pub usage: Option<ProviderUsage>,
    pub stop_reason: Option<String>,
    pub error: Option<String>,
    /// The API's end of the reply was read (`message_stop`, `[DONE]`, a finish reason, a whole
    /// body).
    pub done: bool,
}

/// One API's reading of a reply: its streamed events and its whole body, into the facts every
/// reply has and the content that is the API's own.
pub trait ReplyFormat: std::fmt::Debug + Send {
    /// A streamed event's data, read as JSON.
    fn event(&mut self, data: &Value, facts: &mut ReplyFacts);
    /// A whole (not streamed) reply's body.
    fn whole(&mut self, body: &Value, facts: &mut ReplyFacts);
    /// The reply's content, once it completed.
    fn parts(&mut self, counter: &TokenCounter) -> Vec<ContentPart>;
    /// An event's data that ends the stream and is no JSON (Chat Completions' `[DONE]`).
    fn is_end_marker(&self, _data: &str) -> bool {
        false
    }
    /// Whether the reply has ended as the API ends one.
    fn ended(&self, facts: &ReplyFacts) -> bool {
        facts.done
    }
}

/// Reads one reply as its bytes pass.
#[derive(Debug)]
pub struct ReplyReader {
    format: Box<dyn ReplyFormat>,
    stream: bool,
    status: u16,
    limit: usize,
    kept: usize,
    sse: SseParser,
    body: Vec<u8>,
    facts: ReplyFacts,
}

impl ReplyReader {
    /// A reader of a reply in `format` with HTTP `status`; `stream` when its content type is
    /// `text/event-stream`; at most `limit` bytes of it are kept.
    pub fn new(format: Box<dyn ReplyFormat>, stream: bool, status: u16, limit: usize) -> ReplyReader {
        let error = (!(200..300).contains(&status)).then(|| format!("the upstream answered {status}"));
        ReplyReader {
            format,
            stream,
            status,
            limit,
            kept: 0,
            sse: SseParser::new(limit),
            body: Vec::new(),
            facts: ReplyFacts { error, ..ReplyFacts::default() },
        }
    }

    /// Read the next bytes of the reply. Never fails: a problem is kept as the reply's error.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.facts.error.is_some() && !(200..300).contains(&self.status) {
            return;
        }
        self.kept += bytes.len();
        if self.kept > self.limit {
            let limit = self.limit;
            self.facts
                .error
                .get_or_insert_with(|| format!("the reply is larger than {limit} bytes; it is not recorded"));
            return;
        }
        if !self.stream {
            self.body.extend_from_slice(bytes);
            return;
        }
        match self.sse.push(bytes) {
            Ok(events) => events.into_iter().for_each(|e| self.event(e)),
            Err(e) => {
                self.facts.error.get_or_insert(e);
            }
        }
    }

    /// Whether the reply is a stream of server-sent events.
    pub fn is_stream(&self) -> bool {
        self.stream
    }

    /// Whether the stream's bytes stopped before the provider's end of it (`message_stop`,
    /// `[DONE]`, a finish reason): what the agent got is cut short. Unknown (false) past the
    /// limit, where nothing more is read, and after a malformed event that the end followed.
    pub fn ended_early(&self) -> bool {
        self.stream && self.kept <= self.limit && !self.format.ended(&self.facts)
    }

    /// Whether the provider's end of the reply has been read (`message_stop`, `[DONE]`).
    pub fn is_complete(&self) -> bool {
        self.facts.done && self.facts.error.is_none()
    }

    /// The reply, once the upstream's body has ended or all its declared bytes were read (or
    /// it was cut: then it is not completed).
    pub fn finish(mut self, counter: &TokenCounter) -> ReplyOutcome {
        if !self.stream && self.facts.error.is_none() {
            match serde_json::from_slice::<Value>(&self.body) {
                Ok(body) => self.format.whole(&body, &mut self.facts),
                Err(_) => self.facts.error = Some("the upstream's reply is not JSON".to_owned()),
            }
        }
        let completed = self.facts.error.is_none() && self.format.ended(&self.facts);
        if self.stream && !completed && self.facts.error.is_none() {
            self.facts.error = Some("the upstream's stream ended before the reply did".to_owned());
        }
        let parts = if completed { self.format.parts(counter) } else { Vec::new() };
        let ReplyFacts { usage, stop_reason, error, .. } = self.facts;
        ReplyOutcome { completed, parts, usage, stop_reason, error, fallback: None }
    }

    fn event(&mut self, event: SseEvent) {
        if self.format.is_end_marker(event.data.trim()) {
            self.facts.done = true;
            return;
        }
        let Ok(data) = serde_json::from_str::<Value>(&event.data) else {
            if !event.data.trim().is_empty() {
                self.facts.error.get_or_insert_with(|| "an event of the reply is not JSON".to_owned());
            }
            return;
        };
        self.format.event(&data, &mut self.facts);
    }
}
