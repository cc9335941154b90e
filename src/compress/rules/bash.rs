//! Bash: the exit code, assertions when the output is a known test or build log, the lines
//! that look like errors, head and tail of stdout, and the last lines of stderr. The same
//! without the exit code is the default rule for unknown tools.

use super::{Context, Draft, is_errorish, lines, push_head_tail_of};
use crate::compress::draft::BodyLine;
use crate::compress::logs;

/// Body tokens kept beside a recognised log's assertions (the assertions carry the verdict).
const BODY_BESIDE_ASSERTIONS: usize = 120;

pub fn bash<'a>(cx: &Context<'_>, output: &'a str) -> Draft<'a> {
    let mut draft = fallback(cx, output);
    if let Some(code) = cx.exit_code {
        draft.head.insert(0, format!("exit code: {code}"));
    }
    if let Some(facts) = logs::recognise(output) {
        // The verdict and every failing name are always kept; the first failure and the
        // diagnostics lead the body, within the entry's budget.
        let mut details = Vec::new();
        for (i, line) in facts.render().lines().enumerate() {
            if i == 0 || line.starts_with("failing") {
                draft.head.push(line.to_owned());
            } else {
                details.push(BodyLine { text: line.to_owned().into(), rank: 0, lines: 1 });
            }
        }
        draft.body.splice(0..0, details);
        draft.body_budget = Some(BODY_BESIDE_ASSERTIONS);
    }
    draft
}

pub fn fallback<'a>(cx: &Context<'_>, output: &'a str) -> Draft<'a> {
    let mut draft = Draft::new("lines");
    // R3.2: stdout is summarised, not kept up to the budget.
    draft.body_budget = Some(cx.config.summary_tokens);
    if cx.is_error && cx.exit_code.is_none() && !output.is_empty() {
        draft.head.push("status: error".to_owned());
    }
    push_head_tail_of(&mut draft, output);
    draft
}

/// The last lines of stderr, kept ahead of stdout's body (R3.2: the stderr tail).
pub fn add_stderr_tail<'a>(draft: &mut Draft<'a>, cx: &Context<'_>, stderr: &'a str) {
    let all = lines(stderr);
    let keep = cx.config.stderr_tail_lines;
    let start = all.len().saturating_sub(keep);
    draft.push_body(format!("stderr ({} lines{}):", all.len(), if start > 0 { ", last shown" } else { "" }), 0);
    for line in &all[start..] {
        draft.push_body(*line, if is_errorish(line) { 0 } else { 1 });
    }
}
