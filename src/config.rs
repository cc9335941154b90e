//! The one configuration schema, shared by the CLI (TOML or JSON file), the npm package and the
//! VS Code extension (JSON). Every field has a default; unknown keys are errors naming the key.
//! The README documents each field.

use serde::{Deserialize, Serialize};

use crate::compress::CompressConfig;
use crate::error::{Error, Result};
use crate::goals::{GoalConfig, is_utc_day};
use crate::proxy::dollars::ModelPrices;
use crate::tokens::Encoding;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ResolvedConfig"))]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Token encoding for every count (R10.1).
    pub encoding: Encoding,
    /// The model's context window in tokens (R10.2).
    pub window: u32,
    /// Share of the window at which compaction triggers (R4.4, R10.2).
    pub compact_threshold: f64,
    /// An absolute cap on prompt tokens, below the window; `None` means `window × threshold` only.
    pub max_prompt_tokens: Option<u32>,
    /// How many of the newest rounds compaction always keeps (R4.3).
    pub min_rounds_kept: u32,
    /// Budget for the dynamic tail (plan, board, reminders) in tokens (R2.4).
    pub dynamic_tail_budget: u32,
    /// How long a summary may take before the fallback of R4.6, in milliseconds.
    pub summary_timeout_ms: u64,
    /// After a compaction, tokens of recently touched files read back into the prompt.
    pub rehydrate_tokens: u32,
    /// The tool an `@path` reminder tells the model to read with (R7.1); unset, the first tool
    /// of the read family offered on the last call, and no tool is named before the first call.
    pub read_tool: Option<String>,
    /// Relative prices per token, used by the cache cost model (R5.5) and the replay.
    pub prices: Prices,
    /// Dollar prices by model, added to or put in place of the engine's table
    /// (`src/proxy/dollars.rs`): what `workbench stats`, the dashboard and the editor report.
    pub model_prices: ModelPrices,
    /// The prune stage (R4.7).
    pub prune: PruneConfig,
    /// Tool-output compression limits and tool-name mapping (R3.2).
    pub compress: CompressConfig,
    /// Tail compaction, the state board and the cache cost model (R5).
    pub workbench: WorkbenchConfig,
    /// Limits of the goal tree's tools (R6).
    pub goals: GoalConfig,
    /// Where and how traces are persisted (R8).
    pub store: StoreConfig,
    /// The proxy in front of an agent's provider (`workbench proxy`).
    pub proxy: ProxyConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            encoding: Encoding::default(),
            window: 200_000,
            compact_threshold: 0.8,
            max_prompt_tokens: None,
            min_rounds_kept: 10,
            dynamic_tail_budget: 1_000,
            summary_timeout_ms: 120_000,
            rehydrate_tokens: 8_000,
            read_tool: None,
            prices: Prices::default(),
            model_prices: ModelPrices::default(),
            prune: PruneConfig::default(),
            compress: CompressConfig::default(),
            workbench: WorkbenchConfig::default(),
            goals: GoalConfig::default(),
            store: StoreConfig::default(),
            proxy: ProxyConfig::default(),
        }
    }
}

/// The proxy (`workbench proxy`, [`crate::proxy`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(default, deny_unknown_fields)]
pub struct ProxyConfig {
    /// The largest request body the proxy reads, in bytes; a larger one is refused (413) in the
    /// provider's error shape.
    pub max_body_bytes: u64,
    /// A request without tools and without an assistant turn (a title, a one-shot
    /// classification such as Claude Code's auto-mode check, whatever its size) is a side call:
    /// it passes through unmanaged and opens no session. Off, every conversation route is
    /// managed.
    pub side_calls: bool,
    /// How long the upstream may take to start answering, and then between two pieces of its
    /// reply, in milliseconds.
    pub upstream_timeout_ms: u64,
    /// Conversations held at once; past it, the least recently used idle one is saved and closed.
    pub max_sessions: u32,
    /// How long a request's headers may take to arrive, in milliseconds; a connection that
    /// sends none in time is closed (half-open connections cannot hold the proxy's descriptors).
    pub header_timeout_ms: u64,
    /// How long a request's body may take to arrive, in milliseconds; a client that declares a
    /// body and stalls gets a 408 instead of holding its connection.
    pub body_timeout_ms: u64,
    /// At a stop (Ctrl-C, SIGTERM, an editor closing), how long the requests in flight may take
    /// to finish before they are cut short (their agents get an error in the provider's shape),
    /// in milliseconds, so that every session is saved in time.
    pub shutdown_grace_ms: u64,
    /// Whether the proxy manages this project's conversations; off, every request goes upstream
    /// as its agent sent it (logged as unmanaged). One request is left unmanaged by its header
    /// `x-workbench: off`.
    pub manage: bool,
    /// An OpenTelemetry collector's OTLP/HTTP address (`http://localhost:4318`, its traces at
    /// `/v1/traces`, or the traces URL itself): one span per call is exported there
    /// (docs/telemetry.md). Empty: none. `--otlp URL` overrides it.
    pub otlp: String,
}

impl Default for ProxyConfig {
    fn default() -> Self {
        ProxyConfig {
            max_body_bytes: 32 * 1024 * 1024,
            side_calls: true,
            upstream_timeout_ms: 600_000,
            max_sessions: 256,
            header_timeout_ms: 30_000,
            body_timeout_ms: 60_000,
            shutdown_grace_ms: 5_000,
            manage: true,
            otlp: String::new(),
        }
    }
}

/// The trace store (R8.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(default, deny_unknown_fields)]
pub struct StoreConfig {
    /// The trace root, workspace-relative.
    pub root: String,
    /// Replace common secret shapes (provider keys, tokens, `Authorization:` values, password
    /// variables, private keys) before anything is written.
    pub redact: bool,
    /// More regexes whose matches are redacted, on top of the built-in ones.
    pub redact_patterns: Vec<String>,
    /// History forms and blocks name the plain-text copy of their originals (`raw/<id>.txt`), for
    /// agents that read files but have no `recall` tool (the proxy's). The copies are written
    /// either way.
    pub name_originals: bool,
    /// Put before those names, when the agent reads files by absolute path (Claude Code's Read
    /// does): the workspace's absolute path. Empty: the names are workspace-relative.
    pub originals_base: String,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            root: crate::store::DEFAULT_ROOT.to_owned(),
            redact: true,
            redact_patterns: Vec::new(),
            name_originals: true,
            originals_base: String::new(),
        }
    }
}

/// Tail compaction (R5.4, R5.5) and the state board (R5.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(default, deny_unknown_fields)]
pub struct WorkbenchConfig {
    /// Tail compaction on or off (the prompt then only changes through R4's emergency path).
    pub tail_compaction: bool,
    /// Put the goal tree's plan at the head of the dynamic tail once the model has a plan (R2.2).
    pub plan_in_tail: bool,
    /// Remind the model to update its plan when a sub-task looks delivered without it (R6.10).
    pub todo_probe: bool,
    /// Ask the host's LLM to write blocks (TAIL_COMPACTION); the embedded compactor is used when
    /// this is off, when the host has no LLM, or when its reply is invalid twice.
    pub llm_compactor: bool,
    /// R5.5: this many tool calls since the last compaction nominate one.
    pub trigger_tool_calls: u32,
    /// R5.5: raw tool output above this share of the uncompacted tail nominates one.
    pub raw_output_share: f64,
    /// R5.4: the newest turns always kept verbatim after the block.
    pub keep_turns: u32,
    /// A window holds at least this many turns, and at most `max_turns` (R5.4's 12-30).
    pub min_turns: u32,
    pub max_turns: u32,
    /// Budget of a COMPRESSED_TURNS block without its anchors (R5.4: ≤ 800).
    pub block_tokens: u32,
    /// Budget of the anchors a block carries: observed code the agent is working on, verbatim.
    /// Block budgets are capped by shares of the window ([`WorkbenchConfig::for_window`]).
    pub anchor_tokens: u32,
    /// Budget of a block's index: the files the window touched and the code names it used.
    pub index_tokens: u32,
    /// Budget of one STATE_DELTA (R5.3: ≤ 250).
    pub delta_tokens: u32,
    /// Rewrites of earlier prompt are batched so that at most one happens in this many calls,
    /// unless the window forces one.
    pub min_calls_between_rewrites: u32,
    /// The cost model assumes this many calls still to come at least, and at most `max_horizon`
    /// (between, as many as were made so far).
    pub min_horizon: u32,
    pub max_horizon: u32,
    /// The share of the calls made so far that a session is all but sure still to make: a
    /// rewrite whose one-off cost is more than the session saved so far must earn the rest back
    /// within them (docs/engine.md, "Never worse than none").
    pub sure_horizon_share: f64,
    /// The lengths (in calls) of earlier runs of the same agent family. Given at least
    /// [`FAMILY_SAMPLE`], the calls a session is all but sure still to make are what the shortest
    /// tenth of those that lasted longer (and the session itself) went on for, not
    /// `sure_horizon_share`.
    pub family_runs: Vec<u32>,
    /// A tool output larger than this share of the window is bounded to its history form when it
    /// is recorded, even inside the open round (the exception to R3.1 that keeps every prompt
    /// within the window), and shown whole from the next call on only while the prompt holding it
    /// whole stays under the compaction threshold with room for as much again; the original stays
    /// in the raw trace.
    pub first_sight_share: f64,
}

impl Default for WorkbenchConfig {
    fn default() -> Self {
        WorkbenchConfig {
            tail_compaction: true,
            plan_in_tail: true,
            todo_probe: true,
            llm_compactor: true,
            trigger_tool_calls: 12,
            raw_output_share: 0.6,
            keep_turns: 2,
            min_turns: 4,
            max_turns: 30,
            block_tokens: 800,
            // Chosen by cross-validation on the shared runs (docs/replay-benchmark.md): the
            // anchors and the index at their caps at 200,000 tokens.
            anchor_tokens: 8_000,
            index_tokens: 2_000,
            delta_tokens: 250,
            min_calls_between_rewrites: 25,
            min_horizon: 8,
            max_horizon: 64,
            sure_horizon_share: 0.2,
            family_runs: Vec::new(),
            first_sight_share: 0.1,
        }
    }
}

/// How many earlier runs of a family must be known before their lengths, not the share of its
/// calls so far, say how many calls a session is all but sure still to make.
pub const FAMILY_SAMPLE: usize = 5;

/// The shares of the window a block's parts may take at most: a small window gets small blocks.
const BLOCK_SHARE: f64 = 0.025;
const ANCHOR_SHARE: f64 = 0.04;
const INDEX_SHARE: f64 = 0.01;

impl WorkbenchConfig {
    /// The budgets a compaction uses with a window of `window` tokens: the configured ones,
    /// capped at 2.5% (block), 4% (anchors) and 1% (index) of the window. The defaults are the
    /// caps' values at 200,000 tokens or below them.
    pub fn for_window(&self, window: u32) -> WorkbenchConfig {
        let cap = |value: u32, share: f64| value.min((f64::from(window) * share) as u32);
        WorkbenchConfig {
            block_tokens: cap(self.block_tokens, BLOCK_SHARE),
            anchor_tokens: cap(self.anchor_tokens, ANCHOR_SHARE),
            index_tokens: cap(self.index_tokens, INDEX_SHARE),
            ..self.clone()
        }
    }

    /// The calls a session that made `calls` so far is all but sure still to make after the one
    /// it is preparing. Told [`FAMILY_SAMPLE`] runs of its family or more: the 10th percentile of
    /// what those that outlasted it went on for, counting the session as one more that may end
    /// with this call (none outlasted it: none). Else `sure_horizon_share` of `calls`.
    pub fn sure_horizon(&self, calls: usize) -> usize {
        if self.family_runs.len() < FAMILY_SAMPLE {
            return (calls as f64 * self.sure_horizon_share).floor() as usize;
        }
        let mut longer: Vec<usize> =
            self.family_runs.iter().map(|&n| n as usize).filter(|&n| n > calls).map(|n| n - calls - 1).collect();
        // The session itself is one of them, and may end with this call.
        longer.push(0);
        longer.sort_unstable();
        longer[longer.len() / 10]
    }

    /// The size above which a tool output is shown in its history form from the start.
    pub fn first_sight_tokens(&self, window: u32) -> usize {
        (f64::from(window) * self.first_sight_share) as usize
    }
}

/// Prices relative to one uncached input token.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(default, deny_unknown_fields)]
pub struct Prices {
    pub uncached_input: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    /// A cache write with a 1-hour lifetime (Anthropic's `"ttl": "1h"`).
    pub cache_write_1h: f64,
    pub output: f64,
}

impl Default for Prices {
    fn default() -> Self {
        Prices { uncached_input: 1.0, cache_read: 0.1, cache_write: 1.25, cache_write_1h: 2.0, output: 5.0 }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(default, deny_unknown_fields)]
pub struct PruneConfig {
    /// Prune only when at least this many tokens would be freed (PRUNE_MINIMUM).
    pub minimum: u32,
    /// Tool output tokens kept untouched behind the newest turns (PRUNE_PROTECT).
    pub protect: u32,
    /// Tools whose outputs are never pruned.
    pub protected_tools: Vec<String>,
}

impl Default for PruneConfig {
    fn default() -> Self {
        PruneConfig { minimum: 20_000, protect: 40_000, protected_tools: vec!["skill".to_owned()] }
    }
}

impl Config {
    /// Parse JSON; an unknown or mistyped key is an error naming its full path (`prune.minimun`).
    pub fn from_json(text: &str) -> Result<Self> {
        let mut de = serde_json::Deserializer::from_str(text);
        let config: Config = serde_path_to_error::deserialize(&mut de).map_err(path_error)?;
        config.validate()
    }

    /// Build from any serde value (TOML tables, JS objects), with the same errors as JSON.
    pub fn from_value(value: serde_json::Value) -> Result<Self> {
        let config: Config = serde_path_to_error::deserialize(value).map_err(path_error)?;
        config.validate()
    }

    /// Check the ranges serde cannot express.
    pub fn validate(self) -> Result<Self> {
        let bad = |key: &str, why: &str| Err(Error::Config(format!("`{key}` {why}")));
        if self.window == 0 {
            return bad("window", "must be positive");
        }
        if !(self.compact_threshold > 0.0 && self.compact_threshold <= 1.0) {
            return bad("compact_threshold", "must be in (0, 1]");
        }
        if self.summary_timeout_ms == 0 {
            return bad("summary_timeout_ms", "must be positive (a summary would always time out)");
        }
        if self.max_prompt_tokens.is_some_and(|cap| cap == 0 || cap > self.window) {
            return bad("max_prompt_tokens", "must be positive and at most `window`");
        }
        let m = &self.model_prices;
        if m.read_on.as_deref().is_some_and(|day| !is_utc_day(day)) {
            return bad("model_prices.read_on", "must be a day as YYYY-MM-DD");
        }
        for (model, p) in &m.models {
            if [p.input, p.cache_read, p.cache_write, p.cache_write_1h, p.output]
                .iter()
                .any(|v| !(v.is_finite() && *v >= 0.0))
            {
                return bad(
                    &format!("model_prices.models.{model}"),
                    "must have prices of zero or more (USD per million tokens)",
                );
            }
        }
        let c = &self.compress;
        if !(c.budget_share > 0.0 && c.budget_share <= 1.0) {
            return bad("compress.budget_share", "must be in (0, 1]");
        }
        if c.min_tokens > c.max_tokens {
            return bad("compress.min_tokens", "must be at most `compress.max_tokens`");
        }
        if c.max_line_chars < 40 {
            return bad("compress.max_line_chars", "must be at least 40");
        }
        let w = &self.workbench;
        if !(w.raw_output_share > 0.0 && w.raw_output_share <= 1.0) {
            return bad("workbench.raw_output_share", "must be in (0, 1]");
        }
        if w.min_turns == 0 || w.min_turns > w.max_turns {
            return bad("workbench.min_turns", "must be positive and at most `workbench.max_turns`");
        }
        if w.min_horizon > w.max_horizon {
            return bad("workbench.min_horizon", "must be at most `workbench.max_horizon`");
        }
        if !(w.first_sight_share > 0.0 && w.first_sight_share <= 1.0) {
            return bad("workbench.first_sight_share", "must be in (0, 1]");
        }
        let g = &self.goals;
        let limits = [
            ("max_branches", g.max_branches),
            ("max_description_chars", g.max_description_chars),
            ("max_summary_chars", g.max_summary_chars),
            ("max_goals", g.max_goals),
            ("max_depth", g.max_depth),
        ];
        if let Some((key, _)) = limits.iter().find(|(_, v)| *v == 0) {
            return bad(&format!("goals.{key}"), "must be positive");
        }
        let x = &self.proxy;
        let proxy = [
            ("max_body_bytes", x.max_body_bytes),
            ("upstream_timeout_ms", x.upstream_timeout_ms),
            ("max_sessions", u64::from(x.max_sessions)),
        ];
        if let Some((key, _)) = proxy.iter().find(|(_, v)| *v == 0) {
            return bad(&format!("proxy.{key}"), "must be positive");
        }
        crate::store::layout::check_root(&self.store.root)?;
        crate::store::Redactor::new(self.store.redact, &self.store.redact_patterns)?;
        let p = &self.prices;
        let prices = [
            ("uncached_input", p.uncached_input),
            ("cache_read", p.cache_read),
            ("cache_write", p.cache_write),
            ("cache_write_1h", p.cache_write_1h),
            ("output", p.output),
        ];
        if let Some((key, _)) = prices.iter().find(|(_, v)| !(v.is_finite() && *v >= 0.0)) {
            return bad(&format!("prices.{key}"), "must be a finite number ≥ 0");
        }
        Ok(self)
    }

    /// The prompt size at which compaction triggers.
    pub fn compaction_trigger_tokens(&self) -> u32 {
        let by_share = (f64::from(self.window) * self.compact_threshold).floor() as u32;
        self.max_prompt_tokens.map_or(by_share, |cap| cap.min(by_share))
    }
}

fn path_error<E: std::fmt::Display>(e: serde_path_to_error::Error<E>) -> Error {
    let path = e.path().to_string();
    let inner = e.into_inner().to_string();
    // serde names the unknown key itself; prefix the enclosing path when there is one.
    if path == "." { Error::Config(inner) } else { Error::Config(format!("at `{path}`: {inner}")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_partial_files() {
        assert_eq!(Config::from_json("{}").unwrap(), Config::default());
        let c = Config::from_json(r#"{"window": 128000, "prune": {"minimum": 5}}"#).unwrap();
        assert_eq!((c.window, c.prune.minimum, c.prune.protect), (128_000, 5, 40_000));
        assert_eq!(c.compaction_trigger_tokens(), 102_400);
    }

    /// The calls a session is all but sure still to make: a fifth of those made so far, or, told
    /// five or more runs of its family, what the shortest tenth of those that lasted longer (and
    /// the session itself) went on for.
    #[test]
    fn the_sure_horizon_follows_the_family_when_it_knows_enough_runs() {
        let w = WorkbenchConfig::default();
        assert_eq!((w.sure_horizon(25), w.sure_horizon(100)), (5, 20));
        let family = WorkbenchConfig { family_runs: vec![27, 30, 40, 60, 90, 120, 200, 10, 12], ..w.clone() };
        assert_eq!(
            family.sure_horizon(25),
            0,
            "seven runs outlasted 25 calls; with the session, the shortest tenth ends now"
        );
        assert_eq!(
            family.sure_horizon(100),
            0,
            "two runs outlasted 100: with the session, the shortest tenth ends now"
        );
        assert_eq!(family.sure_horizon(300), 0, "none outlasted 300");
        let few = WorkbenchConfig { family_runs: vec![300, 400, 500, 600], ..w.clone() };
        assert_eq!(few.sure_horizon(100), 20, "four runs are too few to tell: a fifth of 100");
        let many = WorkbenchConfig { family_runs: (30..50).collect(), ..w.clone() };
        assert_eq!(
            many.sure_horizon(25),
            5,
            "20 runs went on for 4..23 calls after the 26th; with 0, the third shortest"
        );
    }

    #[test]
    fn unknown_keys_are_named() {
        let err = Config::from_json(r#"{"windw": 1}"#).unwrap_err().to_string();
        assert!(err.contains("unknown field `windw`"), "{err}");
        let err = Config::from_json(r#"{"prune": {"minimun": 1}}"#).unwrap_err().to_string();
        assert!(err.contains("prune.minimun") && err.contains("unknown field `minimun`"), "{err}");
        let err = Config::from_json(r#"{"encoding": "p50k"}"#).unwrap_err().to_string();
        assert!(err.contains("encoding") && err.contains("p50k"), "{err}");
    }

    #[test]
    fn ranges_are_checked() {
        let err = Config::from_json(r#"{"compact_threshold": 1.5}"#).unwrap_err();
        assert_eq!(err.code(), "invalid_config");
        assert!(err.to_string().contains("compact_threshold"));
        let err = Config::from_json(r#"{"prices": {"cache_read": -1}}"#).unwrap_err().to_string();
        assert!(err.contains("prices.cache_read"), "{err}");
        let err = Config::from_json(r#"{"summary_timeout_ms": 0}"#).unwrap_err().to_string();
        assert!(err.contains("summary_timeout_ms"), "{err}");
    }
}
