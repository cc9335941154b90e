//! The lines of a file the agent was pointed to before it read the file: `path:line` locations
//! in the tool outputs and messages just before the read (a grep's hits, a traceback's frames,
//! the agent's own `lexer.py:370`). A read's history form keeps the lines around them, where an
//! edit usually follows, before its opening lines. Decided from what came before, never after.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::{CompressConfig, Family, family_of};
use crate::model::{ContentPart, Message, ToolCall};

/// Messages before a read that are searched for locations.
const LOOKBACK: usize = 24;
/// Locations kept per read, the newest first.
const MAX_LOCATIONS: usize = 32;

/// `path:line` (a grep hit `calc/lexer.py:370:`, a frame `lexer.py:370`), or a Python frame
/// `File "calc/lexer.py", line 370`.
static LOCATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?m)(?:^|[\s"'(\[])([\w./-]*[\w-]\.\w{1,6}):(\d{1,7})\b|File "([^"]+)", line (\d{1,7})"#)
        .expect("valid regex")
});

/// The file a read's arguments name (`file_path`, `filePath`, `path`, `filename`, `file`).
pub fn read_path(args: &Value) -> Option<&str> {
    ["file_path", "filePath", "path", "filename", "file"]
        .iter()
        .find_map(|k| args.get(k)?.as_str())
        .filter(|p| !p.is_empty())
}

/// The lines a read by `call` was pointed to in `before`; none for a call of another family.
pub fn pointed_lines_of(call: Option<&ToolCall>, before: &[Message], config: &CompressConfig) -> Vec<u32> {
    let Some(call) = call else { return Vec::new() };
    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
    if family_of(&call.name, &args, config) != Family::Read {
        return Vec::new();
    }
    read_path(&args).map_or_else(Vec::new, |path| pointed_lines(path, before))
}

/// The line numbers (1-based) of `path` named in the messages just before a read.
pub fn pointed_lines(path: &str, before: &[Message]) -> Vec<u32> {
    let mut lines = Vec::new();
    for message in before.iter().rev().take(LOOKBACK) {
        for part in &message.content {
            let text = match part {
                ContentPart::Text { text } => text.as_str(),
                ContentPart::ToolResult(result) => result.output.as_str(),
                _ => continue,
            };
            for found in LOCATION.captures_iter(text) {
                let (file, line) = match (found.get(1), found.get(2), found.get(3), found.get(4)) {
                    (Some(file), Some(line), _, _) | (_, _, Some(file), Some(line)) => (file.as_str(), line.as_str()),
                    _ => continue,
                };
                if same_file(file, path)
                    && let Ok(line) = line.parse::<u32>()
                    && !lines.contains(&line)
                {
                    lines.push(line);
                    if lines.len() == MAX_LOCATIONS {
                        return lines;
                    }
                }
            }
        }
    }
    lines
}

/// Two spellings of one file: equal, or one a path suffix of the other (`calc/lexer.py` and
/// `/work/lexer/calc/lexer.py`).
fn same_file(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim_start_matches("./"), b.trim_start_matches("./"));
    let suffix = |long: &str, short: &str| long == short || long.ends_with(&format!("/{short}"));
    !a.is_empty() && !b.is_empty() && (suffix(a, b) || suffix(b, a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Role, ToolCallId, ToolResult, ToolStatus, TraceId};

    fn tool(output: &str) -> Message {
        let result = ToolResult {
            call_id: ToolCallId::from("c"),
            name: "Grep".into(),
            status: ToolStatus::Ok,
            output: output.into(),
            stderr: None,
            exit_code: None,
        };
        Message::new(TraceId("t".into()), 1, Role::Tool, vec![ContentPart::ToolResult(result)])
    }

    #[test]
    fn grep_hits_frames_and_the_agents_words_point_to_lines() {
        let grep = tool(
            "calc/lexer.py:367:def lex(text):\ncalc/lexer.py:370:    for part in text.split(' '):\ncalc/other.py:12:x",
        );
        let frame = tool("Traceback:\n  File \"calc/lexer.py\", line 401, in lex\n");
        let said = Message::new(
            TraceId("t".into()),
            3,
            Role::Assistant,
            vec![ContentPart::Text { text: "See lexer.py:88.".into() }],
        );
        let lines = pointed_lines("/work/lexer/calc/lexer.py", &[grep, frame, said]);
        assert_eq!(lines, vec![88, 401, 367, 370]);
        assert!(pointed_lines("calc/parser.py", &[tool("calc/lexer.py:3:x")]).is_empty());
        assert!(!same_file("a/lexer.py", "xlexer.py"));
    }
}
