//! OpenAI Responses (`POST /v1/responses`): the prompt as the request's `input` items.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::{calls_only, in_place_label, is_sendable, joined_text, opaque_parts, tool_result_text};
use crate::model::{ContentPart, OpaquePart, Role, ToolCall, ToolResult};
use crate::prompt::{Layer, PromptMessage, PromptView};

/// How a Responses request carries what the view does not say.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResponsesOptions<'a> {
    /// The role the leading system prompt is sent in (`developer`, `system`); `None` leaves it
    /// out of `input` (the request's `instructions` carry it).
    pub system_role: Option<&'a str>,
    /// The tools of type `custom` (free-form input, as Codex's `apply_patch`): their calls and
    /// results are `custom_tool_call` and `custom_tool_call_output` items.
    pub custom_tools: Option<&'a BTreeSet<String>>,
}

/// OpenAI Responses: `{"input": [...]}`, items in the view's order.
///
/// - The leading system prompt (the System layer) is a message in `options.system_role`, or
///   left out; the Rules layer is a `developer` message. Every later `System` or `Summary`
///   message is a user message whose text starts with a label line (`[system]`, `[summary]`), as
///   in chat completions and for the same reasons.
/// - `User` messages are `{"type": "message", "role": "user", "content": [input_text, …]}`,
///   their opaque parts (an image, a file) in the content list as they came.
/// - An assistant message is its parts as items, in order: consecutive text parts one
///   `message` with `output_text`, each call a `function_call` (`custom_tool_call` for a custom
///   tool, its input byte-exact), each opaque part (a `reasoning` item with its encrypted
///   content, a hosted tool's call) its JSON as it came. Reasoning text is not sent: the API
///   takes only its own reasoning items back.
/// - Each tool result is a `function_call_output` (or `custom_tool_call_output`) with the text
///   of [`tool_result_text`]; a `Tool` message's other parts go with its last result's output,
///   which is then a list.
pub fn to_openai_responses(view: &PromptView, options: ResponsesOptions) -> Value {
    let mut items = Vec::new();
    for message in &view.messages {
        push_items(&mut items, message, options);
    }
    json!({ "input": items })
}

fn push_items(items: &mut Vec<Value>, message: &PromptMessage, options: ResponsesOptions) {
    let custom = |name: &str| options.custom_tools.is_some_and(|c| c.contains(name));
    match (message.role, message.layer) {
        (Role::Assistant, _) => {
            push_assistant(items, &message.content, &custom);
            push_results(items, &message.content, &custom, false);
        }
        (Role::Tool, _) => {
            if !push_results(items, &message.content, &custom, true) {
                push_message(items, "user", joined_text(&message.content), &message.content);
            }
            push_assistant(items, &calls_only(&message.content), &custom);
        }
        (Role::System, Layer::System) => {
            if let Some(role) = options.system_role {
                push_message(items, role, joined_text(&message.content), &[]);
            }
        }
        (Role::System, Layer::Rules) => push_message(items, "developer", joined_text(&message.content), &[]),
        (role, _) => {
            push_results(items, &message.content, &custom, false);
            let text = joined_text(&message.content);
            let text = match role {
                Role::User | Role::Observation => text,
                _ if text.is_empty() => text,
                _ => format!("{}\n{text}", in_place_label(role)),
            };
            push_message(items, "user", text, &message.content);
            push_assistant(items, &calls_only(&message.content), &custom);
        }
    }
}

/// A `role` message with `text` and the opaque parts of `content`; nothing when both are empty.
fn push_message(items: &mut Vec<Value>, role: &str, text: String, content: &[ContentPart]) {
    let mut parts = Vec::new();
    if !text.is_empty() {
        parts.push(json!({"type": "input_text", "text": text}));
    }
    parts.extend(opaque_parts(content).map(opaque));
    if !parts.is_empty() {
        items.push(json!({"type": "message", "role": role, "content": parts}));
    }
}

/// The assistant's items of `content`, in order.
fn push_assistant(items: &mut Vec<Value>, content: &[ContentPart], custom: &dyn Fn(&str) -> bool) {
    let mut texts: Vec<&str> = Vec::new();
    let flush = |items: &mut Vec<Value>, texts: &mut Vec<&str>| {
        if !texts.is_empty() {
            let text = std::mem::take(texts).join("\n");
            items.push(json!({"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": text}]}));
        }
    };
    for part in content {
        match part {
            ContentPart::Text { text } if is_sendable(text) => texts.push(text),
            ContentPart::ToolCall(call) => {
                flush(items, &mut texts);
                items.push(call_item(call, custom(&call.name)));
            }
            ContentPart::Opaque(part) => {
                flush(items, &mut texts);
                items.push(opaque(part));
            }
            _ => {}
        }
    }
    flush(items, &mut texts);
}

fn call_item(call: &ToolCall, custom: bool) -> Value {
    if custom {
        json!({"type": "custom_tool_call", "call_id": call.id, "name": call.name, "input": call.arguments})
    } else {
        json!({"type": "function_call", "call_id": call.id, "name": call.name, "arguments": call.arguments})
    }
}

/// One output item per result of `content`; with `attach`, the message's text and opaque parts
/// go with the last. Returns whether there was a result.
fn push_results(items: &mut Vec<Value>, content: &[ContentPart], custom: &dyn Fn(&str) -> bool, attach: bool) -> bool {
    let results: Vec<&ToolResult> = super::tool_results(content).collect();
    for (index, result) in results.iter().enumerate() {
        let mut text = tool_result_text(result);
        let last = index + 1 == results.len();
        if last && attach {
            let extra = joined_text(content);
            if !extra.is_empty() {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&extra);
            }
        }
        let output = match opaque_parts(content).next() {
            Some(_) if last && attach => {
                let mut parts = vec![json!({"type": "input_text", "text": text})];
                parts.extend(opaque_parts(content).map(opaque));
                Value::Array(parts)
            }
            _ => Value::String(text),
        };
        let kind = if custom(&result.name) { "custom_tool_call_output" } else { "function_call_output" };
        items.push(json!({"type": kind, "call_id": result.call_id, "output": output}));
    }
    !results.is_empty()
}

/// The JSON an opaque part carries; an `input_text` part with its placeholder when it is not JSON.
fn opaque(part: &OpaquePart) -> Value {
    super::opaque(part, |part| json!({"type": "input_text", "text": part.placeholder()}))
}
