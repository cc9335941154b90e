//! One rule per tool family (R3.2): each turns a cleaned output into a [`Draft`].

mod bash;
mod edit;
mod grep;
mod listing;
mod read;
mod todo;

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

pub use super::draft::NEVER;
use super::draft::{Draft, head_tail_ranks};
use super::{Context, Family};

pub fn draft<'a>(cx: &Context<'_>, output: &'a str, stderr: Option<&'a str>) -> Draft<'a> {
    let mut draft = match cx.family {
        Family::Ls => listing::ls(cx, output),
        Family::Glob => listing::glob(cx, output),
        Family::Grep => grep::grep(cx, output),
        Family::Read => read::read(cx, output),
        Family::Edit => edit::edit(cx, output),
        Family::Write => edit::write(cx, output),
        Family::Bash => bash::bash(cx, output),
        Family::TodoWrite => todo::todo_write(cx, output),
        Family::Default => bash::fallback(cx, output),
    };
    if let Some(stderr) = stderr.filter(|s| !s.trim().is_empty()) {
        bash::add_stderr_tail(&mut draft, cx, stderr);
    }
    draft
}

/// Lines that look like an error, a failure or a verdict, in any tool's output. A traceback's
/// header and the line between chained exceptions say nothing by themselves: the exception
/// line after them does.
static ERRORISH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(error|failed|failure|fatal|panic(ked)?|denied|not found|no such file|cannot|invalid)\b|\w(Error|Exception):")
        .expect("valid regex")
});

/// An error message proper: a Python exception line (`ValueError: …`) or a compiler's `error:`.
static ERROR_MESSAGE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*[\w.]*(Error|Exception)\b:|\berror(\[\w+\])?:").expect("valid regex"));

pub fn is_error_message(line: &str) -> bool {
    ERROR_MESSAGE.is_match(line)
}

pub fn is_errorish(line: &str) -> bool {
    !line.starts_with("Traceback (most recent call last)")
        && !line.starts_with("During handling of the above exception")
        && ERRORISH.is_match(line)
}

/// The lines of a cleaned output, without the empty line a trailing newline leaves.
pub fn lines(text: &str) -> Vec<&str> {
    let text = text.strip_suffix('\n').unwrap_or(text);
    if text.is_empty() { Vec::new() } else { text.split('\n').collect() }
}

/// Body lines ranked head-and-tail, errors first: the generic rule. Error messages proper are
/// kept ahead of the summary's own cap (rank 0), other error-looking lines next.
pub fn push_head_tail<'a>(draft: &mut Draft<'a>, lines: &[&'a str]) {
    for (line, rank) in lines.iter().zip(head_tail_ranks(lines.len())) {
        let rank = if is_error_message(line) {
            0
        } else if is_errorish(line) {
            1
        } else {
            rank + 1
        };
        draft.push_body(*line, rank);
    }
}

/// Keep the first `limit` lines (by position), never the rest.
pub fn push_first<'a>(draft: &mut Draft<'a>, lines: &[&'a str], limit: usize) {
    for (i, line) in lines.iter().enumerate() {
        draft.push_body(*line, if i < limit { i as u32 + 1 } else { NEVER });
    }
}

/// The first string argument among `keys` (`file_path`, `filePath`, `path` …).
pub fn arg_str<'a>(args: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| args.get(*k).and_then(Value::as_str))
}

/// Argument keys agents use for a file path.
pub const PATH_KEYS: &[&str] = &["file_path", "filePath", "path", "file", "filename", "dirPath", "directory"];
