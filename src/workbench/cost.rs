//! The cache cost model that decides whether a rewrite pays (R5.5, R5.9).
//!
//! With a prefix cache, a token read again costs `cache_read` (0.1), a token written or changed
//! costs `cache_write` (1.25). Replacing everything after position `i` of the prompt by something
//! shorter costs, on the next call, writing the new tail instead of reading the old one; it saves
//! reading the removed tokens on every later call. The rewrite pays when the expected saving
//! over the calls still to come exceeds that one-off cost.

use serde::{Deserialize, Serialize};

use crate::config::Prices;

/// The numbers behind one rewrite decision, reported with every compaction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct RewriteCost {
    /// Prompt tokens before the first changed position, still served from the cache.
    pub kept_prefix_tokens: usize,
    /// Tokens from the first changed position to the end, before and after the rewrite.
    pub tokens_before: usize,
    pub tokens_after: usize,
    /// What the next call pays extra for the rewrite: the new tail written instead of the old one read.
    pub one_off_cost: f64,
    /// What every later call saves: the removed tokens no longer read from the cache.
    pub saving_per_call: f64,
    /// How many later calls the model assumes.
    pub horizon: usize,
}

impl RewriteCost {
    pub fn new(prices: &Prices, kept_prefix_tokens: usize, before: usize, after: usize, horizon: usize) -> Self {
        let one_off_cost = prices.cache_write * after as f64 - prices.cache_read * before as f64;
        let saving_per_call = prices.cache_read * (before as f64 - after as f64);
        RewriteCost {
            kept_prefix_tokens,
            tokens_before: before,
            tokens_after: after,
            one_off_cost,
            saving_per_call,
            horizon,
        }
    }

    /// Expected net saving over the horizon (negative: the rewrite costs more than it saves).
    pub fn net_saving(&self) -> f64 {
        self.saving_per_call * self.horizon as f64 - self.one_off_cost
    }

    pub fn pays(&self) -> bool {
        self.net_saving() > 0.0
    }
}

/// What a prompt of `tokens` costs when the provider's cache serves `cached` of them, with
/// `output` tokens the engine spent on its own completions for it.
pub fn prompt_cost(prices: &Prices, tokens: usize, cached: usize, output: u64) -> f64 {
    let cached = cached.min(tokens);
    prices.cache_read * cached as f64 + prices.cache_write * (tokens - cached) as f64 + prices.output * output as f64
}

/// One call's cost beside the counterfactual: what the agent's own prompt (every message it
/// sent, as it sent them) would have cost with the provider's prefix cache. Prices are the
/// configuration's, relative to one uncached input token; totals run over the session so far,
/// this call included. The engine answers to them: it never lets its total pass the agent's
/// by a rewrite (docs/engine.md, "Never worse than none").
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct CallCost {
    /// The agent's own prompt: its tokens, and those a prefix cache would serve (its leading
    /// messages unchanged since its previous prompt).
    pub agent_tokens: usize,
    pub agent_cached_tokens: usize,
    /// This call's cost of the agent's prompt and of the prompt sent.
    pub agent_cost: f64,
    pub sent_cost: f64,
    /// The session's totals of both, this call included.
    pub agent_total: f64,
    pub sent_total: f64,
}

/// The calls assumed still to come: as many as were made so far (a run that has lasted long is
/// likely to last as long again), within `[min, max]`.
pub fn horizon(calls_so_far: usize, min: u32, max: u32) -> usize {
    calls_so_far.clamp(min as usize, max as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R5.5's rule with the default prices: a 20,000-token tail replaced by 1,500 tokens costs
    /// 1.25 × 1,500 − 0.1 × 20,000 = −125 now (cheaper at once) and saves 1,850 per later call.
    #[test]
    fn a_large_tail_rewrite_pays_and_a_small_one_does_not() {
        let prices = Prices::default();
        let big = RewriteCost::new(&prices, 50_000, 20_000, 1_500, 8);
        assert!((big.one_off_cost - -125.0).abs() < 1e-9 && (big.saving_per_call - 1_850.0).abs() < 1e-9);
        assert!(big.pays());
        let small = RewriteCost::new(&prices, 50_000, 1_200, 1_000, 8);
        assert!((small.net_saving() - (0.1 * 200.0 * 8.0 - (1.25 * 1_000.0 - 0.1 * 1_200.0))).abs() < 1e-9);
        assert!(!small.pays(), "a small saving does not pay for re-writing the tail");
        assert_eq!((horizon(3, 8, 64), horizon(30, 8, 64), horizon(500, 8, 64)), (8, 30, 64));
    }

    /// A prompt's cost: cached tokens read, the rest written, the engine's own output on top.
    #[test]
    fn a_prompt_costs_its_reads_writes_and_output() {
        let prices = Prices::default();
        assert!((prompt_cost(&prices, 10_000, 9_000, 0) - (900.0 + 1_250.0)).abs() < 1e-9);
        assert!((prompt_cost(&prices, 100, 500, 10) - (10.0 + 50.0)).abs() < 1e-9, "cached is capped");
    }
}
