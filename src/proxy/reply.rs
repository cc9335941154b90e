//! The upstream's reply, read as it passes to the agent unchanged: streamed (server-sent
//! events) or whole, in either format. What comes out is what the engine records: the reply's
//! content when it completed, the provider's usage with its cache reads and writes, and why it
//! did not complete. Bounded: past the limit nothing more is kept and the reply is not recorded.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::anthropic::reply_parts;
use super::route::Format;
use super::sse::{SseEvent, SseParser};
use super::{gemini, responses};
use crate::host::Usage;
use crate::model::{ContentPart, ToolCall, ToolCallId};
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

/// Reads one reply as its bytes pass.
#[derive(Debug)]
pub struct ReplyReader {
    format: Format,
    stream: bool,
    status: u16,
    limit: usize,
    kept: usize,
    sse: SseParser,
    body: Vec<u8>,
    blocks: BTreeMap<u64, Block>,
    calls: BTreeMap<u64, (String, String, String)>,
    /// Responses: the output items, as `response.output_item.done` events or the final
    /// response give them.
    output_items: Vec<Value>,
    /// Gemini: the parts of the reply's chunks, in order (streamed text pieces joined at the
    /// end).
    gemini_parts: Vec<Value>,
    text: String,
    usage: Option<ProviderUsage>,
    stop_reason: Option<String>,
    error: Option<String>,
    done: bool,
}

/// One content block of an Anthropic stream: its start and the deltas so far.
#[derive(Debug, Default)]
struct Block {
    start: Value,
    text: String,
    thinking: String,
    signature: String,
    input_json: String,
}

impl ReplyReader {
    /// A reader of a reply of `format` with HTTP `status`; `stream` when its content type is
    /// `text/event-stream`; at most `limit` bytes of it are kept.
    pub fn new(format: Format, stream: bool, status: u16, limit: usize) -> ReplyReader {
        ReplyReader {
            format,
            stream,
            status,
            limit,
            kept: 0,
            sse: SseParser::new(limit),
            body: Vec::new(),
            blocks: BTreeMap::new(),
            calls: BTreeMap::new(),
            output_items: Vec::new(),
            gemini_parts: Vec::new(),
            text: String::new(),
            usage: None,
            stop_reason: None,
            error: (!(200..300).contains(&status)).then(|| format!("the upstream answered {status}")),
            done: false,
        }
    }

    /// Read the next bytes of the reply. Never fails: a problem is kept as the reply's error.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.error.is_some() && !(200..300).contains(&self.status) {
            return;
        }
        self.kept += bytes.len();
        if self.kept > self.limit {
            self.error
                .get_or_insert_with(|| format!("the reply is larger than {} bytes; it is not recorded", self.limit));
            return;
        }
        if !self.stream {
            self.body.extend_from_slice(bytes);
            return;
        }
        match self.sse.push(bytes) {
            Ok(events) => events.into_iter().for_each(|e| self.event(e)),
            Err(e) => {
                self.error.get_or_insert(e);
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
        let ended = self.done || (self.format == Format::OpenAi && self.stop_reason.is_some());
        self.stream && self.kept <= self.limit && !ended
    }

    /// Whether the provider's end of the reply has been read (`message_stop`, `[DONE]`).
    pub fn is_complete(&self) -> bool {
        self.done && self.error.is_none()
    }

    /// The reply, once the upstream's body has ended or all its declared bytes were read (or
    /// it was cut: then it is not completed).
    pub fn finish(mut self, counter: &TokenCounter) -> ReplyOutcome {
        if !self.stream && self.error.is_none() {
            match serde_json::from_slice::<Value>(&self.body) {
                Ok(body) => self.whole(&body),
                Err(_) => self.error = Some("the upstream's reply is not JSON".to_owned()),
            }
        }
        let completed = self.error.is_none()
            && match self.format {
                Format::Anthropic | Format::Responses | Format::Gemini => self.done,
                Format::OpenAi => self.done || self.stop_reason.is_some(),
            };
        if self.stream && !completed && self.error.is_none() {
            self.error = Some("the upstream's stream ended before the reply did".to_owned());
        }
        let parts = if completed { self.parts(counter) } else { Vec::new() };
        ReplyOutcome {
            completed,
            parts,
            usage: self.usage,
            stop_reason: self.stop_reason,
            error: self.error,
            fallback: None,
        }
    }

    fn parts(&mut self, counter: &TokenCounter) -> Vec<ContentPart> {
        match self.format {
            Format::Anthropic => {
                let blocks: Vec<Value> =
                    std::mem::take(&mut self.blocks).into_values().map(Block::into_value).collect();
                reply_parts(&blocks, counter)
            }
            Format::OpenAi => {
                let mut parts = Vec::new();
                if !self.text.is_empty() {
                    parts.push(ContentPart::Text { text: std::mem::take(&mut self.text) });
                }
                for (id, name, arguments) in std::mem::take(&mut self.calls).into_values() {
                    parts.push(ContentPart::ToolCall(ToolCall { id: ToolCallId::from(id.as_str()), name, arguments }));
                }
                parts
            }
            Format::Responses => responses::reply_parts(&self.output_items, counter),
            Format::Gemini => {
                gemini::reply_parts(&gemini::join_streamed(std::mem::take(&mut self.gemini_parts)), counter)
            }
        }
    }

    fn event(&mut self, event: SseEvent) {
        if self.format == Format::OpenAi && event.data.trim() == "[DONE]" {
            self.done = true;
            return;
        }
        let Ok(data) = serde_json::from_str::<Value>(&event.data) else {
            if !event.data.trim().is_empty() {
                self.error.get_or_insert_with(|| "an event of the reply is not JSON".to_owned());
            }
            return;
        };
        match self.format {
            Format::Anthropic => self.anthropic_event(&data),
            Format::OpenAi => self.openai_chunk(&data),
            Format::Responses => self.responses_event(&data),
            Format::Gemini => self.gemini_chunk(&data),
        }
    }

    /// A Gemini chunk (or the whole reply): its candidate's parts, its finish reason (the
    /// reply's end) and the usage so far.
    fn gemini_chunk(&mut self, data: &Value) {
        if data.get("error").is_some_and(|e| !e.is_null()) {
            self.error.get_or_insert_with(|| "the upstream sent an error in its stream".to_owned());
            return;
        }
        if let Some(usage) = data.get("usageMetadata").filter(|u| u.is_object()) {
            let number = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
            self.usage = Some(ProviderUsage::with_cached(
                number("promptTokenCount"),
                number("cachedContentTokenCount"),
                number("candidatesTokenCount") + number("thoughtsTokenCount"),
            ));
        }
        let Some(candidate) = data.pointer("/candidates/0") else { return };
        let parts = candidate.pointer("/content/parts").and_then(Value::as_array);
        self.gemini_parts.extend(parts.into_iter().flatten().cloned());
        if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
            self.stop_reason = Some(reason.to_owned());
            self.done = true;
        }
    }

    /// A Responses stream: output items as they finish, then the whole response with its
    /// usage (`response.completed`, or `response.incomplete` when a limit cut it).
    fn responses_event(&mut self, data: &Value) {
        match data.get("type").and_then(Value::as_str).unwrap_or_default() {
            "response.output_item.done" => self.output_items.extend(data.get("item").cloned()),
            "response.completed" | "response.incomplete" => self.response(data.get("response").unwrap_or(&Value::Null)),
            "response.failed" | "error" => {
                let code = data.pointer("/response/error/code").or(data.get("code")).and_then(Value::as_str);
                self.error
                    .get_or_insert_with(|| format!("the upstream's response failed ({})", code.unwrap_or("error")));
            }
            _ => {}
        }
    }

    /// A Responses response object: its `output` (when it lists it), status and usage.
    fn response(&mut self, response: &Value) {
        if let Some(output) = response.get("output").and_then(Value::as_array).filter(|o| !o.is_empty()) {
            self.output_items = output.clone();
        }
        let status = response.get("status").and_then(Value::as_str).unwrap_or("completed");
        let reason = response.pointer("/incomplete_details/reason").and_then(Value::as_str);
        self.stop_reason = Some(reason.map_or(status.to_owned(), |r| format!("{status}: {r}")));
        if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
            let number = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
            self.usage = Some(ProviderUsage::with_cached(
                number("/input_tokens"),
                number("/input_tokens_details/cached_tokens"),
                number("/output_tokens"),
            ));
        }
        self.done = true;
    }

    fn anthropic_event(&mut self, data: &Value) {
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        match data.get("type").and_then(Value::as_str).unwrap_or_default() {
            "message_start" => self.anthropic_usage(data.pointer("/message/usage")),
            "content_block_start" => {
                let start = data.get("content_block").cloned().unwrap_or(Value::Null);
                self.blocks.insert(index, Block { start, ..Block::default() });
            }
            "content_block_delta" => {
                let block = self.blocks.entry(index).or_default();
                let delta = data.get("delta").unwrap_or(&Value::Null);
                let text = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default();
                match delta.get("type").and_then(Value::as_str).unwrap_or_default() {
                    "text_delta" => block.text.push_str(text("text")),
                    "thinking_delta" => block.thinking.push_str(text("thinking")),
                    "signature_delta" => block.signature.push_str(text("signature")),
                    "input_json_delta" => block.input_json.push_str(text("partial_json")),
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
                self.anthropic_usage(data.get("usage"));
            }
            "message_stop" => self.done = true,
            "error" => {
                let kind = data.pointer("/error/type").and_then(Value::as_str).unwrap_or("error");
                self.error.get_or_insert_with(|| format!("the upstream sent an error event ({kind})"));
            }
            _ => {}
        }
    }

    /// Anthropic reports usage at the start and again, cumulatively, at the end.
    fn anthropic_usage(&mut self, usage: Option<&Value>) {
        let Some(usage) = usage.filter(|u| u.is_object()) else { return };
        let total = self.usage.get_or_insert_with(ProviderUsage::default);
        let set = |key: &str, slot: &mut u64| {
            if let Some(n) = usage.get(key).and_then(Value::as_u64) {
                *slot = n;
            }
        };
        set("input_tokens", &mut total.input_tokens);
        set("cache_read_input_tokens", &mut total.cache_read_tokens);
        set("cache_creation_input_tokens", &mut total.cache_write_tokens);
        set("output_tokens", &mut total.output_tokens);
        if let Some(n) = usage.pointer("/cache_creation/ephemeral_1h_input_tokens").and_then(Value::as_u64) {
            total.cache_write_1h_tokens = n;
        }
    }

    fn openai_chunk(&mut self, data: &Value) {
        if data.get("error").is_some_and(|e| !e.is_null()) {
            self.error.get_or_insert_with(|| "the upstream sent an error in its stream".to_owned());
            return;
        }
        self.openai_usage(data.get("usage"));
        let Some(choice) = data.pointer("/choices/0") else { return };
        if let Some(delta) = choice.get("delta") {
            if let Some(text) = delta.get("content").and_then(Value::as_str) {
                self.text.push_str(text);
            }
            for call in delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
                let slot = self.calls.entry(index).or_default();
                if let Some(id) = call.get("id").and_then(Value::as_str) {
                    slot.0 = id.to_owned();
                }
                if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
                    slot.1.push_str(name);
                }
                if let Some(arguments) = call.pointer("/function/arguments").and_then(Value::as_str) {
                    slot.2.push_str(arguments);
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.stop_reason = Some(reason.to_owned());
        }
    }

    fn openai_usage(&mut self, usage: Option<&Value>) {
        let Some(usage) = usage.filter(|u| u.is_object()) else { return };
        let number = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
        self.usage = Some(ProviderUsage::with_cached(
            number("/prompt_tokens"),
            number("/prompt_tokens_details/cached_tokens"),
            number("/completion_tokens"),
        ));
    }

    /// A whole (not streamed) reply.
    fn whole(&mut self, body: &Value) {
        match self.format {
            Format::Anthropic => {
                self.anthropic_usage(body.get("usage"));
                self.stop_reason = body.get("stop_reason").and_then(Value::as_str).map(str::to_owned);
                match body.get("content").and_then(Value::as_array) {
                    Some(blocks) => {
                        for (i, block) in blocks.iter().enumerate() {
                            self.blocks.insert(i as u64, Block { start: block.clone(), ..Block::default() });
                        }
                        self.done = true;
                    }
                    None => self.error = Some("the upstream's reply has no `content`".to_owned()),
                }
            }
            Format::OpenAi => {
                self.openai_usage(body.get("usage"));
                let Some(choice) = body.pointer("/choices/0") else {
                    self.error = Some("the upstream's reply has no `choices`".to_owned());
                    return;
                };
                let message = choice.get("message").unwrap_or(&Value::Null);
                if let Some(text) = message.get("content").and_then(Value::as_str) {
                    self.text.push_str(text);
                }
                for (i, call) in message.get("tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate() {
                    let text =
                        |pointer: &str| call.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_owned();
                    self.calls.insert(i as u64, (text("/id"), text("/function/name"), text("/function/arguments")));
                }
                self.stop_reason = choice.get("finish_reason").and_then(Value::as_str).map(str::to_owned);
                self.done = true;
            }
            Format::Gemini if body.get("candidates").is_some_and(Value::is_array) => {
                self.gemini_chunk(body);
                self.done = true;
            }
            Format::Gemini => self.error = Some("the upstream's reply has no `candidates`".to_owned()),
            Format::Responses if body.get("output").is_some_and(Value::is_array) => self.response(body),
            Format::Responses => self.error = Some("the upstream's reply has no `output`".to_owned()),
        }
    }
}

impl Block {
    /// The block as the non-streamed API would have sent it.
    fn into_value(self) -> Value {
        let mut block = match self.start {
            Value::Object(fields) => fields,
            _ => return json!({"type": "text", "text": self.text}),
        };
        let kind = block.get("type").and_then(Value::as_str).unwrap_or_default().to_owned();
        match kind.as_str() {
            "text" => {
                let before = block.get("text").and_then(Value::as_str).unwrap_or_default();
                block.insert("text".into(), Value::String(format!("{before}{}", self.text)));
            }
            "thinking" => {
                let before = block.get("thinking").and_then(Value::as_str).unwrap_or_default();
                block.insert("thinking".into(), Value::String(format!("{before}{}", self.thinking)));
                let signature = block.get("signature").and_then(Value::as_str).unwrap_or_default();
                block.insert("signature".into(), Value::String(format!("{signature}{}", self.signature)));
            }
            _ => {}
        }
        if !self.input_json.is_empty() {
            let input = serde_json::from_str(&self.input_json).unwrap_or(Value::String(self.input_json));
            block.insert("input".into(), input);
        }
        Value::Object(block)
    }
}
