//! OpenAI chat JSON, as OpenHands SDK LLM logs write it: `{messages, tools, response}` (or a
//! bare list of messages). One recorded call per file: its prompt is every message, and
//! `response.choices[0].message` is the assistant message it produced.

use serde_json::Value;

use super::builder::Builder;
use super::json::{arguments_text, block_text, content_text, str_at, timestamp_ms};
use super::{Format, Trajectory};
use crate::model::{ContentPart, Role, ToolCall, ToolCallId, ToolResult, ToolStatus};

pub(super) fn import(name: &str, doc: &Value) -> Trajectory {
    let mut b = Builder::new(Format::OpenAiChat, name);
    let messages = doc.get("messages").and_then(Value::as_array).or_else(|| doc.as_array());
    for message in messages.into_iter().flatten() {
        push_message(&mut b, message, 0);
    }
    b.call();
    if let Some(response) = doc.get("response") {
        let choice = response.get("choices").and_then(|c| c.get(0));
        match choice.and_then(|c| c.get("message")).or_else(|| response.get("message")) {
            Some(message) => push_message(&mut b, message, timestamp_ms(doc.get("timestamp"))),
            None => b.note("the response holds no message"),
        }
    }
    b.finish()
}

/// Adds one chat message: `system`/`developer`, `user`, `assistant` (text, reasoning and
/// `tool_calls`), `tool`/`function` (one result, linked by `tool_call_id`, or SWE-agent's
/// `tool_call_ids`). Other roles are kept as user messages with a note.
pub(super) fn push_message(b: &mut Builder, message: &Value, at_ms: u64) {
    let content = message.get("content");
    match str_at(message, "role") {
        Some("system" | "developer") => {
            let content = parts(b, content);
            b.push(Role::System, content, at_ms);
        }
        Some("user") => {
            let content = parts(b, content);
            b.push(Role::User, content, at_ms);
        }
        Some("assistant") => {
            let mut content = parts(b, content);
            for key in ["reasoning_content", "reasoning"] {
                if let Some(text) = str_at(message, key).filter(|t| !t.is_empty()) {
                    content.insert(0, ContentPart::Reasoning { text: text.to_owned(), signature: None });
                    break;
                }
            }
            for call in message.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                let function = call.get("function").unwrap_or(&Value::Null);
                let id = match str_at(call, "id").filter(|id| !id.is_empty()) {
                    Some(id) => ToolCallId::from(id),
                    None => b.fresh_id(),
                };
                let name = str_at(function, "name").unwrap_or_default().to_owned();
                content.push(ContentPart::ToolCall(ToolCall {
                    id,
                    name,
                    arguments: arguments_text(function.get("arguments")),
                }));
            }
            b.push(Role::Assistant, content, at_ms);
        }
        Some("tool" | "function") => {
            let id = str_at(message, "tool_call_id")
                .or_else(|| message.get("tool_call_ids").and_then(|ids| ids.get(0)).and_then(Value::as_str))
                .unwrap_or_default();
            let result = ToolResult {
                call_id: ToolCallId::from(id),
                name: str_at(message, "name").unwrap_or_default().to_owned(),
                status: ToolStatus::Ok,
                output: content_text(content),
                stderr: None,
                exit_code: None,
            };
            b.result(result, at_ms);
        }
        other => {
            b.tally(format!("`{}` messages kept as user messages", other.unwrap_or("role-less")));
            let content = parts(b, content);
            b.push(Role::User, content, at_ms);
        }
    }
}

/// Text parts of message content: a string (even empty), or each text/image block.
fn parts(b: &mut Builder, content: Option<&Value>) -> Vec<ContentPart> {
    match content {
        Some(Value::String(text)) => vec![ContentPart::Text { text: text.clone() }],
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|block| {
                let text = block_text(block);
                if text.is_none() {
                    b.tally("content blocks without text skipped");
                }
                text.map(|text| ContentPart::Text { text })
            })
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_response_follows_the_recorded_request() {
        let doc = json!({
            "messages": [
                {"role": "system", "content": [{"type": "text", "text": "sys"}]},
                {"role": "user", "content": "make hello.py"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "str_replace_editor", "arguments": "{\"command\": \"view\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "name": "str_replace_editor", "content": [{"type": "text", "text": "ok"}]}
            ],
            "response": {"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [{"id": "c2", "function": {"name": "terminal", "arguments": "{}"}}]}}]},
            "timestamp": 1757015025.5
        });
        let t = import("o", &doc);
        assert_eq!(t.calls, [4]);
        assert_eq!(t.messages.len(), 6, "the response's call gets a placeholder result");
        assert_eq!(t.messages[4].created_at_ms, 1_757_015_025_500);
        assert_eq!(t.messages[3].tool_results().next().map(|r| r.output.as_str()), Some("ok"));
        assert_eq!(t.messages[4].description, "tool call: terminal");
    }
}
