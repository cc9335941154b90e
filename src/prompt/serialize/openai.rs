//! OpenAI chat completions.

use serde_json::{Map, Value, json};

use super::{calls_only, in_place_label, joined_text, opaque_parts, tool_calls, tool_result_text, tool_results};
use crate::model::{ContentPart, OpaquePart, Role, ToolCall};
use crate::prompt::{Layer, PromptMessage, PromptView, ToolSpec};

/// OpenAI chat completions: `{"messages": [...], "tools": [...]}`, `tools` left out when the view
/// has none. Each tool is `{"type": "function", "function": {"name", "description",
/// "parameters"}}`.
///
/// Messages map one to one, in order:
/// - the leading `System` messages (the System and Rules layers) are `{"role": "system",
///   "content": text}`; every later `System` or `Summary` message (an archived summary, a block
///   and its state in history, the tail's reminders) is a user message whose text starts with a
///   label line (`[system]`, `[summary]`): many OpenAI-compatible servers' chat templates refuse a
///   system message after the first, and folding them into the first would rewrite the cached
///   prefix at every change;
/// - `User` messages are `{"role": "user", "content": text}`;
/// - `Assistant` messages are `{"role": "assistant", "content": text or null, "tool_calls":
///   [{"id", "type": "function", "function": {"name", "arguments"}}]}`, `tool_calls` left out
///   when there are none, `arguments` byte-exact as recorded. Reasoning parts are not sent: chat
///   completions has no field for them. An assistant message with neither text nor calls is
///   left out;
/// - each tool result is its own `{"role": "tool", "tool_call_id", "content"}` message, in the
///   view's order; a `Tool` message's text parts (which a valid view does not have) are added
///   to the content of its last result, or sent as a user message when it has none.
///
/// Text parts are joined by newlines; blank ones are not sent, and a system or user message
/// left without text is left out. A message with opaque parts (an image) sends its content as a
/// list instead: its text parts as `{"type": "text", "text"}` and its opaque parts as the JSON
/// they carry, in order (in a `Tool` message, after its last result's text). A tool result is sent even when it answers no call, so a
/// view with broken pairing gives a request the API rejects rather than one that silently
/// loses a result.
pub fn to_openai_chat(view: &PromptView) -> Value {
    let mut messages = Vec::new();
    for message in &view.messages {
        push_message(&mut messages, message);
    }
    let mut out = Map::new();
    out.insert("messages".into(), Value::Array(messages));
    if !view.tools.is_empty() {
        out.insert("tools".into(), Value::Array(tool_values(&view.tools)));
    }
    Value::Object(out)
}

/// The chat messages one prompt message is sent as (none, one, or one per tool result).
pub(crate) fn push_message(messages: &mut Vec<Value>, message: &PromptMessage) {
    let text = joined_text(&message.content);
    match message.role {
        Role::Assistant => {
            push_assistant(messages, text, &message.content);
            push_results(messages, &message.content, "", false);
        }
        Role::Tool => {
            // Text in a tool message goes with its last result; with no result, the user sends it.
            if !push_results(messages, &message.content, &text, true) {
                push_text(messages, "user", text, &message.content);
            }
            push_calls(messages, &message.content);
        }
        Role::System | Role::Summary | Role::User | Role::Observation => {
            push_results(messages, &message.content, "", false);
            // Only the leading system prompt is sent as the system's; later ones are labelled user text.
            let in_place = matches!(message.role, Role::System | Role::Summary)
                && !matches!(message.layer, Layer::System | Layer::Rules);
            let role = if message.role == Role::System && !in_place { "system" } else { "user" };
            let text =
                if in_place && !text.is_empty() { format!("{}\n{text}", in_place_label(message.role)) } else { text };
            push_text(messages, role, text, &message.content);
            push_calls(messages, &message.content);
        }
    }
}

/// The tools as chat completions' `tools` list.
pub(crate) fn tool_values(tools: &[ToolSpec]) -> Vec<Value> {
    tools
        .iter()
        .map(|tool| {
            json!({
                "type": "function",
                "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
            })
        })
        .collect()
}

/// A `role` message with `text` (and the opaque parts of `content`); nothing when both are empty.
fn push_text(messages: &mut Vec<Value>, role: &str, text: String, content: &[ContentPart]) {
    if let Some(content) = content_value(text, content) {
        messages.push(json!({"role": role, "content": content}));
    }
}

/// `text` as a string, or with the opaque parts of `content` as a list of parts (see
/// [`to_openai_chat`]); `None` when there is nothing to send.
fn content_value(text: String, content: &[ContentPart]) -> Option<Value> {
    if opaque_parts(content).next().is_none() {
        return (!text.is_empty()).then_some(Value::String(text));
    }
    let parts: Vec<Value> = content
        .iter()
        .filter_map(|part| match part {
            ContentPart::Text { text } if super::is_sendable(text) => Some(json!({"type": "text", "text": text})),
            ContentPart::Opaque(part) => Some(opaque(part)),
            _ => None,
        })
        .collect();
    Some(Value::Array(parts))
}

/// The JSON an opaque part carries; a text part with its placeholder when it is not JSON.
fn opaque(part: &OpaquePart) -> Value {
    super::opaque(part, |part| json!({"type": "text", "text": part.placeholder()}))
}

/// The calls of a message of another role than the assistant's, as an assistant message.
fn push_calls(messages: &mut Vec<Value>, content: &[ContentPart]) {
    push_assistant(messages, String::new(), &calls_only(content));
}

/// An assistant message with `text` (and the opaque parts of `content`) and the calls of
/// `content`; nothing when all are empty.
fn push_assistant(messages: &mut Vec<Value>, text: String, content: &[ContentPart]) {
    let calls: Vec<Value> = tool_calls(content).map(call).collect();
    let text = content_value(text, content);
    if text.is_none() && calls.is_empty() {
        return;
    }
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    message.insert("content".into(), text.unwrap_or(Value::Null));
    if !calls.is_empty() {
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    messages.push(Value::Object(message));
}

fn call(call: &ToolCall) -> Value {
    json!({
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
    })
}

/// One `tool` message per result of `content`, `extra` (when not empty) added to the last one's
/// content, and with `attach` the opaque parts of `content` after it. Returns whether there was
/// a result.
fn push_results(messages: &mut Vec<Value>, content: &[ContentPart], extra: &str, attach: bool) -> bool {
    let results: Vec<_> = tool_results(content).collect();
    let count = results.len();
    for (index, result) in results.into_iter().enumerate() {
        let mut text = tool_result_text(result);
        let last = index + 1 == count;
        if last && !extra.is_empty() {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(extra);
        }
        let content = match opaque_parts(content).next() {
            Some(_) if last && attach => {
                let mut parts = vec![json!({"type": "text", "text": text})];
                parts.extend(opaque_parts(content).map(opaque));
                Value::Array(parts)
            }
            _ => Value::String(text),
        };
        messages.push(json!({"role": "tool", "tool_call_id": result.call_id, "content": content}));
    }
    count > 0
}
