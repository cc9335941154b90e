//! What the agent knows of each file: the lines its reads returned, with its successful edits
//! applied on top. Anchors are cut from this model, so a block shows the code as it is now,
//! not as it was first read.

use std::collections::BTreeMap;
use std::ops::RangeInclusive;

use serde_json::Value;

use super::evidence::shell::{ViewKind, file_view, join};
use super::evidence::split_line_number;
use super::turns::args_path;
use crate::compress::{CompressConfig, Family, family_of};
use crate::model::{Message, ToolStatus, tool_calls_by_id};

/// One read or edit of a file: which message, which lines (after the edit, for edits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touch {
    pub message: usize,
    pub path: String,
    pub lines: RangeInclusive<u32>,
    pub edited: bool,
}

/// Known lines per path.
#[derive(Debug, Clone, Default)]
pub struct FileModel {
    files: BTreeMap<String, BTreeMap<u32, String>>,
}

/// Context lines shown around an edit.
const EDIT_CONTEXT: u32 = 3;

impl FileModel {
    /// The model after `messages`, and every touch in order.
    pub fn build(messages: &[Message], compress: &CompressConfig) -> (Self, Vec<Touch>) {
        let calls = tool_calls_by_id(messages);
        let mut model = FileModel::default();
        let mut touches = Vec::new();
        for (i, message) in messages.iter().enumerate() {
            for result in message.tool_results() {
                let Some(call) = calls.get(result.call_id.as_str()) else { continue };
                let args: Value = serde_json::from_str(&call.arguments).unwrap_or_default();
                let ok = result.status == ToolStatus::Ok;
                let family = family_of(&call.name, &args, compress);
                if family == Family::Bash && ok && result.exit_code.unwrap_or(0) == 0 {
                    let viewed = args.get("command").and_then(Value::as_str).and_then(|c| viewed_file(c, &args));
                    if let Some((path, first)) = viewed
                        && let Some(lines) = model.view(&path, &result.output, first)
                    {
                        touches.push(Touch { message: i, path, lines, edited: false });
                    }
                    continue;
                }
                let Some(path) = args_path(&args) else { continue };
                let touched = match family {
                    Family::Read if ok => model.read(path, &result.output, &args).map(|l| (l, false)),
                    Family::Write if ok => model.write(path, &args).map(|l| (l, true)),
                    Family::Edit if ok => model.edit(path, &args).map(|l| (l, true)),
                    _ => None,
                };
                if let Some((lines, edited)) = touched {
                    touches.push(Touch { message: i, path: path.to_owned(), lines, edited });
                }
            }
        }
        (model, touches)
    }

    /// Known lines of `path` within `range`, in order.
    pub fn lines(&self, path: &str, range: &RangeInclusive<u32>) -> Vec<(u32, &str)> {
        self.files.get(path).map_or_else(Vec::new, |f| f.range(range.clone()).map(|(n, l)| (*n, l.as_str())).collect())
    }

    fn read(&mut self, path: &str, output: &str, args: &Value) -> Option<RangeInclusive<u32>> {
        let offset = args.get("offset").and_then(Value::as_u64).unwrap_or(0) as u32;
        self.view(path, output, offset + 1)
    }

    /// Lines of `path` shown by a read or a command: numbered lines where the output numbers
    /// them, else consecutive lines from `first`.
    fn view(&mut self, path: &str, output: &str, first: u32) -> Option<RangeInclusive<u32>> {
        let mut numbered: Vec<(u32, &str)> = output.lines().filter_map(split_line_number).collect();
        if numbered.is_empty() {
            numbered = output.lines().enumerate().map(|(k, l)| (first + k as u32, l)).collect();
        }
        let (first, last) = (numbered.first()?.0, numbered.last()?.0);
        let file = self.files.entry(path.to_owned()).or_default();
        for (n, line) in numbered {
            file.insert(n, line.to_owned());
        }
        Some(first..=last)
    }

    fn write(&mut self, path: &str, args: &Value) -> Option<RangeInclusive<u32>> {
        let content = args.get("content").and_then(Value::as_str)?;
        let file: BTreeMap<u32, String> =
            content.lines().enumerate().map(|(k, l)| (k as u32 + 1, l.to_owned())).collect();
        let last = file.len().max(1) as u32;
        self.files.insert(path.to_owned(), file);
        Some(1..=last.min(40))
    }

    /// Apply `old_string → new_string` (or `old_str/new_str`, or MultiEdit's `edits[]`) where the
    /// old text sits in a run of known lines; the lines of the last replacement ± context.
    fn edit(&mut self, path: &str, args: &Value) -> Option<RangeInclusive<u32>> {
        let pair = |v: &Value| {
            let old = ["old_string", "old_str"].iter().find_map(|k| v.get(*k).and_then(Value::as_str))?;
            let new = ["new_string", "new_str"].iter().find_map(|k| v.get(*k).and_then(Value::as_str)).unwrap_or("");
            Some((old.to_owned(), new.to_owned()))
        };
        let edits: Vec<(String, String)> = match args.get("edits").and_then(Value::as_array) {
            Some(list) => list.iter().filter_map(pair).collect(),
            None => pair(args).into_iter().collect(),
        };
        let file = self.files.get_mut(path)?;
        edits
            .iter()
            .filter(|(old, _)| !old.is_empty())
            .fold(None, |touched, (old, new)| replace(file, old, new).or(touched))
    }
}

/// Replace `old` by `new` in the first run of consecutive known lines that holds it, shifting
/// later lines; the new lines ± context.
fn replace(file: &mut BTreeMap<u32, String>, old: &str, new: &str) -> Option<RangeInclusive<u32>> {
    for (start, end) in runs(file) {
        let text: Vec<&str> = file.range(start..=end).map(|(_, l)| l.as_str()).collect();
        let joined = text.join("\n");
        let Some(at) = joined.find(old) else { continue };
        let replaced = format!("{}{new}{}", &joined[..at], &joined[at + old.len()..]);
        let first_line = start + joined[..at].matches('\n').count() as u32;
        let new_lines: Vec<String> = replaced.split('\n').map(str::to_owned).collect();
        let shift = new_lines.len() as i64 - text.len() as i64;
        let after: Vec<(u32, String)> = file.split_off(&(end + 1)).into_iter().collect();
        file.retain(|n, _| *n < start);
        for (k, line) in new_lines.into_iter().enumerate() {
            file.insert(start + k as u32, line);
        }
        for (n, line) in after {
            file.insert((i64::from(n) + shift).max(0) as u32, line);
        }
        let last_line = first_line + new.matches('\n').count() as u32;
        return Some(first_line.saturating_sub(EDIT_CONTEXT).max(1)..=last_line + EDIT_CONTEXT);
    }
    None
}

/// The file a shell command prints (see [`file_view`]), relative paths resolved against the
/// call's working directory, and the number of its first printed line.
fn viewed_file(command: &str, args: &Value) -> Option<(String, u32)> {
    let view = file_view(command)?;
    let first = match view.kind {
        ViewKind::Numbered => 1,
        ViewKind::From(first) => first,
        ViewKind::Grep => return None,
    };
    let dir = args.get("working_dir").or_else(|| args.get("cwd")).and_then(Value::as_str);
    Some((join(dir.map(|d| d.trim_end_matches('/')), &view.path?), first))
}

/// Runs of consecutive line numbers, as inclusive (first, last).
fn runs(file: &BTreeMap<u32, String>) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for &n in file.keys() {
        match out.last_mut() {
            Some((_, last)) if *last + 1 == n => *last = n,
            _ => out.push((n, n)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_that_print_a_file() {
        let args = serde_json::json!({"working_dir": "/code/app"});
        assert_eq!(viewed_file("sed -n '380,430p' tests/a.py", &args), Some(("/code/app/tests/a.py".into(), 380)));
        let none = Value::Null;
        assert_eq!(viewed_file("cd /repo && cat -n src/x.rs", &none), Some(("/repo/src/x.rs".into(), 1)));
        assert_eq!(viewed_file("head -n 40 /etc/hosts.txt 2>&1", &none), Some(("/etc/hosts.txt".into(), 1)));
        assert_eq!(viewed_file("sed -n '1,2p' a && sed -n '3,4p' a", &none), None, "two outputs in one");
        assert_eq!(viewed_file("cat a | grep x", &none), None);
        assert_eq!(viewed_file("python -m pytest", &none), None);
    }

    #[test]
    fn edits_apply_to_known_lines_and_shift_the_rest() {
        let mut file: BTreeMap<u32, String> = (1..=6).map(|n| (n, format!("line {n}"))).collect();
        file.insert(20, "far".into());
        let touched = replace(&mut file, "line 2\nline 3", "two\nnew\nthree").unwrap();
        assert_eq!(touched, 1..=7);
        let lines: Vec<&str> = file.values().map(String::as_str).collect();
        assert_eq!(lines, ["line 1", "two", "new", "three", "line 4", "line 5", "line 6", "far"]);
        assert_eq!(file.get(&21).map(String::as_str), Some("far"), "lines after the run shift by one");
        assert_eq!(replace(&mut file, "absent", "x"), None);
    }
}
