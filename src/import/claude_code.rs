//! Claude Code session logs: JSON lines `{type, uuid, parentUuid, isSidechain, message}` (or the
//! same records in a `{loglines: […]}` document).
//!
//! Consecutive assistant lines with the same `message.id` are one API message (one call per
//! distinct id). Sub-agent traffic (`isSidechain: true`) is its own trajectory
//! `<stem>#<agentId>` or `<stem>#sidechain-<n>`, its lines chained by `parentUuid`. User lines
//! split into one tool message per `tool_result` block and a user message for the rest;
//! `summary` and other non-message lines are skipped with a note.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::builder::Builder;
use super::json::{arguments_text, block_text, content_text, str_at, timestamp_ms};
use super::{Format, Trajectory};
use crate::model::{ContentPart, Role, ToolCall, ToolCallId, ToolResult, ToolStatus};

/// Imports the main conversation (when it has records, or nothing else does) and each sidechain.
/// `unit` names a record's position in notes (`line` or `entry`).
pub(super) fn import(name: &str, records: &[(usize, &Value)], unit: &str) -> Vec<Trajectory> {
    let mut main = Vec::new();
    let mut sides: Vec<Side> = Vec::new();
    let mut side_of: HashMap<&str, usize> = HashMap::new();
    for &(position, record) in records {
        if record.get("isSidechain").and_then(Value::as_bool) != Some(true) {
            main.push((position, record));
            continue;
        }
        let agent = str_at(record, "agentId").filter(|a| !a.is_empty());
        let parent = str_at(record, "parentUuid").and_then(|p| side_of.get(p).copied());
        let by_agent = agent.and_then(|a| sides.iter().position(|s| s.agent.as_deref() == Some(a)));
        let index = match parent.or(by_agent) {
            Some(index) => index,
            None => {
                let label = agent.map_or_else(|| format!("sidechain-{}", sides.len() + 1), str::to_owned);
                sides.push(Side { agent: agent.map(str::to_owned), label, records: Vec::new() });
                sides.len() - 1
            }
        };
        if let Some(uuid) = str_at(record, "uuid") {
            side_of.insert(uuid, index);
        }
        if let Some(side) = sides.get_mut(index) {
            side.records.push((position, record));
        }
    }
    let mut trajectories = Vec::new();
    if !main.is_empty() || sides.is_empty() {
        trajectories.push(conversation(name.to_owned(), &main, unit));
    }
    for side in sides {
        trajectories.push(conversation(format!("{name}#{}", side.label), &side.records, unit));
    }
    trajectories
}

struct Side<'a> {
    agent: Option<String>,
    label: String,
    records: Vec<(usize, &'a Value)>,
}

fn conversation(name: String, records: &[(usize, &Value)], unit: &str) -> Trajectory {
    let mut b = Builder::new(Format::ClaudeCode, name);
    let mut seen_ids: HashSet<&str> = HashSet::new();
    // The assistant message the previous line added: (message.id, draft index).
    let mut previous: Option<(&str, usize)> = None;
    for &(position, record) in records {
        let kind = match str_at(record, "type") {
            Some(kind @ ("user" | "assistant")) => kind,
            Some("summary") => {
                b.tally("summary lines skipped");
                continue;
            }
            Some(other) => {
                b.tally(format!("`{other}` lines skipped"));
                continue;
            }
            None if record.get("message").is_some() => match record.get("message").and_then(|m| str_at(m, "role")) {
                Some(role @ ("user" | "assistant")) => role,
                _ => {
                    b.note(format!("{unit} {position}: no record type, skipped"));
                    continue;
                }
            },
            None => {
                b.note(format!("{unit} {position}: not a message record, skipped"));
                continue;
            }
        };
        let Some(content) = record.get("message").filter(|m| m.is_object()).and_then(|m| m.get("content")) else {
            b.note(format!("{unit} {position}: {kind} line without message content, skipped"));
            continue;
        };
        let at_ms = timestamp_ms(record.get("timestamp"));
        if kind == "user" {
            previous = None;
            user(&mut b, content, at_ms, unit, position);
            continue;
        }
        let id = record.get("message").and_then(|m| str_at(m, "id")).filter(|id| !id.is_empty());
        let parts = assistant_parts(&mut b, content);
        match (id, previous) {
            (Some(id), Some((previous_id, index))) if id == previous_id => {
                if let Some(draft) = b.draft_mut(index) {
                    draft.content.extend(parts);
                }
            }
            _ => {
                if id.is_none_or(|id| seen_ids.insert(id)) {
                    b.call();
                }
                let index = b.push(Role::Assistant, parts, at_ms);
                previous = id.map(|id| (id, index));
            }
        }
    }
    b.finish()
}

fn assistant_parts(b: &mut Builder, content: &Value) -> Vec<ContentPart> {
    let blocks = match content {
        Value::String(text) => return vec![ContentPart::Text { text: text.clone() }],
        Value::Array(blocks) => blocks,
        _ => {
            b.tally("assistant content that is neither text nor blocks, skipped");
            return Vec::new();
        }
    };
    let mut parts = Vec::new();
    for block in blocks {
        match str_at(block, "type") {
            Some("text") => {
                parts.push(ContentPart::Text { text: str_at(block, "text").unwrap_or_default().to_owned() })
            }
            Some("thinking") => parts.push(ContentPart::Reasoning {
                text: str_at(block, "thinking").unwrap_or_default().to_owned(),
                signature: str_at(block, "signature").map(str::to_owned),
            }),
            Some("redacted_thinking") => parts.push(ContentPart::Reasoning {
                text: String::new(),
                signature: str_at(block, "data").map(str::to_owned),
            }),
            Some("tool_use" | "server_tool_use") => {
                let id = match str_at(block, "id").filter(|id| !id.is_empty()) {
                    Some(id) => ToolCallId::from(id),
                    None => b.fresh_id(),
                };
                let name = str_at(block, "name").unwrap_or_default().to_owned();
                parts.push(ContentPart::ToolCall(ToolCall { id, name, arguments: arguments_text(block.get("input")) }));
            }
            Some(other) => b.tally(format!("assistant `{other}` blocks skipped")),
            None => b.tally("assistant blocks without a type skipped"),
        }
    }
    parts
}

/// A user line: each `tool_result` block becomes a tool message, the other blocks (in order
/// around them) user messages.
fn user(b: &mut Builder, content: &Value, at_ms: u64, unit: &str, position: usize) {
    let blocks = match content {
        Value::String(text) => {
            b.text(Role::User, text.clone(), at_ms);
            return;
        }
        Value::Array(blocks) => blocks,
        _ => {
            b.note(format!("{unit} {position}: user content that is neither text nor blocks, skipped"));
            return;
        }
    };
    let mut pending = Vec::new();
    for block in blocks {
        if str_at(block, "type") == Some("tool_result") {
            if !pending.is_empty() {
                b.push(Role::User, std::mem::take(&mut pending), at_ms);
            }
            let error = block.get("is_error").and_then(Value::as_bool) == Some(true);
            b.result(
                ToolResult {
                    call_id: ToolCallId::from(str_at(block, "tool_use_id").unwrap_or_default()),
                    name: String::new(),
                    status: if error { ToolStatus::Error } else { ToolStatus::Ok },
                    output: content_text(block.get("content")),
                    stderr: None,
                    exit_code: None,
                },
                at_ms,
            );
        } else if let Some(text) = block_text(block) {
            if str_at(block, "type") == Some("image") {
                b.tally("images replaced by `[image]`");
            }
            pending.push(ContentPart::Text { text });
        } else {
            b.tally(format!("user `{}` blocks skipped", str_at(block, "type").unwrap_or("untyped")));
        }
    }
    if !pending.is_empty() {
        b.push(Role::User, pending, at_ms);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn lines_of_one_message_merge_and_sidechains_split() {
        let lines = [
            json!({"type": "summary", "summary": "s"}),
            json!({"type": "user", "uuid": "u1", "message": {"role": "user", "content": "go"}}),
            json!({"type": "assistant", "uuid": "a1", "message": {"id": "m1", "role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": "sig"}, {"type": "text", "text": "ok"}]}}),
            json!({"type": "assistant", "uuid": "a2", "message": {"id": "m1", "role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}}),
            json!({"type": "user", "isSidechain": true, "uuid": "s1", "parentUuid": null, "message": {"role": "user", "content": "sub task"}}),
            json!({"type": "assistant", "isSidechain": true, "uuid": "s2", "parentUuid": "s1", "message": {"id": "m9", "role": "assistant", "content": "sub done"}}),
            json!({"type": "user", "uuid": "u2", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "a.rs"}], "is_error": true}, {"type": "text", "text": "and?"}]}}),
            json!({"type": "assistant", "uuid": "a3", "message": {"id": "m2", "role": "assistant", "content": "done"}}),
            json!("junk"),
            json!({"type": "user", "message": "error"}),
        ];
        let records: Vec<(usize, &Value)> = lines.iter().enumerate().map(|(i, v)| (i + 1, v)).collect();
        let t = import("s", &records, "line");
        assert_eq!(t.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["s", "s#sidechain-1"]);
        let main = &t[0];
        let roles: Vec<Role> = main.messages.iter().map(|m| m.role).collect();
        assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::User, Role::Assistant]);
        assert_eq!(main.calls, [1, 4]);
        assert_eq!(main.messages[1].content.len(), 3);
        let result = main.messages[2].tool_results().next().cloned();
        assert_eq!(
            result.map(|r| (r.name, r.status, r.output)),
            Some(("Bash".into(), ToolStatus::Error, "a.rs".into()))
        );
        assert_eq!(main.notes.len(), 3, "{:?}", main.notes);
        assert_eq!(t[1].calls, [1]);
        assert_eq!(t[1].messages[0].trace_id.as_str(), "s#sidechain-1");
    }
}
