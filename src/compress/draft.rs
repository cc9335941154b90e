//! A history entry under construction: lines that are always kept, and a body whose lines are
//! kept in order of importance while the token budget lasts. Gaps become `… N lines omitted …`.

use std::borrow::Cow;

use crate::tokens::TokenCounter;

#[derive(Debug, Default)]
pub struct Draft<'a> {
    /// Always kept, in order, before the body (summaries, assertions, failing tests).
    pub head: Vec<String>,
    /// Kept by rank (lower first) within the budget, shown in their original order.
    pub body: Vec<BodyLine<'a>>,
    /// Always kept, after the body (the stderr tail, say).
    pub tail: Vec<String>,
    /// What one body line is called in the omission markers (`lines`, `matches`, `entries`).
    pub unit: &'static str,
    /// Notes for the trailer (what was removed besides body lines).
    pub notes: Vec<String>,
    /// A tighter cap on the tokens of body lines past rank 0 than the entry's budget: stdout is
    /// summarised (R3.2), and less still beside a recognised log's assertions.
    pub body_budget: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct BodyLine<'a> {
    pub text: Cow<'a, str>,
    /// Lower is kept first; [`NEVER`] is never kept.
    pub rank: u32,
    /// How many lines of the original it stands for: 1, or more for a run of lines never kept
    /// that a huge output leaves out of the draft altogether ([`Draft::push_skipped`]).
    pub lines: usize,
}

/// The rendered entry and how many body lines it dropped.
pub struct Fitted {
    pub text: String,
    pub body_kept: usize,
    pub body_total: usize,
}

impl<'a> Draft<'a> {
    pub fn new(unit: &'static str) -> Self {
        Draft { unit, ..Default::default() }
    }

    pub fn push_body(&mut self, text: impl Into<Cow<'a, str>>, rank: u32) {
        self.body.push(BodyLine { text: text.into(), rank, lines: 1 });
    }

    /// `n` lines that can never be kept, as one entry (they count in the omission markers).
    pub fn push_skipped(&mut self, n: usize) {
        if n > 0 {
            self.body.push(BodyLine { text: Cow::Borrowed(""), rank: NEVER, lines: n });
        }
    }

    /// Render within `budget` tokens: head and tail always, then as many body lines as fit.
    pub fn fit(&self, budget: usize, counter: &TokenCounter) -> Fitted {
        let fixed: usize = self.head.iter().chain(&self.tail).map(|l| counter.count(l) + 1).sum();
        let room = budget.saturating_sub(fixed);
        let mut order: Vec<usize> = (0..self.body.len()).filter(|&i| self.body[i].rank != NEVER).collect();
        order.sort_by_key(|&i| (self.body[i].rank, i));
        let mut keep = vec![false; self.body.len()];
        let mut kept_in_rank_order = Vec::new();
        let mut used = 0usize;
        // Rank-0 lines (assertions, the stderr tail) may use the whole room; the rest only the
        // body's own cap, counted from where the rank-0 lines left off.
        let mut limit = room;
        let mut capped = false;
        for i in order {
            if !capped && self.body[i].rank > 0 {
                capped = true;
                limit = self.body_budget.map_or(room, |cap| room.min(used + cap));
            }
            if limit.saturating_sub(used) < MIN_LINE_COST {
                break;
            }
            let cost = counter.count(&self.body[i].text) + 1;
            if used + cost <= limit {
                used += cost;
                keep[i] = true;
                kept_in_rank_order.push((i, cost));
            }
        }
        // Each gap costs a marker line: give back the least important lines until they fit.
        while used + gaps(&keep) * MARKER_TOKENS > limit {
            let Some((i, cost)) = kept_in_rank_order.pop() else { break };
            keep[i] = false;
            used -= cost;
        }
        let body_kept = keep.iter().filter(|k| **k).count();
        let body_total = self.body.iter().map(|l| l.lines).sum();
        Fitted { text: self.render(&keep), body_kept, body_total }
    }

    fn render(&self, keep: &[bool]) -> String {
        let mut lines: Vec<Cow<'_, str>> = self.head.iter().map(|l| Cow::Borrowed(l.as_str())).collect();
        let mut gap = 0usize;
        for (line, kept) in self.body.iter().zip(keep) {
            if *kept {
                if gap > 0 {
                    lines.push(Cow::Owned(omitted(gap, self.unit)));
                    gap = 0;
                }
                lines.push(Cow::Borrowed(line.text.as_ref()));
            } else {
                gap += line.lines;
            }
        }
        if gap > 0 {
            lines.push(Cow::Owned(omitted(gap, self.unit)));
        }
        lines.extend(self.tail.iter().map(|l| Cow::Borrowed(l.as_str())));
        lines.join("\n")
    }
}

/// The number of runs of dropped body lines.
fn gaps(keep: &[bool]) -> usize {
    keep.iter().enumerate().filter(|&(i, k)| !k && (i == 0 || keep[i - 1])).count()
}

/// Rank of body lines that are never kept.
pub const NEVER: u32 = u32::MAX;

/// Tokens of an omission marker line, at most.
const MARKER_TOKENS: usize = 8;
/// Below this much room no body line can fit.
const MIN_LINE_COST: usize = MARKER_TOKENS + 2;

fn omitted(n: usize, unit: &str) -> String {
    format!("… {n} {unit} omitted …")
}

/// Ranks for `n` lines that favour both ends, the end a little more: the last lines of a log
/// usually carry the verdict, the first ones the context.
pub fn head_tail_ranks(n: usize) -> impl Iterator<Item = u32> {
    (0..n).map(move |i| (2 * i + 1).min(2 * (n - 1 - i)) as u32 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Encoding;

    #[test]
    fn keeps_fixed_lines_and_fills_the_body_by_rank() {
        let counter = TokenCounter::new(Encoding::O200kBase);
        let mut d = Draft::new("lines");
        d.head.push("summary".into());
        for (i, rank) in head_tail_ranks(100).enumerate() {
            d.push_body(format!("line {i}"), rank);
        }
        d.tail.push("the end".into());
        let f = d.fit(60, &counter);
        assert!(f.body_kept > 2 && f.body_kept < 100);
        assert!(f.text.starts_with("summary\nline 0\n") && f.text.ends_with("line 99\nthe end"), "{}", f.text);
        assert!(f.text.contains(" lines omitted …"));
        assert!(counter.count(&f.text) <= 60, "{}", counter.count(&f.text));
        let all = d.fit(10_000, &counter);
        assert_eq!(all.body_kept, 100);
        assert!(!all.text.contains("omitted"));
    }
}
