//! `recall`: the model gets back any original the prompt shows only in compressed form. Every
//! history form and every COMPRESSED_TURNS block names its originals (`raw#m000123`, `cmd#12`,
//! `msg#12`); `recall` answers with the original text from the raw trace, whole or as a line
//! range or the lines matching a pattern, numbered and bounded. It only reads: a bad request is
//! an error the model can act on (what was wrong, what exists) and changes nothing.

use regex::RegexBuilder;
use serde::Deserialize;
use serde_json::json;

use super::extractive::one_line;
use crate::model::{ContentPart, Message, Role};
use crate::prompt::ToolSpec;
use crate::prompt::template::sections;
use crate::tokens::TokenCounter;

/// The tool's name.
pub const RECALL_TOOL: &str = "recall";
/// At most this many matching lines are listed for a pattern.
const MAX_MATCHES: usize = 200;
/// A pattern compiles to at most this many bytes (a pathological one is refused, not run).
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

const PROMPTS: &str = include_str!("../../prompts/recall.md");

/// The JSON schema of `recall`; its texts are `prompts/recall.md`'s.
pub fn recall_spec() -> ToolSpec {
    let texts = sections(PROMPTS);
    let text = |name: &str| texts.get(name).cloned().unwrap_or_default();
    ToolSpec {
        name: RECALL_TOOL.to_owned(),
        description: text("tool_recall"),
        parameters: json!({
            "type": "object",
            "properties": {
                "ref": {"type": "string", "description": text("param_recall_ref")},
                "lines": {"type": "string", "description": text("param_recall_lines")},
                "grep": {"type": "string", "description": text("param_recall_grep")}
            },
            "required": ["ref"],
            "additionalProperties": false
        }),
    }
}

/// A `recall` call's arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    #[serde(rename = "ref")]
    reference: String,
    #[serde(default)]
    lines: Option<String>,
    #[serde(default)]
    grep: Option<String>,
}

/// Answer a `recall` call over the main line's `messages`, within `budget` tokens; the error
/// says what was wrong and what exists.
pub fn recall(messages: &[Message], arguments: &str, budget: usize, counter: &TokenCounter) -> Result<String, String> {
    let args: Args = serde_json::from_str(if arguments.trim().is_empty() { "{}" } else { arguments }).map_err(|e| {
        format!("recall takes {{\"ref\": \"raw#m000123\"}} with an optional \"lines\": \"40-80\" or \"grep\": \"pattern\" ({e})")
    })?;
    if args.lines.is_some() && args.grep.is_some() {
        return Err("give `lines` or `grep`, not both".to_owned());
    }
    let index = resolve(messages, &args.reference)?;
    let message = &messages[index];
    let text = original(message);
    // Lines split at `\n` only, so the numbered lines joined with `\n` are the original, byte for byte.
    let total = text.split('\n').count();
    let label = format!("raw#{}", message.id);
    if let Some(pattern) = &args.grep {
        return grep(&text, pattern, &label, total, budget, counter);
    }
    let (first, last) = match &args.lines {
        Some(range) => parse_range(range, total, &label)?,
        None => (1, total.max(1)),
    };
    let mut out = format!("{label} ({}, {total} lines), lines {first}-{last}:\n", describe(message));
    let mut shown = first;
    let mut used = counter.count(&out);
    for (n, line) in text.split('\n').enumerate().skip(first - 1).take(last + 1 - first) {
        let numbered = format!("{:>6}\t{line}\n", n + 1);
        let tokens = counter.count(&numbered);
        if used + tokens > budget && shown > first {
            out.push_str(&format!(
                "[cut at the budget of {budget} tokens: lines {}-{last} not shown; recall them with \"lines\": \"{}-{last}\", \
                 or search with \"grep\"]\n",
                shown,
                shown
            ));
            return Ok(out);
        }
        used += tokens;
        out.push_str(&numbered);
        shown = n + 2;
    }
    Ok(out)
}

/// The index of the message `reference` names: `raw#m000123`, `m000123`, `msg#12`, `#12`,
/// `cmd#12`, `test#12` (trailing words such as `exit=1` ignored), or the plain-text copy's path.
pub fn resolve(messages: &[Message], reference: &str) -> Result<usize, String> {
    let r = reference.trim().trim_matches(|c: char| c == '`' || c == '[' || c == ']').trim();
    let r = r.split_whitespace().next().unwrap_or("");
    let r = r.rsplit('/').next().unwrap_or(r).trim_end_matches(".txt");
    let newest = messages.last().map_or_else(|| "none yet".to_owned(), |m| format!("raw#{}", m.id));
    let exists =
        format!("the main line holds raw#m000000 to {newest} (msg#0 to msg#{})", messages.len().saturating_sub(1));
    if r.is_empty() {
        return Err(format!("`ref` is empty; {exists}"));
    }
    let id = r.strip_prefix("raw#").unwrap_or(r);
    if let Some(i) = messages.iter().position(|m| m.id.as_str() == id) {
        return Ok(i);
    }
    if let Some((kind, number)) = id.split_once('#') {
        let known = matches!(kind.to_ascii_lowercase().as_str(), "" | "msg" | "cmd" | "test");
        return match (known, number.parse::<usize>()) {
            (true, Ok(n)) if n < messages.len() => Ok(result_of(messages, n)),
            (true, Ok(n)) => Err(format!("no message #{n}; {exists}")),
            _ => Err(format!(
                "`{reference}` is not a pointer recall knows (raw#m000123, msg#12, cmd#12, test#12); {exists}"
            )),
        };
    }
    if let Some((branch, _)) = id.split_once('-').filter(|(b, rest)| !b.is_empty() && rest.starts_with('m')) {
        return Err(format!("`{reference}` is a message of branch {branch}; recall reads the main line; {exists}"));
    }
    Err(format!("no message `{id}`; {exists}"))
}

/// A pointer to the message that made a call means its result, as evidence pointers do.
fn result_of(messages: &[Message], n: usize) -> usize {
    let message = &messages[n];
    if message.role != Role::Assistant || message.tool_calls().next().is_none() {
        return n;
    }
    let ids: Vec<&str> = message.tool_calls().map(|c| c.id.as_str()).collect();
    messages[n + 1..]
        .iter()
        .position(|m| m.tool_results().any(|r| ids.contains(&r.call_id.as_str())))
        .map_or(n, |k| n + 1 + k)
}

/// The original text of a message: a tool's output (and stderr), or the message's text and calls.
pub fn original(message: &Message) -> String {
    content_text(&message.content)
}

/// The text of `content` as [`original`] gives a message's: texts, tool calls, outputs.
pub fn content_text(content: &[ContentPart]) -> String {
    let mut parts = Vec::new();
    for part in content {
        match part {
            ContentPart::Text { text } => parts.push(text.clone()),
            ContentPart::Reasoning { .. } => {}
            ContentPart::Opaque(opaque) if opaque.is_reasoning() => {}
            ContentPart::Opaque(opaque) => parts.push(opaque.placeholder()),
            ContentPart::ToolCall(call) => parts.push(format!("{}({})", call.name, call.arguments)),
            ContentPart::ToolResult(result) => {
                parts.push(result.output.clone());
                if let Some(stderr) = result.stderr.as_deref().filter(|s| !s.is_empty()) {
                    parts.push(format!("stderr:\n{stderr}"));
                }
            }
        }
    }
    parts.join("\n")
}

fn describe(message: &Message) -> String {
    match message.tool_results().next() {
        Some(result) => format!("output of {}", result.name),
        None => format!("{} message", message.role.as_str()),
    }
}

/// `40-80`, `40`, `40-` → (first, last), 1-based, inclusive, within `total` lines.
fn parse_range(range: &str, total: usize, label: &str) -> Result<(usize, usize), String> {
    let bad = || format!("`lines` is \"{range}\"; write \"40-80\", \"40\" or \"40-\" ({label} has {total} lines)");
    let (a, b) = match range.trim().split_once('-') {
        Some((a, b)) => (a.trim(), Some(b.trim())),
        None => (range.trim(), None),
    };
    let first: usize = a.parse().map_err(|_| bad())?;
    let last: usize = match b {
        None => first,
        Some("") => total,
        Some(b) => b.parse().map_err(|_| bad())?,
    };
    if first == 0 {
        return Err(format!("lines count from 1; {label} has lines 1-{total}"));
    }
    if last < first {
        return Err(format!("`lines` \"{range}\" ends before it starts; {label} has lines 1-{total}"));
    }
    if first > total {
        return Err(format!("`lines` \"{range}\" starts after the end: {label} has {total} lines"));
    }
    Ok((first, last.min(total)))
}

fn grep(
    text: &str,
    pattern: &str,
    label: &str,
    total: usize,
    budget: usize,
    counter: &TokenCounter,
) -> Result<String, String> {
    let regex =
        RegexBuilder::new(pattern).size_limit(PATTERN_SIZE_LIMIT).dfa_size_limit(PATTERN_SIZE_LIMIT).build().map_err(
            |e| format!("`grep` is not a usable regular expression: {}", one_line(&e.to_string(), usize::MAX)),
        )?;
    let mut out = String::new();
    let mut used = 0;
    let mut matched = 0;
    let mut cut = false;
    for (n, line) in text.split('\n').enumerate() {
        if !regex.is_match(line) {
            continue;
        }
        matched += 1;
        if cut {
            continue;
        }
        let numbered = format!("{:>6}\t{line}\n", n + 1);
        let tokens = counter.count(&numbered);
        if matched > MAX_MATCHES || used + tokens > budget {
            cut = true;
            continue;
        }
        used += tokens;
        out.push_str(&numbered);
    }
    if matched == 0 {
        return Ok(format!("no line of {label} ({total} lines) matches `{pattern}`"));
    }
    let shown = out.lines().count();
    let mut head = format!("{label}: {matched} of {total} lines match `{pattern}`");
    if shown < matched {
        head.push_str(&format!("; the first {shown} shown (narrow the pattern, or recall \"lines\" around them)"));
    }
    Ok(format!("{head}:\n{out}"))
}
