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

/// Lines from each end of a huge output that stay candidates: no entry's budget (at most
/// `max_tokens`, a line costing at least two tokens) could keep more.
const END_LINES: usize = 2_500;
/// Error lines from the middle of a huge output that stay candidates.
const MIDDLE_ERROR_LINES: usize = 2_500;

/// Body lines ranked head-and-tail, errors first: the generic rule. Error messages proper are
/// kept ahead of the summary's own cap (rank 0), other error-looking lines next. Two passes
/// over `text`, its lines never collected: a line that could never be kept (in the middle, not an error, or past the error cap) is not
/// drafted but counted in a skipped run, so a huge output costs memory for its candidates only.
pub fn push_head_tail_of<'a>(draft: &mut Draft<'a>, text: &'a str) {
    let text = text.strip_suffix('\n').unwrap_or(text);
    if text.is_empty() {
        return;
    }
    let n = text.bytes().filter(|b| *b == b'\n').count() + 1;
    let (mut skipped, mut errors) = (0, 0);
    for ((i, line), rank) in text.split('\n').enumerate().zip(head_tail_ranks(n)) {
        let at_an_end = i < END_LINES || i >= n.saturating_sub(END_LINES);
        let rank = if is_error_message(line) {
            0
        } else if is_errorish(line) {
            1
        } else {
            rank + 1
        };
        let error = rank <= 1 && !at_an_end;
        if at_an_end || (error && errors < MIDDLE_ERROR_LINES) {
            errors += usize::from(error);
            draft.push_skipped(std::mem::take(&mut skipped));
            draft.push_body(line, rank);
        } else {
            skipped += 1;
        }
    }
    draft.push_skipped(skipped);
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
