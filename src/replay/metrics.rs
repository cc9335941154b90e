//! Token accounting: the memo, the comparison of a prompt with the previous one, and the
//! per-call metrics and totals defined in the [module docs](super).

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use super::{StrategyRun, WireMessage};
use crate::config::Prices;
use crate::tokens::{Encoding, MESSAGE_OVERHEAD, TokenCounter, is_safe_boundary};

/// A call is a rewrite when the previous prompt lost more than this many tokens from its end.
pub const REWRITE_TOKENS: usize = 2_000;

/// o200k_base counts memoized by content: each distinct content is counted once per replay.
#[derive(Debug)]
pub struct TokenMemo {
    counter: TokenCounter,
    memo: HashMap<Arc<str>, usize>,
}

impl Default for TokenMemo {
    fn default() -> Self {
        TokenMemo { counter: TokenCounter::new(Encoding::O200kBase), memo: HashMap::new() }
    }
}

impl TokenMemo {
    pub fn counter(&self) -> TokenCounter {
        self.counter
    }

    /// Tokens of `content`.
    pub fn text(&mut self, content: &Arc<str>) -> usize {
        if let Some(&n) = self.memo.get(&**content) {
            return n;
        }
        let n = self.counter.count(content);
        self.memo.insert(Arc::clone(content), n);
        n
    }

    /// Tokens of a message: its content + [`MESSAGE_OVERHEAD`].
    pub fn message(&mut self, message: &WireMessage) -> usize {
        self.text(&message.content) + MESSAGE_OVERHEAD
    }

    /// Tokens of a prompt: the sum over its messages.
    pub fn prompt(&mut self, messages: &[WireMessage]) -> usize {
        messages.iter().map(|m| self.message(m)).sum()
    }
}

/// A prompt with its per-message tokens, kept as the previous prompt of the next call.
#[derive(Debug)]
pub(crate) struct Measured {
    messages: Vec<WireMessage>,
    tokens: Vec<usize>,
    total: usize,
    cached: usize,
}

/// Measure `messages` against the previous prompt (see the module docs for `cached`).
pub(crate) fn measure(previous: Option<&Measured>, messages: Vec<WireMessage>, memo: &mut TokenMemo) -> Measured {
    let mut tokens = Vec::with_capacity(messages.len());
    let mut cached = 0;
    let mut same_so_far = previous.is_some();
    for (i, message) in messages.iter().enumerate() {
        let before = previous.and_then(|p| Some((p.messages.get(i)?, *p.tokens.get(i)?)));
        let n = match before {
            Some((b, n)) if b == message => n,
            _ => memo.message(message),
        };
        if same_so_far {
            match before {
                Some((b, n)) if b == message => cached += n,
                Some((b, _)) if b.role == message.role => {
                    cached += MESSAGE_OVERHEAD + common_prefix_tokens(&memo.counter(), &b.content, &message.content);
                    same_so_far = false;
                }
                _ => same_so_far = false,
            }
        }
        tokens.push(n);
    }
    let total = tokens.iter().sum();
    Measured { messages, tokens, total, cached: cached.min(total) }
}

/// The number of equal leading tokens of `a` and `b` (o200k_base when `counter` is), exactly as
/// if both were encoded whole. Only the stretch around their first differing byte is encoded:
/// both are cut at the last safe boundary before it (where the pre-tokenizer always starts a
/// new piece, see [`crate::tokens`]), whose common head is counted, and at the first safe
/// boundary after it.
pub fn common_prefix_tokens(counter: &TokenCounter, a: &str, b: &str) -> usize {
    let mut p = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    while !a.is_char_boundary(p) {
        p -= 1;
    }
    if p == 0 {
        return 0;
    }
    if p == a.len() && p == b.len() {
        return counter.count(a);
    }
    let head = &a[..p];
    let mut cut = 0;
    let mut next = None;
    for (i, c) in head.char_indices().rev() {
        if next.is_some_and(|n| is_safe_boundary(c, n)) {
            cut = i + c.len_utf8();
            break;
        }
        next = Some(c);
    }
    let common = if cut > 0 { counter.count(&a[..cut]) } else { 0 };
    let ta = counter.encode(&a[cut..safe_boundary_after(a, p)]);
    let tb = counter.encode(&b[cut..safe_boundary_after(b, p)]);
    common + ta.iter().zip(&tb).take_while(|(x, y)| x == y).count()
}

/// The first safe boundary of `text` after byte `p` (a char boundary > 0), else its end.
fn safe_boundary_after(text: &str, p: usize) -> usize {
    let mut prev = text[..p].chars().next_back();
    for (offset, c) in text[p..].char_indices() {
        if offset > 0 && prev.is_some_and(|pc| is_safe_boundary(pc, c)) {
            return p + offset;
        }
        prev = Some(c);
    }
    text.len()
}

/// The metrics of one call of one strategy (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallMetrics {
    pub messages: usize,
    pub prompt_tokens: usize,
    pub cached: usize,
    pub written: usize,
    pub aux_output_tokens: usize,
    pub cost: f64,
    pub rewrite: bool,
    pub above_window: bool,
    /// The strategy sent the unmanaged history instead of its own prompt.
    pub fallback: bool,
    pub edits_counted: usize,
    pub edits_kept: usize,
    pub refs_counted: usize,
    pub refs_kept: usize,
}

impl CallMetrics {
    pub(crate) fn new(
        now: &Measured,
        previous: Option<&Measured>,
        aux_output_tokens: usize,
        prices: &Prices,
        window: usize,
    ) -> Self {
        let written = now.total - now.cached;
        CallMetrics {
            messages: now.messages.len(),
            prompt_tokens: now.total,
            cached: now.cached,
            written,
            aux_output_tokens,
            cost: cost(prices, now.cached, written, aux_output_tokens),
            rewrite: previous.is_some_and(|p| p.total.saturating_sub(now.cached) > REWRITE_TOKENS),
            above_window: now.total > window,
            fallback: false,
            edits_counted: 0,
            edits_kept: 0,
            refs_counted: 0,
            refs_kept: 0,
        }
    }

    /// The recall counts of the call: edits and references, each `(counted, kept)`.
    pub(crate) fn with_recall(mut self, edits: (usize, usize), refs: (usize, usize), fallback: bool) -> Self {
        (self.edits_counted, self.edits_kept) = edits;
        (self.refs_counted, self.refs_kept) = refs;
        self.fallback = fallback;
        self
    }
}

/// `cache_read × cached + cache_write × written + output × aux`.
pub fn cost(prices: &Prices, cached: usize, written: usize, aux_output_tokens: usize) -> f64 {
    prices.cache_read * cached as f64 + prices.cache_write * written as f64 + prices.output * aux_output_tokens as f64
}

/// Sums over calls (or over trajectories): the peak is a maximum, everything else a sum.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ReplayTotals"))]
pub struct Totals {
    pub calls: u64,
    pub prompt_tokens: u64,
    pub cached: u64,
    pub written: u64,
    pub aux_output_tokens: u64,
    pub cost: f64,
    pub peak_prompt_tokens: u64,
    pub above_window: u64,
    pub rewrites: u64,
    pub fallbacks: u64,
    pub edits_counted: u64,
    pub edits_kept: u64,
    pub refs_counted: u64,
    pub refs_kept: u64,
}

impl Totals {
    pub fn of(calls: &[CallMetrics]) -> Self {
        let mut t = Totals::default();
        for c in calls {
            t.calls += 1;
            t.prompt_tokens += c.prompt_tokens as u64;
            t.cached += c.cached as u64;
            t.written += c.written as u64;
            t.aux_output_tokens += c.aux_output_tokens as u64;
            t.cost += c.cost;
            t.peak_prompt_tokens = t.peak_prompt_tokens.max(c.prompt_tokens as u64);
            t.above_window += u64::from(c.above_window);
            t.rewrites += u64::from(c.rewrite);
            t.fallbacks += u64::from(c.fallback);
            t.edits_counted += c.edits_counted as u64;
            t.edits_kept += c.edits_kept as u64;
            t.refs_counted += c.refs_counted as u64;
            t.refs_kept += c.refs_kept as u64;
        }
        t
    }

    pub fn add(&mut self, other: &Totals) {
        self.calls += other.calls;
        self.prompt_tokens += other.prompt_tokens;
        self.cached += other.cached;
        self.written += other.written;
        self.aux_output_tokens += other.aux_output_tokens;
        self.cost += other.cost;
        self.peak_prompt_tokens = self.peak_prompt_tokens.max(other.peak_prompt_tokens);
        self.above_window += other.above_window;
        self.rewrites += other.rewrites;
        self.fallbacks += other.fallbacks;
        self.edits_counted += other.edits_counted;
        self.edits_kept += other.edits_kept;
        self.refs_counted += other.refs_counted;
        self.refs_kept += other.refs_kept;
    }

    /// Σcached / Σprompt tokens; 0 without prompt tokens.
    pub fn cached_share(&self) -> f64 {
        if self.prompt_tokens == 0 { 0.0 } else { self.cached as f64 / self.prompt_tokens as f64 }
    }

    /// Σkept / Σcounted edits; `None` when no edit was counted.
    pub fn edit_recall(&self) -> Option<f64> {
        (self.edits_counted > 0).then(|| self.edits_kept as f64 / self.edits_counted as f64)
    }

    /// Σkept / Σcounted references; `None` when no reference was counted.
    pub fn reference_recall(&self) -> Option<f64> {
        (self.refs_counted > 0).then(|| self.refs_kept as f64 / self.refs_counted as f64)
    }
}

/// Totals per strategy over many runs, in the order strategies first appear.
pub fn aggregate<'a>(runs: impl IntoIterator<Item = &'a StrategyRun>) -> Vec<(String, Totals)> {
    let mut out: Vec<(String, Totals)> = Vec::new();
    for run in runs {
        match out.iter_mut().find(|(name, _)| *name == run.strategy) {
            Some((_, totals)) => totals.add(&run.totals),
            None => out.push((run.strategy.clone(), run.totals.clone())),
        }
    }
    out
}

/// A plain-text table of totals, one row per strategy. When a row is named `raw`, each row's
/// prompt tokens and cost are also given as a ratio to raw's (`0.31x`, `-` when raw's is 0).
pub fn format_table(rows: &[(String, Totals)]) -> String {
    let raw = rows.iter().find(|(name, _)| name == "raw").map(|(_, t)| t);
    let ratio = |of: f64, raw: f64| if raw > 0.0 { format!("{:.2}x", of / raw) } else { "-".to_owned() };
    let vs_raw = |cell: String| if raw.is_some() { format!(" {cell:>6}") } else { String::new() };
    let mut out = format!(
        "{:<10} {:>6} {:>13}{} {:>7} {:>12} {:>9} {:>14}{} {:>8} {:>7} {:>8} {:>9} {:>16} {:>22}\n",
        "strategy",
        "calls",
        "prompt",
        vs_raw("vs raw".into()),
        "cached",
        "written",
        "aux out",
        "cost",
        vs_raw("vs raw".into()),
        "peak",
        ">window",
        "rewrites",
        "fallbacks",
        "edit recall",
        "reference recall"
    );
    for (name, t) in rows {
        let recall =
            |r: Option<f64>, kept, counted| r.map_or_else(|| "-".to_owned(), |r| format!("{r:.3} ({kept}/{counted})"));
        let (prompt_ratio, cost_ratio) = raw.map_or_else(Default::default, |r| {
            (ratio(t.prompt_tokens as f64, r.prompt_tokens as f64), ratio(t.cost, r.cost))
        });
        out.push_str(&format!(
            "{:<10} {:>6} {:>13}{} {:>6.1}% {:>12} {:>9} {:>14.0}{} {:>8} {:>7} {:>8} {:>9} {:>16} {:>22}\n",
            name,
            t.calls,
            t.prompt_tokens,
            vs_raw(prompt_ratio),
            100.0 * t.cached_share(),
            t.written,
            t.aux_output_tokens,
            t.cost,
            vs_raw(cost_ratio),
            t.peak_prompt_tokens,
            t.above_window,
            t.rewrites,
            t.fallbacks,
            recall(t.edit_recall(), t.edits_kept, t.edits_counted),
            recall(t.reference_recall(), t.refs_kept, t.refs_counted),
        ));
    }
    out
}

/// Notes of a run, each kept once with the first call it concerned and how many it did.
#[derive(Debug, Default)]
pub(crate) struct NoteTally {
    notes: Vec<(String, usize, usize)>,
    index: HashMap<String, usize>,
}

impl NoteTally {
    pub(crate) fn add(&mut self, note: &str, call: usize) {
        match self.index.get(note) {
            Some(&i) => self.notes[i].2 += 1,
            None => {
                self.index.insert(note.to_owned(), self.notes.len());
                self.notes.push((note.to_owned(), call, 1));
            }
        }
    }

    pub(crate) fn finish(self) -> Vec<String> {
        let say = |(note, first, n): (String, usize, usize)| match n {
            1 => format!("{note} (call {first})"),
            _ => format!("{note} ({n} calls, first at call {first})"),
        };
        self.notes.into_iter().map(say).collect()
    }
}
