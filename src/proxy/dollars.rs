//! What each proxied call cost in dollars beside what the agent's own request would have cost
//! (#48, "one ledger, one basis"). The sent request is priced from the upstream's reported usage
//! (input, cache reads, cache writes of each lifetime, output), or estimated from the engine's
//! counts and marked so. The agent's own request costs that, plus what the engine's model says
//! its prompt would have cost more ([`CallCost`](crate::workbench::cost::CallCost): its tokens
//! and the prefix a provider's cache would have served, against the prompt sent and the prefix
//! expected served), brought to the provider's tokenizer by the ratio of the reported prompt to
//! the engine's count of it: anchored on the bill, a request sent as the agent made it saves
//! exactly nothing. A call no model answered costs nothing on either side. Prices are USD per
//! million tokens, from one table ([`DEFAULT_PRICES`], each row dated) the configuration may
//! extend (`model_prices`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::record::{CallDollars, CallRecord, CostBasis};
use crate::workbench::cost::CacheTtl;

/// More prompt tokens than any model takes (the largest take one or two million): an agent's
/// own prompt this long would have been refused, so nothing is counted saved against it.
pub const NO_MODEL_TAKES_TOKENS: usize = 2_000_000;

/// One model's list prices, USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    pub input: f64,
    pub cache_read: f64,
    /// A cache write with the provider's default lifetime (5 minutes at Anthropic; OpenAI and
    /// Gemini charge none: the input price).
    pub cache_write: f64,
    /// A cache write for an hour (Anthropic's `"ttl": "1h"`).
    pub cache_write_1h: f64,
    pub output: f64,
}

/// Prices the configuration adds to the engine's table or puts in place of its rows, by model
/// name without its date suffix (`claude-sonnet-4-5`, `gpt-4.1`), and the day they were read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(default, deny_unknown_fields)]
pub struct ModelPrices {
    /// `YYYY-MM-DD`; the figures priced by these rows say it.
    pub read_on: Option<String>,
    pub models: BTreeMap<String, ModelPrice>,
}

/// The day the Anthropic rows of [`DEFAULT_PRICES`] were read: from the model table Claude Code
/// 2.1.328 ships (`@anthropic-ai/claude-code` on npm: each model's pricing tier).
pub const ANTHROPIC_PRICES_READ_ON: &str = "2026-11-29";
/// The day the OpenAI and Gemini rows were read from those providers' price pages.
pub const PRICES_READ_ON: &str = "2025-10-15";

/// Anthropic's tiers: input, output and the cache read; a 5-minute write costs 1.25× input, an
/// hour's 2×.
const fn anthropic(input: f64, output: f64, cache_read: f64) -> ModelPrice {
    ModelPrice { input, cache_read, cache_write: input * 1.25, cache_write_1h: input * 2.0, output }
}

/// OpenAI and Gemini cache by themselves: no write premium, reads at their cached price.
const fn implicit(input: f64, cache_read: f64, output: f64) -> ModelPrice {
    ModelPrice { input, cache_read, cache_write: input, cache_write_1h: input, output }
}

/// The engine's table: list prices for prompts within each model's base tier (Gemini 2.5 Pro
/// doubles past 200k tokens; not modelled), with the day each was read.
pub const DEFAULT_PRICES: &[(&str, ModelPrice, &str)] = &[
    ("claude-fable-5", anthropic(10.0, 50.0, 1.0), ANTHROPIC_PRICES_READ_ON),
    ("claude-fable-5-1", anthropic(10.0, 50.0, 0.25), ANTHROPIC_PRICES_READ_ON),
    ("claude-fable-5-2", anthropic(8.0, 40.0, 0.2), ANTHROPIC_PRICES_READ_ON),
    ("claude-mythos-5", anthropic(10.0, 50.0, 1.0), ANTHROPIC_PRICES_READ_ON),
    ("claude-mythos-5-1", anthropic(10.0, 50.0, 0.25), ANTHROPIC_PRICES_READ_ON),
    ("claude-mythos-5-2", anthropic(8.0, 40.0, 0.2), ANTHROPIC_PRICES_READ_ON),
    ("claude-opus-5-5", anthropic(4.0, 20.0, 0.2), ANTHROPIC_PRICES_READ_ON),
    ("claude-opus-5", anthropic(5.0, 25.0, 0.5), ANTHROPIC_PRICES_READ_ON),
    ("claude-opus-4-8", anthropic(5.0, 25.0, 0.5), ANTHROPIC_PRICES_READ_ON),
    ("claude-opus-4-7", anthropic(5.0, 25.0, 0.5), ANTHROPIC_PRICES_READ_ON),
    ("claude-opus-4-6", anthropic(5.0, 25.0, 0.5), ANTHROPIC_PRICES_READ_ON),
    ("claude-opus-4-5", anthropic(5.0, 25.0, 0.5), ANTHROPIC_PRICES_READ_ON),
    ("claude-opus-4-1", anthropic(15.0, 75.0, 1.5), ANTHROPIC_PRICES_READ_ON),
    ("claude-opus-4-0", anthropic(15.0, 75.0, 1.5), ANTHROPIC_PRICES_READ_ON),
    ("claude-opus-4", anthropic(15.0, 75.0, 1.5), ANTHROPIC_PRICES_READ_ON),
    ("claude-sonnet-5-5", anthropic(2.0, 10.0, 0.1), ANTHROPIC_PRICES_READ_ON),
    ("claude-sonnet-5", anthropic(2.0, 10.0, 0.2), ANTHROPIC_PRICES_READ_ON),
    ("claude-sonnet-4-6", anthropic(3.0, 15.0, 0.3), ANTHROPIC_PRICES_READ_ON),
    ("claude-sonnet-4-5", anthropic(3.0, 15.0, 0.3), ANTHROPIC_PRICES_READ_ON),
    ("claude-sonnet-4-0", anthropic(3.0, 15.0, 0.3), ANTHROPIC_PRICES_READ_ON),
    ("claude-sonnet-4", anthropic(3.0, 15.0, 0.3), ANTHROPIC_PRICES_READ_ON),
    ("claude-3-7-sonnet", anthropic(3.0, 15.0, 0.3), ANTHROPIC_PRICES_READ_ON),
    ("claude-3-5-sonnet", anthropic(3.0, 15.0, 0.3), ANTHROPIC_PRICES_READ_ON),
    ("claude-haiku-5-5", anthropic(0.1, 0.5, 0.01), ANTHROPIC_PRICES_READ_ON),
    ("claude-haiku-4-5", anthropic(1.0, 5.0, 0.1), ANTHROPIC_PRICES_READ_ON),
    ("claude-3-5-haiku", anthropic(0.8, 4.0, 0.08), ANTHROPIC_PRICES_READ_ON),
    ("gpt-5", implicit(1.25, 0.125, 10.0), PRICES_READ_ON),
    ("gpt-5-codex", implicit(1.25, 0.125, 10.0), PRICES_READ_ON),
    ("gpt-5-mini", implicit(0.25, 0.025, 2.0), PRICES_READ_ON),
    ("gpt-5-nano", implicit(0.05, 0.005, 0.4), PRICES_READ_ON),
    ("gpt-4.1", implicit(2.0, 0.5, 8.0), PRICES_READ_ON),
    ("gpt-4.1-mini", implicit(0.4, 0.1, 1.6), PRICES_READ_ON),
    ("gpt-4.1-nano", implicit(0.1, 0.025, 0.4), PRICES_READ_ON),
    ("gpt-4o", implicit(2.5, 1.25, 10.0), PRICES_READ_ON),
    ("gpt-4o-mini", implicit(0.15, 0.075, 0.6), PRICES_READ_ON),
    ("o3", implicit(2.0, 0.5, 8.0), PRICES_READ_ON),
    ("o4-mini", implicit(1.1, 0.275, 4.4), PRICES_READ_ON),
    ("gemini-2.5-pro", implicit(1.25, 0.31, 10.0), PRICES_READ_ON),
    ("gemini-2.5-flash", implicit(0.3, 0.075, 2.5), PRICES_READ_ON),
    ("gemini-2.5-flash-lite", implicit(0.1, 0.025, 0.4), PRICES_READ_ON),
];

/// A model's price and the day it was read: the configuration's row, else the engine's.
pub fn price_of<'a>(model: &str, configured: &'a ModelPrices) -> Option<(String, ModelPrice, &'a str)> {
    let name = undated(model);
    if let Some(price) = configured.models.get(&name) {
        return Some((name, *price, configured.read_on.as_deref().unwrap_or("(configured, undated)")));
    }
    DEFAULT_PRICES.iter().find(|(n, ..)| *n == name).map(|(_, price, read_on)| (name, *price, *read_on))
}

/// `model` without a provider prefix (`anthropic/`) or a release suffix (`-20250929`,
/// `-2024-08-06`, `-latest`, `@20250929`), lower-cased.
fn undated(model: &str) -> String {
    let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    let name = name.split('@').next().unwrap_or_default().to_owned();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let parts: Vec<&str> = name.split('-').collect();
    let keep = match parts.as_slice() {
        [head @ .., y, m, d] if y.len() == 4 && digits(y) && digits(m) && digits(d) && !head.is_empty() => head.len(),
        [head @ .., last] if !head.is_empty() && ((last.len() == 8 && digits(last)) || *last == "latest") => head.len(),
        _ => parts.len(),
    };
    parts[..keep].join("-")
}

/// The call `record` in dollars, or why it cannot be priced (a model without a price).
pub fn price_call(record: &CallRecord, prices: &ModelPrices) -> Result<CallDollars, String> {
    let (priced_as, price, read_on) = price_of(&record.model, prices).ok_or_else(|| {
        format!(
            "no price for model `{}`: its dollars are left out (add it under `model_prices.models` in the configuration)",
            record.model
        )
    })?;
    let dollars = |agent: f64, sent: f64, basis: CostBasis, note: Option<String>| CallDollars {
        agent,
        sent,
        basis,
        priced_as: priced_as.clone(),
        prices_read_on: read_on.to_owned(),
        ttl_saving: 0.0,
        note,
    };
    if !record.answered() {
        return Ok(dollars(0.0, 0.0, CostBasis::NoModel, None));
    }
    let per_token = |usd_per_million: f64| usd_per_million / 1e6;
    let write =
        |ttl: CacheTtl| per_token(if ttl == CacheTtl::OneHour { price.cache_write_1h } else { price.cache_write });
    // The engine's count of what went upstream, and the prefix it expected served.
    let engine_cost = record.cost.filter(|_| record.managed && !record.side_call);
    let counted = if engine_cost.is_some() { record.prompt_tokens } else { record.client_tokens } as u64;
    let usage = record.usage.map(|u| (u, implausible(&u, counted)));
    // The prompt sent as the engine's model prices it: the prefix it expected served read, the
    // rest written (the engine marks its prefix for the cache); a request sent as it came, as
    // uncached input.
    let modelled_sent = match engine_cost {
        Some(cost) => prompt_usd(price, record.prompt_tokens, record.expected_cached_tokens, cost.cache_ttl),
        None => per_token(price.input) * counted as f64,
    };
    let (sent, basis, note, scale) = match usage {
        Some((u, None)) => {
            let one_hour = u.cache_write_1h_tokens.min(u.cache_write_tokens);
            let sent = per_token(price.input) * u.input_tokens as f64
                + per_token(price.cache_read) * u.cache_read_tokens as f64
                + write(CacheTtl::FiveMinutes) * (u.cache_write_tokens - one_hour) as f64
                + write(CacheTtl::OneHour) * one_hour as f64
                + per_token(price.output) * u.output_tokens as f64;
            let scale = if counted > 0 { u.prompt_tokens() as f64 / counted as f64 } else { 1.0 };
            (sent, CostBasis::Reported, None, scale)
        }
        reported => {
            let note = match reported {
                Some((_, Some(why))) => why,
                _ => "the upstream reported no usage: estimated from the engine's counts".to_owned(),
            };
            (modelled_sent, CostBasis::Estimated, Some(note), 1.0)
        }
    };
    let (agent, note) = match engine_cost {
        Some(cost) if cost.agent_tokens > NO_MODEL_TAKES_TOKENS => {
            let over = format!(
                "the agent's own prompt, {} tokens, is larger than any model takes: no saving is counted for this call",
                cost.agent_tokens
            );
            (
                sent,
                Some(match note {
                    Some(note) => format!("{note}; {over}"),
                    None => over,
                }),
            )
        }
        Some(cost) => {
            let agent_prompt = prompt_usd(price, cost.agent_tokens, cost.agent_cached_tokens, cost.agent_cache_ttl);
            ((sent + scale * (agent_prompt - modelled_sent)).max(0.0), note)
        }
        // Unmanaged, a side call, or a fallback: the agent's own request is what went.
        None => (sent, note),
    };
    // The engine's prices are relative to an uncached input token, in the provider's ratios.
    let ttl_saving = engine_cost.map_or(0.0, |cost| scale * cost.ttl_saving * per_token(price.input));
    Ok(CallDollars { ttl_saving, ..dollars(agent, sent, basis, note) })
}

/// A prompt of `tokens` as the engine's model prices it: `cached` of them read from the cache,
/// the rest written for `ttl`. One formula for the prompt sent and the agent's own, so that a
/// prompt sent as the agent made it comes out at exactly the agent's price (saving nothing).
fn prompt_usd(price: ModelPrice, tokens: usize, cached: usize, ttl: CacheTtl) -> f64 {
    let write = if ttl == CacheTtl::OneHour { price.cache_write_1h } else { price.cache_write };
    let cached = cached.min(tokens);
    (cached as f64 * price.cache_read + (tokens - cached) as f64 * write) / 1e6
}

/// Why reported usage cannot be the prompt the engine counted `counted` tokens of: none of it
/// is prompt, or it is more than four times off (tokenizers differ by far less).
fn implausible(usage: &super::ProviderUsage, counted: u64) -> Option<String> {
    let reported = usage.prompt_tokens();
    let off =
        reported == 0 || reported > counted.saturating_mul(4) + 1_000 || counted > reported.saturating_mul(4) + 1_000;
    off.then(|| {
        format!("the upstream reported {reported} prompt tokens for a prompt the engine counts {counted} of: estimated from the engine's counts")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxy::ProviderUsage;
    use crate::workbench::cost::CallCost;

    fn record(model: &str, status: Option<u16>) -> CallRecord {
        CallRecord {
            model: model.into(),
            status,
            managed: true,
            client_tokens: 10_000,
            prompt_tokens: 4_000,
            ..CallRecord::default()
        }
    }

    #[test]
    fn model_names_are_read_without_their_release() {
        let names = [
            "claude-sonnet-4-5-20250929",
            "anthropic/claude-sonnet-4-5",
            "gpt-4o-2024-08-06",
            "claude-sonnet-4-5@20250929",
            "GPT-4O",
        ];
        let read: Vec<String> = names.iter().map(|n| undated(n)).collect();
        assert_eq!(read, ["claude-sonnet-4-5", "claude-sonnet-4-5", "gpt-4o", "claude-sonnet-4-5", "gpt-4o"]);
        assert_eq!(undated("gpt-4.1-mini"), "gpt-4.1-mini");
        // A newer model than the table knows is not priced as an older one.
        assert!(price_of("claude-opus-5-9", &ModelPrices::default()).is_none());
    }

    #[test]
    fn reported_usage_prices_the_sent_request_and_the_agents_is_brought_to_its_tokenizer() {
        let cost =
            CallCost { agent_tokens: 10_000, agent_cached_tokens: 8_000, ttl_saving: 1_000.0, ..CallCost::default() };
        let usage = ProviderUsage {
            input_tokens: 400,
            cache_read_tokens: 4_000,
            cache_write_tokens: 600,
            cache_write_1h_tokens: 100,
            output_tokens: 200,
        };
        let call =
            CallRecord { cost: Some(cost), usage: Some(usage), ..record("claude-sonnet-4-5-20250929", Some(200)) };
        let d = price_call(&call, &ModelPrices::default()).unwrap();
        // $3 input, $0.30 read, $3.75 write, $6 an hour's write, $15 output per million.
        let sent = (400.0 * 3.0 + 4_000.0 * 0.3 + 500.0 * 3.75 + 100.0 * 6.0 + 200.0 * 15.0) / 1e6;
        assert!((d.sent - sent).abs() < 1e-12, "{d:?}");
        // The bill, plus what the engine's model says the agent's prompt cost more (its 10,000
        // tokens, 8,000 served, against the 4,000 sent, none expected served), times 1.25: the
        // provider counted 5,000 where the engine counted 4,000.
        let agent = sent + 1.25 * ((8_000.0 * 0.3 + 2_000.0 * 3.75) - 4_000.0 * 3.75) / 1e6;
        assert!((d.agent - agent).abs() < 1e-12, "{d:?}");
        assert_eq!(
            (d.basis, d.priced_as.as_str(), d.prices_read_on.as_str()),
            (CostBasis::Reported, "claude-sonnet-4-5", ANTHROPIC_PRICES_READ_ON)
        );
        // A thousand input tokens' worth saved by the 1-hour lifetime, on the provider's count.
        assert!((d.ttl_saving - 1.25 * 1_000.0 * 3.0 / 1e6).abs() < 1e-12, "{d:?}");
    }

    #[test]
    fn no_model_no_cost_and_nonsense_usage_is_estimated_with_a_note() {
        let cost = CallCost { agent_tokens: 10_000, agent_cached_tokens: 0, ..CallCost::default() };
        for status in [None, Some(502), Some(400)] {
            let d = price_call(&CallRecord { cost: Some(cost), ..record("gpt-4o", status) }, &ModelPrices::default())
                .unwrap();
            assert_eq!((d.agent, d.sent, d.basis), (0.0, 0.0, CostBasis::NoModel));
        }
        let nonsense = ProviderUsage { input_tokens: 5, output_tokens: 1, ..ProviderUsage::default() };
        let huge = ProviderUsage { input_tokens: 90_000_000, ..ProviderUsage::default() };
        for usage in [None, Some(nonsense), Some(huge)] {
            let call =
                CallRecord { cost: Some(cost), usage, expected_cached_tokens: 1_000, ..record("gpt-4o", Some(200)) };
            let d = price_call(&call, &ModelPrices::default()).unwrap();
            assert_eq!(d.basis, CostBasis::Estimated, "{usage:?}");
            assert!(d.note.is_some());
            assert!((d.sent - (1_000.0 * 1.25 + 3_000.0 * 2.5) / 1e6).abs() < 1e-12, "{d:?}");
        }
    }

    #[test]
    fn a_managed_prompt_sent_as_the_agent_made_it_saves_exactly_nothing() {
        for tokens in (1_000..200_000).step_by(997) {
            let cached = tokens / 3;
            let cost = CallCost { agent_tokens: tokens, agent_cached_tokens: cached, ..CallCost::default() };
            let usage = ProviderUsage {
                cache_read_tokens: cached as u64,
                cache_write_tokens: (tokens - cached) as u64,
                output_tokens: 120,
                ..ProviderUsage::default()
            };
            let call = CallRecord {
                cost: Some(cost),
                usage: Some(usage),
                client_tokens: tokens,
                prompt_tokens: tokens,
                expected_cached_tokens: cached,
                ..record("claude-sonnet-4-5", Some(200))
            };
            let d = price_call(&call, &ModelPrices::default()).unwrap();
            assert_eq!(d.agent, d.sent, "{tokens} tokens: not even a rounding error's saving or cost");
        }
    }

    #[test]
    fn an_agents_prompt_larger_than_any_model_takes_saves_nothing_against_it() {
        let usage = ProviderUsage { input_tokens: 4_000, output_tokens: 100, ..ProviderUsage::default() };
        let over = CallCost { agent_tokens: NO_MODEL_TAKES_TOKENS + 1, ..CallCost::default() };
        let call = CallRecord { cost: Some(over), usage: Some(usage), ..record("claude-sonnet-4-5", Some(200)) };
        let d = price_call(&call, &ModelPrices::default()).unwrap();
        assert!(d.sent > 0.0 && d.agent == d.sent, "{d:?}");
        assert!(d.note.is_some_and(|n| n.contains("2000001 tokens, is larger than any model takes")));
        // A prompt a model takes, however far over the engine's window, is a saving.
        let within = CallRecord { cost: Some(CallCost { agent_tokens: NO_MODEL_TAKES_TOKENS, ..over }), ..call };
        assert!(price_call(&within, &ModelPrices::default()).unwrap().agent > 100.0 * d.sent);
    }

    #[test]
    fn an_unmanaged_call_costs_the_same_on_both_sides_and_an_unknown_model_says_so() {
        let usage = ProviderUsage { input_tokens: 9_000, output_tokens: 100, ..ProviderUsage::default() };
        let unmanaged = CallRecord { managed: false, usage: Some(usage), ..record("o3", Some(200)) };
        let d = price_call(&unmanaged, &ModelPrices::default()).unwrap();
        assert!(d.sent > 0.0 && d.agent == d.sent, "{d:?}");
        let why = price_call(&record("house-model-7", Some(200)), &ModelPrices::default()).unwrap_err();
        assert!(why.contains("house-model-7") && why.contains("model_prices"), "{why}");
        let mut configured = ModelPrices { read_on: Some("2026-11-01".into()), ..ModelPrices::default() };
        configured.models.insert("house-model-7".into(), implicit(1.0, 0.1, 2.0));
        let d = price_call(&CallRecord { managed: false, ..record("house-model-7", Some(200)) }, &configured).unwrap();
        assert_eq!((d.priced_as.as_str(), d.prices_read_on.as_str()), ("house-model-7", "2026-11-01"));
    }
}
