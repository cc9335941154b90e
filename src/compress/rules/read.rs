//! Read: the read range with its line numbers, at most `read_lines` lines; within the budget the
//! lines around those the agent was pointed to before ([`crate::compress::focus`]) come first,
//! then the definitions (signatures) of the range, then its opening lines.

use std::sync::LazyLock;

use regex::Regex;

use super::{Context, Draft, NEVER, lines};

/// A line-number prefix: `   421→`, `   421\t`, `421:` (SWE-agent).
static NUMBERED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*\d+(?:→|\t|:)").expect("valid regex"));

/// Lines that define something, in the languages agents read most.
static DEFINITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s{0,12}(?:@\w|(?:pub(?:\([^)]*\))?\s+|export\s+|default\s+|async\s+|static\s+|public\s+|private\s+|protected\s+|abstract\s+|final\s+|unsafe\s+)*(?:def|class|fn|function|struct|enum|impl|trait|interface|type|module|mod|func|macro_rules!)\b)",
    )
    .expect("valid regex")
});

pub fn read<'a>(cx: &Context<'_>, output: &'a str) -> Draft<'a> {
    let mut all = lines(output);
    let mut draft = Draft::new("lines");
    // A closing note such as `[Showing lines 311-325 of 900 total lines …]` is kept whole.
    if all.len() > 1 && all.last().is_some_and(|l| l.starts_with('[') && l.ends_with(']')) {
        draft.tail.push(all.pop().unwrap_or_default().to_owned());
    }
    let read_budget = (output.len() as f64 / 4.0 * cx.config.read_share) as usize;
    draft.body_budget = Some(read_budget.max(cx.config.summary_tokens));
    let mut rank_by_position = 3u32;
    for (i, line) in all.iter().enumerate() {
        let rank = if i >= cx.config.read_lines {
            NEVER
        } else if line_number(line).is_some_and(|n| near(cx.focus, n)) {
            1
        } else if DEFINITION.is_match(strip_number(line)) {
            2
        } else {
            rank_by_position += 1;
            rank_by_position
        };
        draft.push_body(*line, rank);
    }
    if all.len() > cx.config.read_lines {
        draft.notes.push(format!("read limited to {} lines", cx.config.read_lines));
    }
    draft
}

/// Lines kept before and after a line the agent was pointed to: an edit's old text around it.
const FOCUS_BEFORE: u32 = 3;
const FOCUS_AFTER: u32 = 8;

fn near(focus: &[u32], line: u32) -> bool {
    focus.iter().any(|&f| line + FOCUS_BEFORE >= f && line <= f + FOCUS_AFTER)
}

/// The number of a numbered line.
fn line_number(line: &str) -> Option<u32> {
    let prefix = NUMBERED.find(line)?.as_str();
    prefix.trim().trim_end_matches(['→', '\t', ':']).trim().parse().ok()
}

/// The content of a numbered line.
pub fn strip_number(line: &str) -> &str {
    NUMBERED.find(line).map_or(line, |m| &line[m.end()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_definitions() {
        assert_eq!(strip_number("   421→    def f(x):"), "    def f(x):");
        assert_eq!(strip_number("    12\tfn main() {"), "fn main() {");
        assert_eq!(strip_number("13:class A:"), "class A:");
        for def in ["    def f(self):", "class A(B):", "pub(crate) fn x()", "export async function f()", "@property"] {
            assert!(DEFINITION.is_match(def), "{def}");
        }
        assert!(!DEFINITION.is_match("        return self.definitely"));
        assert_eq!(line_number("   421→    def f(x):"), Some(421));
        assert_eq!(line_number("    12\tfn main() {"), Some(12));
        assert_eq!(line_number("13:class A:"), Some(13));
        assert!(near(&[370], 367) && near(&[370], 378) && !near(&[370], 366) && !near(&[370], 379));
    }
}
