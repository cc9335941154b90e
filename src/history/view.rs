//! How the prompt shows the recorded history (L3). The raw trace is never changed; this records
//! what replaced what: tail compactions (R5.4), the archived summary (R4.5) and pruned outputs
//! (R4.7), the messages the agent withdrew by sending them again changed, and every rewrite with
//! what it cost (R5.9). History forms of settled tool outputs (R3.1) are kept here as material
//! for compactors, not shown directly (R5.10).

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::model::{ContentPart, Message, Role, ToolResult};
use crate::prompt::template::{body, render};
use crate::prompt::{Layer, PromptMessage};
use crate::workbench::cost::RewriteCost;
use crate::workbench::extractive::Anchored;
use crate::workbench::{CompressedTurns, StateBoard, StateDelta};

const PRUNED: &str = include_str!("../../prompts/output_pruned.md");

/// The prompt's view of the history.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct HistoryView {
    /// Tool outputs of messages before this index belong to finished rounds and are shown in
    /// their history form.
    pub settled: usize,
    /// History forms of settled tool outputs, by message index.
    pub forms: BTreeMap<usize, String>,
    /// The archived summary and the raw range it replaces.
    pub summary: Option<ArchivedSummary>,
    /// Tool messages whose output the prune stage replaced by a placeholder.
    pub pruned: BTreeSet<usize>,
    /// Tool outputs (and observations) shown in a bounded form, by message index: from their
    /// first sight when they are larger than the configured share of the window, or bounded
    /// further when the prompt would not fit the window otherwise. The original stays in the raw
    /// trace.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub bounded: BTreeMap<usize, String>,
    /// Messages before this index were judged at first sight by a prepared call: an output
    /// bounded on arrival is shown whole again when the prompt holding it whole stays under the
    /// compaction threshold (what the agent's own prompt keeps, the engine keeps).
    #[serde(default)]
    pub sighted: usize,
    /// Compactions that failed in a row; at [`MAX_FAILED_COMPACTIONS`] automatic compaction stops.
    pub failed_compactions: u32,
    /// Tail compactions in order; their ranges do not overlap and only grow towards the end.
    pub blocks: Vec<TailBlock>,
    /// The state board after every delta so far (R5.2).
    pub board: StateBoard,
    /// Code lines the blocks already show, so a later block does not repeat them.
    pub anchored: Anchored,
    /// Every rewrite of earlier prompt, with what it cost (R5.9).
    pub rewrites: Vec<RewriteRecord>,
    /// Raw messages the agent withdrew (see [`HistoryView::withdraw`]), in order, never touching
    /// (a withdrawal that starts where the previous one ended extends it): the prompt shows none
    /// of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withdrawn: Vec<Withdrawal>,
}

/// Raw messages `start..end`, which the agent sent again changed from `start` on (aider renders
/// the files it shows and its format reminder anew at each call): its new version was recorded
/// after them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Withdrawal {
    pub start: usize,
    pub end: usize,
}

impl Withdrawal {
    /// Whether one of `withdrawn` (ordered, apart) holds raw message `i`.
    pub fn any_holds(withdrawn: &[Withdrawal], i: usize) -> bool {
        let after = withdrawn.partition_point(|w| w.end <= i);
        withdrawn.get(after).is_some_and(|w| w.start <= i)
    }
}

/// One tail compaction (R5.4): raw messages `start..end` shown as a COMPRESSED_TURNS block
/// followed by the STATE_DELTA it produced. The texts are stored as sent, so the prompt keeps
/// the same bytes on every later call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TailBlock {
    pub start: usize,
    pub end: usize,
    pub text: String,
    /// The STATE_DELTA as sent; empty (nothing sent) when the delta says nothing.
    pub delta_text: String,
    /// `extractive` or `llm`.
    pub compactor: String,
    pub content: CompressedTurns,
    /// The STATE_DELTA, its `version` set.
    #[cfg_attr(test, ts(type = "StateDelta & { version: number }"))]
    pub delta: StateDelta,
}

/// Where a rewrite changed the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum RewritePosition {
    /// Only the newest turns changed: the prefix before them still hits the cache (R5.4).
    Tail,
    /// The middle of the prompt changed: the cache breaks from there (R5.9).
    Middle,
}

/// A rewrite of earlier prompt, as the engine reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct RewriteRecord {
    /// The number of the call (0-based `prepare_call`) it happened on.
    pub call: usize,
    /// `tail_compaction`, `prune`, `summary` or `truncation`.
    pub mechanism: String,
    pub position: RewritePosition,
    /// The raw messages it replaced.
    pub start: usize,
    pub end: usize,
    /// Why: the triggers that nominated it.
    pub reasons: Vec<String>,
    pub cost: RewriteCost,
    /// Output tokens an LLM spent on it (a summary, an LLM-written block); 0 without one.
    pub output_tokens: u64,
    pub notes: Vec<String>,
}
/// After this many failed compactions in a row, automatic compaction stops and says so.
pub const MAX_FAILED_COMPACTIONS: u32 = 3;

/// An archived summary (R4.5), or the notice of a hard truncation when the summary failed (R4.6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ArchivedSummary {
    /// The summary text as the prompt shows it.
    pub text: String,
    /// Raw messages `start..end` are replaced by it.
    pub start: usize,
    pub end: usize,
    /// No summary could be made: the range was dropped, `text` says so.
    pub truncated: bool,
}

impl HistoryView {
    /// Where the uncompacted tail starts: after the opening request (pinned), the summary and
    /// the newest block.
    pub fn hot_start(&self, messages: &[Message]) -> usize {
        let opening = messages.iter().position(|m| m.role == Role::User).map_or(0, |i| i + 1);
        let summary = self.summary.as_ref().map_or(0, |s| s.end);
        let block = self.blocks.iter().map(|b| b.end).max().unwrap_or(0);
        let withdrawn = self.withdrawn.last().map_or(0, |w| w.end);
        opening.max(summary).max(block).max(withdrawn)
    }

    /// Whether raw message `i` was withdrawn (one lookup in the ordered ranges: `render` asks it
    /// of every message).
    pub fn is_withdrawn(&self, i: usize) -> bool {
        Withdrawal::any_holds(&self.withdrawn, i)
    }

    /// Whether any of raw messages `range` was withdrawn.
    pub fn withdraws_any(&self, range: Range<usize>) -> bool {
        self.withdrawn.iter().any(|w| w.start < range.end && range.start < w.end)
    }

    /// The newest message before raw message `end` that the history still shows (the one a
    /// message recorded at `end` follows).
    pub fn shown_before<'m>(&self, messages: &'m [Message], end: usize) -> Option<&'m Message> {
        let end = end.min(messages.len());
        let before = self.withdrawn.iter().find(|w| w.start < end && end <= w.end).map_or(end, |w| w.start);
        messages[..before].last()
    }

    /// Withdraw raw messages `range` (the newest ones): the prompt shows none of them, and what
    /// was made of them (blocks, a summary reaching into them, forms, bounded and pruned outputs)
    /// is dropped, so the history goes on from the messages before them.
    pub fn withdraw(&mut self, range: Range<usize>) {
        let start = range.start;
        self.blocks.retain(|b| b.end <= start);
        self.anchored = anchored_by(&self.blocks);
        if self.summary.as_ref().is_some_and(|s| s.end > start) {
            self.summary = None;
        }
        self.forms.split_off(&start);
        self.bounded.split_off(&start);
        self.pruned.split_off(&start);
        self.settled = self.settled.min(start);
        self.sighted = self.sighted.min(start);
        self.withdrawn.retain(|w| w.end <= start);
        match self.withdrawn.last_mut() {
            Some(touching) if touching.end == start => touching.end = range.end,
            _ => self.withdrawn.push(Withdrawal { start, end: range.end }),
        }
    }

    /// The history as prompt messages, in order.
    pub fn render(&self, messages: &[Message]) -> Vec<PromptMessage> {
        let mut out = Vec::with_capacity(messages.len());
        let mut blocks = self.blocks.iter().peekable();
        let mut skip_to = 0;
        for (i, message) in messages.iter().enumerate() {
            while blocks.peek().is_some_and(|b| b.end <= i && b.start < i) {
                blocks.next();
            }
            if i < skip_to {
                continue;
            }
            let summarised = self.summary.as_ref().is_some_and(|s| (s.start..s.end).contains(&i));
            if let Some(block) = blocks.peek().filter(|b| b.start == i && !summarised) {
                let raw = &block.content.replaces;
                out.push(block_message(&block.text, Some(format!("{}..{}", raw.first_message, raw.last_message))));
                if !block.delta_text.is_empty() {
                    out.push(block_message(&block.delta_text, None));
                }
                skip_to = block.end;
                blocks.next();
                continue;
            }
            if let Some(summary) = &self.summary {
                if i == summary.start {
                    out.push(PromptMessage {
                        role: Role::System,
                        content: vec![ContentPart::Text { text: summary.text.clone() }],
                        layer: Layer::History,
                        source: None,
                        replaces: None,
                    });
                }
                if (summary.start..summary.end).contains(&i) {
                    continue;
                }
            }
            if self.is_withdrawn(i) {
                continue;
            }
            out.push(self.render_message(i, message));
        }
        out
    }

    fn render_message(&self, i: usize, message: &Message) -> PromptMessage {
        let role = if message.role == Role::Summary { Role::System } else { message.role };
        // An observation in its bounded form: the form in place of its text.
        if let Some(form) = self.bounded.get(&i).filter(|_| message.role == Role::Observation) {
            let content = vec![ContentPart::Text { text: form.clone() }];
            return PromptMessage {
                role,
                content,
                layer: Layer::History,
                source: Some(message.id.clone()),
                replaces: None,
            };
        }
        let content = message
            .content
            .iter()
            .map(|part| match part {
                ContentPart::ToolResult(result) if self.pruned.contains(&i) => {
                    ContentPart::ToolResult(shown_as(result, render(body(PRUNED), &[("id", message.id.as_str())])))
                }
                ContentPart::ToolResult(result) if self.bounded.contains_key(&i) => {
                    ContentPart::ToolResult(shown_as(result, self.bounded.get(&i).cloned().unwrap_or_default()))
                }
                other => other.clone(),
            })
            .collect();
        PromptMessage { role, content, layer: Layer::History, source: Some(message.id.clone()), replaces: None }
    }
}

/// The code lines `blocks` show, by path (what a later block need not repeat).
pub fn anchored_by<'b>(blocks: impl IntoIterator<Item = &'b TailBlock>) -> Anchored {
    let mut anchored = Anchored::default();
    for anchor in blocks.into_iter().flat_map(|b| &b.content.anchors) {
        let lines = anchored.entry(anchor.path.clone()).or_default();
        for (k, line) in anchor.snippet.lines().enumerate() {
            lines.insert(anchor.start_line + k as u32, line.to_owned());
        }
    }
    anchored
}

/// `result` with `output` in place of its output and stderr (the original is not copied).
fn shown_as(result: &ToolResult, output: String) -> ToolResult {
    ToolResult {
        call_id: result.call_id.clone(),
        name: result.name.clone(),
        status: result.status,
        output,
        stderr: None,
        exit_code: result.exit_code,
    }
}

fn block_message(text: &str, replaces: Option<String>) -> PromptMessage {
    PromptMessage {
        role: Role::System,
        content: vec![ContentPart::Text { text: text.to_owned() }],
        layer: Layer::History,
        source: None,
        replaces,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TraceId;

    fn messages(n: usize) -> Vec<Message> {
        (0..n)
            .map(|i| {
                let role = if i % 2 == 0 { Role::User } else { Role::Assistant };
                Message::new(TraceId("t".into()), i as u64, role, vec![ContentPart::Text { text: format!("m{i}") }])
            })
            .collect()
    }

    fn shown(view: &HistoryView, messages: &[Message]) -> Vec<String> {
        let texts = view.render(messages).into_iter().flat_map(|m| m.content);
        texts.filter_map(|p| if let ContentPart::Text { text } = p { Some(text) } else { None }).collect()
    }

    #[test]
    fn withdrawn_messages_are_shown_nowhere_and_what_follows_them_goes_on() {
        let messages = messages(8);
        let mut view = HistoryView::default();
        view.withdraw(2..4);
        view.withdraw(4..6);
        assert_eq!(shown(&view, &messages), ["m0", "m1", "m6", "m7"]);
        assert_eq!(view.shown_before(&messages, 6).map(|m| m.id.as_str()), Some("m000001"), "past touching ranges");
        assert_eq!(view.shown_before(&messages, 8).map(|m| m.id.as_str()), Some("m000007"));
        let apart = HistoryView {
            withdrawn: vec![Withdrawal { start: 1, end: 2 }, Withdrawal { start: 4, end: 6 }],
            ..HistoryView::default()
        };
        let flags: Vec<bool> = (0..7).map(|i| apart.is_withdrawn(i)).collect();
        assert_eq!(flags, [false, true, false, false, true, true, false]);
        // A summary whose first message was withdrawn is still shown, in its place.
        view.summary = Some(ArchivedSummary { text: "summary".into(), start: 2, end: 7, truncated: false });
        assert_eq!(shown(&view, &messages), ["m0", "m1", "summary", "m7"]);
    }
}
