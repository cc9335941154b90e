//! vorflux JSON: `trajectory[]` of `llm_call` (one recorded call each), `tool_call` (a result,
//! without a call id) and `judge_call` (a reviewer model, not the agent's context: skipped).
//!
//! A result is paired with the first still unanswered call requested by the preceding
//! `llm_call` whose arguments it carries (keys compared without `_`/`-` and case, so a request
//! `read {file_path}` pairs with an executed `read_text_file {filePath}`). Sub-agents run
//! concurrently and their `llm_call`s interleave with the main agent's, so a result often comes
//! after a later `llm_call`: it then pairs with the earlier request (most recent first) and is
//! moved next to it, after that call's other results. Results nothing was requested for (files
//! where `output.tool_calls` is always empty, harness and sub-agent jobs) get a call rebuilt
//! from the entry's `tool` and `arguments`, in the preceding assistant message. Requests never
//! answered (harness tools such as `wait_any_task_result`) get a placeholder result.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::builder::Builder;
use super::json::{arguments_text, compact, content_text, i32_at, str_at, timestamp_ms};
use super::{Format, Trajectory};
use crate::model::{ContentPart, Role, ToolCall, ToolCallId, ToolResult, ToolStatus};

pub(super) fn import(name: &str, doc: &Value) -> Trajectory {
    let mut b = Builder::new(Format::Vorflux, name);
    let mut turns = Turns::default();
    let entries = doc.get("trajectory").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    for entry in entries {
        let at_ms = timestamp_ms(entry.get("timestamp"));
        match str_at(entry, "type") {
            Some("llm_call") => {
                let turn = llm_call(&mut b, entry, at_ms);
                turns.start(turn);
            }
            Some("tool_call") => tool_call(&mut b, &mut turns, entry, at_ms),
            Some("judge_call") => b.tally("judge_call entries skipped (a reviewer, not the agent's context)"),
            _ => b.tally("unknown trajectory entries skipped"),
        }
    }
    b.finish()
}

/// A tool call the model requested in an `llm_call`'s output.
struct Request {
    id: ToolCallId,
    name: String,
    arguments: Option<Map<String, Value>>,
    answered: bool,
}

/// The assistant message of an `llm_call` and the calls it requested.
#[derive(Default)]
struct Turn {
    assistant: Option<usize>,
    requests: Vec<Request>,
}

impl Turn {
    fn waiting(&self) -> bool {
        self.requests.iter().any(|r| !r.answered)
    }

    /// Marks the first unanswered request that `matches` as answered; returns its id.
    fn answer(&mut self, matches: &impl Fn(&Request) -> bool) -> Option<ToolCallId> {
        let request = self.requests.iter_mut().find(|r| !r.answered && matches(r))?;
        request.answered = true;
        Some(request.id.clone())
    }
}

/// The latest `llm_call`, and the earlier ones with requests still unanswered.
#[derive(Default)]
struct Turns {
    current: Turn,
    earlier: Vec<Turn>,
}

impl Turns {
    fn start(&mut self, turn: Turn) {
        let previous = std::mem::replace(&mut self.current, turn);
        if previous.waiting() {
            self.earlier.push(previous);
        }
    }

    /// Answers a request of an earlier `llm_call`, the most recent first; returns its
    /// assistant message and the call id.
    fn answer_earlier(&mut self, matches: &impl Fn(&Request) -> bool) -> Option<(usize, ToolCallId)> {
        for k in (0..self.earlier.len()).rev() {
            let Some(turn) = self.earlier.get_mut(k) else { continue };
            let Some(assistant) = turn.assistant else { continue };
            if let Some(id) = turn.answer(matches) {
                if !turn.waiting() {
                    self.earlier.remove(k);
                }
                return Some((assistant, id));
            }
        }
        None
    }

    /// A message was inserted at `index`: the assistant messages at or after it moved.
    fn shift_from(&mut self, index: usize) {
        for turn in self.earlier.iter_mut().chain(std::iter::once(&mut self.current)) {
            if let Some(assistant) = turn.assistant.as_mut().filter(|a| **a >= index) {
                *assistant += 1;
            }
        }
    }
}

fn llm_call(b: &mut Builder, entry: &Value, at_ms: u64) -> Turn {
    for message in entry.get("task_prompt").and_then(Value::as_array).into_iter().flatten() {
        let role = match str_at(message, "role") {
            Some("system" | "developer") => Role::System,
            Some("assistant") => Role::Assistant,
            _ => Role::User,
        };
        b.text(role, content_text(message.get("content")), at_ms);
    }
    b.call();
    let Some(output) = entry.get("output").filter(|o| o.is_object()) else {
        b.tally("llm_call entries without output");
        return Turn::default();
    };
    let mut content = Vec::new();
    if let Some(text) = str_at(output, "content").filter(|t| !t.trim().is_empty()) {
        content.push(ContentPart::Text { text: text.to_owned() });
    }
    let mut requests = Vec::new();
    for requested in output.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
        let function = requested.get("function").unwrap_or(&Value::Null);
        let arguments = arguments_text(function.get("arguments"));
        let id = match str_at(requested, "id").filter(|id| !id.is_empty()) {
            Some(id) => ToolCallId::from(id),
            None => b.fresh_id(),
        };
        let name = str_at(function, "name").unwrap_or_default().to_owned();
        let parsed = serde_json::from_str::<Value>(&arguments).ok().and_then(|v| v.as_object().cloned());
        content.push(ContentPart::ToolCall(ToolCall { id: id.clone(), name: name.clone(), arguments }));
        requests.push(Request { id, name, arguments: parsed, answered: false });
    }
    let assistant = if content.is_empty() { None } else { Some(b.push(Role::Assistant, content, at_ms)) };
    Turn { assistant, requests }
}

fn tool_call(b: &mut Builder, turns: &mut Turns, entry: &Value, at_ms: u64) {
    let tool = str_at(entry, "tool").unwrap_or_default();
    let arguments = entry.get("arguments");
    let executed: Option<HashMap<String, &Value>> =
        arguments.and_then(Value::as_object).map(|a| a.iter().map(|(k, v)| (normalise(k), v)).collect());
    let matches = |r: &Request| carries(r, tool, executed.as_ref());
    let tool_result = |id: ToolCallId| result(id, tool, entry.get("result"));
    if let Some(id) = turns.current.answer(&matches) {
        b.result(tool_result(id), at_ms);
    } else if let Some((assistant, id)) = turns.answer_earlier(&matches) {
        let index = b.insert_result(assistant, tool_result(id), at_ms);
        turns.shift_from(index);
        b.tally("results recorded after a later llm_call, moved next to their call");
    } else {
        let id = rebuild_call(b, &mut turns.current, tool, arguments, at_ms);
        b.result(tool_result(id), at_ms);
    }
}

/// A call rebuilt from a `tool_call` entry, added to the turn's assistant message (created if
/// the `llm_call` produced none).
fn rebuild_call(b: &mut Builder, turn: &mut Turn, tool: &str, arguments: Option<&Value>, at_ms: u64) -> ToolCallId {
    let id = b.fresh_id();
    let call = ToolCall { id: id.clone(), name: tool.to_owned(), arguments: arguments_text(arguments) };
    let assistant = match turn.assistant {
        Some(index) => index,
        None => b.push(Role::Assistant, Vec::new(), at_ms),
    };
    turn.assistant = Some(assistant);
    if let Some(draft) = b.draft_mut(assistant) {
        draft.content.push(ContentPart::ToolCall(call));
    }
    b.tally(if turn.requests.is_empty() {
        "tool calls rebuilt from tool_call entries (the llm_call requested none)"
    } else {
        "tool calls rebuilt for tool_call entries matching no requested call (harness and sub-agent jobs)"
    });
    id
}

/// Whether an executed tool call is `request`: the request's arguments all appear in the
/// executed ones (keys normalised), and the names agree or the arguments are not empty.
fn carries(request: &Request, tool: &str, executed: Option<&HashMap<String, &Value>>) -> bool {
    let (Some(requested), Some(executed)) = (&request.arguments, executed) else {
        return request.name == tool;
    };
    let subset = requested.iter().all(|(k, v)| executed.get(&normalise(k)) == Some(&v));
    subset && (request.name == tool || !requested.is_empty())
}

fn normalise(key: &str) -> String {
    key.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
}

/// A `tool_call` entry's result: a string, `{stdout, stderr, exitCode}`, `{output, status}`, or
/// any other value as compact JSON. An error when the exit code is not 0 or an `error` is set.
fn result(call_id: ToolCallId, tool: &str, value: Option<&Value>) -> ToolResult {
    let mut result = ToolResult {
        call_id,
        name: tool.to_owned(),
        status: ToolStatus::Ok,
        output: String::new(),
        stderr: None,
        exit_code: None,
    };
    match value {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => result.output = s.clone(),
        Some(Value::Object(object)) => {
            let value = value.unwrap_or(&Value::Null);
            result.exit_code = i32_at(value, "exitCode");
            if object.contains_key("stdout") || object.contains_key("stderr") {
                result.output = str_at(value, "stdout").unwrap_or_default().to_owned();
                result.stderr = str_at(value, "stderr").filter(|s| !s.is_empty()).map(str::to_owned);
            } else if let Some(output) = str_at(value, "output") {
                result.output = output.to_owned();
            } else {
                result.output = compact(value);
            }
            let failed_status = matches!(str_at(value, "status"), Some("error" | "failed" | "failure"));
            let error = object.get("error").is_some_and(|e| !matches!(e, Value::Null | Value::Bool(false)));
            if result.exit_code.is_some_and(|c| c != 0) || error || failed_status {
                result.status = ToolStatus::Error;
            }
        }
        Some(other) => result.output = compact(other),
    }
    result
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn requests_pair_by_arguments_and_the_rest_is_rebuilt() {
        let doc = json!({"trajectory": [
            {"type": "llm_call", "timestamp": "2026-05-04 23:23:06.5", "task_prompt": [{"role": "user", "content": "fix it"}],
             "output": {"content": "Looking.", "tool_calls": [
                {"id": "t1", "function": {"name": "read", "arguments": "{\"file_path\": \"/a.py\"}"}},
                {"id": "t2", "function": {"name": "wait_any_task_result", "arguments": "{\"timeout_seconds\": 60}"}}]}},
            {"type": "tool_call", "tool": "bash_execute", "arguments": {"command": "test -w /memory"}, "result": {"stdout": "", "stderr": "", "exitCode": 1}},
            {"type": "tool_call", "tool": "read_text_file", "arguments": {"filePath": "/a.py"}, "result": "1→x"},
            {"type": "judge_call", "input_messages": []},
            {"type": "llm_call", "output": {"content": "", "tool_calls": []}},
            {"type": "tool_call", "tool": "grep_search", "arguments": {"pattern": "x"}, "result": {"files": [], "error": "bad"}},
            {"type": "llm_call"}
        ]});
        let t = import("v", &doc);
        assert_eq!(t.calls, [1, 5, 7]);
        let m = &t.messages;
        assert_eq!(m[0].role, Role::User);
        assert_eq!(m[1].created_at_ms, 1_777_936_986_500);
        let calls: Vec<&ToolCall> = m[1].tool_calls().collect();
        assert_eq!(
            calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["read", "wait_any_task_result", "bash_execute"]
        );
        assert_eq!(calls[2].arguments, r#"{"command":"test -w /memory"}"#);
        let results: Vec<&ToolResult> = m.iter().flat_map(|m| m.tool_results()).collect();
        assert_eq!((results[0].call_id.as_str(), results[0].status), ("call_1", ToolStatus::Error));
        assert_eq!((results[1].call_id.as_str(), results[1].name.as_str()), ("t1", "read_text_file"));
        assert_eq!((results[2].call_id.as_str(), results[2].output.as_str()), ("t2", super::super::MISSING_RESULT));
        assert_eq!((m[5].role, m[6].role), (Role::Assistant, Role::Tool));
        assert_eq!(results[3].status, ToolStatus::Error);
        assert!(t.notes.iter().any(|n| n.starts_with("judge_call")), "{:?}", t.notes);
    }

    #[test]
    fn results_after_a_later_llm_call_move_next_to_their_call() {
        let doc = json!({"trajectory": [
            {"type": "llm_call", "output": {"content": "main", "tool_calls": [{"id": "m1", "function": {"name": "bash_execute", "arguments": "{\"command\": \"ls\"}"}}]}},
            {"type": "llm_call", "output": {"content": "sub", "tool_calls": [{"id": "s1", "function": {"name": "grep_search", "arguments": "{\"pattern\": \"x\"}"}}]}},
            {"type": "tool_call", "tool": "bash_execute", "arguments": {"command": "ls"}, "result": "a b"},
            {"type": "tool_call", "tool": "grep_search", "arguments": {"pattern": "x"}, "result": "hit"},
            {"type": "llm_call", "output": {"content": "next", "tool_calls": []}}
        ]});
        let t = import("v", &doc);
        let roles: Vec<Role> = t.messages.iter().map(|m| m.role).collect();
        assert_eq!(roles, [Role::Assistant, Role::Tool, Role::Assistant, Role::Tool, Role::Assistant]);
        assert_eq!(t.messages[1].tool_call_id, Some("m1".into()));
        assert_eq!(t.calls, [0, 2, 4]);
        assert!(t.notes.iter().any(|n| n.starts_with("results recorded after a later llm_call")), "{:?}", t.notes);
    }
}
