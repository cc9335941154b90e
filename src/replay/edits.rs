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

/// The old texts an edit tool call replaces, prefixes stripped, at least [`MIN_EDIT_CHARS`]
/// long: `old_string`, `old_str` and each `edits[].old_string` of a call of the Edit family.
pub fn old_texts(call: &ToolCall, compress: &CompressConfig) -> Vec<String> {
    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
    if family_of(&call.name, &args, compress) != Family::Edit {
        return Vec::new();
    }
    let mut found: Vec<&str> = ["old_string", "old_str"].iter().filter_map(|k| args.get(*k)?.as_str()).collect();
    if let Some(edits) = args.get("edits").and_then(Value::as_array) {
        found.extend(edits.iter().filter_map(|e| e.get("old_string")?.as_str()));
    }
    found
        .into_iter()
        .map(|t| strip_line_numbers(t).into_owned())
        .filter(|t| t.trim().chars().count() >= MIN_EDIT_CHARS)
        .collect()
}

/// The counted edits of every call of one trajectory.
#[derive(Debug, Default)]
pub(crate) struct EditBook {
    /// Per call: the stripped old texts visible in the unmanaged history at that call.
    counted: Vec<Vec<String>>,
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
            normalized.push(strip_line_numbers(&flat.content).into_owned());
        }
        let history = join(normalized[..start.min(normalized.len())].iter().map(String::as_str));
        book.found += texts.len();
        for text in texts {
            if history.contains(&text) {
                book.counted[k].push(text);
            } else {
                book.invisible += 1;
            }
        }
    }
    book
}

impl EditBook {
    pub(crate) fn counted(&self, call: usize) -> usize {
        self.counted.get(call).map_or(0, Vec::len)
    }

    /// How many of the call's counted edits are visible in `prompt`.
    pub(crate) fn kept_in(&self, call: usize, prompt: &[WireMessage]) -> usize {
        let Some(texts) = self.counted.get(call).filter(|t| !t.is_empty()) else { return 0 };
        let stripped: Vec<Cow<str>> = prompt.iter().map(|m| strip_line_numbers(&m.content)).collect();
        let text = join(stripped.iter().map(|s| s.as_ref()));
        texts.iter().filter(|t| text.contains(t.as_str())).count()
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
