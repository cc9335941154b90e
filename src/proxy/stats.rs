//! What the proxy's sessions cost and saved, from their `calls.jsonl` (`workbench stats`): per
//! session (a conversation the agent compacted itself is one session of several traces), per
//! day and agent, and in all. Pure but for [`read_traces`], which reads a store through its host.
//!
//! The cost model is the replay's (R10): each prompt's cached tokens at `cache_read`, the rest
//! written at `cache_write`; replies cost the same either way and are left out. Upstream, the
//! cached part is the engine's expected one; the agent's own prompt grows by appending, so its
//! cached part is its previous call's prompt. A side call went upstream as the agent sent it:
//! the same uncached cost on both sides.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::session::CallRecord;
use crate::config::Prices;
use crate::goals::utc_day;
use crate::host::Host;
use crate::replay::cost;
use crate::store::{TraceMeta, TraceStore};

/// Sums over calls; a trace's, a session's, a day's or everything's. Its serde form adds the
/// ratios ([`Totals::saving`] and the cached shares), so no reader computes them again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(remote = "Self")]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(rename = "CallSums"))]
pub struct Totals {
    pub sessions: usize,
    pub calls: usize,
    pub side_calls: usize,
    /// Prompt tokens the agent sent and the upstream received (the engine's counts).
    pub client_tokens: u64,
    pub prompt_tokens: u64,
    /// The calls whose usage the provider reported, and its reported prompt tokens and cache
    /// reads over them.
    pub reported_calls: usize,
    pub reported_prompt_tokens: u64,
    pub cache_read_tokens: u64,
    /// What the engine expected the provider to read from its cache, over the main calls.
    pub expected_cached_tokens: u64,
    /// The prompts' cost upstream and the agent's own, in uncached-input-token units at the prices.
    pub cost: f64,
    pub agent_cost: f64,
}

/// What calls cost and saved: the sums of [`Totals`] and their ratios (its serde form).
#[derive(Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(rename = "CallTotals"))]
pub(crate) struct Rated<'a> {
    #[serde(flatten, serialize_with = "Totals::serialize")]
    #[cfg_attr(test, ts(flatten))]
    sums: &'a Totals,
    /// [`Totals::saving`].
    saving: f64,
    /// [`Totals::cached_share`].
    cached_share: Option<f64>,
    /// [`Totals::expected_cached_share`].
    expected_cached_share: Option<f64>,
}

impl Serialize for Totals {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let rated = Rated {
            sums: self,
            saving: self.saving(),
            cached_share: self.cached_share(),
            expected_cached_share: self.expected_cached_share(),
        };
        rated.serialize(serializer)
    }
}

impl Totals {
    /// 1 − cost / the agent's own cost (0 when the agent's cost nothing).
    pub fn saving(&self) -> f64 {
        if self.agent_cost > 0.0 { 1.0 - self.cost / self.agent_cost } else { 0.0 }
    }

    /// The provider's reported cache reads over its reported prompt tokens, when any were reported.
    pub fn cached_share(&self) -> Option<f64> {
        (self.reported_prompt_tokens > 0).then(|| self.cache_read_tokens as f64 / self.reported_prompt_tokens as f64)
    }

    /// The engine's expected cache reads over the prompt tokens it sent (side calls, never
    /// expected to be cached, count as sent), when it sent any.
    pub fn expected_cached_share(&self) -> Option<f64> {
        (self.prompt_tokens > 0).then(|| self.expected_cached_tokens as f64 / self.prompt_tokens as f64)
    }

    fn add(&mut self, other: &Totals) {
        self.sessions += other.sessions;
        self.calls += other.calls;
        self.side_calls += other.side_calls;
        self.reported_calls += other.reported_calls;
        self.client_tokens += other.client_tokens;
        self.prompt_tokens += other.prompt_tokens;
        self.reported_prompt_tokens += other.reported_prompt_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.expected_cached_tokens += other.expected_cached_tokens;
        self.cost += other.cost;
        self.agent_cost += other.agent_cost;
    }

    /// One trace's calls, in order, priced at `prices`. A call no model answered (the upstream
    /// was unreachable or failed) counts as a call and costs nothing; a managed call's cost is
    /// the engine's own ([`CallCost`](crate::workbench::cost::CallCost), at the engine's prices),
    /// and an older record's is estimated from its counts.
    pub fn of_trace(calls: &[CallRecord], prices: &Prices) -> Totals {
        let mut totals = Totals { sessions: 1, ..Totals::default() };
        let mut previous = 0;
        for call in calls {
            if call.status.is_some_and(|status| !(200..300).contains(&status)) {
                totals.calls += usize::from(!call.side_call);
                totals.side_calls += usize::from(call.side_call);
                continue;
            }
            let (client, prompt) = (call.client_tokens as u64, call.prompt_tokens as u64);
            totals.client_tokens += client;
            totals.prompt_tokens += prompt;
            if let Some(usage) = call.usage {
                totals.reported_calls += 1;
                totals.reported_prompt_tokens += usage.prompt_tokens();
                totals.cache_read_tokens += usage.cache_read_tokens;
            }
            if call.side_call {
                totals.side_calls += 1;
                totals.cost += cost(prices, 0, prompt as usize, 0);
                totals.agent_cost += cost(prices, 0, client as usize, 0);
                continue;
            }
            totals.calls += 1;
            let cached = (call.expected_cached_tokens as u64).min(prompt);
            totals.expected_cached_tokens += cached;
            let agent_cached = previous.min(client);
            previous = client;
            if let Some(engine) = &call.cost {
                totals.cost += engine.sent_cost;
                totals.agent_cost += engine.agent_cost;
                continue;
            }
            totals.cost += cost(prices, cached as usize, (prompt - cached) as usize, 0);
            totals.agent_cost += cost(prices, agent_cached as usize, (client - agent_cached) as usize, 0);
        }
        totals
    }
}

/// One session: its traces (oldest first) and their sums.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionStats {
    /// The newest trace; the session's id.
    pub trace_id: String,
    /// The traces it went on from, oldest first (`meta.json`'s `continues`).
    pub earlier: Vec<String>,
    /// The sub-agents it ran (`meta.json`'s `branch_of`), their sub-agents too; their calls are
    /// in its sums.
    pub branches: Vec<String>,
    /// The agent as the proxy named it, or empty.
    pub agent: String,
    /// The user's words: the first trace's mission.
    pub title: String,
    pub status: String,
    pub started_at: u64,
    pub updated_at: u64,
    /// The UTC day it was last active (`YYYY-MM-DD`).
    pub day: String,
    #[serde(flatten)]
    pub totals: Totals,
}

/// A day's and an agent's sums.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DayStats {
    pub day: String,
    pub agent: String,
    #[serde(flatten)]
    pub totals: Totals,
}

/// Every session, the days, and everything.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatsReport {
    /// Most recently active first.
    pub sessions: Vec<SessionStats>,
    /// By day (newest first), then agent.
    pub days: Vec<DayStats>,
    pub total: Totals,
    /// What could not be read (a trace, a line), when the report was read from a store.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One proxied trace as read from the store.
#[derive(Debug, Clone)]
pub struct TraceCalls {
    pub meta: TraceMeta,
    pub calls: Vec<CallRecord>,
}

/// Every trace of `store` with the call records of its `calls.jsonl`, and what could not be read
/// (a trace, a line) as notes.
pub async fn read_traces<H: Host>(store: &TraceStore<'_, H>) -> crate::Result<(Vec<TraceCalls>, Vec<String>)> {
    let list = store.list_traces().await?;
    let mut notes = list.notes;
    let mut traces = Vec::new();
    for meta in list.traces {
        let lines = match store.call_lines::<CallRecord>(&meta.trace_id).await {
            Ok(lines) => lines,
            Err(e) => {
                notes.push(format!("{}: {e}", meta.trace_id));
                continue;
            }
        };
        notes.extend(lines.notes.iter().map(|note| format!("{}: {note}", meta.trace_id)));
        let calls = lines.records;
        traces.push(TraceCalls { meta, calls });
    }
    Ok((traces, notes))
}

/// The report over `traces` (those without calls are not the proxy's and are left out), of
/// sessions last active on `since` (a UTC `YYYY-MM-DD`) or later.
pub fn stats(traces: &[TraceCalls], prices: &Prices, since: Option<&str>) -> StatsReport {
    let proxied: BTreeMap<&str, &TraceCalls> =
        traces.iter().filter(|t| !t.calls.is_empty()).map(|t| (t.meta.trace_id.as_str(), t)).collect();
    // A trace another one continues is that one's earlier part.
    let continued: BTreeSet<&str> =
        proxied.values().filter_map(|t| t.meta.continues.as_deref()).filter(|id| proxied.contains_key(id)).collect();
    // Each caller's own sub-agents, and which traces are one.
    let mut branches: BTreeMap<&str, Vec<&TraceCalls>> = BTreeMap::new();
    let mut sub_agents: BTreeSet<&str> = BTreeSet::new();
    for trace in proxied.values() {
        if let Some(id) = caller(trace, &proxied) {
            branches.entry(id).or_default().push(trace);
            sub_agents.insert(trace.meta.trace_id.as_str());
        }
    }
    let mut sessions: Vec<SessionStats> = proxied
        .values()
        .filter(|t| !continued.contains(t.meta.trace_id.as_str()) && !sub_agents.contains(t.meta.trace_id.as_str()))
        .map(|newest| session(newest, &proxied, &branches, prices))
        .filter(|s| since.is_none_or(|day| s.day.as_str() >= day))
        .collect();
    sessions.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then_with(|| a.trace_id.cmp(&b.trace_id)));
    let mut days: BTreeMap<(String, String), Totals> = BTreeMap::new();
    let mut total = Totals::default();
    for s in &sessions {
        days.entry((s.day.clone(), s.agent.clone())).or_default().add(&s.totals);
        total.add(&s.totals);
    }
    let mut days: Vec<DayStats> =
        days.into_iter().map(|((day, agent), totals)| DayStats { day, agent, totals }).collect();
    days.sort_by(|a, b| b.day.cmp(&a.day).then_with(|| a.agent.cmp(&b.agent)));
    StatsReport { sessions, days, total, notes: Vec::new() }
}

/// The session whose newest trace is `newest`, its earlier parts followed back (each once), with
/// the sub-agents of its parts (`branches`: each caller's own).
fn session(
    newest: &TraceCalls,
    proxied: &BTreeMap<&str, &TraceCalls>,
    branches: &BTreeMap<&str, Vec<&TraceCalls>>,
    prices: &Prices,
) -> SessionStats {
    let mut parts = vec![newest];
    while let Some(earlier) = parts.last().and_then(|t| t.meta.continues.as_deref()).and_then(|id| proxied.get(id)) {
        if parts.iter().any(|p| p.meta.trace_id == earlier.meta.trace_id) {
            break;
        }
        parts.push(earlier);
    }
    parts.reverse();
    // Its sub-agents: those of its parts, then theirs (callers never go round: see `caller`).
    let mut ran: Vec<&TraceCalls> = Vec::new();
    let mut next = 0;
    let of = |t: &TraceCalls| branches.get(t.meta.trace_id.as_str()).into_iter().flatten().copied();
    ran.extend(parts.iter().flat_map(|p| of(p)));
    while let Some(branch) = ran.get(next).copied() {
        ran.extend(of(branch));
        next += 1;
    }
    let mut totals = Totals::default();
    for part in parts.iter().chain(&ran) {
        totals.add(&Totals::of_trace(&part.calls, prices));
    }
    totals.sessions = 1;
    let first = parts[0];
    let agent = parts.iter().flat_map(|p| &p.calls).map(|c| c.agent.as_str()).find(|a| !a.is_empty());
    SessionStats {
        trace_id: newest.meta.trace_id.clone(),
        earlier: parts[..parts.len() - 1].iter().map(|p| p.meta.trace_id.clone()).collect(),
        branches: ran.iter().map(|b| b.meta.trace_id.clone()).collect(),
        agent: agent.unwrap_or_default().to_owned(),
        title: first.meta.mission.clone(),
        status: newest.meta.status.clone(),
        started_at: first.meta.created_at,
        updated_at: newest.meta.updated_at,
        day: utc_day(newest.meta.updated_at),
        totals,
    }
}

/// The trace whose sub-agent `trace` is, when that trace is in `proxied` and the callers do not
/// go round in a circle (then `trace` stands as a session of its own).
fn caller<'a>(trace: &'a TraceCalls, proxied: &BTreeMap<&str, &'a TraceCalls>) -> Option<&'a str> {
    let of = |t: &'a TraceCalls| {
        t.meta.branch_of.as_ref().map(|b| b.trace_id.as_str()).filter(|id| proxied.contains_key(id))
    };
    let first = of(trace)?;
    let mut up = first;
    for _ in 0..proxied.len() {
        if up == trace.meta.trace_id {
            return None;
        }
        match proxied.get(up).and_then(|t| of(t)) {
            Some(next) => up = next,
            None => return Some(first),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxy::ProviderUsage;

    fn meta(id: &str, updated_at: u64, continues: Option<&str>) -> TraceMeta {
        TraceMeta {
            version: 1,
            trace_id: id.into(),
            mission: format!("task of {id}"),
            created_at: updated_at - 10,
            updated_at,
            message_count: 4,
            status: "finished".into(),
            branch_count: 0,
            event_count: 0,
            calls: 2,
            continues: continues.map(str::to_owned),
            branch_of: None,
            fallbacks: Vec::new(),
        }
    }

    fn branch(id: &str, caller: &str) -> TraceMeta {
        let branch_of = Some(crate::store::BranchOf { trace_id: caller.into(), call_id: "toolu_1".into() });
        TraceMeta { branch_of, ..meta(id, 30_000, None) }
    }

    #[test]
    fn a_sub_agents_trace_is_a_branch_of_its_callers_session_and_counted_in_it() {
        let one = || vec![call(1000, 1000, 0, false)];
        let traces = vec![
            TraceCalls { meta: meta("s", 20_000, None), calls: one() },
            TraceCalls { meta: meta("s-2", 20_010, Some("s")), calls: one() },
            TraceCalls { meta: branch("s-3", "s"), calls: one() },
            TraceCalls { meta: branch("s-4", "s-3"), calls: one() },
            // Callers in a circle, and a caller not in the store: sessions of their own.
            TraceCalls { meta: branch("x", "y"), calls: one() },
            TraceCalls { meta: branch("y", "x"), calls: one() },
            TraceCalls { meta: branch("z", "gone"), calls: one() },
        ];
        let report = stats(&traces, &Prices::default(), None);
        let mut ids: Vec<(&str, Vec<&str>)> = report
            .sessions
            .iter()
            .map(|s| (s.trace_id.as_str(), s.branches.iter().map(String::as_str).collect()))
            .collect();
        ids.sort();
        assert_eq!(ids, [("s-2", vec!["s-3", "s-4"]), ("x", vec![]), ("y", vec![]), ("z", vec![])]);
        let s = report.sessions.iter().find(|s| s.trace_id == "s-2").unwrap();
        assert_eq!((s.totals.calls, s.totals.sessions), (4, 1));
        assert_eq!(report.total.calls, 7);
    }

    fn call(client: usize, prompt: usize, cached: usize, side: bool) -> CallRecord {
        CallRecord {
            agent: "Claude Code 2.1.328".into(),
            client_tokens: client,
            prompt_tokens: prompt,
            expected_cached_tokens: cached,
            side_call: side,
            usage: Some(ProviderUsage { input_tokens: 100, cache_read_tokens: 300, ..ProviderUsage::default() }),
            ..CallRecord::default()
        }
    }

    #[test]
    fn the_engines_own_costs_count_and_a_call_no_model_answered_costs_nothing() {
        let engine = crate::workbench::cost::CallCost { agent_cost: 900.0, sent_cost: 400.0, ..Default::default() };
        let priced = CallRecord { status: Some(200), cost: Some(engine), ..call(1000, 800, 0, false) };
        let unanswered = CallRecord { status: Some(502), ..call(5000, 5000, 0, false) };
        let totals = Totals::of_trace(&[priced, unanswered], &Prices::default());
        assert_eq!((totals.calls, totals.client_tokens, totals.prompt_tokens), (2, 1000, 800));
        assert!((totals.cost - 400.0).abs() < 1e-9 && (totals.agent_cost - 900.0).abs() < 1e-9, "{totals:?}");
    }

    #[test]
    fn sessions_days_and_totals_follow_the_cost_model() {
        const DAY: u64 = 86_400_000;
        let prices = Prices::default();
        let traces = vec![
            TraceCalls { meta: meta("a", 20_000 * DAY, None), calls: vec![call(1000, 1000, 0, false)] },
            TraceCalls {
                meta: meta("a-2", 20_000 * DAY + 5, Some("a")),
                calls: vec![call(3000, 2000, 1000, false), call(400, 400, 0, true)],
            },
            TraceCalls { meta: meta("b", 20_001 * DAY, None), calls: vec![call(500, 500, 0, false)] },
            TraceCalls { meta: meta("own", 20_001 * DAY, None), calls: vec![] },
        ];
        let report = stats(&traces, &prices, None);
        let ids: Vec<(&str, &[String])> =
            report.sessions.iter().map(|s| (s.trace_id.as_str(), &s.earlier[..])).collect();
        assert_eq!(ids, [("b", &[][..]), ("a-2", &["a".to_owned()][..])]);
        let a = &report.sessions[1];
        assert_eq!((a.title.as_str(), a.day.as_str()), ("task of a", "2024-10-04"));
        assert_eq!(
            (a.totals.calls, a.totals.side_calls, a.totals.client_tokens, a.totals.prompt_tokens),
            (2, 1, 4400, 3400)
        );
        // Upstream: 1.25×1000; 0.1×1000 + 1.25×1000; the side call 1.25×400 on both sides.
        assert!((a.totals.cost - (1250.0 + 1350.0 + 500.0)).abs() < 1e-9, "{}", a.totals.cost);
        // The agent's own: each trace's first prompt uncached: 1.25×1000; 1.25×3000; 1.25×400.
        assert!((a.totals.agent_cost - (1250.0 + 3750.0 + 500.0)).abs() < 1e-9, "{}", a.totals.agent_cost);
        assert_eq!(a.totals.cached_share(), Some(0.75));
        assert_eq!(report.days.iter().map(|d| d.day.as_str()).collect::<Vec<_>>(), ["2024-10-05", "2024-10-04"]);
        assert_eq!((report.total.sessions, report.total.calls, report.total.client_tokens), (2, 3, 4900));
        let since = stats(&traces, &prices, Some("2024-10-05"));
        assert_eq!(since.sessions.len(), 1);
        assert_eq!(since.total.client_tokens, 500);
        // The serde form: a session's sums flattened beside its own fields, and their ratios.
        let json = serde_json::to_value(a).unwrap();
        assert_eq!((json["trace_id"].as_str(), json["calls"].as_u64()), (Some("a-2"), Some(2)));
        assert_eq!(json["cached_share"].as_f64(), Some(0.75));
        assert_eq!(json["saving"].as_f64(), Some(a.totals.saving()));
        assert!(json["expected_cached_share"].is_f64() && json.get("totals").is_none(), "{json}");
    }
}
