//! Real tool outputs read in place from `../shared/traces`, straight from the recorded JSON
//! (independent of the importers, so compressor tests do not depend on them).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// One recorded tool call and its result.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub file: String,
    pub tool: String,
    pub args: String,
    pub output: String,
    pub exit_code: Option<i32>,
    pub is_error: bool,
}

fn sorted_files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(Path::new("../shared/traces").join(dir))
        .expect("the shared traces beside the clone")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    files
}

/// Every vorflux `tool_call` entry, in file order.
pub fn vorflux() -> Vec<Recorded> {
    let mut out = Vec::new();
    for file in sorted_files("vorflux", "json") {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).expect("read")).expect("json");
        for entry in doc["trajectory"].as_array().into_iter().flatten() {
            if entry["type"] != "tool_call" {
                continue;
            }
            let result = &entry["result"];
            let (output, exit_code) = match result {
                Value::String(s) => (s.clone(), None),
                _ => (
                    result["stdout"].as_str().unwrap_or_default().to_owned()
                        + result["stderr"].as_str().unwrap_or_default(),
                    result["exitCode"].as_i64().map(|c| c as i32),
                ),
            };
            out.push(Recorded {
                file: file.display().to_string(),
                tool: entry["tool"].as_str().unwrap_or_default().to_owned(),
                args: entry["arguments"].to_string(),
                output,
                is_error: exit_code.is_some_and(|c| c != 0),
                exit_code,
            });
        }
    }
    out
}

/// Every Claude Code `tool_use` with its `tool_result`, in file order.
pub fn claude_code() -> Vec<Recorded> {
    let mut out = Vec::new();
    for file in sorted_files("claude-code", "jsonl") {
        let text = std::fs::read_to_string(&file).expect("read");
        let lines: Vec<Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let blocks = |kind: &'static str| {
            lines
                .iter()
                .filter_map(|l| l["message"]["content"].as_array())
                .flatten()
                .filter(move |b| b["type"] == kind)
                .cloned()
                .collect::<Vec<Value>>()
        };
        let results = blocks("tool_result");
        for call in blocks("tool_use") {
            let Some(result) = results.iter().find(|r| r["tool_use_id"] == call["id"]) else { continue };
            let output = match &result["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"),
                _ => String::new(),
            };
            out.push(Recorded {
                file: file.display().to_string(),
                tool: call["name"].as_str().unwrap_or_default().to_owned(),
                args: call["input"].to_string(),
                output,
                exit_code: None,
                is_error: result["is_error"] == true,
            });
        }
    }
    out
}
