//! `opencode` and `codex`: summarise everything once the prompt reaches a threshold.
//!
//! When the prompt of a call (everything since the last compaction appended to what it kept)
//! reaches `threshold` tokens, the prompt becomes: the leading messages (those before the first
//! assistant message), one `system` summary of exactly `summary_tokens` tokens (an opaque,
//! deterministic stand-in, [`summary_text`]; writing it costs `summary_tokens` output tokens),
//! and a verbatim tail: the newest whole units of the history (an assistant message with the
//! tool results after it, never split; any other message alone) within `tail_tokens`. Later
//! calls append their new messages; it compacts again at the threshold. A compaction that would
//! not shrink the prompt is skipped with a note.

use std::sync::Arc;

use super::Flat;
use crate::error::Result;
use crate::model::Message;
use crate::replay::{Prompt, Strategy, TokenMemo, WireMessage};
use crate::tokens::TokenCounter;

/// OpenCode reserves the model's output limit, at most this much, of the window.
pub const OPENCODE_OUTPUT_RESERVE: usize = 32_000;
/// Tokens of every summary, and the output tokens it costs.
pub const SUMMARY_TOKENS: usize = 3_000;
/// OpenCode's verbatim tail after a summary.
pub const OPENCODE_TAIL_TOKENS: usize = 8_000;

/// When and how a [`Compaction`] compacts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionConfig {
    pub name: String,
    /// Compact when a prompt reaches this many tokens.
    pub threshold: usize,
    pub summary_tokens: usize,
    /// Budget of the verbatim tail; 0 keeps no tail.
    pub tail_tokens: usize,
}

impl CompactionConfig {
    /// OpenCode: at the window less the model's output limit (32,000 at most: 168,000 of
    /// 200,000), an 8,000-token tail. The output limit is taken as a quarter of a window under
    /// 128,000 tokens, as small-context models have (24,000 of 32,000).
    pub fn opencode(window: usize) -> Self {
        CompactionConfig {
            name: "opencode".into(),
            threshold: window.saturating_sub(OPENCODE_OUTPUT_RESERVE.min(window / 4)),
            summary_tokens: SUMMARY_TOKENS,
            tail_tokens: OPENCODE_TAIL_TOKENS,
        }
    }

    /// Codex: at 90 % of the window (180,000 of 200,000), no tail.
    pub fn codex(window: usize) -> Self {
        CompactionConfig {
            name: "codex".into(),
            threshold: (window as u64 * 9 / 10) as usize,
            summary_tokens: SUMMARY_TOKENS,
            tail_tokens: 0,
        }
    }
}

/// Summarise-everything compaction (OpenCode, Codex).
#[derive(Debug)]
pub struct Compaction {
    config: CompactionConfig,
    flat: Flat,
    /// `cumulative[i]`: tokens of the first `i` history messages.
    cumulative: Vec<usize>,
    /// What the prompt keeps before `history[from..]`: leading messages and the summary.
    kept: Vec<WireMessage>,
    kept_tokens: usize,
    from: usize,
    compactions: usize,
}

impl Compaction {
    pub fn new(config: CompactionConfig) -> Self {
        Compaction {
            config,
            flat: Flat::default(),
            cumulative: vec![0],
            kept: Vec::new(),
            kept_tokens: 0,
            from: 0,
            compactions: 0,
        }
    }

    /// Where the verbatim tail of `history[lead..n]` starts.
    fn tail_start(&self, lead: usize, n: usize) -> usize {
        let messages = &self.flat.messages;
        let mut start = n;
        let mut used = 0;
        while start > lead {
            let mut unit = start - 1;
            while unit > lead && messages[unit].role == "tool" {
                unit -= 1;
            }
            let tokens = self.cumulative[start] - self.cumulative[unit];
            if used + tokens > self.config.tail_tokens {
                break;
            }
            used += tokens;
            start = unit;
        }
        start
    }
}

impl Strategy for Compaction {
    fn name(&self) -> &str {
        &self.config.name
    }

    fn reset(&mut self) {
        *self = Compaction::new(self.config.clone());
    }

    fn prompt(&mut self, history: &[Message], tokens: &mut TokenMemo) -> Result<Prompt> {
        let n = history.len();
        self.flat.sync(history);
        if self.from > n {
            self.reset();
            self.flat.sync(history);
        }
        self.cumulative.truncate(n + 1);
        for m in &self.flat.messages[self.cumulative.len() - 1..n] {
            let total = self.cumulative.last().copied().unwrap_or(0) + tokens.message(m);
            self.cumulative.push(total);
        }
        let mut prompt = Prompt::default();
        let now = self.kept_tokens + self.cumulative[n] - self.cumulative[self.from];
        if now >= self.config.threshold {
            let messages = &self.flat.messages;
            let lead = messages.iter().position(|m| m.role == "assistant").unwrap_or(n);
            let tail = self.tail_start(lead, n);
            let text = summary_text(&tokens.counter(), self.compactions + 1, self.config.summary_tokens);
            let summary = WireMessage::new("system", Arc::from(text));
            let kept_tokens = self.cumulative[lead] + tokens.message(&summary);
            if kept_tokens + self.cumulative[n] - self.cumulative[tail] < now {
                self.kept = messages[..lead].to_vec();
                self.kept.push(summary);
                self.kept_tokens = kept_tokens;
                self.from = tail;
                self.compactions += 1;
                prompt.aux_output_tokens = self.config.summary_tokens;
                prompt.notes.push("compacted".into());
            } else {
                prompt.notes.push("compaction skipped: it would not shrink the prompt".into());
            }
        }
        prompt.messages = self.kept.iter().chain(&self.flat.messages[self.from..n]).cloned().collect();
        Ok(prompt)
    }
}

/// The opaque stand-in for the `number`th summary: deterministic text of exactly `tokens`
/// tokens in `counter`'s encoding (a header, then one-token words).
pub fn summary_text(counter: &TokenCounter, number: usize, tokens: usize) -> String {
    const WORD: &str = " context";
    let mut text = format!("Summary {number} of the conversation so far.");
    if counter.count(&text) > tokens {
        text.clear();
    }
    let mut n = counter.count(&text);
    text.push_str(&WORD.repeat(tokens - n));
    // Each word is one token in o200k_base; repair in case an encoding merges differently.
    for _ in 0..64 {
        n = counter.count(&text);
        if n == tokens {
            break;
        }
        if n < tokens {
            text.push_str(WORD);
        } else if let Some(shorter) = text.strip_suffix(WORD) {
            text.truncate(shorter.len());
        } else {
            text.clear();
        }
    }
    text
}
