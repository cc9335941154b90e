//! Replay, the measuring stick: a recorded trajectory is replayed call by call through several
//! context-management strategies, and every prompt they would have sent is measured with the
//! exact definitions below. Pure: no I/O, no clock; the same numbers natively and in wasm.
//!
//! # Prompts
//! At recorded call `k` a [`Strategy`] sees only `messages[..calls[k]]` (causal) and returns a
//! [`Prompt`]: plain `{role, content}` messages plus the output tokens it spent on its own LLM
//! calls (summaries). A message is flattened to one string by [`flatten`]: text parts as they
//! are, tool calls inline as `name(arguments)`, tool results as their output (plus `"\n"` and
//! stderr when stderr is non-empty), parts joined with `"\n"`. Reasoning parts are left out:
//! providers drop earlier turns' reasoning from the prompt. Summaries are sent as `system`.
//!
//! # Metrics (per call, per strategy)
//! - **tokens** of a message: o200k_base tokens of its content + 4
//!   ([`MESSAGE_OVERHEAD`](crate::tokens::MESSAGE_OVERHEAD)); of a prompt: the sum over its messages.
//! - **cached**: 0 on the first call. Otherwise the tokens of the longest run of leading messages
//!   identical (role and content) to the previous call's prompt; then, if both prompts have a
//!   message at the first differing index and the two have the same role, 4 + the number of
//!   equal leading o200k tokens of their contents ([`common_prefix_tokens`]).
//! - **written** = prompt tokens − cached.
//! - **cost** = `cache_read` × cached + `cache_write` × written + `output` × aux output tokens
//!   ([`Prices`] defaults: 0.1, 1.25, 5.0; `uncached_input` is not used).
//! - **rewrite**: the previous prompt lost more than [`REWRITE_TOKENS`] (2,000) tokens from its
//!   end, i.e. previous prompt tokens − cached > 2,000.
//! - **above window**: prompt tokens > the window.
//! - **edit recall**: an edit tool call found in the assistant messages
//!   `messages[calls[k]..calls[k+1]]` (to the end for the last call) has old texts: `old_string`,
//!   `old_str`, each `edits[].old_string` of a call of the Edit family of
//!   [`family_of`](crate::compress::family_of), or the `--old_str` word of a
//!   `str_replace_editor str_replace …` command line (SWE-agent's actions as text). Each is
//!   normalised ([`normalize_for_edits`]): carriage returns removed, then line-number prefixes
//!   removed from every line (`^\s*\d+(→|\t)`, Claude Code's `   421→` and `cat -n`'s
//!   `   421\t`), and is kept when the result has at least 20 characters after trimming. A text
//!   is *shown* by a string when the string, normalised the same way, contains it verbatim or
//!   JSON-escaped (as the arguments of an earlier call show it). It is **counted** when a message
//!   of `messages[..calls[k]]` (flattened) shows it, and **kept** when the strategy's prompt at
//!   call `k` (its contents joined with `"\n"`) shows it. Recall = Σkept / Σcounted. A lost edit
//!   ([`LostEdit`]) is named with the last message that showed it and what became of that
//!   message, as for references below.
//! - **reference recall**: the *action* of call `k` is the assistant messages of
//!   `messages[calls[k]..calls[k+1]]` (as for edits). Its references are the distinct matches,
//!   in the string values of its tool calls' arguments parsed as JSON (escapes decoded, so `\n`
//!   separates; keys are not searched; arguments that are not JSON are searched with their
//!   escapes turned into spaces), or in its text parts when it made no tool call, of the path
//!   pattern `[\w.-]+/[\w./-]*\.\w{1,5}` and of the identifier pattern `[A-Za-z_][A-Za-z0-9_]{5,}`
//!   when the match contains `_`, a digit, `/` or a lower-case letter followed by an upper-case
//!   one ([`references_in`]). A reference is **counted** when it occurs (as a substring) in the
//!   flattened content of a message of `messages[..calls[k]]` whose role is not system or user,
//!   and in no system or user message of the whole trajectory (a strategy always keeps those); it
//!   is **kept** when it occurs in a message of the strategy's prompt at call `k`.
//!   Recall = Σkept / Σcounted; `raw` keeps every counted reference by construction.
//! - **lost references** ([`LostReference`]): each counted reference not kept, with the last
//!   message of `messages[..calls[k]]` (not system or user) that holds it and what became of that
//!   message ([`LossCause`]): the prompt is lined up with the flattened history by a Myers diff of
//!   the two message lists (equal role and content); between the prompt messages of the nearest
//!   lined-up history messages around it, as many messages as the history had there, role for
//!   role, mean *rewritten*; else a `system` message there means *compacted*; else a message of
//!   its role means *rewritten*; else *dropped*.
//! - **totals** ([`Totals`]): sums of the above, the peak prompt, the counts of rewrites, calls
//!   above the window and fallbacks; cached share = Σcached / Σprompt tokens.
//!
//! Token counts are memoized by content ([`TokenMemo`]) and prompts are compared with the
//! previous one message by message, so no message is counted twice.

mod edits;
mod host;
mod metrics;
mod references;
mod session;
mod strategies;

use std::sync::Arc;

use serde::Serialize;

use crate::config::{Config, Prices};
use crate::error::{Error, Result};
use crate::import::Trajectory;
use crate::model::{ContentPart, Message, Role};

pub use edits::{MIN_EDIT_CHARS, normalize_for_edits, old_texts, strip_line_numbers};
pub use host::{REPLAY_EPOCH_MS, ReplayHost};
pub use metrics::{
    CallMetrics, REWRITE_TOKENS, TokenMemo, Totals, aggregate, common_prefix_tokens, cost, format_table,
};
pub use references::{LossCause, LostEdit, LostReference, action_references};
pub use session::{
    CallStep, CallView, MAX_TRAJECTORY_BYTES, ReplaySession, ReplaySummary, TrajectoryInfo, ViewKind, ViewMessage,
};
pub use strategies::{
    Compaction, CompactionConfig, MASK_KEEP, MASK_PLACEHOLDER, Mask, OPENCODE_OUTPUT_RESERVE, OPENCODE_TAIL_TOKENS,
    Raw, STRATEGY_NAMES, SUMMARY_TOKENS, Workbench, family_configs, replay_config, replay_config_from,
    strategies_by_name, strategies_with, summary_text, with_family_runs,
};

/// How far the workbench's reference recall with its default budgets must clear every peer's on
/// the shared vorflux runs (issue 28): the test that keeps the defaults honest. The budgets
/// themselves are chosen per fold (`workbench replay --folds`).
pub const RECALL_MARGIN: f64 = 0.01;

/// One message as a strategy sends it. `role` is `system`, `user`, `assistant` or `tool`; the
/// content is shared (`Arc`) so unchanged messages cost nothing from one call to the next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireMessage {
    pub role: &'static str,
    pub content: Arc<str>,
}

impl WireMessage {
    pub fn new(role: &'static str, content: impl Into<Arc<str>>) -> Self {
        WireMessage { role, content: content.into() }
    }
}

/// What a strategy sends for one call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prompt {
    pub messages: Vec<WireMessage>,
    /// Output tokens the strategy spent on its own LLM calls before this call (a summary).
    pub aux_output_tokens: usize,
    /// The strategy could not build its own prompt and sent the unmanaged history instead.
    pub fallback: bool,
    /// What the strategy had to degrade or wants said about this call.
    pub notes: Vec<String>,
}

/// A context-management strategy. [`replay`] calls [`reset`](Strategy::reset) once, then
/// [`prompt`](Strategy::prompt) once per recorded call, in order, with `history` = the messages
/// that call's prompt held (each a prefix of the next). It may keep state between calls.
pub trait Strategy {
    fn name(&self) -> &str;
    /// Forget everything: the next call starts a new trajectory.
    fn reset(&mut self);
    /// The prompt for the call whose history is `history`. `tokens` counts with the replay's memo.
    fn prompt(&mut self, history: &[Message], tokens: &mut TokenMemo) -> Result<Prompt>;
}

/// One strategy over one trajectory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StrategyRun {
    pub strategy: String,
    pub calls: Vec<CallMetrics>,
    pub totals: Totals,
    /// Notes of the strategy, each once with the calls it concerns, and the trajectory's edit stats.
    pub notes: Vec<String>,
    /// The counted references its prompts did not hold, call by call.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lost: Vec<LostReference>,
    /// The counted edits whose old text its prompts did not show, call by call.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lost_edits: Vec<LostEdit>,
}

/// The wire role of a model role: summaries are sent as `system`.
pub fn wire_role(role: Role) -> &'static str {
    match role {
        Role::System | Role::Summary => "system",
        Role::User | Role::Observation => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// A message's content as one string (see the module docs): reasoning left out.
pub fn flatten(role: Role, content: &[ContentPart]) -> WireMessage {
    let mut text = String::new();
    let mut first = true;
    let mut push = |piece: &str, text: &mut String| {
        if !std::mem::take(&mut first) {
            text.push('\n');
        }
        text.push_str(piece);
    };
    for part in content {
        match part {
            ContentPart::Text { text: t } => push(t, &mut text),
            ContentPart::Reasoning { .. } => {}
            ContentPart::Opaque(opaque) if opaque.is_reasoning() => {}
            ContentPart::Opaque(opaque) => push(&opaque.placeholder(), &mut text),
            ContentPart::ToolCall(call) => push(&format!("{}({})", call.name, call.arguments), &mut text),
            ContentPart::ToolResult(result) => {
                push(&result.output, &mut text);
                if let Some(stderr) = result.stderr.as_deref().filter(|s| !s.is_empty()) {
                    text.push('\n');
                    text.push_str(stderr);
                }
            }
        }
    }
    WireMessage::new(wire_role(role), text)
}

/// Replay `trajectory` through each strategy (each is reset first).
pub fn replay(
    trajectory: &Trajectory,
    strategies: &mut [Box<dyn Strategy>],
    prices: &Prices,
    window: usize,
) -> Result<Vec<StrategyRun>> {
    replay_with(trajectory, strategies, prices, window, &mut |_, _, _| {})
}

/// [`replay`], handing every prompt to `on_prompt(strategy, call, prompt)` as it is built (to
/// write it out, say); prompts are not kept otherwise.
pub fn replay_with(
    trajectory: &Trajectory,
    strategies: &mut [Box<dyn Strategy>],
    prices: &Prices,
    window: usize,
    on_prompt: &mut dyn FnMut(&str, usize, &Prompt),
) -> Result<Vec<StrategyRun>> {
    check_calls(trajectory)?;
    let compress = Config::default().compress;
    let edits = edits::counted_edits(trajectory, &compress);
    let mut references = references::counted_references(trajectory);
    let mut memo = TokenMemo::default();
    let mut runs = Vec::with_capacity(strategies.len());
    for strategy in strategies.iter_mut() {
        strategy.reset();
        let name = strategy.name().to_owned();
        let mut previous: Option<metrics::Measured> = None;
        let mut calls = Vec::with_capacity(trajectory.calls.len());
        let mut notes = metrics::NoteTally::default();
        let mut lost = Vec::new();
        let mut lost_edits = Vec::new();
        for (k, &end) in trajectory.calls.iter().enumerate() {
            let prompt = strategy.prompt(&trajectory.messages[..end], &mut memo)?;
            on_prompt(&name, k, &prompt);
            let edits_lost = edits.lost_in(k, &prompt.messages);
            let kept = edits.counted(k) - edits_lost.len();
            for (text, message) in edits_lost {
                let cause = references.cause_of(end, message, &prompt.messages);
                lost_edits.push(LostEdit::new(k, text, message, cause));
            }
            let (refs_kept, refs_lost) = references.check(k, end, &prompt.messages);
            lost.extend(refs_lost);
            for note in &prompt.notes {
                notes.add(note, k);
            }
            let measured = metrics::measure(previous.as_ref(), prompt.messages, &mut memo);
            let call = CallMetrics::new(&measured, previous.as_ref(), prompt.aux_output_tokens, prices, window)
                .with_recall((edits.counted(k), kept), (references.counted(k), refs_kept), prompt.fallback);
            calls.push(call);
            previous = Some(measured);
        }
        let totals = Totals::of(&calls);
        let mut notes = notes.finish();
        if trajectory.calls.is_empty() {
            notes.push("not scored: the run made no LLM call".to_owned());
        }
        notes.extend(edits.notes());
        runs.push(StrategyRun { strategy: name, calls, totals, notes, lost, lost_edits });
    }
    Ok(runs)
}

/// Every call's history must be a prefix of the messages and of the next call's history.
fn check_calls(trajectory: &Trajectory) -> Result<()> {
    let mut before = 0;
    for (k, &end) in trajectory.calls.iter().enumerate() {
        if end > trajectory.messages.len() || end < before {
            return Err(Error::InvalidInput(format!(
                "trajectory `{}`: call {k} holds {end} messages (previous call {before}, {} recorded)",
                trajectory.name,
                trajectory.messages.len()
            )));
        }
        before = end;
    }
    Ok(())
}

/// One prompt as a JSON line: `{"call":k,"messages":[{"role","content"}],"aux_output_tokens":n}`.
pub fn prompt_json_line(call: usize, prompt: &Prompt) -> String {
    #[derive(Serialize)]
    struct Line<'a> {
        call: usize,
        messages: Vec<Wire<'a>>,
        aux_output_tokens: usize,
    }
    #[derive(Serialize)]
    struct Wire<'a> {
        role: &'a str,
        content: &'a str,
    }
    let messages = prompt.messages.iter().map(|m| Wire { role: m.role, content: &m.content }).collect();
    let line = Line { call, messages, aux_output_tokens: prompt.aux_output_tokens };
    serde_json::to_string(&line).unwrap_or_default()
}
