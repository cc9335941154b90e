//! History compaction (R4): whole rounds at a time, the newest rounds and the opening request
//! always kept, the cut replaced by an archived summary from the host's LLM, or dropped with
//! R4.6's notice when the summary fails. Plan (pure) → one host call → apply (pure).

use std::ops::Range;

use super::view::{ArchivedSummary, HistoryView};
use crate::config::Config;
use crate::host::{ChatMessage, CompletionRequest};
use crate::model::{ContentPart, Message, rounds};
use crate::prompt::template::{body, render};

/// What the user is told when the summary times out (R4.6, exact wording).
pub const TIMEOUT_NOTICE: &str = "Summary generation timed out, keeping recent history only.";

const SUMMARY_PROMPT: &str = include_str!("../../prompts/summary.md");
const PREVIOUS_SUMMARY: &str = include_str!("../../prompts/summary_previous.md");
const TRUNCATED: &str = include_str!("../../prompts/history_truncated.md");

/// R4.4: compact when the next prompt reaches the threshold of the window (or the absolute cap),
/// and the history has at least 3 messages.
pub fn should_compact(next_prompt_tokens: usize, messages: usize, config: &Config) -> bool {
    messages >= 3 && next_prompt_tokens >= config.compaction_trigger_tokens() as usize
}

/// The seed's own estimate on new user input: `last_usage + len(input) // 3`.
pub fn estimate_with_input(last_usage: u64, user_input: &str) -> usize {
    last_usage as usize + crate::tokens::estimate_tokens(user_input)
}

/// The raw range a compaction would replace: from the end of the pinned opening (everything up
/// to and including the first user message) or the start of the current summary, to the start
/// of the oldest of the `min_rounds` newest rounds. `None` when no whole round is left to cut.
pub fn plan_cut(messages: &[Message], view: &HistoryView, min_rounds: usize) -> Option<Range<usize>> {
    let rounds = rounds(messages);
    let first_round = rounds.first()?;
    let keep_from = rounds.len().checked_sub(min_rounds.max(1)).map(|k| rounds[k].start)?;
    let start = view.summary.as_ref().map_or(first_round.start + 1, |s| s.start);
    let already = view.summary.as_ref().map_or(start, |s| s.end);
    (keep_from > already).then_some(start..keep_from)
}

/// The request that asks the host's LLM for the archived summary of `cut`.
pub fn summary_request(
    messages: &[Message],
    view: &HistoryView,
    cut: &Range<usize>,
    config: &Config,
) -> CompletionRequest {
    let previous = match &view.summary {
        Some(s) if !s.truncated => render(body(PREVIOUS_SUMMARY), &[("summary", &s.text)]),
        _ => String::new(),
    };
    let first_new = view.summary.as_ref().map_or(cut.start, |s| s.end.max(cut.start));
    let transcript = transcript(&messages[first_new..cut.end], view, first_new);
    let time = |i: usize| messages.get(i).map_or(0, |m| m.created_at_ms).to_string();
    let prompt = render(
        body(SUMMARY_PROMPT),
        &[
            ("previous_summary", previous.trim_end()),
            ("transcript", &transcript),
            ("start", &format!("message {} (t={} ms)", cut.start, time(cut.start))),
            ("cutoff", &format!("message {} (t={} ms)", cut.end - 1, time(cut.end - 1))),
        ],
    );
    CompletionRequest {
        messages: vec![ChatMessage { role: "user".into(), content: prompt }],
        max_output_tokens: Some(4_000),
        timeout_ms: Some(config.summary_timeout_ms),
        purpose: "summary".into(),
    }
}

/// The messages as the summariser reads them: roles, text, calls, and tool outputs in their
/// history form where they have one; not the messages the agent withdrew.
fn transcript(messages: &[Message], view: &HistoryView, offset: usize) -> String {
    let mut out = String::new();
    for (k, message) in messages.iter().enumerate().filter(|(k, _)| !view.is_withdrawn(offset + k)) {
        for part in &message.content {
            let line = match part {
                ContentPart::Text { text } => format!("[{}] {text}", message.role.as_str()),
                ContentPart::Reasoning { .. } => continue,
                ContentPart::Opaque(opaque) => format!("[{}] {}", message.role.as_str(), opaque.placeholder()),
                ContentPart::ToolCall(call) => format!("[assistant] Action: {}[{}]", call.name, call.arguments),
                ContentPart::ToolResult(result) => {
                    let output = view.forms.get(&(offset + k)).unwrap_or(&result.output);
                    format!("[tool {}] {output}", result.name)
                }
            };
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// The view after a successful summary of `cut`.
pub fn apply_summary(view: &mut HistoryView, cut: Range<usize>, summary: &str) {
    view.summary =
        Some(ArchivedSummary { text: summary.trim().to_owned(), start: cut.start, end: cut.end, truncated: false });
    view.failed_compactions = 0;
}

/// The view after a failed summary: the cut is dropped and the prompt says so (R4.6).
pub fn apply_truncation(view: &mut HistoryView, messages: &[Message], cut: Range<usize>, notice: &str) {
    let first = messages.get(cut.start).map(|m| m.id.to_string()).unwrap_or_default();
    let last = messages.get(cut.end.saturating_sub(1)).map(|m| m.id.to_string()).unwrap_or_default();
    let text = render(body(TRUNCATED), &[("notice", notice), ("first", &first), ("last", &last)]);
    view.summary = Some(ArchivedSummary { text, start: cut.start, end: cut.end, truncated: true });
    view.failed_compactions += 1;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 001 C7's worked numbers: a 200k window, threshold 0.8 = 160k, at least 3 messages.
    #[test]
    fn the_trigger_of_r4_4() {
        let config = Config::default();
        assert!(should_compact(160_000, 3, &config));
        assert!(!should_compact(159_999, 3, &config));
        assert!(!should_compact(190_000, 2, &config), "fewer than 3 messages never compact");
        assert_eq!(estimate_with_input(150_000, &"x".repeat(30_000)), 160_000);
        let capped = Config::from_json(r#"{"max_prompt_tokens": 100000}"#).unwrap();
        assert!(should_compact(100_000, 3, &capped), "the absolute cap triggers first");
    }
}
