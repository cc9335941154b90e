//! mini-swe-agent `.traj.json`: chat messages (a bare list, or `{messages: […]}`). An assistant
//! message with exactly one fenced ```` ```bash ```` (or ```` ```mswea_bash_command ````) block is
//! a call of the tool `bash`; the next user message is its result, read from
//! `<returncode>N</returncode>` and `<output>…</output>` when present. One call per assistant
//! message.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Value, json};

use super::builder::Builder;
use super::json::{compact, content_text, str_at};
use super::{Format, Trajectory};
use crate::model::{ContentPart, Role, ToolCall, ToolCallId, ToolResult, ToolStatus, text_actions};

static RETURN_CODE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"<returncode>\s*(-?\d+)\s*</returncode>").ok());

/// Whether a chat message looks like mini-swe-agent's: a fenced command or a `<returncode>`.
pub(super) fn looks_like_mini(message: &Value) -> bool {
    let text = content_text(message.get("content"));
    text.contains("<returncode>") || !text_actions(&text).is_empty()
}

pub(super) fn import(name: &str, doc: &Value) -> Trajectory {
    let mut b = Builder::new(Format::MiniSweAgent, name);
    let messages = doc.get("messages").and_then(Value::as_array).or_else(|| doc.as_array());
    let mut pending: Option<ToolCallId> = None;
    for message in messages.into_iter().flatten() {
        let text = content_text(message.get("content"));
        match str_at(message, "role") {
            Some("assistant") => {
                b.call();
                pending = assistant(&mut b, text);
            }
            Some("user" | "tool") if pending.is_some() => {
                if let Some(call_id) = pending.take() {
                    b.result(observation(call_id, &text), 0);
                }
            }
            Some("system") => {
                b.text(Role::System, text, 0);
            }
            Some("user") => {
                b.text(Role::User, text, 0);
            }
            _ => {
                b.tally("messages with another role kept as user messages");
                b.text(Role::User, text, 0);
            }
        }
    }
    b.finish()
}

/// Adds the assistant message; returns the id of its command's call, if it has exactly one.
fn assistant(b: &mut Builder, text: String) -> Option<ToolCallId> {
    let actions = text_actions(&text);
    let [action] = actions.as_slice() else {
        if actions.len() > 1 {
            b.tally("assistant messages with several command blocks (a format error, no call)");
        }
        b.text(Role::Assistant, text.clone(), 0);
        return None;
    };
    let (before, after) =
        (text.get(..action.block.start).unwrap_or_default(), text.get(action.block.end..).unwrap_or_default());
    let thought = format!("{before}{after}").trim().to_owned();
    let id = b.fresh_id();
    let call =
        ToolCall { id: id.clone(), name: "bash".to_owned(), arguments: compact(&json!({"command": action.command})) };
    let mut content = Vec::new();
    if !thought.is_empty() {
        content.push(ContentPart::Text { text: thought });
    }
    content.push(ContentPart::ToolCall(call));
    b.push(Role::Assistant, content, 0);
    Some(id)
}

/// The result of a command: `<output>` (one leading and trailing newline dropped) and
/// `<returncode>` when present, else the whole message.
fn observation(call_id: ToolCallId, text: &str) -> ToolResult {
    let exit_code = RETURN_CODE
        .as_ref()
        .and_then(|re| re.captures(text))
        .and_then(|c| c.get(1))
        .and_then(|m| m.as_str().parse::<i32>().ok());
    let inner = match (text.find("<output>"), text.rfind("</output>")) {
        (Some(open), Some(close)) if open + "<output>".len() <= close => text.get(open + "<output>".len()..close),
        _ => None,
    };
    let output = match inner {
        Some(inner) => {
            let inner = inner.strip_prefix('\n').unwrap_or(inner);
            inner.strip_suffix('\n').unwrap_or(inner).to_owned()
        }
        None => text.to_owned(),
    };
    ToolResult {
        call_id,
        name: "bash".to_owned(),
        status: if exit_code.is_some_and(|c| c != 0) { ToolStatus::Error } else { ToolStatus::Ok },
        output,
        stderr: None,
        exit_code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_become_bash_calls_with_exit_codes() {
        let doc = json!([
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "THOUGHT: look\n\n```bash\nls -la\n```"},
            {"role": "user", "content": "<returncode>2</returncode>\n<output>\nno such file\n</output>"},
            {"role": "assistant", "content": "two\n```bash\na\n```\n```bash\nb\n```"},
            {"role": "user", "content": "Please always provide EXACTLY ONE action"},
            {"role": "assistant", "content": "```mswea_bash_command\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"},
            {"role": "user", "content": ""}
        ]);
        let t = import("m", &doc);
        assert_eq!(t.calls, [2, 4, 6]);
        let roles: Vec<Role> = t.messages.iter().map(|m| m.role).collect();
        use Role::*;
        assert_eq!(roles, [System, User, Assistant, Tool, Assistant, User, Assistant, Tool]);
        let call = t.messages[2].tool_calls().next().cloned();
        assert_eq!(call.map(|c| (c.name, c.arguments)), Some(("bash".into(), r#"{"command":"ls -la"}"#.into())));
        assert_eq!(t.messages[2].description, "THOUGHT: look");
        let result = t.messages[3].tool_results().next().cloned();
        assert_eq!(
            result.map(|r| (r.output, r.exit_code, r.status)),
            Some(("no such file".into(), Some(2), ToolStatus::Error))
        );
        assert!(looks_like_mini(&doc[2]) && !looks_like_mini(&doc[0]));
    }
}
