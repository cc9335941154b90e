//! Layered assembly (R2.1, R2.4): L1 system and tools, L2 project rules, L3 history, the
//! current user input, then the small dynamic tail. Everything before the tail is a function of
//! recorded history and recorded compactions only, so consecutive calls share their prefix.

use serde::Serialize;

use serde_json::Value;

use super::serialize::{push_message, tool_values};
use super::template::{body, render};
use super::{Layer, PromptMessage, PromptView, ToolSpec};
use crate::model::Role;
use crate::tokens::TokenCounter;

const PROJECT_RULES: &str = include_str!("../../prompts/project_rules.md");

/// What the embedder supplies for one call besides the recorded history.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(default)]
pub struct CallInput {
    /// L1: the system prompt.
    #[cfg_attr(test, ts(optional = nullable))]
    pub system_prompt: String,
    /// L1: the tools offered.
    #[cfg_attr(test, ts(optional = nullable))]
    pub tools: Vec<ToolSpec>,
    /// The dynamic tail: plan/todo recap, state board, reminders; redrawn every call.
    #[cfg_attr(test, ts(optional = nullable))]
    pub tail: Vec<String>,
    /// R2.4's option: put the tail at the end of the system prompt instead (it then moves the
    /// first changed byte to the system prompt whenever it changes).
    #[cfg_attr(test, ts(optional = nullable))]
    pub tail_in_system: bool,
    /// The caller's number for this call, as its own records name it (the proxy's, as in
    /// `calls.jsonl`); numbers only grow. The engine's own count of its calls by default.
    #[cfg_attr(test, ts(optional = nullable))]
    pub call: Option<u64>,
    /// The lifetime the caller's own cache breakpoints set (an agent's `"ttl"`): the call is
    /// priced for it. Unset: five minutes, the provider's default, or with
    /// `choose_cache_ttl` the engine's choice from the session's gaps between calls.
    #[cfg_attr(test, ts(optional = nullable))]
    pub cache_ttl: Option<crate::workbench::cost::CacheTtl>,
    /// The caller writes its breakpoints for the lifetime the engine chooses
    /// (`workbench::cost::choose_cache_ttl`), reported as the call's
    /// `cost.cache_ttl` (the proxy does for Anthropic).
    #[cfg_attr(test, ts(optional = nullable))]
    pub choose_cache_ttl: bool,
}

/// One assembled prompt and what it costs; saved as a trace's `prompt.json` and read back by
/// viewers ([`crate::store::live`]).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Assembly {
    /// The call's number ([`CallInput::call`]); 0 before the engine numbered it (a `prompt.json`
    /// of an earlier build, a branch's prompt).
    #[serde(default)]
    pub call: u64,
    pub view: PromptView,
    /// Exact tokens in the configured encoding, chat overhead included.
    pub tokens: usize,
    /// What the placement of the dynamic tail costs (R2.4): the tokens re-sent without the cache
    /// whenever the tail changes. At the tail, the tail's own tokens; in the system prompt, the
    /// whole prompt, since everything after its first change is re-sent. (Absent from the
    /// `prompt.json` that earlier builds of the VS Code extension wrote.)
    #[serde(default)]
    pub tail_rewrite_tokens: usize,
    /// Byte offset of the first difference from the previous call's prompt (its canonical JSON);
    /// `None` on the first call or when nothing changed.
    pub first_changed_byte: Option<usize>,
    /// What a provider's prefix cache can serve of this prompt (R5.5's expected cached share is
    /// this over `tokens`): the tokens of the tools and the leading messages that lie wholly
    /// before the first changed byte (none when the tools changed). A message's layer is not
    /// sent, so a user input that became history still counts.
    pub expected_cached_tokens: usize,
    /// Rewrites of earlier prompt made for this call, with their cost (R5.4, R5.9).
    pub rewrites: Vec<crate::history::view::RewriteRecord>,
    /// What the assembly had to degrade (a tail over its budget, say).
    pub notes: Vec<String>,
    /// This call's cost beside the agent's own prompt's, and the session's totals of both
    /// (zero in a `prompt.json` of an earlier build).
    #[serde(default)]
    pub cost: crate::workbench::cost::CallCost,
}

/// The project rules file as found at the workspace root.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectRules {
    pub file: String,
    pub text: String,
}

/// Assemble the view. `history` is the rendered L3 (see [`crate::history::HistoryView::render`]); the opening
/// user message of the newest round is the current input.
pub fn assemble(
    input: &CallInput,
    rules: Option<&ProjectRules>,
    history: Vec<PromptMessage>,
    tail_budget: usize,
    counter: &TokenCounter,
) -> (PromptView, Vec<String>) {
    let mut notes = Vec::new();
    let tail = fit_tail(&input.tail, tail_budget, counter, &mut notes);
    let mut system = input.system_prompt.clone();
    if input.tail_in_system && !tail.is_empty() {
        system = format!("{system}\n\n{tail}");
    }
    let mut messages = vec![PromptMessage::text(Role::System, Layer::System, system)];
    if let Some(rules) = rules.filter(|r| !r.text.trim().is_empty()) {
        let text = render(body(PROJECT_RULES), &[("file", &rules.file), ("rules", rules.text.trim_end())]);
        messages.push(PromptMessage::text(Role::System, Layer::Rules, text));
    }
    let current = history.iter().rposition(|m| m.role == Role::User);
    messages.extend(history.into_iter().enumerate().map(|(i, mut m)| {
        if Some(i) == current {
            m.layer = Layer::Input;
        }
        m
    }));
    if !input.tail_in_system && !tail.is_empty() {
        messages.push(PromptMessage::text(Role::User, Layer::Tail, tail));
    }
    (PromptView { messages, tools: input.tools.clone() }, notes)
}

/// Exact tokens of a view: every message's parts plus the per-message overhead, and the tools'
/// schemas as JSON.
pub fn count_view(view: &PromptView, counter: &TokenCounter) -> usize {
    let sent = view.messages.iter().filter(|m| !m.sends_nothing());
    let messages: usize = sent.map(|m| counter.count_message_content(&m.content)).sum();
    let tools: usize = view.tools.iter().map(|t| counter.count(&serde_json::to_string(t).unwrap_or_default())).sum();
    messages + tools
}

/// The canonical bytes a view is compared by between calls: what is sent, in the order a
/// provider's prefix cache reads it (the tools first, then the messages), in the OpenAI chat form
/// (the engine's own labels, layers and sources, are not sent).
pub fn canonical(view: &PromptView) -> String {
    canonical_units(view).text
}

/// [`canonical`]'s bytes and where each unit of them ends: `ends[0]` after the tools, `ends[1 + k]`
/// after message k (a message sent as nothing ends where the one before it does).
#[derive(Debug, Clone, PartialEq)]
pub struct Canonical {
    pub text: String,
    pub ends: Vec<usize>,
}

impl Canonical {
    /// How many leading units lie wholly within the first `bytes` bytes: 0 when the tools
    /// differ, 1 + k when the tools and the first k messages are the same.
    pub fn units_within(&self, bytes: usize) -> usize {
        self.ends.iter().take_while(|&&end| end <= bytes).count()
    }
}

pub fn canonical_units(view: &PromptView) -> Canonical {
    let mut text = format!("{{\"tools\":{}", Value::Array(tool_values(&view.tools)));
    let mut ends = vec![text.len()];
    text.push_str(",\"messages\":[");
    let mut first = true;
    let mut wire = Vec::new();
    for message in &view.messages {
        push_message(&mut wire, message);
        for value in wire.drain(..) {
            if !std::mem::take(&mut first) {
                text.push(',');
            }
            text.push_str(&value.to_string());
        }
        ends.push(text.len());
    }
    text.push_str("]}");
    Canonical { text, ends }
}

/// How many leading bytes `before` and `now` share.
pub fn common_prefix(before: &str, now: &str) -> usize {
    before.bytes().zip(now.bytes()).take_while(|(a, b)| a == b).count()
}

/// The first byte where `now` differs from `before`; `None` when `now` extends `before` or equals it.
pub fn first_difference(before: &str, now: &str) -> Option<usize> {
    let common = common_prefix(before, now);
    (common < before.len()).then_some(common)
}

/// The tail blocks joined, cut to the budget with a note when they exceed it.
fn fit_tail(blocks: &[String], budget: usize, counter: &TokenCounter, notes: &mut Vec<String>) -> String {
    let mut kept = Vec::new();
    let mut used = 0;
    for block in blocks.iter().filter(|b| !b.trim().is_empty()) {
        let tokens = counter.count(block);
        if used + tokens > budget {
            notes.push(format!("dynamic tail over its budget of {budget} tokens: a block of {tokens} tokens left out"));
            continue;
        }
        used += tokens;
        kept.push(block.trim_end());
    }
    kept.join("\n\n")
}
