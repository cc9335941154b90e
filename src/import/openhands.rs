//! OpenHands event streams: `output.jsonl` runs (`{instance_id, history[]}` per line, each its
//! own trajectory `<stem>#<instance id or n>`), bare event lists (`runtime_trajs/*.json`), and
//! the SDK's typed events (`{kind: ActionEvent | ObservationEvent | MessageEvent | …}`).
//!
//! An agent action is one call: an assistant message with its thought and a tool call, named
//! by `tool_call_metadata` (function name, id, the model's arguments) when present, else by the
//! action (`run` → `execute_bash`, `read`/`edit` → `str_replace_editor`, …). Observations are
//! its results, linked by `tool_call_metadata`, `cause` or, in streams without ids, order.
//! `message` actions are user or assistant text (an agent message is a call too); the `system`
//! action is the system prompt; observations of no action (recall, errors) are user text.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::builder::Builder;
use super::json::{arguments_text, compact, content_text, i32_at, id_text, str_at, timestamp_ms};
use super::{Format, Trajectory};
use crate::model::{ContentPart, Role, ToolCall, ToolCallId, ToolResult, ToolStatus};

/// Runs (records with a `history`) each become a trajectory; otherwise the records are the
/// events of one stream.
pub(super) fn import(name: &str, records: &[(usize, &Value)]) -> Vec<Trajectory> {
    if !records.iter().any(|(_, r)| r.get("history").is_some_and(Value::is_array)) {
        let events: Vec<&Value> = records.iter().map(|(_, e)| *e).collect();
        return vec![stream(name.to_owned(), &events)];
    }
    let mut trajectories = Vec::new();
    let mut skipped = Vec::new();
    for (run, &(position, record)) in records.iter().enumerate() {
        let Some(history) = record.get("history").and_then(Value::as_array) else {
            skipped.push(position);
            continue;
        };
        let label = id_text(record.get("instance_id")).unwrap_or_else(|| (run + 1).to_string());
        let events: Vec<&Value> = history.iter().collect();
        trajectories.push(stream(format!("{name}#{label}"), &events));
    }
    if let (Some(first), false) = (trajectories.first_mut(), skipped.is_empty()) {
        first.notes.push(format!("records without a history skipped (lines/entries {skipped:?})"));
    }
    trajectories
}

/// The tool calls of a stream still waiting for their observation.
#[derive(Default)]
struct Pending {
    /// In order of the actions.
    open: Vec<ToolCallId>,
    /// Action event id → its call.
    by_event: HashMap<String, ToolCallId>,
}

impl Pending {
    fn add(&mut self, event: Option<String>, id: ToolCallId) {
        if let Some(event) = event {
            self.by_event.insert(event, id.clone());
        }
        self.open.push(id);
    }

    /// Takes the call `id` if it is still open.
    fn take(&mut self, id: &ToolCallId) -> Option<ToolCallId> {
        let index = self.open.iter().position(|open| open == id)?;
        Some(self.open.remove(index))
    }
}

fn stream(name: String, events: &[&Value]) -> Trajectory {
    let mut b = Builder::new(Format::OpenHands, name);
    let mut pending = Pending::default();
    for event in events {
        if !event.is_object() {
            b.tally("events that are not objects skipped");
        } else if let Some(kind) = str_at(event, "kind") {
            sdk_event(&mut b, &mut pending, kind, event);
        } else if let Some(action) = str_at(event, "action") {
            action_event(&mut b, &mut pending, action, event);
        } else if let Some(observation) = str_at(event, "observation") {
            observation_event(&mut b, &mut pending, observation, event);
        } else {
            b.tally("events without action or observation skipped");
        }
    }
    b.finish()
}

/// A stream event's arguments: `args`, or (in older flat streams) the event's own fields.
fn arguments(event: &Value) -> Map<String, Value> {
    if let Some(args) = event.get("args").and_then(Value::as_object) {
        return args.clone();
    }
    let mut args = event.as_object().cloned().unwrap_or_default();
    for key in ["action", "id", "timestamp", "source", "message", "cause", "tool_call_metadata", "llm_metrics"] {
        args.remove(key);
    }
    args
}

fn action_event(b: &mut Builder, pending: &mut Pending, action: &str, event: &Value) {
    let at_ms = timestamp_ms(event.get("timestamp"));
    let source = str_at(event, "source");
    let args = arguments(event);
    let field = |key: &str| args.get(key).and_then(Value::as_str);
    match (action, source) {
        ("system", _) => {
            b.text(Role::System, field("content").or_else(|| str_at(event, "message")).unwrap_or_default(), at_ms);
        }
        ("message", Some("agent")) => {
            b.call();
            b.text(Role::Assistant, field("content").or_else(|| str_at(event, "message")).unwrap_or_default(), at_ms);
        }
        ("message", _) => {
            b.text(Role::User, field("content").or_else(|| str_at(event, "message")).unwrap_or_default(), at_ms);
        }
        (_, Some(source)) if source != "agent" => b.tally(format!("`{action}` actions from {source} skipped")),
        ("change_agent_state" | "recall" | "null", _) => b.tally(format!("`{action}` actions skipped")),
        _ => {
            b.call();
            let metadata = event.get("tool_call_metadata").filter(|m| m.is_object());
            let recorded = metadata.and_then(|m| str_at(m, "tool_call_id")).filter(|id| !id.is_empty());
            let id = recorded.map_or_else(|| b.fresh_id(), ToolCallId::from);
            let name =
                metadata.and_then(|m| str_at(m, "function_name")).map_or_else(|| tool_name(action), str::to_owned);
            let arguments = metadata.and_then(|m| model_arguments(m, id.as_str())).unwrap_or_else(|| {
                let mut args = args.clone();
                args.remove("thought");
                compact(&Value::Object(args))
            });
            let mut content = Vec::new();
            if let Some(thought) = field("thought").filter(|t| !t.is_empty()) {
                content.push(ContentPart::Text { text: thought.to_owned() });
            }
            content.push(ContentPart::ToolCall(ToolCall { id: id.clone(), name, arguments }));
            b.push(Role::Assistant, content, at_ms);
            pending.add(id_text(event.get("id")), id);
        }
    }
}

/// The tool name of an action recorded without `tool_call_metadata`.
fn tool_name(action: &str) -> String {
    match action {
        "run" => "execute_bash",
        "run_ipython" => "execute_ipython_cell",
        "read" | "edit" => "str_replace_editor",
        "browse" | "browse_interactive" => "browser",
        other => other,
    }
    .to_owned()
}

/// The arguments the model gave call `id`, from the metadata's model response.
fn model_arguments(metadata: &Value, id: &str) -> Option<String> {
    let message = metadata.get("model_response")?.get("choices")?.get(0)?.get("message")?;
    let calls = message.get("tool_calls")?.as_array()?;
    let call = calls.iter().find(|c| str_at(c, "id") == Some(id))?;
    Some(arguments_text(call.get("function")?.get("arguments")))
}

fn observation_event(b: &mut Builder, pending: &mut Pending, observation: &str, event: &Value) {
    let at_ms = timestamp_ms(event.get("timestamp"));
    let by_metadata = event.get("tool_call_metadata").and_then(|m| str_at(m, "tool_call_id")).map(ToolCallId::from);
    let by_cause = id_text(event.get("cause")).and_then(|cause| pending.by_event.get(&cause).cloned());
    let flat = event.get("cause").is_none() && event.get("id").is_none();
    let by_order = if flat { pending.open.first().cloned() } else { None };
    let call = [by_metadata, by_cause, by_order].into_iter().flatten().find_map(|id| pending.take(&id));
    let content = match event.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => str_at(event, "message").unwrap_or_default().to_owned(),
        Some(other) => content_text(Some(other)),
    };
    let Some(call_id) = call else {
        match observation {
            "null" | "agent_state_changed" => b.tally(format!("`{observation}` observations skipped")),
            _ => {
                b.tally(format!("`{observation}` observations of no tool call kept as user text"));
                b.text(Role::User, content, at_ms);
            }
        }
        return;
    };
    let extras = event.get("extras").unwrap_or(&Value::Null);
    let exit_code = extras
        .get("metadata")
        .and_then(|m| i32_at(m, "exit_code"))
        .or_else(|| i32_at(extras, "exit_code"))
        .or_else(|| i32_at(event, "exit_code"));
    let error = observation == "error" || exit_code.is_some_and(|c| c > 0);
    let result = ToolResult {
        call_id,
        name: String::new(),
        status: if error { ToolStatus::Error } else { ToolStatus::Ok },
        output: content,
        stderr: None,
        exit_code,
    };
    b.result(result, at_ms);
}

/// The SDK's typed events.
fn sdk_event(b: &mut Builder, pending: &mut Pending, kind: &str, event: &Value) {
    let at_ms = timestamp_ms(event.get("timestamp"));
    match kind {
        "SystemPromptEvent" => {
            let prompt = event.get("system_prompt");
            let text = prompt.and_then(|p| str_at(p, "text")).map_or_else(|| content_text(prompt), str::to_owned);
            b.text(Role::System, text, at_ms);
        }
        "MessageEvent" => {
            let message = event.get("llm_message").unwrap_or(&Value::Null);
            let text = content_text(message.get("content"));
            match str_at(message, "role").or_else(|| str_at(event, "source")) {
                Some("assistant" | "agent") => {
                    b.call();
                    b.text(Role::Assistant, text, at_ms);
                }
                Some("system") => {
                    b.text(Role::System, text, at_ms);
                }
                _ => {
                    b.text(Role::User, text, at_ms);
                }
            }
        }
        "ActionEvent" => {
            b.call();
            let call = event.get("tool_call").unwrap_or(&Value::Null);
            let recorded = str_at(event, "tool_call_id").or_else(|| str_at(call, "id")).filter(|id| !id.is_empty());
            let id = recorded.map_or_else(|| b.fresh_id(), ToolCallId::from);
            let name = str_at(event, "tool_name")
                .or_else(|| str_at(call, "name"))
                .or_else(|| event.get("action").and_then(|a| str_at(a, "kind")))
                .unwrap_or_default()
                .to_owned();
            let arguments = match call.get("arguments") {
                Some(arguments) => arguments_text(Some(arguments)),
                None => arguments_text(event.get("action")),
            };
            let mut content = Vec::new();
            if let Some(reasoning) = str_at(event, "reasoning_content").filter(|r| !r.is_empty()) {
                content.push(ContentPart::Reasoning { text: reasoning.to_owned(), signature: None });
            }
            let thought = content_text(event.get("thought"));
            if !thought.is_empty() {
                content.push(ContentPart::Text { text: thought });
            }
            content.push(ContentPart::ToolCall(ToolCall { id: id.clone(), name, arguments }));
            b.push(Role::Assistant, content, at_ms);
            pending.add(id_text(event.get("id")), id);
        }
        "ObservationEvent" | "AgentErrorEvent" | "UserRejectObservation" => {
            let by_id = str_at(event, "tool_call_id").map(ToolCallId::from);
            let by_action = id_text(event.get("action_id")).and_then(|a| pending.by_event.get(&a).cloned());
            let call_id = [by_id.clone(), by_action].into_iter().flatten().find_map(|id| pending.take(&id));
            let observation = event.get("observation").unwrap_or(&Value::Null);
            let (output, error) = match kind {
                "ObservationEvent" => (
                    content_text(observation.get("content")),
                    observation.get("is_error").and_then(Value::as_bool) == Some(true),
                ),
                "AgentErrorEvent" => (str_at(event, "error").unwrap_or_default().to_owned(), true),
                _ => (str_at(event, "rejection_reason").unwrap_or_default().to_owned(), true),
            };
            let exit_code = i32_at(observation, "exit_code")
                .or_else(|| observation.get("metadata").and_then(|m| i32_at(m, "exit_code")).filter(|c| *c >= 0));
            let result = ToolResult {
                // An unknown id stays as recorded: the builder gives it a call.
                call_id: call_id.or(by_id).unwrap_or_else(|| ToolCallId::from("")),
                name: str_at(event, "tool_name").unwrap_or_default().to_owned(),
                status: if error || exit_code.is_some_and(|c| c > 0) { ToolStatus::Error } else { ToolStatus::Ok },
                output,
                stderr: None,
                exit_code,
            };
            b.result(result, at_ms);
        }
        other => b.tally(format!("`{other}` events skipped")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn actions_and_observations_pair_by_cause_and_metadata() {
        let history = json!([
            {"id": 0, "source": "agent", "action": "system", "args": {"content": "sys"}},
            {"id": 1, "source": "user", "action": "message", "args": {"content": "task"}},
            {"id": 2, "source": "user", "action": "recall", "args": {}},
            {"id": 3, "source": "environment", "observation": "recall", "cause": 2, "content": "Added workspace context"},
            {"id": 5, "timestamp": "2025-04-30T16:32:57.5", "source": "agent", "action": "run", "args": {"command": "ls", "thought": "look"},
             "tool_call_metadata": {"function_name": "execute_bash", "tool_call_id": "toolu_01", "model_response": {"choices": [{"message": {"tool_calls": [{"id": "toolu_01", "function": {"name": "execute_bash", "arguments": "{\"command\": \"ls\"}"}}]}}]}}},
            {"id": 6, "source": "agent", "observation": "run", "cause": 5, "content": "a.c", "extras": {"metadata": {"exit_code": 2}},
             "tool_call_metadata": {"function_name": "execute_bash", "tool_call_id": "toolu_01"}},
            {"id": 7, "source": "agent", "action": "edit", "args": {"path": "/a.c", "thought": ""}},
            {"id": 8, "source": "agent", "observation": "edit", "cause": 7, "content": "edited"},
            {"id": 9, "source": "agent", "action": "message", "args": {"content": "done"}},
            {"id": 10, "source": "environment", "observation": "agent_state_changed", "content": ""},
            {"id": 11, "source": "agent", "action": "finish", "args": {"thought": "bye"}}
        ]);
        let run = json!({"instance_id": "x__y-1", "history": history});
        let t = import("out", &[(1, &run)]);
        assert_eq!(t.len(), 1);
        let t = &t[0];
        assert_eq!(t.name, "out#x__y-1");
        use Role::*;
        let roles: Vec<Role> = t.messages.iter().map(|m| m.role).collect();
        assert_eq!(roles, [System, User, User, Assistant, Tool, Assistant, Tool, Assistant, Assistant, Tool]);
        assert_eq!(t.calls, [3, 5, 7, 8]);
        let calls: Vec<&ToolCall> = t.messages.iter().flat_map(|m| m.tool_calls()).collect();
        assert_eq!((calls[0].name.as_str(), calls[0].arguments.as_str()), ("execute_bash", "{\"command\": \"ls\"}"));
        assert_eq!((calls[1].name.as_str(), calls[1].arguments.as_str()), ("str_replace_editor", r#"{"path":"/a.c"}"#));
        let first = t.messages[4].tool_results().next().cloned();
        assert_eq!(
            first.map(|r| (r.exit_code, r.status, r.name)),
            Some((Some(2), ToolStatus::Error, "execute_bash".into()))
        );
        assert_eq!(t.messages[3].created_at_ms, 1_746_030_777_500);
    }

    #[test]
    fn flat_streams_pair_in_order_and_sdk_events_by_id() {
        let flat = [
            json!({"action": "message", "content": "fix"}),
            json!({"action": "run", "command": "ls", "thought": "t"}),
            json!({"observation": "run", "content": "x", "exit_code": 0}),
        ];
        let events: Vec<(usize, &Value)> = flat.iter().enumerate().map(|(i, e)| (i + 1, e)).collect();
        let t = import("f", &events);
        assert_eq!(t[0].calls, [1]);
        assert_eq!(t[0].messages[2].tool_results().next().map(|r| r.name.as_str()), Some("execute_bash"));
        let sdk = [
            json!({"kind": "ActionEvent", "source": "agent", "id": "a", "thought": [{"type": "text", "text": "go"}], "tool_name": "terminal", "tool_call_id": "c1", "tool_call": {"id": "c1", "name": "terminal", "arguments": "{}"}}),
            json!({"kind": "ObservationEvent", "source": "environment", "tool_name": "terminal", "tool_call_id": "c1", "observation": {"content": [{"type": "text", "text": "out"}], "is_error": false, "exit_code": 1}}),
            json!({"kind": "ObservationEvent", "source": "environment", "tool_name": "terminal", "tool_call_id": "lost", "observation": {"content": "?"}}),
            json!({"kind": "ConversationStateUpdateEvent", "source": "environment"}),
        ];
        let events: Vec<(usize, &Value)> = sdk.iter().enumerate().map(|(i, e)| (i + 1, e)).collect();
        let t = &import("g", &events)[0];
        assert_eq!(t.calls, [0]);
        let results: Vec<&ToolResult> = t.messages.iter().flat_map(|m| m.tool_results()).collect();
        assert_eq!((results[0].status, results[0].output.as_str()), (ToolStatus::Error, "out"));
        assert_eq!(t.messages.iter().flat_map(|m| m.tool_calls()).count(), 2, "the lost result gets a call");
    }
}
