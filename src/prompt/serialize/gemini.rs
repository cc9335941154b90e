//! Google's Gemini API (`generateContent`): the prompt as `systemInstruction` and `contents`.

use serde_json::{Map, Value, json};

use super::{in_place_label, is_sendable, joined_text, tool_result_text};
use crate::model::{ContentPart, OpaquePart, Role, ToolCall, ToolResult, ToolStatus};
use crate::prompt::{Layer, PromptMessage, PromptView};

/// Call ids that are the reader's, not the model's: a Gemini model may call a function without
/// an id; such a call is recorded under `<prefix><name>#<n>` and sent back without one.
pub const UNNAMED_CALL: &str = "gemini-unnamed:";

/// Gemini: `{"systemInstruction": {"parts": [...]}, "contents": [...]}`, `systemInstruction` left
/// out when the view has no system prompt.
///
/// - The leading system messages (the System and Rules layers) are the parts of
///   `systemInstruction`, one text part each. Every later `System` or `Summary` message is a
///   user turn whose text starts with a label line (`[system]`, `[summary]`).
/// - `User` messages are `{"role": "user", "parts": [{"text"}, …]}`, a part per text part and
///   their opaque parts (inline data, files) as they came, in order.
/// - An assistant message is one `{"role": "model", "parts": [...]}`, parts in order: text;
///   reasoning with text as a thought (`"thought": true`, its `thoughtSignature`); a signature
///   without text (what a reader records for a signed part) as the `thoughtSignature` of the
///   part after it; each call a `functionCall` (`id` unless it is [`UNNAMED_CALL`]'s, `name`,
///   `args` parsed from its arguments); opaque parts as their JSON.
/// - Tool results, those of consecutive `Tool` messages together, are one user turn of
///   `functionResponse` parts: `response` is `{"output": text}`, or `{"error": text}` for a
///   failed call; a `Tool` message's other text goes after them as a text part.
pub fn to_gemini(view: &PromptView) -> Value {
    let mut system = Vec::new();
    let mut contents: Vec<Value> = Vec::new();
    for message in &view.messages {
        let text = joined_text(&message.content);
        match (message.role, message.layer) {
            (Role::System, Layer::System | Layer::Rules) => {
                if !text.is_empty() {
                    system.push(json!({"text": text}));
                }
            }
            (Role::Assistant, _) => {
                push(&mut contents, "model", model_parts(&message.content));
                push(&mut contents, "user", response_parts(&message.content));
            }
            (Role::Tool, _) => {
                let mut parts = response_parts(&message.content);
                if !text.is_empty() {
                    parts.push(json!({"text": text}));
                }
                match contents.last_mut() {
                    Some(last) if is_responses(last) => extend(last, parts),
                    _ => push(&mut contents, "user", parts),
                }
                push(&mut contents, "model", calls(&message.content));
            }
            (role, _) => push_user(&mut contents, message, role),
        }
    }
    let mut out = Map::new();
    if !system.is_empty() {
        out.insert("systemInstruction".into(), json!({"parts": system}));
    }
    out.insert("contents".into(), Value::Array(contents));
    Value::Object(out)
}

fn push_user(contents: &mut Vec<Value>, message: &PromptMessage, role: Role) {
    push(contents, "user", response_parts(&message.content));
    let mut parts = Vec::new();
    for part in &message.content {
        match part {
            ContentPart::Text { text } if is_sendable(text) => {
                let text = match role {
                    Role::User | Role::Observation => text.clone(),
                    _ if parts.is_empty() => format!("{}\n{text}", in_place_label(role)),
                    _ => text.clone(),
                };
                parts.push(json!({"text": text}));
            }
            ContentPart::Opaque(part) => parts.push(opaque(part)),
            _ => {}
        }
    }
    push(contents, "user", parts);
    push(contents, "model", calls(&message.content));
}

fn push(contents: &mut Vec<Value>, role: &str, parts: Vec<Value>) {
    if !parts.is_empty() {
        contents.push(json!({"role": role, "parts": parts}));
    }
}

/// Whether `content` is a user turn of function responses (the next results join it).
fn is_responses(content: &Value) -> bool {
    content["role"] == "user"
        && content["parts"].as_array().is_some_and(|p| p.iter().all(|p| p.get("functionResponse").is_some()))
}

fn extend(content: &mut Value, parts: Vec<Value>) {
    if let Some(list) = content.get_mut("parts").and_then(Value::as_array_mut) {
        list.extend(parts);
    }
}

/// A model turn's parts, a signature going to the part after it.
fn model_parts(content: &[ContentPart]) -> Vec<Value> {
    let mut parts = Vec::new();
    let mut signature: Option<&str> = None;
    for part in content {
        let mut value = match part {
            ContentPart::Reasoning { text, signature: sig } if text.is_empty() => {
                signature = sig.as_deref().filter(|s| !s.is_empty()).or(signature);
                continue;
            }
            ContentPart::Reasoning { text, signature: sig } => {
                let mut thought = json!({"text": text, "thought": true});
                if let Some(sig) = sig.as_deref().filter(|s| !s.is_empty()) {
                    thought["thoughtSignature"] = json!(sig);
                }
                thought
            }
            ContentPart::Text { text } if is_sendable(text) => json!({"text": text}),
            ContentPart::ToolCall(call) => json!({"functionCall": function_call(call)}),
            ContentPart::Opaque(part) => opaque(part),
            _ => continue,
        };
        if let (Some(sig), Value::Object(fields)) = (signature.take(), &mut value) {
            fields.insert("thoughtSignature".into(), json!(sig));
        }
        parts.push(value);
    }
    parts
}

fn function_call(call: &ToolCall) -> Value {
    let args: Value = match serde_json::from_str(&call.arguments) {
        Ok(Value::Object(args)) => Value::Object(args),
        _ if call.arguments.trim().is_empty() => json!({}),
        _ => json!({"arguments": call.arguments}),
    };
    let mut value = json!({"name": call.name, "args": args});
    if !call.id.as_str().starts_with(UNNAMED_CALL) {
        value["id"] = json!(call.id);
    }
    value
}

fn calls(content: &[ContentPart]) -> Vec<Value> {
    super::tool_calls(content).map(|call| json!({"functionCall": function_call(call)})).collect()
}

fn response_parts(content: &[ContentPart]) -> Vec<Value> {
    super::tool_results(content).map(function_response).collect()
}

fn function_response(result: &ToolResult) -> Value {
    let key = if result.status == ToolStatus::Error { "error" } else { "output" };
    let mut value = json!({"name": result.name, "response": {key: tool_result_text(result)}});
    if !result.call_id.as_str().starts_with(UNNAMED_CALL) {
        value["id"] = json!(result.call_id);
    }
    json!({ "functionResponse": value })
}

/// The JSON an opaque part carries; a text part `[part]` when it is not JSON.
fn opaque(part: &OpaquePart) -> Value {
    super::opaque(part, |_| json!({"text": "[part]"}))
}
