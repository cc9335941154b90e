//! Edit recall: could the model still see the text it was replacing? Definitions in the
//! [module docs](super); only calls that made counted edits pay for the joined prompt text.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::{WireMessage, flatten};
use crate::compress::{CompressConfig, Family, family_of};
use crate::import::Trajectory;
use crate::model::{Role, ToolCall};

/// An old text shorter than this (in characters, after stripping and trimming) is not counted.
pub const MIN_EDIT_CHARS: usize = 20;

/// `^\s*\d+(→|\t)` on every line (whitespace other than the newline itself).
static LINE_NUMBER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^[^\S\n]*\d+(?:→|\t)").expect("a valid pattern"));

/// `text` with the line-number prefix of every line removed: Claude Code's `   421→text` and
/// `cat -n`'s `   421\ttext` both become `text`.
pub fn strip_line_numbers(text: &str) -> Cow<'_, str> {
    if !text.contains('→') && !text.contains('\t') {
        return Cow::Borrowed(text);
    }
    LINE_NUMBER.replace_all(text, "")
}

/// `text` as edit recall compares it: carriage returns removed (SWE-agent's outputs end their
/// lines with `\r\n`), then line-number prefixes.
pub fn normalize_for_edits(text: &str) -> Cow<'_, str> {
    if !text.contains('\r') {
        return strip_line_numbers(text);
    }
    Cow::Owned(strip_line_numbers(&text.replace('\r', "")).into_owned())
}

/// The old texts an edit tool call replaces, normalised ([`normalize_for_edits`]), at least
/// [`MIN_EDIT_CHARS`] long: `old_string`, `old_str` and each `edits[].old_string` of a call of
/// the Edit family, or the `--old_str` of a `str_replace_editor str_replace …` command line
/// (SWE-agent's actions written as text).
pub fn old_texts(call: &ToolCall, compress: &CompressConfig) -> Vec<String> {
    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
    let mut found: Vec<String> = Vec::new();
    if family_of(&call.name, &args, compress) == Family::Edit {
        found.extend(["old_string", "old_str"].iter().filter_map(|k| Some(args.get(*k)?.as_str()?.to_owned())));
        if let Some(edits) = args.get("edits").and_then(Value::as_array) {
            found.extend(edits.iter().filter_map(|e| Some(e.get("old_string")?.as_str()?.to_owned())));
        }
    }
    if found.is_empty()
        && let Some(line) = args.get("command").and_then(Value::as_str)
    {
        found.extend(command_line_old_text(line));
    }
    found
        .into_iter()
        .map(|t| normalize_for_edits(&t).into_owned())
        .filter(|t| t.trim().chars().count() >= MIN_EDIT_CHARS)
        .collect()
}

/// The `--old_str` of `str_replace_editor str_replace PATH --old_str … --new_str …`, its shell
/// quoting undone.
fn command_line_old_text(line: &str) -> Option<String> {
    let rest = line.trim_start().strip_prefix("str_replace_editor")?;
    if !rest.trim_start().starts_with("str_replace") {
        return None;
    }
    let words = shlex::split(line)?;
    let at = words.iter().position(|w| w == "--old_str")?;
    words.get(at + 1).cloned()
}

/// Whether `text` (normalised) is in `haystack` as it was shown: verbatim (a file view, an
/// output), or JSON-escaped (inside the arguments of an earlier call, as a prompt shows them).
fn visible_in(text: &str, haystack: &str) -> bool {
    haystack.contains(text) || {
        let quoted = serde_json::to_string(text).unwrap_or_default();
        let escaped = quoted.strip_prefix('"').and_then(|q| q.strip_suffix('"')).unwrap_or_default();
        escaped != text && haystack.contains(escaped)
    }
}

/// The counted edits of every call of one trajectory.
#[derive(Debug, Default)]
pub(crate) struct EditBook {
    /// Per call: the normalised old texts visible in the unmanaged history at that call, each
    /// with the last message before the call that showed it.
    counted: Vec<Vec<(String, usize)>>,
    found: usize,
    invisible: usize,
}

/// Find every call's edits and keep those visible in the unmanaged history.
pub(crate) fn counted_edits(trajectory: &Trajectory, compress: &CompressConfig) -> EditBook {
    let messages = &trajectory.messages;
    let mut book = EditBook { counted: vec![Vec::new(); trajectory.calls.len()], ..Default::default() };
    let mut normalized: Vec<String> = Vec::new();
    for (k, &start) in trajectory.calls.iter().enumerate() {
        let start = start.min(messages.len());
        let end = trajectory.calls.get(k + 1).copied().unwrap_or(messages.len()).min(messages.len()).max(start);
        let texts: Vec<String> = messages[start..end]
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .flat_map(|m| m.tool_calls())
            .flat_map(|c| old_texts(c, compress))
            .collect();
        if texts.is_empty() {
            continue;
        }
        for m in &messages[normalized.len().min(start)..start] {
            let flat = flatten(m.role, &m.content);
            normalized.push(normalize_for_edits(&flat.content).into_owned());
        }
        book.found += texts.len();
        for text in texts {
            // Where it was last shown; an edit of text no message showed is not counted.
            let shown = (0..start.min(normalized.len())).rev().find(|&i| visible_in(&text, &normalized[i]));
            match shown {
                Some(message) => book.counted[k].push((text, message)),
                None => book.invisible += 1,
            }
        }
    }
    book
}

impl EditBook {
    pub(crate) fn counted(&self, call: usize) -> usize {
        self.counted.get(call).map_or(0, Vec::len)
    }

    /// The call's counted edits that `prompt` does not show: their old texts and the message
    /// that last showed each.
    pub(crate) fn lost_in(&self, call: usize, prompt: &[WireMessage]) -> Vec<(&str, usize)> {
        let Some(texts) = self.counted.get(call).filter(|t| !t.is_empty()) else { return Vec::new() };
        let normalized: Vec<Cow<str>> = prompt.iter().map(|m| normalize_for_edits(&m.content)).collect();
        let text = join(normalized.iter().map(|s| s.as_ref()));
        texts.iter().filter(|(t, _)| !visible_in(t, &text)).map(|(t, m)| (t.as_str(), *m)).collect()
    }

    pub(crate) fn notes(&self) -> Vec<String> {
        if self.invisible == 0 {
            return Vec::new();
        }
        vec![format!(
            "{} of {} edits (old text of ≥ {MIN_EDIT_CHARS} characters) not counted: their old text was not \
             visible in the unmanaged history",
            self.invisible, self.found
        )]
    }
}

fn join<'a>(parts: impl Iterator<Item = &'a str> + Clone) -> String {
    let mut out = String::with_capacity(parts.clone().map(|p| p.len() + 1).sum());
    for (i, part) in parts.enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(part);
    }
    out
}
