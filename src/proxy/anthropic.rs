//! Anthropic Messages: an agent's request read into the engine's model, and the engine's
//! prompt written back as the request for the upstream.
//!
//! Read the way the Claude Code importer reads a session log, so the proxy and the replay's
//! `workbench` strategy record the same messages: a user message's `tool_result` blocks become
//! one tool message each and the blocks around them user messages; `thinking` keeps its text and
//! signature; a `tool_use`'s input becomes its arguments as compact JSON. What the engine does
//! not read (images, documents, `redacted_thinking`, server tool blocks, unknown types) is kept
//! as an opaque part and sent back as it came. Its replies are read as they stream (content
//! blocks by index, their deltas joined) or whole.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::api::Api;
use super::errors::error_body;
use super::reply::{ProviderUsage, ReplyFacts, ReplyFormat};
use super::request::{
    ClientMessage, ClientRequest, RequestError, draft, invalid, messages_of, model_and_stream, opaque_part, tool_list,
};
use super::route::{Format, Provider};
use super::sse;
use super::wire::{RawObject, compact, without_cache_control};
use crate::model::{ContentPart, Role, ToolCall, ToolCallId, ToolResult, ToolStatus};
use crate::prompt::serialize::{AnthropicOptions, to_anthropic_with};
use crate::prompt::{PromptView, ToolSpec};
use crate::tokens::TokenCounter;
use crate::workbench::cost::{CacheTtl, breakpoint_lifetimes};

/// The API takes at most this many cache breakpoints in one request.
pub const MAX_BREAKPOINTS: usize = 4;

/// Anthropic's Messages API.
pub(super) static MESSAGES: Api = Api {
    parse_request,
    upstream_body,
    agent_cache_ttl: agent_ttl,
    chooses_cache_ttl: true,
    reply: || Box::<MessagesReply>::default(),
    stream_error: |message| sse::event("error", &error_body(Provider::Anthropic, 500, message)),
};

fn parse_request(body: RawObject, _path: &str, counter: &TokenCounter) -> Result<ClientRequest, RequestError> {
    let raw_messages = messages_of(&body)?;
    let (model, stream) = model_and_stream(&body)?;
    let mut cache_control = None;
    let (system_text, system_blocks) = system(&body.value("system"), &mut cache_control)?;
    let tools = tools(&body.value("tools"))?;
    let agent_session = agent_session(&body.field::<Value>("metadata").map_err(invalid)?.unwrap_or(Value::Null));

    let names = tool_names(&raw_messages);
    let mut reader = Reader { counter, names: &names, cache_control, system_messages: false };
    let mut messages = Vec::with_capacity(raw_messages.len());
    for (i, message) in raw_messages.iter().enumerate() {
        let at = format!("messages[{i}]");
        let role = message.get("role").and_then(Value::as_str).ok_or_else(|| invalid(format!("{at} has no `role`")))?;
        let content = message.get("content").ok_or_else(|| invalid(format!("{at} has no `content`")))?;
        let drafts = match role {
            "user" => reader.user(&at, content)?,
            "assistant" => vec![draft(Role::Assistant, reader.parts(&at, content, Role::Assistant)?)],
            "system" => {
                reader.system_messages = true;
                vec![draft(Role::System, reader.parts(&at, content, Role::System)?)]
            }
            other => {
                return Err(RequestError::unreadable(format!(
                    "{at} has the role `{other}`, which the engine does not read"
                )));
            }
        };
        messages.push(ClientMessage::new(drafts));
    }
    Ok(ClientRequest {
        model,
        stream,
        system_blocks,
        agent_session,
        cache_control: reader.cache_control,
        system_messages: reader.system_messages,
        ..ClientRequest::new(Format::Anthropic, body, system_text, messages, tools)
    })
}

/// The upstream's body: the agent's request with the engine's `system` and `messages`, its
/// system blocks as they came in place of the engine's copy of them, and the cache
/// breakpoints of [`to_anthropic_with`] (at most [`MAX_BREAKPOINTS`] with any the agent put on
/// its tools, which it keeps while there is room; the engine's use the agent's own
/// `cache_control` value). Breakpoints whose lifetime the agent did not set get `ttl`
/// (the engine's choice) within [`breakpoint_lifetimes`]' order.
fn upstream_body(request: &ClientRequest, view: &PromptView, ttl: CacheTtl) -> String {
    let rendered = to_anthropic_with(view, AnthropicOptions { system_messages: request.system_messages });
    let mut system: Vec<Value> = rendered.get("system").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut messages = rendered.get("messages").cloned().unwrap_or(Value::Array(Vec::new()));
    if !request.system_text.trim().is_empty() && !system.is_empty() {
        let engine_copy = system.remove(0);
        let mut agent = request.system_blocks.clone();
        if engine_copy.get("cache_control").is_some()
            && let Some(Value::Object(last)) =
                agent.iter_mut().rev().find(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        {
            last.insert("cache_control".into(), serde_json::json!({"type": "ephemeral"}));
        }
        agent.extend(system);
        system = agent;
    }
    let mut system = Value::Array(system);
    let value = request.cache_control.clone();
    let mut marks = Vec::new();
    restyle_breakpoints(&mut system, value.as_ref(), &mut marks);
    restyle_breakpoints(&mut messages, value.as_ref(), &mut marks);
    let engine_marks = marks.len();
    let mut tools = match request.body.value("tools") {
        Value::Array(tools) => tools,
        _ => Vec::new(),
    };
    let marked: Vec<usize> = (0..tools.len()).filter(|&i| tools[i].get("cache_control").is_some()).collect();
    let room = MAX_BREAKPOINTS.saturating_sub(engine_marks);
    let dropped = marked.len().saturating_sub(room);
    for &i in &marked[..dropped] {
        if let Value::Object(tool) = &mut tools[i] {
            tool.remove("cache_control");
        }
    }
    let mut tools_changed = dropped > 0;
    let kept = &marked[dropped..];
    let mut all: Vec<Value> = kept.iter().filter_map(|&i| tools[i].get("cache_control").cloned()).collect();
    all.append(&mut marks);
    set_lifetimes(&mut all, ttl);
    let (tool_marks, engine_values) = all.split_at(kept.len());
    for (&i, mark) in kept.iter().zip(tool_marks) {
        if let Value::Object(tool) = &mut tools[i]
            && tool.get("cache_control") != Some(mark)
        {
            tool.insert("cache_control".into(), mark.clone());
            tools_changed = true;
        }
    }
    let mut engine_values = engine_values.iter();
    replace_breakpoints(&mut system, &mut engine_values);
    replace_breakpoints(&mut messages, &mut engine_values);

    let mut body = request.body.clone();
    if system.as_array().is_some_and(|s| !s.is_empty()) {
        body.set("system", &system);
    } else {
        body.remove("system");
    }
    body.set("messages", &messages);
    if tools_changed {
        body.set("tools", &Value::Array(tools));
    }
    body.to_json()
}

/// The lifetime the agent set on its breakpoints outside `tools` (the one the engine's copy).
fn agent_ttl(request: &ClientRequest) -> Option<CacheTtl> {
    request.cache_control.as_ref().and_then(ttl_of).and_then(CacheTtl::parse)
}

fn ttl_of(mark: &Value) -> Option<&str> {
    mark.get("ttl").and_then(Value::as_str)
}

/// Give every breakpoint in `marks` (in the provider's order) its lifetime: those with a
/// `ttl` keep it, the others get `chosen` as [`breakpoint_lifetimes`] orders them (5 minutes
/// is the provider's default: no `ttl` written).
fn set_lifetimes(marks: &mut [Value], chosen: CacheTtl) {
    // A lifetime the provider does not know is left as it came, out of the ordering.
    let known: Vec<usize> =
        (0..marks.len()).filter(|&i| ttl_of(&marks[i]).is_none_or(|t| CacheTtl::parse(t).is_some())).collect();
    let set: Vec<Option<CacheTtl>> = known.iter().map(|&i| ttl_of(&marks[i]).and_then(CacheTtl::parse)).collect();
    for ((&i, ttl), was) in known.iter().zip(breakpoint_lifetimes(&set, chosen)).zip(set) {
        if was.is_none()
            && ttl == CacheTtl::OneHour
            && let Value::Object(fields) = &mut marks[i]
        {
            fields.insert("ttl".into(), Value::String("1h".into()));
        }
    }
}

/// Give every breakpoint under `value` the agent's `cache_control` (when it has one) and push
/// each, in document order, to `marks`.
fn restyle_breakpoints(value: &mut Value, agent: Option<&Value>, marks: &mut Vec<Value>) {
    match value {
        Value::Object(fields) => {
            if let Some(mark) = fields.get_mut("cache_control") {
                if let Some(agent) = agent {
                    *mark = agent.clone();
                }
                marks.push(mark.clone());
            }
            for (_, v) in fields.iter_mut().filter(|(k, _)| *k != "cache_control") {
                restyle_breakpoints(v, agent, marks);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| restyle_breakpoints(v, agent, marks)),
        _ => {}
    }
}

/// Replace the breakpoints under `value`, in document order, by the next of `marks`.
fn replace_breakpoints<'a>(value: &mut Value, marks: &mut impl Iterator<Item = &'a Value>) {
    match value {
        Value::Object(fields) => {
            if let Some(mark) = fields.get_mut("cache_control")
                && let Some(next) = marks.next()
            {
                *mark = next.clone();
            }
            for (_, v) in fields.iter_mut().filter(|(k, _)| *k != "cache_control") {
                replace_breakpoints(v, marks);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| replace_breakpoints(v, marks)),
        _ => {}
    }
}

/// `system` as text (blocks joined by newlines) and as blocks without breakpoints.
fn system(value: &Value, cache_control: &mut Option<Value>) -> Result<(String, Vec<Value>), RequestError> {
    match value {
        Value::Null => Ok((String::new(), Vec::new())),
        Value::String(text) => Ok((text.clone(), vec![serde_json::json!({"type": "text", "text": text})])),
        Value::Array(blocks) => {
            let mut texts = Vec::new();
            let mut kept = Vec::new();
            for (j, block) in blocks.iter().enumerate() {
                if !block.is_object() {
                    return Err(RequestError::invalid(format!("system[{j}] is not an object")));
                }
                let (block, mark) = without_cache_control(block.clone());
                if cache_control.is_none() {
                    *cache_control = mark;
                }
                if let Some(text) = block.get("text").and_then(Value::as_str) {
                    texts.push(text.to_owned());
                }
                kept.push(block);
            }
            Ok((texts.join("\n"), kept))
        }
        _ => Err(RequestError::invalid("`system` must be a string or a list of blocks")),
    }
}

/// The tools as the engine counts them: name, description and input schema (a server tool
/// without a schema counts as its whole JSON).
fn tools(value: &Value) -> Result<Vec<ToolSpec>, RequestError> {
    tool_list(value)?
        .iter()
        .enumerate()
        .map(|(i, tool)| {
            let name = tool.get("name").and_then(Value::as_str);
            let name = name.ok_or_else(|| RequestError::invalid(format!("tools[{i}] has no `name`")))?.to_owned();
            let description = tool.get("description").and_then(Value::as_str).unwrap_or_default().to_owned();
            let parameters = match tool.get("input_schema") {
                Some(schema) => schema.clone(),
                None => without_cache_control(tool.clone()).0,
            };
            Ok(ToolSpec { name, description, parameters })
        })
        .collect()
}

/// Claude Code's session id: `metadata.user_id` holds JSON with a `session_id` (older versions:
/// `…_session_<id>` in the text).
fn agent_session(metadata: &Value) -> Option<String> {
    let user_id = metadata.get("user_id").and_then(Value::as_str)?;
    if let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(user_id) {
        return fields.get("session_id").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
    }
    let (_, session) = user_id.rsplit_once("_session_")?;
    (!session.is_empty()).then(|| session.to_owned())
}

/// The names of the request's tool calls by id, to name their results.
fn tool_names(messages: &[Value]) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for message in messages.iter().filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant")) {
        for block in message.get("content").and_then(Value::as_array).into_iter().flatten() {
            if block.get("type").and_then(Value::as_str) == Some("tool_use")
                && let (Some(id), Some(name)) =
                    (block.get("id").and_then(Value::as_str), block.get("name").and_then(Value::as_str))
            {
                names.entry(id.to_owned()).or_insert_with(|| name.to_owned());
            }
        }
    }
    names
}

/// Reads the messages' content, noting the first breakpoint the agent used.
struct Reader<'a> {
    counter: &'a TokenCounter,
    names: &'a BTreeMap<String, String>,
    cache_control: Option<Value>,
    system_messages: bool,
}

impl Reader<'_> {
    /// A content block without its breakpoint; an error when it is no object with a `type`.
    fn block(&mut self, at: &str, block: &Value) -> Result<(String, Value), RequestError> {
        if !block.is_object() {
            return Err(RequestError::invalid(format!("{at} is not an object")));
        }
        let (block, mark) = without_cache_control(block.clone());
        if self.cache_control.is_none() {
            self.cache_control = mark;
        }
        let kind = block.get("type").and_then(Value::as_str);
        let kind = kind.ok_or_else(|| RequestError::invalid(format!("{at} has no `type`")))?.to_owned();
        Ok((kind, block))
    }

    fn text(at: &str, block: &Value) -> Result<String, RequestError> {
        match block.get("text") {
            Some(Value::String(text)) => Ok(text.clone()),
            _ => Err(RequestError::invalid(format!("{at}: a text block needs a string `text`"))),
        }
    }

    /// The parts of an assistant or system message.
    fn parts(&mut self, at: &str, content: &Value, role: Role) -> Result<Vec<ContentPart>, RequestError> {
        let blocks = match content {
            Value::String(text) => return Ok(vec![ContentPart::Text { text: text.clone() }]),
            Value::Array(blocks) => blocks,
            _ => return Err(RequestError::invalid(format!("{at}.content must be a string or a list of blocks"))),
        };
        let mut parts = Vec::with_capacity(blocks.len());
        for (j, block) in blocks.iter().enumerate() {
            let at = format!("{at}.content[{j}]");
            let (kind, block) = self.block(&at, block)?;
            let part = match (kind.as_str(), role) {
                ("text", _) => ContentPart::Text { text: Self::text(&at, &block)? },
                ("thinking", Role::Assistant) => ContentPart::Reasoning {
                    text: block.get("thinking").and_then(Value::as_str).unwrap_or_default().to_owned(),
                    signature: block.get("signature").and_then(Value::as_str).map(str::to_owned),
                },
                ("tool_use", Role::Assistant) => {
                    let id = block.get("id").and_then(Value::as_str).filter(|id| !id.is_empty());
                    let id = id.ok_or_else(|| RequestError::invalid(format!("{at}: a tool_use needs an `id`")))?;
                    let name = block.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
                    ContentPart::ToolCall(ToolCall {
                        id: ToolCallId::from(id),
                        name,
                        arguments: arguments(block.get("input")),
                    })
                }
                _ => opaque_part(&block, self.counter),
            };
            parts.push(part);
        }
        Ok(parts)
    }

    /// A user message: one tool message per `tool_result` block, user messages for the blocks
    /// around them, in order.
    fn user(&mut self, at: &str, content: &Value) -> Result<Vec<crate::engine::MessageDraft>, RequestError> {
        let blocks = match content {
            Value::String(text) => return Ok(vec![draft(Role::User, vec![ContentPart::Text { text: text.clone() }])]),
            Value::Array(blocks) => blocks,
            _ => return Err(RequestError::invalid(format!("{at}.content must be a string or a list of blocks"))),
        };
        let mut drafts = Vec::new();
        let mut pending = Vec::new();
        for (j, block) in blocks.iter().enumerate() {
            let at = format!("{at}.content[{j}]");
            let (kind, block) = self.block(&at, block)?;
            match kind.as_str() {
                "text" => pending.push(ContentPart::Text { text: Self::text(&at, &block)? }),
                "tool_result" => {
                    if !pending.is_empty() {
                        drafts.push(draft(Role::User, std::mem::take(&mut pending)));
                    }
                    drafts.push(draft(Role::Tool, self.tool_result(&at, &block)?));
                }
                _ => pending.push(opaque_part(&block, self.counter)),
            }
        }
        if !pending.is_empty() {
            drafts.push(draft(Role::User, pending));
        }
        if drafts.is_empty() {
            drafts.push(draft(Role::User, Vec::new()));
        }
        Ok(drafts)
    }

    /// A `tool_result` block: its text as the output, the other blocks of its content (an
    /// image) as opaque parts after the result.
    fn tool_result(&mut self, at: &str, block: &Value) -> Result<Vec<ContentPart>, RequestError> {
        let id = block.get("tool_use_id").and_then(Value::as_str);
        let id = id.ok_or_else(|| RequestError::invalid(format!("{at}: a tool_result needs a `tool_use_id`")))?;
        let mut texts = Vec::new();
        let mut attached = Vec::new();
        match block.get("content") {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => texts.push(text.clone()),
            Some(Value::Array(blocks)) => {
                for (k, inner) in blocks.iter().enumerate() {
                    let at = format!("{at}.content[{k}]");
                    let (kind, inner) = self.block(&at, inner)?;
                    if kind == "text" {
                        texts.push(Self::text(&at, &inner)?);
                    } else {
                        attached.push(opaque_part(&inner, self.counter));
                    }
                }
            }
            Some(_) => return Err(RequestError::invalid(format!("{at}.content must be a string or a list of blocks"))),
        }
        let error = block.get("is_error").and_then(Value::as_bool) == Some(true);
        let result = ToolResult {
            call_id: ToolCallId::from(id),
            name: self.names.get(id).cloned().unwrap_or_default(),
            status: if error { ToolStatus::Error } else { ToolStatus::Ok },
            output: texts.join("\n"),
            stderr: None,
            exit_code: None,
        };
        let mut parts = vec![ContentPart::ToolResult(result)];
        parts.extend(attached);
        Ok(parts)
    }
}

/// A `tool_use` input as the engine keeps arguments: a string as it is, anything else as
/// compact JSON, `{}` when absent (as the importers do).
pub(super) fn arguments(input: Option<&Value>) -> String {
    match input {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Null) | None => "{}".to_owned(),
        Some(other) => compact(other),
    }
}

/// The agent's blocks of an assistant reply (from the upstream) read into parts.
fn reply_parts(blocks: &[Value], counter: &TokenCounter) -> Vec<ContentPart> {
    let names = BTreeMap::new();
    let mut reader = Reader { counter, names: &names, cache_control: None, system_messages: false };
    reader.parts("reply", &Value::Array(blocks.to_vec()), Role::Assistant).unwrap_or_default()
}

/// A Messages reply as it is read: its content blocks, by index.
#[derive(Debug, Default)]
struct MessagesReply {
    blocks: BTreeMap<u64, Block>,
}

impl ReplyFormat for MessagesReply {
    fn event(&mut self, data: &Value, facts: &mut ReplyFacts) {
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        match data.get("type").and_then(Value::as_str).unwrap_or_default() {
            "message_start" => usage(facts, data.pointer("/message/usage")),
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
                    facts.stop_reason = Some(reason.to_owned());
                }
                usage(facts, data.get("usage"));
            }
            "message_stop" => facts.done = true,
            "error" => {
                let kind = data.pointer("/error/type").and_then(Value::as_str).unwrap_or("error");
                facts.error.get_or_insert_with(|| format!("the upstream sent an error event ({kind})"));
            }
            _ => {}
        }
    }

    fn whole(&mut self, body: &Value, facts: &mut ReplyFacts) {
        usage(facts, body.get("usage"));
        facts.stop_reason = body.get("stop_reason").and_then(Value::as_str).map(str::to_owned);
        match body.get("content").and_then(Value::as_array) {
            Some(blocks) => {
                for (i, block) in blocks.iter().enumerate() {
                    self.blocks.insert(i as u64, Block { start: block.clone(), ..Block::default() });
                }
                facts.done = true;
            }
            None => facts.error = Some("the upstream's reply has no `content`".to_owned()),
        }
    }

    fn parts(&mut self, counter: &TokenCounter) -> Vec<ContentPart> {
        let blocks: Vec<Value> = std::mem::take(&mut self.blocks).into_values().map(Block::into_value).collect();
        reply_parts(&blocks, counter)
    }
}

/// Anthropic reports usage at the start and again, cumulatively, at the end.
fn usage(facts: &mut ReplyFacts, usage: Option<&Value>) {
    let Some(usage) = usage.filter(|u| u.is_object()) else { return };
    let total = facts.usage.get_or_insert_with(ProviderUsage::default);
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

/// One content block of an Anthropic stream: its start and the deltas so far.
#[derive(Debug, Default)]
struct Block {
    start: Value,
    text: String,
    thinking: String,
    signature: String,
    input_json: String,
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
