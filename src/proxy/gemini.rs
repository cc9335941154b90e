//! Google's Gemini API: an agent's `generateContent` request read into the engine's model, the
//! engine's prompt written back as its `contents`, and a reply's parts read as the engine
//! records an assistant message.
//!
//! The model is named by the path (`/v1beta/models/{model}:streamGenerateContent`), the system
//! prompt is `systemInstruction`. A `user` turn's `functionResponse` parts become one tool
//! message each (`{"output": …}` or `{"error": …}` as the result's text; any other response as
//! its JSON) and its other parts a user message; a `model` turn is one assistant message: its
//! text, its thoughts (`"thought": true`) as reasoning, each `functionCall` a call with its args
//! as compact JSON, and a part's `thoughtSignature` kept byte-exact as a signature before it.
//! Parts the engine does not read (inline data, files, code execution) are opaque parts, sent
//! back as they came.

use serde_json::Value;

use super::api::Api;
use super::errors::error_body;
use super::reply::{ProviderUsage, ReplyFacts, ReplyFormat};
use super::request::{ClientMessage, ClientRequest, RequestError, draft, invalid, opaque_part, tool_list};
use super::route::{Format, Provider};
use super::sse;
use super::wire::{RawObject, compact};
use crate::engine::MessageDraft;
use crate::model::{ContentPart, Role, ToolCall, ToolCallId, ToolResult, ToolStatus};
use crate::prompt::serialize::{UNNAMED_CALL, to_gemini};
use crate::prompt::{PromptView, ToolSpec};
use crate::tokens::TokenCounter;
use crate::workbench::cost::CacheTtl;

/// Google's Gemini API (`generateContent`, `streamGenerateContent`).
pub(super) static GEMINI: Api = Api {
    parse_request,
    upstream_body,
    agent_cache_ttl: |_| None,
    chooses_cache_ttl: false,
    reply: || Box::<GeminiReply>::default(),
    stream_error: |message| sse::event("", &error_body(Provider::Gemini, 500, message)),
};

/// Read a request sent to `path`, which names its model and whether it streams.
fn parse_request(body: RawObject, path: &str, counter: &TokenCounter) -> Result<ClientRequest, RequestError> {
    let contents =
        body.field::<Vec<Value>>("contents").map_err(invalid)?.ok_or_else(|| invalid("`contents` is missing"))?;
    if contents.is_empty() {
        return Err(invalid("`contents` is empty"));
    }
    if body.get("cachedContent").is_some_and(|v| v.get() != "null") {
        return Err(RequestError::unreadable("`cachedContent`: part of the prompt is kept by the server"));
    }
    let system_text = match body.value("systemInstruction") {
        Value::Null => String::new(),
        Value::String(text) => text,
        instruction => texts(&parts_of("systemInstruction", &instruction)?),
    };
    let tools = tools(&body.value("tools"))?;
    let mut reader = Reader { counter, unanswered: Vec::new(), unnamed: 0 };
    let mut messages = Vec::with_capacity(contents.len());
    for (i, content) in contents.iter().enumerate() {
        let at = format!("contents[{i}]");
        let parts = parts_of(&at, content)?;
        let drafts = match content.get("role").and_then(Value::as_str).unwrap_or("user") {
            "user" => reader.user(&at, &parts)?,
            "model" => vec![draft(Role::Assistant, reader.model(&at, &parts)?)],
            other => {
                return Err(RequestError::unreadable(format!(
                    "{at} has the role `{other}`, which the engine does not read"
                )));
            }
        };
        messages.push(ClientMessage::new(drafts));
    }
    let (model, stream) = model_in_path(path);
    Ok(ClientRequest { model, stream, ..ClientRequest::new(Format::Gemini, body, system_text, messages, tools) })
}

/// The upstream's body: the agent's request with the engine's `contents`; its
/// `systemInstruction` as it came, unless the engine's differs (project rules added to it).
fn upstream_body(request: &ClientRequest, view: &PromptView, _ttl: CacheTtl) -> String {
    let rendered = to_gemini(view);
    let mut body = request.body.clone();
    let engine_system = rendered.pointer("/systemInstruction/parts").and_then(Value::as_array);
    let engine_text: Vec<&str> =
        engine_system.into_iter().flatten().filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
    if engine_text.join("\n") != request.system_text {
        body.set("systemInstruction", &rendered["systemInstruction"]);
    }
    body.set("contents", &rendered["contents"]);
    body.to_json()
}

/// The model and whether it streams, from a Gemini path (`…/models/{model}:streamGenerateContent`).
fn model_in_path(path: &str) -> (String, bool) {
    let bare = path.split(['?', '#']).next().unwrap_or("");
    let last = bare.rsplit('/').next().unwrap_or("");
    let (model, method) = last.split_once(':').unwrap_or((last, ""));
    (model.to_owned(), method == "streamGenerateContent")
}

/// The content parts of a reply's model parts, as recorded (streamed text pieces joined).
fn reply_parts(parts: &[Value], counter: &TokenCounter) -> Vec<ContentPart> {
    let mut reader = Reader { counter, unanswered: Vec::new(), unnamed: 0 };
    reader.model("reply", parts).unwrap_or_default()
}

/// The parts of a streamed reply's chunks as one list: consecutive text pieces of the same
/// kind (thought or not) joined, a signature going with the piece that carried it.
fn join_streamed(pieces: Vec<Value>) -> Vec<Value> {
    let mut parts: Vec<Value> = Vec::new();
    for piece in pieces {
        let text = piece.get("text").and_then(Value::as_str);
        let thought = piece.get("thought").and_then(Value::as_bool).unwrap_or(false);
        let last = parts.last_mut().filter(|last| {
            last.get("text").is_some()
                && last.get("thought").and_then(Value::as_bool).unwrap_or(false) == thought
                && last.get("thoughtSignature").is_none()
        });
        match (text, last) {
            (Some(text), Some(last)) => {
                let joined = format!("{}{text}", last["text"].as_str().unwrap_or_default());
                last["text"] = Value::String(joined);
                if let Some(signature) = piece.get("thoughtSignature") {
                    last["thoughtSignature"] = signature.clone();
                }
            }
            _ => parts.push(piece),
        }
    }
    parts
}

struct Reader<'a> {
    counter: &'a TokenCounter,
    /// The calls of the last model turn not answered yet: (id, name).
    unanswered: Vec<(String, String)>,
    unnamed: usize,
}

impl Reader<'_> {
    /// A user turn: a tool message per function response, then its other parts as a user message.
    fn user(&mut self, at: &str, parts: &[Value]) -> Result<Vec<MessageDraft>, RequestError> {
        let mut drafts = Vec::new();
        let mut rest = Vec::new();
        for (j, part) in parts.iter().enumerate() {
            match part.get("functionResponse") {
                Some(response) => drafts.push(self.response(&format!("{at}.parts[{j}]"), response)?),
                None => match part.get("text").and_then(Value::as_str) {
                    Some(text) => rest.push(ContentPart::Text { text: text.to_owned() }),
                    None => rest.push(opaque_part(part, self.counter)),
                },
            }
        }
        if !rest.is_empty() {
            drafts.push(draft(Role::User, rest));
        }
        Ok(drafts)
    }

    fn response(&mut self, at: &str, response: &Value) -> Result<MessageDraft, RequestError> {
        let name = response.get("name").and_then(Value::as_str);
        let name = name.ok_or_else(|| invalid(format!("{at}: a functionResponse needs a `name`")))?;
        let given = response.get("id").and_then(Value::as_str).filter(|id| !id.is_empty());
        let position = self.unanswered.iter().position(|(id, n)| given.map_or(n == name, |g| g == id));
        let id = match (position, given) {
            (Some(k), _) => self.unanswered.remove(k).0,
            (None, Some(given)) => given.to_owned(),
            (None, None) => format!("{UNNAMED_CALL}{name}"),
        };
        let body = response.get("response").cloned().unwrap_or(Value::Null);
        let (status, output) = match &body {
            Value::Object(fields) if fields.len() == 1 => match fields.iter().next() {
                Some((key, Value::String(text))) if key == "output" => (ToolStatus::Ok, text.clone()),
                Some((key, Value::String(text))) if key == "error" => (ToolStatus::Error, text.clone()),
                _ => (ToolStatus::Ok, compact(&body)),
            },
            Value::Null => (ToolStatus::Ok, String::new()),
            other => (ToolStatus::Ok, compact(other)),
        };
        let result = ToolResult {
            call_id: ToolCallId::from(id.as_str()),
            name: name.to_owned(),
            status,
            output,
            stderr: None,
            exit_code: None,
        };
        Ok(draft(Role::Tool, vec![ContentPart::ToolResult(result)]))
    }

    /// A model turn's parts.
    fn model(&mut self, at: &str, parts: &[Value]) -> Result<Vec<ContentPart>, RequestError> {
        self.unanswered.clear();
        let mut out = Vec::new();
        for (j, part) in parts.iter().enumerate() {
            let signature = part.get("thoughtSignature").and_then(Value::as_str).map(str::to_owned);
            let thought = part.get("thought").and_then(Value::as_bool).unwrap_or(false);
            if let Some(call) = part.get("functionCall") {
                let name = call.get("name").and_then(Value::as_str);
                let name = name.ok_or_else(|| invalid(format!("{at}.parts[{j}]: a functionCall needs a `name`")))?;
                let id = match call.get("id").and_then(Value::as_str).filter(|id| !id.is_empty()) {
                    Some(id) => id.to_owned(),
                    None => {
                        self.unnamed += 1;
                        format!("{UNNAMED_CALL}{name}#{}", self.unnamed)
                    }
                };
                let arguments = call.get("args").map(compact).unwrap_or_default();
                out.extend(signature.map(|s| ContentPart::Reasoning { text: String::new(), signature: Some(s) }));
                self.unanswered.push((id.clone(), name.to_owned()));
                out.push(ContentPart::ToolCall(ToolCall {
                    id: ToolCallId::from(id.as_str()),
                    name: name.to_owned(),
                    arguments,
                }));
            } else if let Some(text) = part.get("text").and_then(Value::as_str) {
                if thought {
                    out.push(ContentPart::Reasoning { text: text.to_owned(), signature });
                } else {
                    out.extend(signature.map(|s| ContentPart::Reasoning { text: String::new(), signature: Some(s) }));
                    out.push(ContentPart::Text { text: text.to_owned() });
                }
            } else {
                out.push(opaque_part(part, self.counter));
            }
        }
        Ok(out)
    }
}

/// The `parts` of a content (or of `systemInstruction`).
fn parts_of(at: &str, content: &Value) -> Result<Vec<Value>, RequestError> {
    match content.get("parts") {
        Some(Value::Array(parts)) if parts.iter().all(Value::is_object) => Ok(parts.clone()),
        Some(Value::Array(_)) => Err(invalid(format!("{at}: every part must be an object"))),
        Some(_) => Err(invalid(format!("{at}.parts must be a list"))),
        None if content.is_object() => Err(invalid(format!("{at} has no `parts`"))),
        None => Err(invalid(format!("{at} must be an object"))),
    }
}

fn texts(parts: &[Value]) -> String {
    let texts: Vec<&str> = parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
    texts.join("\n")
}

/// The tools as the engine counts them: each function declaration, and a built-in tool
/// (`googleSearch`, `codeExecution`) by its key.
fn tools(value: &Value) -> Result<Vec<ToolSpec>, RequestError> {
    let mut specs = Vec::new();
    for (i, tool) in tool_list(value)?.iter().enumerate() {
        let Value::Object(fields) = tool else { return Err(invalid(format!("tools[{i}] must be an object"))) };
        for (key, value) in fields {
            let declarations = match (key.as_str(), value) {
                ("functionDeclarations", Value::Array(list)) => list,
                ("functionDeclarations", _) => {
                    return Err(invalid(format!("tools[{i}].functionDeclarations must be a list")));
                }
                _ => {
                    specs.push(ToolSpec { name: key.clone(), description: String::new(), parameters: value.clone() });
                    continue;
                }
            };
            for (j, declaration) in declarations.iter().enumerate() {
                let text = |k: &str| declaration.get(k).and_then(Value::as_str);
                let name = text("name")
                    .ok_or_else(|| invalid(format!("tools[{i}].functionDeclarations[{j}] has no `name`")))?;
                let parameters = declaration.get("parametersJsonSchema").or(declaration.get("parameters"));
                specs.push(ToolSpec {
                    name: name.to_owned(),
                    description: text("description").unwrap_or_default().to_owned(),
                    parameters: parameters.cloned().unwrap_or(Value::Null),
                });
            }
        }
    }
    Ok(specs)
}

/// A Gemini reply as it is read: the parts of its chunks, in order (streamed text pieces joined
/// at the end).
#[derive(Debug, Default)]
struct GeminiReply {
    parts: Vec<Value>,
}

impl ReplyFormat for GeminiReply {
    /// A Gemini chunk (or the whole reply): its candidate's parts, its finish reason (the
    /// reply's end) and the usage so far.
    fn event(&mut self, data: &Value, facts: &mut ReplyFacts) {
        if data.get("error").is_some_and(|e| !e.is_null()) {
            facts.error.get_or_insert_with(|| "the upstream sent an error in its stream".to_owned());
            return;
        }
        if let Some(usage) = data.get("usageMetadata").filter(|u| u.is_object()) {
            let number = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
            facts.usage = Some(ProviderUsage::with_cached(
                number("promptTokenCount"),
                number("cachedContentTokenCount"),
                number("candidatesTokenCount") + number("thoughtsTokenCount"),
            ));
        }
        let Some(candidate) = data.pointer("/candidates/0") else { return };
        let parts = candidate.pointer("/content/parts").and_then(Value::as_array);
        self.parts.extend(parts.into_iter().flatten().cloned());
        if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
            facts.stop_reason = Some(reason.to_owned());
            facts.done = true;
        }
    }

    fn whole(&mut self, body: &Value, facts: &mut ReplyFacts) {
        if !body.get("candidates").is_some_and(Value::is_array) {
            facts.error = Some("the upstream's reply has no `candidates`".to_owned());
            return;
        }
        self.event(body, facts);
        facts.done = true;
    }

    fn parts(&mut self, counter: &TokenCounter) -> Vec<ContentPart> {
        reply_parts(&join_streamed(std::mem::take(&mut self.parts)), counter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_names_the_model_and_the_stream() {
        assert_eq!(
            model_in_path("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"),
            ("gemini-2.5-flash".to_owned(), true)
        );
        assert_eq!(model_in_path("/v1/models/gemini-3-pro:generateContent"), ("gemini-3-pro".to_owned(), false));
    }

    #[test]
    fn a_request_takes_its_model_and_stream_from_its_path() {
        let counter = TokenCounter::new(crate::tokens::Encoding::O200kBase);
        let body = br#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#;
        let path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent";
        let request = ClientRequest::parse_at(Format::Gemini, path, body, &counter).unwrap();
        assert_eq!((request.model.as_str(), request.stream), ("gemini-2.5-flash", true));
        let request = ClientRequest::parse(Format::Gemini, body, &counter).unwrap();
        assert_eq!((request.model.as_str(), request.stream), ("", false));
    }
}
