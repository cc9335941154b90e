//! OpenAI Responses: an agent's request read into the engine's model, the engine's prompt
//! written back as the request's `input`, and a reply's output items read as the engine
//! records an assistant message.
//!
//! `input` is a list of items the agent re-sends whole at each call (Codex, OpenCode and Qwen
//! Code keep no history on the server): a request that leans on the server's
//! (`previous_response_id`, `conversation`) is passed through. The system prompt is
//! `instructions` with the leading `system`/`developer` messages. Items make messages so: a
//! user, system or developer message is one; the assistant's items in a row (its messages,
//! `reasoning`, calls, a hosted tool's items) are one assistant message; each call's output is
//! one tool message. A call's arguments and a custom tool's input are kept byte-exact;
//! `reasoning` items (their encrypted content) and every item or content part the engine does
//! not read are opaque parts, sent back as they came.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::api::Api;
use super::reply::{ProviderUsage, ReplyFacts, ReplyFormat};
use super::request::{
    ClientMessage, ClientRequest, RequestError, draft, invalid, model_and_stream, opaque_part, tool_list,
};
use super::route::Format;
use super::sse;
use super::wire::{RawObject, compact};
use crate::model::{ContentPart, Role, ToolCall, ToolCallId, ToolResult, ToolStatus};
use crate::prompt::serialize::{ResponsesOptions, to_openai_responses};
use crate::prompt::{Layer, PromptView, ToolSpec};
use crate::tokens::TokenCounter;
use crate::workbench::cost::CacheTtl;

/// OpenAI's Responses API; a stream cut short ends with `response.failed`.
pub(super) static RESPONSES: Api = Api {
    parse_request,
    upstream_body,
    agent_cache_ttl: |_| None,
    chooses_cache_ttl: false,
    reply: || Box::<ResponsesReply>::default(),
    stream_error: |message| {
        let error = json!({"code": "server_error", "message": message});
        let response = json!({"object": "response", "status": "failed", "error": error});
        sse::event("response.failed", &json!({"type": "response.failed", "response": response}).to_string())
    },
};

fn parse_request(body: RawObject, _path: &str, counter: &TokenCounter) -> Result<ClientRequest, RequestError> {
    for server_side in ["previous_response_id", "conversation"] {
        if body.get(server_side).is_some_and(|v| v.get() != "null") {
            return Err(RequestError::unreadable(format!(
                "`{server_side}`: the history is kept by the server, not in the request"
            )));
        }
    }
    let items = match body.value("input") {
        Value::String(text) => vec![serde_json::json!({"role": "user", "content": text})],
        Value::Array(items) => items,
        Value::Null => return Err(invalid("`input` is missing")),
        _ => return Err(invalid("`input` must be a string or a list of items")),
    };
    if items.is_empty() {
        return Err(invalid("`input` is empty"));
    }
    let (model, stream) = model_and_stream(&body)?;
    let instructions = body.field::<Option<String>>("instructions").map_err(invalid)?.flatten();
    let tools = tools(&body.value("tools"))?;

    let kinds: Vec<Kind> = items.iter().enumerate().map(|(i, item)| kind(i, item)).collect::<Result<_, _>>()?;
    let leading = kinds.iter().take_while(|k| matches!(k, Kind::Message("system" | "developer"))).count();
    let mut system: Vec<String> = instructions.iter().cloned().collect();
    for (i, item) in items[..leading].iter().enumerate() {
        let parts = content(&format!("input[{i}]"), item.get("content"), counter)?;
        system.push(text_of(&parts));
    }
    let system_role = match (&instructions, &kinds.first()) {
        (None, Some(Kind::Message(role))) if leading > 0 => Some((*role).to_owned()),
        _ => None,
    };

    let mut names = BTreeMap::new();
    let mut messages = Vec::with_capacity(items.len());
    let mut assistant: Vec<ContentPart> = Vec::new();
    for (i, (item, kind)) in items.iter().zip(&kinds).enumerate().skip(leading) {
        let at = format!("input[{i}]");
        if *kind != Kind::Assistant && !assistant.is_empty() {
            messages.push(ClientMessage::new(vec![draft(Role::Assistant, std::mem::take(&mut assistant))]));
        }
        match kind {
            Kind::Assistant => assistant.extend(assistant_parts(&at, item, counter, &mut names)?),
            Kind::Message(role) => {
                let role = if *role == "user" { Role::User } else { Role::System };
                messages.push(ClientMessage::new(vec![draft(role, content(&at, item.get("content"), counter)?)]));
            }
            Kind::Output => messages.push(ClientMessage::new(vec![tool_output(&at, item, &names, counter)?])),
        }
    }
    if !assistant.is_empty() {
        messages.push(ClientMessage::new(vec![draft(Role::Assistant, assistant)]));
    }
    Ok(ClientRequest {
        model,
        stream,
        system_role,
        ..ClientRequest::new(Format::Responses, body, system.join("\n"), messages, tools)
    })
}

/// The upstream's body: the agent's request with the engine's `input`; the engine's system
/// prompt goes where the agent's was (`instructions`, or a leading message in its role).
fn upstream_body(request: &ClientRequest, view: &PromptView, _ttl: CacheTtl) -> String {
    let custom = custom_tools(&request.body.value("tools"));
    let instructions = request.body.get("instructions").is_some_and(|v| v.get() != "null");
    let system_role = if instructions { None } else { Some(request.system_role.as_deref().unwrap_or("developer")) };
    let rendered = to_openai_responses(view, ResponsesOptions { system_role, custom_tools: Some(&custom) });
    let mut body = request.body.clone();
    if instructions {
        let system = view.messages.iter().find(|m| m.layer == Layer::System && m.role == Role::System);
        let text = system.map(|m| text_of(&m.content)).unwrap_or_default();
        body.set("instructions", &text);
    }
    body.set("input", &rendered["input"]);
    body.to_json()
}

/// The content parts of the assistant's output items (a reply's `output`), as recorded.
fn reply_parts(items: &[Value], counter: &TokenCounter) -> Vec<ContentPart> {
    let mut names = BTreeMap::new();
    let mut parts = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match assistant_parts(&format!("output[{i}]"), item, counter, &mut names) {
            Ok(more) => parts.extend(more),
            Err(_) => parts.push(opaque_part(item, counter)),
        }
    }
    parts
}

/// What an input item is to the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A user, system or developer message (its role).
    Message(&'static str),
    /// The assistant's: its message, reasoning, a call, a hosted tool's item, any other item.
    Assistant,
    /// A call's output.
    Output,
}

fn kind(i: usize, item: &Value) -> Result<Kind, RequestError> {
    if !item.is_object() {
        return Err(invalid(format!("input[{i}] is not an object")));
    }
    let role = item.get("role").and_then(Value::as_str);
    match (item.get("type").and_then(Value::as_str), role) {
        (Some("message") | None, Some("assistant")) => Ok(Kind::Assistant),
        (Some("message") | None, Some(role)) => match role {
            "user" => Ok(Kind::Message("user")),
            "system" => Ok(Kind::Message("system")),
            "developer" => Ok(Kind::Message("developer")),
            other => Err(RequestError::unreadable(format!(
                "input[{i}] has the role `{other}`, which the engine does not read"
            ))),
        },
        (Some("message") | None, None) => Err(invalid(format!("input[{i}] has no `type` or `role`"))),
        (Some("function_call_output" | "custom_tool_call_output"), _) => Ok(Kind::Output),
        (Some(_), _) => Ok(Kind::Assistant),
    }
}

/// The parts an assistant item adds: its text, its call, or itself as an opaque part.
fn assistant_parts(
    at: &str,
    item: &Value,
    counter: &TokenCounter,
    names: &mut BTreeMap<String, String>,
) -> Result<Vec<ContentPart>, RequestError> {
    let text = |key: &str| item.get(key).and_then(Value::as_str);
    match text("type") {
        Some("function_call" | "custom_tool_call") => {
            let id = text("call_id").filter(|id| !id.is_empty());
            let id = id.ok_or_else(|| invalid(format!("{at}: a call needs a `call_id`")))?;
            let name = text("name").ok_or_else(|| invalid(format!("{at}: call `{id}` needs a `name`")))?;
            let key = if text("type") == Some("custom_tool_call") { "input" } else { "arguments" };
            let arguments = match item.get(key) {
                Some(Value::String(text)) => text.clone(),
                None | Some(Value::Null) => String::new(),
                Some(other) => compact(other),
            };
            names.insert(id.to_owned(), name.to_owned());
            Ok(vec![ContentPart::ToolCall(ToolCall { id: ToolCallId::from(id), name: name.to_owned(), arguments })])
        }
        Some("message") | None if text("role") == Some("assistant") => content(at, item.get("content"), counter),
        _ => Ok(vec![opaque_part(item, counter)]),
    }
}

/// A call's output as a tool message: its text, and its other parts (an image) after it.
fn tool_output(
    at: &str,
    item: &Value,
    names: &BTreeMap<String, String>,
    counter: &TokenCounter,
) -> Result<crate::engine::MessageDraft, RequestError> {
    let id = item.get("call_id").and_then(Value::as_str).filter(|id| !id.is_empty());
    let id = id.ok_or_else(|| invalid(format!("{at}: a call's output needs a `call_id`")))?;
    let (texts, attached): (Vec<ContentPart>, Vec<ContentPart>) = content(at, item.get("output"), counter)?
        .into_iter()
        .partition(|part| matches!(part, ContentPart::Text { .. }));
    let result = ToolResult {
        call_id: ToolCallId::from(id),
        name: names.get(id).cloned().unwrap_or_default(),
        status: ToolStatus::Ok,
        output: text_of(&texts),
        stderr: None,
        exit_code: None,
    };
    let mut parts = vec![ContentPart::ToolResult(result)];
    parts.extend(attached);
    Ok(draft(Role::Tool, parts))
}

/// The parts of a message's `content` (or an output's `output`): a string is one text part; in
/// a list, `input_text` and `output_text` are text and anything else is an opaque part.
fn content(at: &str, content: Option<&Value>, counter: &TokenCounter) -> Result<Vec<ContentPart>, RequestError> {
    match content {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(text)) => Ok(vec![ContentPart::Text { text: text.clone() }]),
        Some(Value::Array(parts)) => parts
            .iter()
            .enumerate()
            .map(|(j, part)| match (part.get("type").and_then(Value::as_str), part.get("text")) {
                (Some("input_text" | "output_text" | "text"), Some(Value::String(text))) => {
                    Ok(ContentPart::Text { text: text.clone() })
                }
                (Some(_), _) => Ok(opaque_part(part, counter)),
                (None, _) => Err(invalid(format!("{at}.content[{j}] has no `type`"))),
            })
            .collect(),
        Some(_) => Err(invalid(format!("{at}: content must be a string or a list of parts"))),
    }
}

fn text_of(parts: &[ContentPart]) -> String {
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|p| match p {
            ContentPart::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    texts.join("\n")
}

/// The tools as the engine counts them: a function's name and parameters, a custom tool's
/// format, a hosted tool (`web_search`) by its type.
fn tools(value: &Value) -> Result<Vec<ToolSpec>, RequestError> {
    tool_list(value)?
        .iter()
        .enumerate()
        .map(|(i, tool)| {
            let text = |key: &str| tool.get(key).and_then(Value::as_str);
            let name = text("name").or(text("type"));
            let name = name.ok_or_else(|| invalid(format!("tools[{i}] has no `name` or `type`")))?;
            let mut rest = tool.clone();
            if let Value::Object(fields) = &mut rest {
                fields.remove("name");
                fields.remove("description");
            }
            Ok(ToolSpec {
                name: name.to_owned(),
                description: text("description").unwrap_or_default().to_owned(),
                parameters: rest,
            })
        })
        .collect()
}

/// The names of the request's tools of type `custom`.
fn custom_tools(value: &Value) -> BTreeSet<String> {
    let tools = value.as_array().map(Vec::as_slice).unwrap_or_default();
    tools
        .iter()
        .filter(|t| t.get("type").and_then(Value::as_str) == Some("custom"))
        .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

/// A Responses reply as it is read: its output items.
#[derive(Debug, Default)]
struct ResponsesReply {
    output_items: Vec<Value>,
}

impl ReplyFormat for ResponsesReply {
    /// Output items as they finish, then the whole response with its usage
    /// (`response.completed`, or `response.incomplete` when a limit cut it).
    fn event(&mut self, data: &Value, facts: &mut ReplyFacts) {
        match data.get("type").and_then(Value::as_str).unwrap_or_default() {
            "response.output_item.done" => self.output_items.extend(data.get("item").cloned()),
            "response.completed" | "response.incomplete" => {
                self.response(data.get("response").unwrap_or(&Value::Null), facts)
            }
            "response.failed" | "error" => {
                let code = data.pointer("/response/error/code").or(data.get("code")).and_then(Value::as_str);
                facts
                    .error
                    .get_or_insert_with(|| format!("the upstream's response failed ({})", code.unwrap_or("error")));
            }
            _ => {}
        }
    }

    fn whole(&mut self, body: &Value, facts: &mut ReplyFacts) {
        match body.get("output").is_some_and(Value::is_array) {
            true => self.response(body, facts),
            false => facts.error = Some("the upstream's reply has no `output`".to_owned()),
        }
    }

    fn parts(&mut self, counter: &TokenCounter) -> Vec<ContentPart> {
        reply_parts(&self.output_items, counter)
    }
}

impl ResponsesReply {
    /// A Responses response object: its `output` (when it lists it), status and usage.
    fn response(&mut self, response: &Value, facts: &mut ReplyFacts) {
        if let Some(output) = response.get("output").and_then(Value::as_array).filter(|o| !o.is_empty()) {
            self.output_items = output.clone();
        }
        let status = response.get("status").and_then(Value::as_str).unwrap_or("completed");
        let reason = response.pointer("/incomplete_details/reason").and_then(Value::as_str);
        facts.stop_reason = Some(reason.map_or(status.to_owned(), |r| format!("{status}: {r}")));
        if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
            let number = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
            facts.usage = Some(ProviderUsage::with_cached(
                number("/input_tokens"),
                number("/input_tokens_details/cached_tokens"),
                number("/output_tokens"),
            ));
        }
        facts.done = true;
    }
}
