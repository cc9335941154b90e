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

/// What a prompt of `tokens` costs when the provider's cache serves `cached` of them, the rest
/// written for `ttl` (a 1-hour write costs more), with `output` tokens the engine spent on its
/// own completions for it.
pub fn prompt_cost_for(prices: &Prices, ttl: CacheTtl, tokens: usize, cached: usize, output: u64) -> f64 {
    let cached = cached.min(tokens);
    prices.cache_read * cached as f64
        + ttl.write_price(prices) * (tokens - cached) as f64
        + prices.output * output as f64
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
    /// The lifetime this call's cache breakpoints were written for ([`choose_cache_ttl`], or the
    /// agent's own).
    #[serde(default)]
    pub cache_ttl: CacheTtl,
    /// The lifetime the agent's own breakpoints asked for (the provider's default when none).
    #[serde(default)]
    pub agent_cache_ttl: CacheTtl,
    /// What the sent prompt would have cost more with 5-minute breakpoints only (negative: the
    /// 1-hour choice cost more), this call and the session's total.
    #[serde(default)]
    pub ttl_saving: f64,
    #[serde(default)]
    pub ttl_saving_total: f64,
}

/// The calls assumed still to come: as many as were made so far (a run that has lasted long is
/// likely to last as long again), within `[min, max]`.
pub fn horizon(calls_so_far: usize, min: u32, max: u32) -> usize {
    calls_so_far.clamp(min as usize, max as usize)
}

/// A cached prefix's lifetime at the provider (Anthropic's `cache_control.ttl`); every use
/// refreshes it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub enum CacheTtl {
    #[default]
    #[serde(rename = "5m")]
    FiveMinutes,
    #[serde(rename = "1h")]
    OneHour,
}

impl CacheTtl {
    /// How long an unused prefix stays cached.
    pub fn ms(self) -> u64 {
        match self {
            CacheTtl::FiveMinutes => 5 * 60_000,
            CacheTtl::OneHour => 60 * 60_000,
        }
    }

    /// The wire spelling (`"5m"`, `"1h"`); `None` for any other.
    pub fn parse(ttl: &str) -> Option<CacheTtl> {
        match ttl {
            "5m" => Some(CacheTtl::FiveMinutes),
            "1h" => Some(CacheTtl::OneHour),
            _ => None,
        }
    }

    /// What writing one token for this lifetime costs.
    pub fn write_price(self, prices: &Prices) -> f64 {
        match self {
            CacheTtl::FiveMinutes => prices.cache_write,
            CacheTtl::OneHour => prices.cache_write_1h,
        }
    }
}

/// The lifetime to write a session's cache breakpoints for, from its own gaps between calls
/// (`gaps_ms`, the recent ones) and the prices. A prefix token is written once and then, on each
/// of the `horizon` calls assumed still to come, read when its lifetime outlasted the gap before
/// that call and written again when it did not; the gaps seen so far say how often each
/// lifetime lapses. One hour is chosen when what it saves in re-writes over the horizon exceeds
/// what its first write costs more: `horizon × (c₅ − c₆₀) > w₆₀ − w₅`, where `c` is a later
/// call's expected cost per token (`lapsed share × write + the rest × read`) and `w` a write.
/// No gap seen yet: five minutes, the provider's default.
pub fn choose_cache_ttl(prices: &Prices, gaps_ms: &[u64], horizon: usize) -> CacheTtl {
    if gaps_ms.is_empty() {
        return CacheTtl::FiveMinutes;
    }
    let per_call = |ttl: CacheTtl| {
        let lapsed = gaps_ms.iter().filter(|&&gap| gap > ttl.ms()).count() as f64 / gaps_ms.len() as f64;
        lapsed * ttl.write_price(prices) + (1.0 - lapsed) * prices.cache_read
    };
    let saved = horizon as f64 * (per_call(CacheTtl::FiveMinutes) - per_call(CacheTtl::OneHour));
    let premium = prices.cache_write_1h - prices.cache_write;
    if saved > premium { CacheTtl::OneHour } else { CacheTtl::FiveMinutes }
}

/// The lifetime of each cache breakpoint of one request, in the order the provider reads them
/// (tools, system, messages), a 1-hour one never after a 5-minute one (the provider refuses
/// that). A breakpoint whose lifetime the agent set (`Some`) keeps it; the others take
/// `chosen`, lengthened to the longest set after them and shortened to the shortest set
/// before them. Only an agent that set a 5-minute breakpoint before a 1-hour one gets its
/// request out of order, as it sent it.
pub fn breakpoint_lifetimes(set: &[Option<CacheTtl>], chosen: CacheTtl) -> Vec<CacheTtl> {
    (0..set.len())
        .map(|i| match set[i] {
            Some(ttl) => ttl,
            None => {
                let longest_after = set[i + 1..].iter().flatten().max().copied();
                let shortest_before = set[..i].iter().flatten().min().copied();
                let ttl = longest_after.map_or(chosen, |after| chosen.max(after));
                shortest_before.map_or(ttl, |before| ttl.min(before))
            }
        })
        .collect()
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
        assert!((prompt_cost_for(&prices, CacheTtl::FiveMinutes, 10_000, 9_000, 0) - (900.0 + 1_250.0)).abs() < 1e-9);
        assert!(
            (prompt_cost_for(&prices, CacheTtl::FiveMinutes, 100, 500, 10) - (10.0 + 50.0)).abs() < 1e-9,
            "cached is capped"
        );
    }

    /// The rule on its numbers: one lapse in eight gaps over eight calls ahead saves
    /// 8 × (1/8 × 1.25 + 7/8 × 0.1 − 0.1) = 1.15 > 0.75, the hour's extra write.
    #[test]
    fn an_hour_is_chosen_when_lapses_cost_more_than_its_dearer_write() {
        let prices = Prices::default();
        let (minute, hour) = (60_000, 3_600_000);
        assert_eq!(choose_cache_ttl(&prices, &[], 8), CacheTtl::FiveMinutes);
        assert_eq!(choose_cache_ttl(&prices, &[10 * minute; 4], 8), CacheTtl::OneHour);
        assert_eq!(choose_cache_ttl(&prices, &[10_000; 4], 64), CacheTtl::FiveMinutes);
        let mut one_lapse = vec![10_000; 7];
        one_lapse.push(10 * minute);
        assert_eq!(choose_cache_ttl(&prices, &one_lapse, 8), CacheTtl::OneHour);
        assert_eq!(choose_cache_ttl(&prices, &one_lapse, 4), CacheTtl::FiveMinutes, "4 × 0.144 < 0.75");
        assert_eq!(choose_cache_ttl(&prices, &[2 * hour; 4], 64), CacheTtl::FiveMinutes, "both lapse");
    }

    #[test]
    fn breakpoint_lifetimes_never_put_an_hour_after_five_minutes() {
        use CacheTtl::{FiveMinutes as M5, OneHour as H1};
        assert_eq!(breakpoint_lifetimes(&[None, None, None], H1), [H1, H1, H1]);
        assert_eq!(breakpoint_lifetimes(&[None, Some(H1), None], M5), [H1, H1, M5]);
        assert_eq!(breakpoint_lifetimes(&[Some(M5), None, None], H1), [M5, M5, M5]);
        assert_eq!(breakpoint_lifetimes(&[None, Some(H1), Some(M5), None], H1), [H1, H1, M5, M5]);
        // The agent's own disorder is its own: kept as it came.
        assert_eq!(breakpoint_lifetimes(&[Some(M5), None, Some(H1)], H1), [M5, M5, H1]);
    }
}
