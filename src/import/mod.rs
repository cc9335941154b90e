//! Importers for recorded agent trajectories (the formats of `data/traces`), detected from
//! content. Each yields the messages of one agent context and the boundaries of the LLM calls
//! that were recorded over them. Pure: text in, data out.
//!
//! - [`detect`]-ing reads the text as one JSON document or as JSON lines and looks at its shape;
//!   the file name only breaks ties (`.traj.json` is mini-swe-agent).
//! - Each format has its own module; all of them fill a shared [`builder`] that repairs the
//!   pairing of tool calls and results (every call gets exactly one result, every result a call)
//!   and numbers the messages.
//! - Nothing panics: a file that is not a trajectory, or is cut short, is an
//!   [`Error::Trajectory`](crate::error::Error::Trajectory) naming the first offending line;
//!   anything odd inside a trajectory is skipped or repaired with a note.

mod builder;
mod claude_code;
mod json;
mod mini_swe_agent;
mod openai_chat;
mod openhands;
mod swe_agent;
mod vorflux;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::Message;

pub use builder::MISSING_RESULT;

/// The trajectory formats the importers understand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Format {
    /// vorflux JSON: `trajectory[]` of `llm_call`, `tool_call`, `judge_call`.
    Vorflux,
    /// Claude Code session JSONL (`~/.claude/projects/*.jsonl`).
    ClaudeCode,
    /// SWE-agent `.traj`.
    SweAgent,
    /// mini-swe-agent `.traj.json`.
    MiniSweAgent,
    /// OpenHands CodeAct event streams (`output.jsonl` runs or bare event lists).
    OpenHands,
    /// OpenAI chat JSON (`{messages, tools, response}`), as OpenHands SDK LLM logs write it.
    OpenAiChat,
}

impl Format {
    /// The agent family a format is written by, as the replay reports families.
    pub fn family(self) -> &'static str {
        match self {
            Format::Vorflux => "vorflux",
            Format::ClaudeCode => "claude-code",
            Format::SweAgent => "swe-agent",
            Format::MiniSweAgent => "mini-swe-agent",
            Format::OpenHands | Format::OpenAiChat => "openhands",
        }
    }
}

/// One agent context read from a trajectory file.
#[derive(Debug, Clone, PartialEq)]
pub struct Trajectory {
    pub format: Format,
    /// File stem, plus `#<n>` or `#<agent id>` when one file holds several contexts.
    pub name: String,
    /// The context's messages in order; ids `m000000…`, trace id = `name`.
    pub messages: Vec<Message>,
    /// One entry per recorded LLM call, in order: how many leading `messages` its prompt held.
    /// Non-decreasing; every entry ≤ `messages.len()`.
    pub calls: Vec<usize>,
    /// What the importer had to repair or skip (synthesised calls, unknown events …).
    pub notes: Vec<String>,
}

/// Detect the format of `text` and import every agent context in it. `file` names the file in
/// errors, which also give the first offending line.
pub fn import(file: &str, text: &str) -> Result<Vec<Trajectory>> {
    let (input, torn) = Input::parse(file, text)?;
    let Some(format) = detect(file, &input) else {
        return Err(error(file, input.first_line(), "matches no known trajectory format"));
    };
    let name = stem(file);
    let trajectories = match (&input, format) {
        (Input::Document(doc), Format::Vorflux) => vec![vorflux::import(&name, doc)],
        (Input::Document(doc), Format::SweAgent) => vec![swe_agent::import(&name, doc)],
        (Input::Document(doc), Format::MiniSweAgent) => vec![mini_swe_agent::import(&name, doc)],
        (Input::Document(doc), Format::OpenAiChat) => vec![openai_chat::import(&name, doc)],
        (Input::Document(doc), Format::ClaudeCode) => claude_code::import(&name, &document_records(doc), "entry"),
        (Input::Document(doc), Format::OpenHands) => openhands::import(&name, &document_records(doc)),
        (Input::Lines(lines), Format::ClaudeCode) => claude_code::import(&name, &line_records(lines), "line"),
        (Input::Lines(lines), Format::OpenHands) => openhands::import(&name, &line_records(lines)),
        (Input::Lines(lines), Format::OpenAiChat) => {
            let messages = Value::Array(lines.iter().map(|(_, v)| v.clone()).collect());
            vec![openai_chat::import(&name, &messages)]
        }
        (Input::Lines(_), _) => return Err(error(file, input.first_line(), "matches no known trajectory format")),
    };
    let mut trajectories = trajectories;
    if let Some(line) = torn {
        let note = format!("line {line}, the last, is not whole (a log still being written, or cut): it is left out");
        trajectories.iter_mut().for_each(|t| t.notes.push(note.clone()));
    }
    Ok(trajectories)
}

/// The file name without its directory and its trajectory extensions (`.jsonl`, `.json`,
/// `.traj`): `swe-agent/github_issue.traj.json` → `github_issue`.
pub fn stem(file: &str) -> String {
    let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
    let mut stem = base;
    for extension in [".jsonl", ".json", ".traj"] {
        if let Some(shorter) = stem.strip_suffix(extension) {
            stem = shorter;
        }
    }
    if stem.is_empty() { base.to_owned() } else { stem.to_owned() }
}

/// The `Error::Trajectory` of `file` at 1-based `line`.
fn error(file: &str, line: usize, message: impl Into<String>) -> Error {
    Error::Trajectory { file: file.to_owned(), line: line.max(1), message: message.into() }
}

/// A trajectory file read as JSON: one document, or one value per non-blank line.
enum Input {
    Document(Value),
    /// (1-based line number, value) per non-blank line.
    Lines(Vec<(usize, Value)>),
}

impl Input {
    /// One JSON document if the whole text is one; JSON lines if the first non-blank line is a
    /// JSON value on its own (a torn line is then an error naming it, except the last: a log
    /// still being written, left out and returned); else the document's parse error with
    /// serde_json's line.
    fn parse(file: &str, text: &str) -> Result<(Input, Option<usize>)> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if text.trim().is_empty() {
            return Err(error(file, 1, "empty file"));
        }
        let document_error = match serde_json::from_str::<Value>(text) {
            Ok(value) => return Ok((Input::Document(value), None)),
            Err(e) => e,
        };
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !l.trim().is_empty());
        let first_is_json = lines.next().is_some_and(|(_, l)| serde_json::from_str::<Value>(l).is_ok());
        if !first_is_json {
            return Err(error(file, document_error.line(), format!("not a JSON document: {document_error}")));
        }
        let mut values = Vec::new();
        let mut torn = None;
        let last = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()).map(|(i, _)| i + 1).last();
        for (number, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Value>(line) {
                Ok(value) => values.push((number, value)),
                Err(_) if Some(number) == last => torn = Some(number),
                Err(e) => return Err(error(file, number, format!("not a JSON line (truncated?): {e}"))),
            }
        }
        Ok((Input::Lines(values), torn))
    }

    /// The line an error about the whole file points at.
    fn first_line(&self) -> usize {
        match self {
            Input::Document(_) => 1,
            Input::Lines(lines) => lines.first().map_or(1, |(n, _)| *n),
        }
    }
}

/// The records of a JSON-lines format held in one document: `{loglines: […]}`, a bare list, or
/// one record on its own. Numbered from 1.
fn document_records(doc: &Value) -> Vec<(usize, &Value)> {
    let list = doc.get("loglines").and_then(Value::as_array).or_else(|| doc.as_array());
    match list {
        Some(items) => items.iter().enumerate().map(|(i, v)| (i + 1, v)).collect(),
        None => vec![(1, doc)],
    }
}

fn line_records(lines: &[(usize, Value)]) -> Vec<(usize, &Value)> {
    lines.iter().map(|(n, v)| (*n, v)).collect()
}

/// The format of `input`, from its shape; `file`'s name breaks ties.
fn detect(file: &str, input: &Input) -> Option<Format> {
    match input {
        Input::Document(doc) => detect_document(file, doc),
        Input::Lines(lines) => lines.iter().find_map(|(_, record)| detect_record(record)),
    }
}

fn detect_document(file: &str, doc: &Value) -> Option<Format> {
    match doc {
        Value::Object(object) => {
            let array = |key: &str| object.get(key).and_then(Value::as_array);
            if array("trajectory").is_some_and(|t| t.iter().any(is_vorflux_entry)) {
                return Some(Format::Vorflux);
            }
            if array("loglines").is_some() {
                return Some(Format::ClaudeCode);
            }
            if let Some(messages) = array("messages") {
                if object.contains_key("response") || object.contains_key("tools") {
                    return Some(Format::OpenAiChat);
                }
                let mini =
                    object.get("trajectory_format").and_then(Value::as_str).is_some_and(|f| f.starts_with("mini"));
                return Some(if mini { Format::MiniSweAgent } else { detect_chat(file, messages) });
            }
            let steps = array("trajectory").is_some_and(|t| t.iter().any(|s| s.get("action").is_some()));
            let history = array("history");
            if steps || history.is_some_and(|h| !h.is_empty() && h.iter().all(is_chat_message)) {
                return Some(Format::SweAgent);
            }
            if history.is_some_and(|h| h.iter().any(is_openhands_event)) {
                return Some(Format::OpenHands);
            }
            detect_record(doc)
        }
        Value::Array(items) if items.iter().any(is_chat_message) => Some(detect_chat(file, items)),
        Value::Array(items) => items.iter().find_map(detect_record),
        _ => None,
    }
}

/// One record of a JSON-lines file (or a list): an OpenHands run or event, a Claude Code line,
/// or a chat message.
fn detect_record(record: &Value) -> Option<Format> {
    if record.get("history").is_some_and(Value::is_array) || is_openhands_event(record) {
        Some(Format::OpenHands)
    } else if is_claude_record(record) {
        Some(Format::ClaudeCode)
    } else if is_chat_message(record) {
        Some(Format::OpenAiChat)
    } else {
        None
    }
}

/// A list of chat messages: mini-swe-agent when it looks like one (no tool role or tool calls,
/// commands in fenced blocks, `<returncode>` observations) or the file is a `.traj.json`.
fn detect_chat(file: &str, messages: &[Value]) -> Format {
    if messages.iter().any(|m| m.get("tool_calls").is_some() || json::str_at(m, "role") == Some("tool")) {
        return Format::OpenAiChat;
    }
    if file.ends_with(".traj.json") || messages.iter().any(mini_swe_agent::looks_like_mini) {
        Format::MiniSweAgent
    } else {
        Format::OpenAiChat
    }
}

fn is_vorflux_entry(entry: &Value) -> bool {
    matches!(json::str_at(entry, "type"), Some("llm_call" | "tool_call" | "judge_call"))
}

fn is_chat_message(value: &Value) -> bool {
    json::str_at(value, "role").is_some() && value.get("content").is_some()
}

fn is_openhands_event(value: &Value) -> bool {
    if !value.is_object() || value.get("role").is_some() {
        return false;
    }
    let action_or_observation = json::str_at(value, "action").is_some() || json::str_at(value, "observation").is_some();
    let sdk_event = json::str_at(value, "kind").is_some() && value.get("source").is_some();
    action_or_observation || sdk_event
}

fn is_claude_record(value: &Value) -> bool {
    let typed = matches!(json::str_at(value, "type"), Some("user" | "assistant" | "summary" | "system"));
    let message = value.get("message").is_some_and(|m| json::str_at(m, "role").is_some());
    (typed && (value.get("message").is_some() || value.get("summary").is_some())) || message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_drop_directories_and_trajectory_extensions() {
        assert_eq!(stem("data/traces/swe-agent/github_issue.traj.json"), "github_issue");
        assert_eq!(stem("a/b/c.jsonl"), "c");
        assert_eq!(stem("x.traj"), "x");
        assert_eq!(stem(".json"), ".json");
        assert_eq!(stem("C:\\t\\run.json"), "run");
    }

    fn line_of(result: Result<Vec<Trajectory>>) -> usize {
        match result {
            Err(Error::Trajectory { line, .. }) => line,
            other => panic!("expected a trajectory error, got {other:?}"),
        }
    }

    #[test]
    fn non_trajectories_are_errors_at_the_right_line() {
        assert_eq!(line_of(import("f", "")), 1);
        assert_eq!(line_of(import("f", "MIT License\n\nCopyright")), 1);
        assert_eq!(line_of(import("f", "{}")), 1);
        assert_eq!(line_of(import("f", "[]")), 1);
        assert_eq!(line_of(import("f", "42")), 1);
        assert_eq!(line_of(import("f", "{\n  \"trajectory\": [\n")), 3);
        let user = "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}";
        assert_eq!(line_of(import("f", &format!("{user}\n{{\"type\":\n{user}\n"))), 2);
        // A cut last line is a log still being written: the rest is read and the cut named.
        let cut = import("f", &format!("{user}\n{{\"type\":")).unwrap();
        assert_eq!(cut[0].messages.len(), 1);
        assert!(cut[0].notes[0].starts_with("line 2, the last, is not whole"), "{:?}", cut[0].notes);
        assert_eq!(line_of(import("f", "\n\n{\"a\":1}\n{\"b\":2}\n")), 3);
    }

    #[test]
    fn odd_shapes_never_panic() {
        let inputs = [
            r#"{"trajectory": [1, "x", null, {"type": "tool_call"}, {"type": "llm_call", "output": 5}]}"#,
            r#"{"trajectory": [{"type": "llm_call", "output": {"tool_calls": [{"function": 3}, 7]}}]}"#,
            r#"[{"role": 5, "content": null}]"#,
            r#"[{"role": "tool", "content": [1, {"type": "text"}]}]"#,
            r#"{"messages": [{"role": "assistant", "content": "x", "tool_calls": [{}]}], "response": {"choices": []}}"#,
            r#"[{"action": 3}, {"observation": "run", "cause": "x"}]"#,
            r#"[{"kind": "ObservationEvent", "source": "environment"}]"#,
            r#"{"history": [{"action": "run"}, {"observation": "run", "content": 5}]}"#,
            r#"{"trajectory": [{"action": 1}], "history": [{"role": "system"}]}"#,
            r#"{"loglines": [{"type": "assistant", "message": {"role": "assistant", "content": [{"type": "tool_use"}]}}]}"#,
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\"}]}}\n[1]\n\"x\"",
        ];
        for input in inputs {
            let _ = import("odd.json", input);
        }
    }
}
