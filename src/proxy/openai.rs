//! OpenAI Chat Completions: an agent's request read into the engine's model, and the engine's
//! prompt written back as the request for the upstream.
//!
//! The leading `system`/`developer` messages are the system prompt; later system messages stay
//! in history. An assistant's `tool_calls` keep their arguments byte-exact; each `tool` message
//! is one tool result, named after its call. Content parts the engine does not read (images,
//! audio, files) are kept as opaque parts and sent back as they came. Its replies are read as
//! they stream (chunks of text and tool-call deltas, ended by a finish reason or `[DONE]`) or whole.

use std::collections::BTreeMap;

use serde_json::Value;

use super::api::Api;
use super::errors::error_body;
use super::reply::{ProviderUsage, ReplyFacts, ReplyFormat};
use super::request::{
    ClientMessage, ClientRequest, RequestError, draft, invalid, messages_of, model_and_stream, opaque_part, tool_list,
};
use super::route::{Format, Provider};
use super::sse;
use super::wire::RawObject;
use crate::model::{ContentPart, Role, ToolCall, ToolCallId, ToolResult, ToolStatus};
use crate::prompt::serialize::to_openai_chat;
use crate::prompt::{PromptView, ToolSpec};
use crate::tokens::TokenCounter;
use crate::workbench::cost::CacheTtl;

/// OpenAI's Chat Completions API.
pub(super) static CHAT_COMPLETIONS: Api = Api {
    parse_request,
    upstream_body,
    agent_cache_ttl: |_| None,
    chooses_cache_ttl: false,
    reply: || Box::<ChatReply>::default(),
    stream_error: |message| sse::event("", &error_body(Provider::OpenAi, 500, message)),
};

fn parse_request(body: RawObject, _path: &str, counter: &TokenCounter) -> Result<ClientRequest, RequestError> {
    let raw_messages = messages_of(&body)?;
    let (model, stream) = model_and_stream(&body)?;
    let tools = tools(&body.value("tools"))?;

    let role_of = |m: &Value| m.get("role").and_then(Value::as_str).map(str::to_owned);
    let leading =
        raw_messages.iter().take_while(|m| matches!(role_of(m).as_deref(), Some("system" | "developer"))).count();
    let mut system = Vec::new();
    for (i, message) in raw_messages[..leading].iter().enumerate() {
        system.push(text_of(&format!("messages[{i}]"), message.get("content"))?);
    }
    let system_role = raw_messages.first().and_then(role_of).filter(|_| leading > 0);

    let mut names = BTreeMap::new();
    let mut messages = Vec::with_capacity(raw_messages.len() - leading);
    for (i, message) in raw_messages.iter().enumerate().skip(leading) {
        let at = format!("messages[{i}]");
        let role = role_of(message).ok_or_else(|| invalid(format!("{at} has no `role`")))?;
        let content = message.get("content");
        let one = match role.as_str() {
            "system" | "developer" => draft(Role::System, parts(&at, content, counter)?),
            "user" => draft(Role::User, parts(&at, content, counter)?),
            "assistant" => {
                let mut parts = parts(&at, content, counter)?;
                for call in message.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                    let call = tool_call(&at, call)?;
                    names.insert(call.id.as_str().to_owned(), call.name.clone());
                    parts.push(ContentPart::ToolCall(call));
                }
                draft(Role::Assistant, parts)
            }
            "tool" => {
                let id = message.get("tool_call_id").and_then(Value::as_str);
                let id = id.ok_or_else(|| invalid(format!("{at}: a tool message needs a `tool_call_id`")))?;
                let mut texts = Vec::new();
                let mut attached = Vec::new();
                for part in parts(&at, content, counter)? {
                    match part {
                        ContentPart::Text { text } => texts.push(text),
                        other => attached.push(other),
                    }
                }
                let result = ToolResult {
                    call_id: ToolCallId::from(id),
                    name: names.get(id).cloned().unwrap_or_default(),
                    status: ToolStatus::Ok,
                    output: texts.join("\n"),
                    stderr: None,
                    exit_code: None,
                };
                let mut content = vec![ContentPart::ToolResult(result)];
                content.extend(attached);
                draft(Role::Tool, content)
            }
            other => {
                return Err(RequestError::unreadable(format!(
                    "{at} has the role `{other}`, which the engine does not read"
                )));
            }
        };
        messages.push(ClientMessage::new(vec![one]));
    }
    Ok(ClientRequest {
        model,
        stream,
        system_role,
        ..ClientRequest::new(Format::OpenAi, body, system.join("\n"), messages, tools)
    })
}

/// The upstream's body: the agent's request with the engine's `messages` (its leading system
/// message in the role the agent used), every other field as it came.
fn upstream_body(request: &ClientRequest, view: &PromptView, _ttl: CacheTtl) -> String {
    let rendered = to_openai_chat(view);
    let mut messages = rendered.get("messages").cloned().unwrap_or(Value::Array(Vec::new()));
    if let (Some(role), Some(Value::Object(first))) = (&request.system_role, messages.get_mut(0))
        && first.get("role").and_then(Value::as_str) == Some("system")
        && !request.system_text.is_empty()
    {
        first.insert("role".into(), Value::String(role.clone()));
    }
    let mut body = request.body.clone();
    body.set("messages", &messages);
    body.to_json()
}

/// The tools as the engine counts them.
fn tools(value: &Value) -> Result<Vec<ToolSpec>, RequestError> {
    tool_list(value)?
        .iter()
        .enumerate()
        .map(|(i, tool)| {
            let function = tool.get("function").unwrap_or(tool);
            let name = function.get("name").and_then(Value::as_str);
            let name = name.ok_or_else(|| RequestError::invalid(format!("tools[{i}] has no function `name`")))?;
            Ok(ToolSpec {
                name: name.to_owned(),
                description: function.get("description").and_then(Value::as_str).unwrap_or_default().to_owned(),
                parameters: function.get("parameters").cloned().unwrap_or(Value::Null),
            })
        })
        .collect()
}

fn tool_call(at: &str, call: &Value) -> Result<ToolCall, RequestError> {
    let function = call.get("function");
    let id = call.get("id").and_then(Value::as_str).filter(|id| !id.is_empty());
    let id = id.ok_or_else(|| RequestError::invalid(format!("{at}: a tool call needs an `id`")))?;
    let name = function.and_then(|f| f.get("name")).and_then(Value::as_str);
    let name = name.ok_or_else(|| RequestError::invalid(format!("{at}: tool call `{id}` needs a function `name`")))?;
    let arguments = match function.and_then(|f| f.get("arguments")) {
        Some(Value::String(text)) => text.clone(),
        None | Some(Value::Null) => String::new(),
        Some(other) => super::wire::compact(other),
    };
    Ok(ToolCall { id: ToolCallId::from(id), name: name.to_owned(), arguments })
}

/// The parts of `content`: a string is one text part, a list its text parts and opaque ones.
fn parts(at: &str, content: Option<&Value>, counter: &TokenCounter) -> Result<Vec<ContentPart>, RequestError> {
    match content {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(text)) => Ok(vec![ContentPart::Text { text: text.clone() }]),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(j, item)| match (item.get("type").and_then(Value::as_str), item.get("text")) {
                (Some("text"), Some(Value::String(text))) => Ok(ContentPart::Text { text: text.clone() }),
                (Some(_), _) => Ok(opaque_part(item, counter)),
                (None, _) => Err(RequestError::invalid(format!("{at}.content[{j}] has no `type`"))),
            })
            .collect(),
        Some(_) => Err(RequestError::invalid(format!("{at}.content must be a string or a list of parts"))),
    }
}

/// The text of a system message's content.
fn text_of(at: &str, content: Option<&Value>) -> Result<String, RequestError> {
    let texts: Vec<String> = match content {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(text)) => vec![text.clone()],
        Some(Value::Array(items)) => {
            items.iter().filter_map(|i| i.get("text").and_then(Value::as_str).map(str::to_owned)).collect()
        }
        Some(_) => return Err(RequestError::invalid(format!("{at}.content must be a string or a list of parts"))),
    };
    Ok(texts.join("\n"))
}

/// A Chat Completions reply as it is read: its text, and its tool calls by index (id, name,
/// arguments).
#[derive(Debug, Default)]
struct ChatReply {
    text: String,
    calls: BTreeMap<u64, (String, String, String)>,
}

impl ReplyFormat for ChatReply {
    fn event(&mut self, data: &Value, facts: &mut ReplyFacts) {
        if data.get("error").is_some_and(|e| !e.is_null()) {
            facts.error.get_or_insert_with(|| "the upstream sent an error in its stream".to_owned());
            return;
        }
        usage(facts, data.get("usage"));
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
            facts.stop_reason = Some(reason.to_owned());
        }
    }

    fn whole(&mut self, body: &Value, facts: &mut ReplyFacts) {
        usage(facts, body.get("usage"));
        let Some(choice) = body.pointer("/choices/0") else {
            facts.error = Some("the upstream's reply has no `choices`".to_owned());
            return;
        };
        let message = choice.get("message").unwrap_or(&Value::Null);
        if let Some(text) = message.get("content").and_then(Value::as_str) {
            self.text.push_str(text);
        }
        for (i, call) in message.get("tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate() {
            let text = |pointer: &str| call.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_owned();
            self.calls.insert(i as u64, (text("/id"), text("/function/name"), text("/function/arguments")));
        }
        facts.stop_reason = choice.get("finish_reason").and_then(Value::as_str).map(str::to_owned);
        facts.done = true;
    }

    fn parts(&mut self, _counter: &TokenCounter) -> Vec<ContentPart> {
        let mut parts = Vec::new();
        if !self.text.is_empty() {
            parts.push(ContentPart::Text { text: std::mem::take(&mut self.text) });
        }
        for (id, name, arguments) in std::mem::take(&mut self.calls).into_values() {
            parts.push(ContentPart::ToolCall(ToolCall { id: ToolCallId::from(id.as_str()), name, arguments }));
        }
        parts
    }

    fn is_end_marker(&self, data: &str) -> bool {
        data == "[DONE]"
    }

    /// A stream may end with its finish reason and no `[DONE]`.
    fn ended(&self, facts: &ReplyFacts) -> bool {
        facts.done || facts.stop_reason.is_some()
    }
}

/// Chat Completions reports every prompt token, the cached ones among them.
fn usage(facts: &mut ReplyFacts, usage: Option<&Value>) {
    let Some(usage) = usage.filter(|u| u.is_object()) else { return };
    let number = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    facts.usage = Some(ProviderUsage::with_cached(
        number("/prompt_tokens"),
        number("/prompt_tokens_details/cached_tokens"),
        number("/completion_tokens"),
    ));
}
