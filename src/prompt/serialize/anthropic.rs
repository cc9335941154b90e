//! Anthropic messages.

use serde_json::{Map, Value, json};

use super::{in_place_label, is_sendable, joined_text, opaque_parts, tool_calls, tool_result_text, tool_results};
use crate::model::{ContentPart, OpaquePart, Role, ToolCall, ToolResult, ToolStatus};
use crate::prompt::{Layer, PromptMessage, PromptView};

/// The user text sent first when the conversation would start with the assistant.
pub const CONTINUED: &str = "(continued)";

/// Choices of [`to_anthropic_with`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AnthropicOptions {
    /// `System`-role messages after the leading run are sent in place as `{"role": "system"}`
    /// messages (which only some API versions take: the proxy turns this on when the agent's
    /// own request had them) instead of `[system]` user text.
    pub system_messages: bool,
}

/// [`to_anthropic_with`] and the default options.
pub fn to_anthropic(view: &PromptView) -> Value {
    to_anthropic_with(view, AnthropicOptions::default())
}

/// Anthropic messages: `{"system": [text blocks], "messages": [...], "tools": [{"name",
/// "description", "input_schema"}]}`, `system` and `tools` left out when empty.
///
/// **System.** The leading run of `System`-role messages of the System and Rules layers (text
/// only) is `system`, one `{"type": "text", "text"}` block per text part.
///
/// **Messages.** Only `user` and `assistant`, strictly alternating: adjacent turns of the same
/// role are merged into one message, and in a merged user message the `tool_result` blocks come
/// first (in their order), then the rest. When the first message would be the assistant's, a
/// user text block `(continued)` is put before it. Per view message:
/// - `Assistant`: one assistant turn with, in the order of its parts, `{"type": "thinking",
///   "thinking", "signature"}` for reasoning with a non-empty signature (both byte-exact;
///   reasoning without one is dropped, since the API cannot verify it), `{"type": "text",
///   "text"}`, and `{"type": "tool_use", "id", "name", "input"}`, where `input` is the
///   arguments parsed as JSON when they are an object, `{}` when they are blank, and otherwise
///   `{"_raw": "<arguments text>"}` (the API only takes an object);
/// - `Tool`: a user turn of `{"type": "tool_result", "tool_use_id", "content", "is_error":
///   true}` blocks, one per result, `content` being [`tool_result_text`](super::tool_result_text)
///   (left out when empty) and `is_error` present only when the status is `Error`; they land in
///   the user message right after the assistant message that made the calls. The message's
///   opaque parts (an image a tool returned) go into its last result's `content`, which is then
///   a list: the text block (when the text is not empty), then the opaque blocks;
/// - `User`: user text blocks and opaque blocks, in the order of the parts;
/// - `System` and `Summary` messages after the leading run (archived summaries in history,
///   tail reminders) cannot go to `system` without changing their place in the conversation:
///   each is one user text block, its text parts joined by newlines after a first line
///   `[system]` or `[summary]` (by role), then its opaque blocks. With
///   [`AnthropicOptions::system_messages`], a `System` message is instead its own
///   `{"role": "system", "content": [blocks]}` message, in place (adjacent ones merged).
///
/// Opaque parts are sent as the JSON they carry, in the order of the parts.
///
/// Blank text blocks are never sent (the API rejects them). A tool result that answers no call
/// is still sent as a `tool_result` block, so a view with broken pairing gives a request the
/// API rejects rather than one that silently loses a result.
///
/// **Cache breakpoints** (`"cache_control": {"type": "ephemeral"}`, at most 3 of the 4 allowed),
/// on the stable prefix (the cache covers tools, then system, then messages):
/// 1. the last `system` block (the end of the System and Rules layers);
/// 2. when Rules blocks follow the System layer's blocks, also the last System-layer block, so
///    a change of the rules keeps the system prompt and tools cached;
/// 3. the last block sent for the messages before the first message of layer `Tail` (or the
///    last block of all when there is no tail), skipping blocks that cannot carry one
///    (`thinking`, and opaque blocks other than images, documents and search results). The
///    tail (R2.4) changes on every call; everything before it is the prefix the next call
///    repeats. The block may sit in the middle of a merged user message, when a tail
///    message is merged into the same turn.
pub fn to_anthropic_with(view: &PromptView, options: AnthropicOptions) -> Value {
    let prefix_len = view.messages.iter().take_while(|m| is_system_prefix(m)).count();

    let mut system: Vec<(Layer, Block)> = Vec::new();
    for message in view.messages.iter().take(prefix_len) {
        for part in &message.content {
            if let ContentPart::Text { text } = part
                && is_sendable(text)
            {
                system.push((message.layer, Block::text(text)));
            }
        }
    }
    let system_layer_end = system.iter().rposition(|(layer, _)| *layer == Layer::System);
    let system_len = system.len();
    if let Some(end) = system_layer_end
        && end + 1 < system_len
        && let Some((_, block)) = system.get_mut(end)
    {
        block.breakpoint = true;
    }
    if let Some((_, block)) = system.last_mut() {
        block.breakpoint = true;
    }

    let mut turns: Vec<(Side, Vec<Block>)> = Vec::new();
    let mut tail_seen = false;
    for message in view.messages.iter().skip(prefix_len) {
        if message.layer == Layer::Tail && !tail_seen {
            tail_seen = true;
            mark_last(&mut turns);
        }
        let content = &message.content;
        if message.role == Role::Assistant {
            push(&mut turns, Side::Assistant, assistant_blocks(content));
            push(&mut turns, Side::User, result_blocks(content, false));
            continue;
        }
        push(&mut turns, Side::User, result_blocks(content, message.role == Role::Tool));
        let (side, texts) = match message.role {
            Role::System if options.system_messages => (Side::System, user_blocks(content)),
            Role::System | Role::Summary => (Side::User, labelled(in_place_label(message.role), content)),
            Role::Tool if tool_results(content).next().is_some() => (Side::User, text_blocks(content)),
            Role::Tool => (Side::User, user_blocks(content)),
            Role::User | Role::Observation | Role::Assistant => (Side::User, user_blocks(content)),
        };
        push(&mut turns, side, texts);
        push(&mut turns, Side::Assistant, tool_calls(content).map(Block::tool_use).collect());
    }
    if !tail_seen {
        mark_last(&mut turns);
    }

    let mut merged: Vec<(Side, Vec<Block>)> = Vec::new();
    for (side, blocks) in turns {
        match merged.last_mut() {
            Some((last, existing)) if *last == side => existing.extend(blocks),
            _ => merged.push((side, blocks)),
        }
    }
    if merged.first().is_some_and(|(side, _)| *side != Side::User) {
        merged.insert(0, (Side::User, vec![Block::text(CONTINUED)]));
    }
    let messages: Vec<Value> = merged
        .into_iter()
        .map(|(side, blocks)| {
            let blocks = match side {
                Side::Assistant | Side::System => blocks,
                Side::User => {
                    let (mut results, rest): (Vec<Block>, Vec<Block>) =
                        blocks.into_iter().partition(|b| b.kind == Kind::ToolResult);
                    results.extend(rest);
                    results
                }
            };
            let role = match side {
                Side::User => "user",
                Side::Assistant => "assistant",
                Side::System => "system",
            };
            json!({"role": role, "content": blocks.into_iter().map(Block::render).collect::<Vec<_>>()})
        })
        .collect();

    let mut out = Map::new();
    if !system.is_empty() {
        out.insert("system".into(), system.into_iter().map(|(_, block)| block.render()).collect());
    }
    out.insert("messages".into(), Value::Array(messages));
    if !view.tools.is_empty() {
        let tools = view
            .tools
            .iter()
            .map(|tool| json!({"name": tool.name, "description": tool.description, "input_schema": tool.parameters}))
            .collect();
        out.insert("tools".into(), Value::Array(tools));
    }
    Value::Object(out)
}

/// The parsed arguments of a call as `tool_use.input`: the JSON object they hold, `{}` when
/// they are blank, else `{"_raw": "<arguments text>"}` (not JSON, or JSON but not an object).
pub fn tool_input(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return Value::Object(Map::new());
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => json!({"_raw": arguments}),
    }
}

/// A message that goes to `system`: a text-only `System` message of the System or Rules layer.
fn is_system_prefix(message: &PromptMessage) -> bool {
    message.role == Role::System
        && matches!(message.layer, Layer::System | Layer::Rules)
        && message.content.iter().all(|p| matches!(p, ContentPart::Text { .. } | ContentPart::Reasoning { .. }))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    User,
    Assistant,
    /// A system message in place ([`AnthropicOptions::system_messages`]).
    System,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
    ToolUse,
    ToolResult,
    /// An opaque part; `true` when the API lets it carry a breakpoint (images, documents).
    Opaque(bool),
}

/// One content block, and whether it carries a cache breakpoint.
struct Block {
    kind: Kind,
    fields: Map<String, Value>,
    breakpoint: bool,
}

impl Block {
    fn new(kind: Kind, fields: Value) -> Block {
        let fields = match fields {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Block { kind, fields, breakpoint: false }
    }

    fn text(text: &str) -> Block {
        Block::new(Kind::Text, json!({"type": "text", "text": text}))
    }

    fn tool_use(call: &ToolCall) -> Block {
        Block::new(
            Kind::ToolUse,
            json!({"type": "tool_use", "id": call.id, "name": call.name, "input": tool_input(&call.arguments)}),
        )
    }

    /// A result, with `attached` opaque blocks (an image the tool returned) after its text.
    fn tool_result(result: &ToolResult, attached: Vec<Value>) -> Block {
        let mut block = Block::new(Kind::ToolResult, json!({"type": "tool_result", "tool_use_id": result.call_id}));
        let text = tool_result_text(result);
        if !attached.is_empty() {
            let mut content = Vec::new();
            if is_sendable(&text) {
                content.push(json!({"type": "text", "text": text}));
            }
            content.extend(attached);
            block.fields.insert("content".into(), Value::Array(content));
        } else if !text.is_empty() {
            block.fields.insert("content".into(), Value::String(text));
        }
        if result.status == ToolStatus::Error {
            block.fields.insert("is_error".into(), Value::Bool(true));
        }
        block
    }

    /// The JSON an opaque part carries; a placeholder text block when it is not a JSON object.
    fn opaque(part: &OpaquePart) -> Block {
        match serde_json::from_str::<Value>(&part.json) {
            Ok(Value::Object(fields)) => {
                let cacheable = matches!(part.kind.as_str(), "image" | "document" | "search_result");
                Block { kind: Kind::Opaque(cacheable), fields, breakpoint: false }
            }
            _ => Block::text(&part.placeholder()),
        }
    }

    fn can_carry_breakpoint(&self) -> bool {
        matches!(self.kind, Kind::Text | Kind::ToolUse | Kind::ToolResult | Kind::Opaque(true))
    }

    fn render(self) -> Value {
        let mut fields = self.fields;
        if self.breakpoint {
            fields.insert("cache_control".into(), json!({"type": "ephemeral"}));
        }
        Value::Object(fields)
    }
}

/// The blocks of an assistant message, in the order of its parts (results excepted).
fn assistant_blocks(content: &[ContentPart]) -> Vec<Block> {
    content
        .iter()
        .filter_map(|part| match part {
            ContentPart::Reasoning { text, signature: Some(signature) } if !signature.is_empty() => {
                Some(Block::new(Kind::Thinking, json!({"type": "thinking", "thinking": text, "signature": signature})))
            }
            ContentPart::Text { text } if is_sendable(text) => Some(Block::text(text)),
            ContentPart::ToolCall(call) => Some(Block::tool_use(call)),
            ContentPart::Opaque(part) => Some(Block::opaque(part)),
            _ => None,
        })
        .collect()
}

/// The text and opaque parts of a message as blocks, in order.
fn user_blocks(content: &[ContentPart]) -> Vec<Block> {
    content
        .iter()
        .filter_map(|part| match part {
            ContentPart::Text { text } if is_sendable(text) => Some(Block::text(text)),
            ContentPart::Opaque(part) => Some(Block::opaque(part)),
            _ => None,
        })
        .collect()
}

/// The text parts of a message as blocks.
fn text_blocks(content: &[ContentPart]) -> Vec<Block> {
    content
        .iter()
        .filter_map(|part| match part {
            ContentPart::Text { text } if is_sendable(text) => Some(Block::text(text)),
            _ => None,
        })
        .collect()
}

/// The message's results as `tool_result` blocks; with `attach`, its opaque parts go into the
/// last result's content.
fn result_blocks(content: &[ContentPart], attach: bool) -> Vec<Block> {
    let results: Vec<&ToolResult> = tool_results(content).collect();
    let mut attached: Vec<Value> = Vec::new();
    if attach && !results.is_empty() {
        attached = opaque_parts(content).map(|part| Block::opaque(part).render()).collect();
    }
    let last = results.len().saturating_sub(1);
    results
        .into_iter()
        .enumerate()
        .map(|(i, result)| {
            Block::tool_result(result, if i == last { std::mem::take(&mut attached) } else { Vec::new() })
        })
        .collect()
}

/// One text block: `label`, a newline, the message's text (none when it has no text); then its
/// opaque parts.
fn labelled(label: &str, content: &[ContentPart]) -> Vec<Block> {
    let text = joined_text(content);
    let mut blocks = if text.is_empty() { Vec::new() } else { vec![Block::text(&format!("{label}\n{text}"))] };
    blocks.extend(opaque_parts(content).map(Block::opaque));
    blocks
}

fn push(turns: &mut Vec<(Side, Vec<Block>)>, side: Side, blocks: Vec<Block>) {
    if !blocks.is_empty() {
        turns.push((side, blocks));
    }
}

/// Puts a breakpoint on the last block sent so far that can carry one.
fn mark_last(turns: &mut [(Side, Vec<Block>)]) {
    if let Some(block) =
        turns.iter_mut().rev().flat_map(|(_, blocks)| blocks.iter_mut().rev()).find(|b| b.can_carry_breakpoint())
    {
        block.breakpoint = true;
    }
}
