//! Edit/MultiEdit (file + changed ranges + key snippet; a large diff as a summary) and Write
//! (file + created/overwritten + the first lines).

use std::sync::LazyLock;

use regex::Regex;

use super::{Context, Draft, PATH_KEYS, arg_str, lines, push_first};

static HUNK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@").expect("valid regex"));

pub fn edit<'a>(cx: &Context<'_>, output: &'a str) -> Draft<'a> {
    let all = lines(output);
    let mut draft = Draft::new("lines");
    let limit = cx.config.edit_snippet_lines;
    let Some((status, rest)) = all.split_first() else { return draft };
    draft.head.push((*status).to_owned());
    if all.iter().any(|l| HUNK.is_match(l)) {
        diff(&mut draft, rest, limit);
    } else {
        push_first(&mut draft, rest, limit);
    }
    name_the_file(&mut draft, cx, output);
    draft
}

/// A diff: hunk headers always (they are the changed ranges), changed lines up to the limit.
fn diff<'a>(draft: &mut Draft<'a>, rest: &[&'a str], limit: usize) {
    let changed = rest.iter().filter(|l| is_change(l)).count();
    if changed > limit {
        let added = rest.iter().filter(|l| l.starts_with('+') && !l.starts_with("+++")).count();
        let hunks = rest.iter().filter(|l| HUNK.is_match(l)).count();
        draft.head.push(format!("diff: {hunks} hunks, +{added} -{} lines", changed - added));
    }
    let mut shown = 0usize;
    for line in rest {
        let rank = if HUNK.is_match(line) || line.starts_with("+++") || line.starts_with("---") {
            1
        } else if is_change(line) && shown < limit {
            shown += 1;
            2 + shown as u32
        } else {
            super::NEVER
        };
        draft.push_body(*line, rank);
    }
}

fn is_change(line: &str) -> bool {
    (line.starts_with('+') && !line.starts_with("+++")) || (line.starts_with('-') && !line.starts_with("---"))
}

pub fn write<'a>(cx: &Context<'_>, output: &'a str) -> Draft<'a> {
    let all = lines(output);
    let mut draft = Draft::new("lines");
    let Some((status, rest)) = all.split_first() else { return draft };
    draft.head.push((*status).to_owned());
    push_first(&mut draft, rest, cx.config.write_lines);
    name_the_file(&mut draft, cx, output);
    draft
}

/// The edited file's path must survive: when the output names it but the kept status line
/// does not, say it up front.
fn name_the_file(draft: &mut Draft<'_>, cx: &Context<'_>, output: &str) {
    let Some(path) = arg_str(cx.args, PATH_KEYS) else { return };
    if output.contains(path) && !draft.head.iter().any(|l| l.contains(path)) {
        draft.head.insert(0, format!("file: {path}"));
    }
}
