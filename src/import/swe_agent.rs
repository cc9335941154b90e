//! SWE-agent `.traj`: `{history[], trajectory[] of {action, observation, response, thought}}`.
//!
//! The leading system/user messages of `history` are the prompt; then each step of
//! `trajectory[]` is one call: an assistant message with the thought and the action as a tool
//! call, and the step's observation as its result. With function calling, the step's call is
//! the one `history` recorded (name, id, arguments); otherwise its name is the action's first
//! word when that is a SWE-agent command (built in, or documented in the system prompt) and
//! `bash` for a plain shell command, with arguments `{"command": <action>}`. A file with no
//! steps is read from `history` as a chat.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Value, json};

use super::builder::Builder;
use super::json::{arguments_text, array_at, compact, content_text, str_at};
use super::{Format, Trajectory, openai_chat};
use crate::model::{ContentPart, Role, ToolCall, ToolCallId, ToolResult, ToolStatus};

/// SWE-agent's own commands (tool bundles of its default and CTF configurations).
const COMMANDS: &[&str] = &[
    "open",
    "goto",
    "scroll_up",
    "scroll_down",
    "create",
    "edit",
    "insert",
    "append",
    "search_dir",
    "search_file",
    "find_file",
    "submit",
    "str_replace_editor",
    "filemap",
    "set_cursors",
    "view_image",
    "exit_forfeit",
    "decompile",
    "disassemble",
    "debug_start",
    "debug_add_breakpoint",
    "debug_continue",
    "debug_step",
    "debug_exec",
    "debug_stop",
    "connect_start",
    "connect_sendline",
    "connect_exec",
    "connect_stop",
];

/// A command documented in a system prompt: `name:` then an indented `docstring:` line.
static DOCUMENTED: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?m)^([A-Za-z_][A-Za-z0-9_-]*):\r?\n[ \t]+docstring:").ok());

pub(super) fn import(name: &str, doc: &Value) -> Trajectory {
    let history = array_at(doc, "history");
    let steps = array_at(doc, "trajectory");
    let mut b = Builder::new(Format::SweAgent, name);
    if steps.is_empty() {
        b.note("no trajectory steps: read from history");
        for message in history {
            if str_at(message, "role") == Some("assistant") {
                b.call();
            }
            openai_chat::push_message(&mut b, message, 0);
        }
        return b.finish();
    }
    let prompt: Vec<&Value> = history.iter().take_while(|m| str_at(m, "role") != Some("assistant")).collect();
    let mut commands: HashSet<String> = COMMANDS.iter().map(|c| (*c).to_owned()).collect();
    for message in &prompt {
        let role = if str_at(message, "role") == Some("system") { Role::System } else { Role::User };
        let text = content_text(message.get("content"));
        if let (Role::System, Some(re)) = (role, DOCUMENTED.as_ref()) {
            commands.extend(re.captures_iter(&text).filter_map(|c| c.get(1)).map(|m| m.as_str().to_owned()));
        }
        b.text(role, text, 0);
    }
    let actions: Vec<&Value> = history.iter().filter(|m| str_at(m, "role") == Some("assistant")).collect();
    for (i, step) in steps.iter().enumerate() {
        b.call();
        let action = str_at(step, "action").unwrap_or_default();
        let thought = str_at(step, "thought").or_else(|| str_at(step, "response")).unwrap_or_default();
        let observation = match step.get("observation") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => compact(other),
        };
        let mut content = Vec::new();
        if !thought.is_empty() {
            content.push(ContentPart::Text { text: thought.to_owned() });
        }
        if action.trim().is_empty() {
            b.tally("steps without an action (observation kept as a user message)");
            b.push(Role::Assistant, content, 0);
            b.text(Role::User, observation, 0);
            continue;
        }
        let recorded =
            actions.get(i).filter(|m| str_at(m, "action") == Some(action)).map(|m| array_at(m, "tool_calls"));
        let calls: Vec<ToolCall> = match recorded.filter(|calls| !calls.is_empty()) {
            Some(calls) => calls.iter().map(|call| recorded_call(&mut b, call)).collect(),
            None => vec![ToolCall {
                id: b.fresh_id(),
                name: command_name(action, &commands),
                arguments: compact(&json!({"command": action})),
            }],
        };
        let first = calls.first().map(|c| (c.id.clone(), c.name.clone()));
        content.extend(calls.into_iter().map(ContentPart::ToolCall));
        b.push(Role::Assistant, content, 0);
        if let Some((call_id, name)) = first {
            let result = ToolResult {
                call_id,
                name,
                status: ToolStatus::Ok,
                output: observation,
                stderr: None,
                exit_code: None,
            };
            b.result(result, 0);
        }
    }
    b.finish()
}

fn recorded_call(b: &mut Builder, call: &Value) -> ToolCall {
    let function = call.get("function").unwrap_or(&Value::Null);
    let id = match str_at(call, "id").filter(|id| !id.is_empty()) {
        Some(id) => ToolCallId::from(id),
        None => b.fresh_id(),
    };
    ToolCall {
        id,
        name: str_at(function, "name").unwrap_or_default().to_owned(),
        arguments: arguments_text(function.get("arguments")),
    }
}

/// The action's first word if it is a SWE-agent command, else `bash`.
fn command_name(action: &str, commands: &HashSet<String>) -> String {
    match action.split_whitespace().next() {
        Some(word) if commands.contains(word) => word.to_owned(),
        _ => "bash".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_become_calls_named_by_command() {
        let doc = json!({
            "history": [
                {"role": "system", "content": "COMMANDS:\nsearch_repo:\n  docstring: searches\n"},
                {"role": "user", "content": "issue", "is_demo": true},
                {"role": "assistant", "content": "x", "action": "ls"}
            ],
            "trajectory": [
                {"action": "search_repo foo\n", "observation": "found", "thought": "search"},
                {"action": "python reproduce.py", "observation": "boom", "thought": "run"},
                {"action": "goto 583", "observation": "lines", "response": "go"},
                {"action": "", "observation": "format error", "thought": "??"}
            ]
        });
        let t = import("s", &doc);
        assert_eq!(t.calls, [2, 4, 6, 8]);
        let names: Vec<String> = t.messages.iter().flat_map(|m| m.tool_calls()).map(|c| c.name.clone()).collect();
        assert_eq!(names, ["search_repo", "bash", "goto"]);
        assert_eq!(t.messages[3].tool_results().next().map(|r| r.output.as_str()), Some("found"));
        assert_eq!(t.messages.last().map(|m| m.role), Some(Role::User));
    }

    #[test]
    fn function_calling_steps_use_the_recorded_calls() {
        let doc = json!({
            "history": [
                {"role": "system", "content": "sys"},
                {"role": "assistant", "content": "find", "action": "find_file a.py", "tool_calls": [{"id": "call_X", "function": {"name": "find_file", "arguments": "{\"file_name\":\"a.py\"}"}}]},
                {"role": "tool", "content": "Found", "tool_call_ids": ["call_X"]}
            ],
            "trajectory": [{"action": "find_file a.py", "observation": "Found 1", "thought": "find"}, {"action": "submit", "observation": "diff", "thought": "done"}]
        });
        let t = import("s", &doc);
        let calls: Vec<&ToolCall> = t.messages.iter().flat_map(|m| m.tool_calls()).collect();
        assert_eq!((calls[0].id.as_str(), calls[0].arguments.as_str()), ("call_X", "{\"file_name\":\"a.py\"}"));
        assert_eq!(calls[1].name, "submit");
    }
}
