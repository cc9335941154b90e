//! Grep: a summary (matches, files) and the first N matching lines with file and line number.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use super::{Context, Draft, lines, push_first};

/// `path:line:text` (ripgrep, grep -n), `path-line-text` (context lines) or `path:text`: a path
/// with a file extension, then `:` or `-`.
static MATCH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\.{0,2}/?[\w.\-/]*\.\w+)(?:[:-]\d+)?[:-]").expect("valid regex"));

pub fn grep<'a>(cx: &Context<'_>, output: &'a str) -> Draft<'a> {
    let all = lines(output);
    let mut draft = Draft::new("lines");
    if all.len() > cx.config.grep_matches {
        draft.head.push(summary(&all));
    }
    push_first(&mut draft, &all, cx.config.grep_matches);
    draft
}

/// `N matches in M files: a.py (3), b.py (2), …` when lines carry file names, else a line count.
fn summary(all: &[&str]) -> String {
    let mut per_file: BTreeMap<&str, usize> = BTreeMap::new();
    for line in all {
        if let Some(m) = MATCH.captures(line).and_then(|c| c.get(1)) {
            *per_file.entry(m.as_str()).or_default() += 1;
        }
    }
    if per_file.is_empty() {
        return format!("{} result lines", all.len());
    }
    let matches: usize = per_file.values().sum();
    let mut files: Vec<(&str, usize)> = per_file.into_iter().collect();
    files.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let shown: Vec<String> = files.iter().take(8).map(|(f, n)| format!("{f} ({n})")).collect();
    let more = if files.len() > 8 { format!(", +{} more files", files.len() - 8) } else { String::new() };
    format!("{matches} matches in {} files: {}{more}", files.len(), shown.join(", "))
}
