//! The index of a compacted window, written by code for every block (whichever compactor wrote
//! the rest): the files the window touched, with the lines read, edited and found by searches,
//! and the code names it worked with. Names are ranked by salience, without look-ahead: what the
//! agent itself wrote (in its text or its tool calls) counts most, a name both the agent and a
//! tool output mention more, then how often and how late in the window it came up; they fill
//! the budget in that order, so a name an output showed once is kept while there is room (the
//! agent may reach for it much later). What the block already shows, and what the requirements
//! (system and user messages) hold, is not repeated: those stay in the prompt anyway.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::{Range, RangeInclusive};
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::files::{FileModel, Touch};
use crate::compress::{CompressConfig, Family, family_of};
use crate::model::{ContentPart, Message, Role, argument_texts, is_code_identifier, references_in, tool_calls_by_id};
use crate::tokens::TokenCounter;

/// At most this many line ranges are listed per file and kind.
const MAX_RANGES: usize = 6;

/// `path:line` in search output (`src/a.py:40:`, `src/a.py:40-`).
static HIT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"([\w./-]*[\w-]\.\w{1,5}):(\d+)[:-]").expect("a valid pattern"));
/// A search result in JSON (`"path": "…", "firstMatchLine": 40` and similar).
static JSON_HIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#""(?:path|file)"\s*:\s*"([^"]+)"[^{}]*?"(?:firstMatchLine|line|lineNumber|line_number)"\s*:\s*(\d+)"#)
        .expect("a valid pattern")
});

/// The index of `messages[window]`: file lines and names, within `budget` tokens together.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct WindowIndex {
    pub files: Vec<String>,
    pub names: Vec<String>,
}

/// The index of `messages[window]` within `budget` tokens: files first (the most recently
/// touched first), then names by salience. Names in `shown` (the block's other parts) are left
/// out: the prompt keeps them anyway.
pub fn index(
    messages: &[Message],
    window: Range<usize>,
    shown: &str,
    compress: &CompressConfig,
    budget: usize,
    counter: &TokenCounter,
) -> WindowIndex {
    let seen = messages.get(..window.end).unwrap_or(messages);
    let (_, touches) = FileModel::build(seen, compress);
    let touches: Vec<&Touch> = touches.iter().filter(|t| window.contains(&t.message)).collect();
    let requirements: String = seen
        .iter()
        .filter(|m| matches!(m.role, Role::System | Role::User))
        .flat_map(|m| m.content.iter())
        .filter_map(|p| match p {
            ContentPart::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let kept = |name: &str| !shown.contains(name) && !requirements.contains(name);

    let files = file_lines(seen, window.clone(), &touches, compress);
    let mut out = WindowIndex::default();
    let mut used = 0;
    let mut listed: Vec<&str> = Vec::new();
    for (path, line) in &files {
        let tokens = counter.count(line) + 2;
        if used + tokens > budget {
            break;
        }
        used += tokens;
        out.files.push(line.clone());
        listed.push(path);
    }
    for name in salient_names(seen, window) {
        // A name takes two tokens at least (itself and its separator).
        if used + 2 > budget {
            break;
        }
        if !kept(&name) || listed.iter().any(|p| p.contains(name.as_str())) {
            continue;
        }
        let tokens = counter.count(&name) + 1;
        if used + tokens > budget {
            continue;
        }
        used += tokens;
        out.names.push(name);
    }
    out
}

/// One line per file the window touched: `path: read L1-80; edited L40-45; found L12, L90`,
/// the most recently touched first.
fn file_lines(
    messages: &[Message],
    window: Range<usize>,
    touches: &[&Touch],
    compress: &CompressConfig,
) -> Vec<(String, String)> {
    #[derive(Default)]
    struct Lines {
        last: usize,
        read: Vec<RangeInclusive<u32>>,
        edited: Vec<RangeInclusive<u32>>,
        found: BTreeSet<u32>,
    }
    let mut files: BTreeMap<String, Lines> = BTreeMap::new();
    for touch in touches {
        let entry = files.entry(touch.path.clone()).or_default();
        entry.last = entry.last.max(touch.message);
        let list = if touch.edited { &mut entry.edited } else { &mut entry.read };
        list.push(touch.lines.clone());
    }
    let calls = tool_calls_by_id(messages);
    for i in window {
        for result in messages[i].tool_results() {
            let call = calls.get(result.call_id.as_str()).copied();
            let args: Value = call.map(|c| serde_json::from_str(&c.arguments).unwrap_or_default()).unwrap_or_default();
            let name = call.map_or(result.name.as_str(), |c| c.name.as_str());
            let family = family_of(name, &args, compress);
            if !matches!(family, Family::Grep | Family::Bash | Family::Glob) {
                continue;
            }
            let hits = HIT.captures_iter(&result.output).chain(JSON_HIT.captures_iter(&result.output));
            for hit in hits.take(200) {
                let (Some(path), Some(line)) = (hit.get(1), hit.get(2).and_then(|l| l.as_str().parse::<u32>().ok()))
                else {
                    continue;
                };
                let entry = files.entry(path.as_str().to_owned()).or_default();
                entry.last = entry.last.max(i);
                entry.found.insert(line);
            }
        }
    }
    let mut ordered: Vec<(String, Lines)> = files.into_iter().collect();
    ordered.sort_by_key(|(_, l)| std::cmp::Reverse(l.last));
    ordered
        .into_iter()
        .map(|(path, lines)| {
            let mut parts = Vec::new();
            if !lines.edited.is_empty() {
                parts.push(format!("edited {}", ranges(merge(lines.edited))));
            }
            if !lines.read.is_empty() {
                parts.push(format!("read {}", ranges(merge(lines.read))));
            }
            if !lines.found.is_empty() {
                let found: Vec<String> = lines.found.iter().take(MAX_RANGES).map(|n| format!("L{n}")).collect();
                let more = lines.found.len().saturating_sub(MAX_RANGES);
                let more = if more > 0 { format!(" (+{more})") } else { String::new() };
                parts.push(format!("found {}{more}", found.join(", ")));
            }
            let line = format!("{path}: {}", parts.join("; "));
            (path, line)
        })
        .collect()
}

/// Overlapping or adjacent ranges merged, in order.
fn merge(mut list: Vec<RangeInclusive<u32>>) -> Vec<RangeInclusive<u32>> {
    list.sort_by_key(|r| *r.start());
    let mut out: Vec<RangeInclusive<u32>> = Vec::new();
    for r in list {
        match out.last_mut() {
            Some(last) if *r.start() <= last.end() + 1 => *last = *last.start()..=(*last.end()).max(*r.end()),
            _ => out.push(r),
        }
    }
    out
}

fn ranges(list: Vec<RangeInclusive<u32>>) -> String {
    let more = list.len().saturating_sub(MAX_RANGES);
    let mut text: Vec<String> = list.iter().take(MAX_RANGES).map(|r| format!("L{}-{}", r.start(), r.end())).collect();
    if more > 0 {
        text.push(format!("+{more} more"));
    }
    text.join(", ")
}

/// The window's code names (paths and identifiers, [`references_in`]), most salient first.
fn salient_names(messages: &[Message], window: Range<usize>) -> Vec<String> {
    #[derive(Default)]
    struct Seen {
        agent: usize,
        tool: usize,
        last: usize,
    }
    let mut names: BTreeMap<String, Seen> = BTreeMap::new();
    let len = window.len().max(1);
    for i in window.clone() {
        let message = &messages[i];
        let (agent, texts) = texts_of(message);
        for name in texts.iter().flat_map(|t| references_in(t)) {
            let seen = names.entry(name).or_default();
            if agent {
                seen.agent += 1;
            } else {
                seen.tool += 1;
            }
            seen.last = i - window.start;
        }
    }
    let mut scored: Vec<(usize, String)> = names
        .into_iter()
        .filter(|(name, _)| name.contains('/') || is_code_identifier(name))
        .map(|(name, s)| {
            let both = usize::from(s.agent > 0 && s.tool > 0);
            let score = 6 * s.agent.min(3) + 2 * s.tool.min(3) + 4 * both + 4 * s.last / len;
            (score, name)
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, name)| name).collect()
}

/// Whether a message is the agent's own, and its texts: assistant text and the string values
/// of its tool calls' arguments, or a tool's output (borrowed: outputs can be huge).
fn texts_of(message: &Message) -> (bool, Vec<std::borrow::Cow<'_, str>>) {
    let mut texts = Vec::new();
    for part in &message.content {
        match part {
            ContentPart::Text { text } => texts.push(text.as_str().into()),
            ContentPart::ToolCall(call) => texts.extend(argument_texts(&call.arguments).into_iter().map(Into::into)),
            ContentPart::ToolResult(result) => texts.push(result.output.as_str().into()),
            ContentPart::Reasoning { .. } | ContentPart::Opaque(_) => {}
        }
    }
    (message.role == Role::Assistant, texts)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tokens::Encoding;
    use crate::workbench::evidence::tests::{call, messages, result};

    /// A name a tool output showed once, early in the window, is the least salient, yet the agent
    /// may need it much later (a method a read file calls): it is listed when the budget has room,
    /// after what the agent itself worked with, and it is the first to give way.
    #[test]
    fn names_fill_the_budget_by_salience() {
        let read = "   214\u{2192}    def __init__(self, directive):\n   217\u{2192}        self.typemap = directive.get_field_type_map()\n";
        let found = "sphinx/util/docfields.py:186:            make_xrefs(self.typerolename, domain, typename)\n";
        let history = messages(vec![
            (Role::User, vec![ContentPart::Text { text: "fix how typed fields render".into() }]),
            (Role::Assistant, vec![call("c1", "read_file", json!({"path": "sphinx/util/docfields.py"}))]),
            (Role::Tool, vec![result("c1", "read_file", read, None)]),
            (
                Role::Assistant,
                vec![
                    ContentPart::Text { text: "TypedField.make_field calls make_xrefs for each type".into() },
                    call("c2", "grep_search", json!({"pattern": "make_xrefs"})),
                ],
            ),
            (Role::Tool, vec![result("c2", "grep_search", found, None)]),
        ]);
        let counter = TokenCounter::new(Encoding::O200kBase);
        let compress = CompressConfig::default();
        let names = |budget| index(&history, 1..5, "", &compress, budget, &counter).names;
        let all = names(1_000);
        let position = |name: &str| all.iter().position(|n| n == name);
        assert!(position("get_field_type_map").is_some(), "{all:?}");
        assert!(position("make_xrefs") < position("get_field_type_map"), "the agent's own names first: {all:?}");
        let files = index(&history, 1..5, "", &compress, 1_000, &counter).files;
        let tight = names(files.iter().map(|f| counter.count(f) + 2).sum::<usize>() + 4);
        assert!(!tight.is_empty() && !tight.contains(&"get_field_type_map".to_owned()), "{tight:?}");
    }
}
