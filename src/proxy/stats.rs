//! What the proxy's sessions cost and saved, from their `calls.jsonl` (`workbench stats`): per
//! session (a conversation the agent compacted itself is one session of several traces), per
//! day and agent, per model, and in all. Pure but for [`read_traces`], which reads a store
//! through its host.
//!
//! One basis: each call's dollars as the proxy recorded them ([`CallDollars`]: the sent request
//! from the upstream's reported usage, or estimated and marked so; the agent's own request
//! beside it; nothing for a call no model answered). A saving is always the agent's own minus
//! what was sent, and [`saving_words`] says it the same way in every view.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::record::CallRecord;
use super::record::CostBasis;
use crate::goals::utc_day;
use crate::host::Host;
use crate::store::{TraceMeta, TraceStore};

/// Sums over calls; a trace's, a session's, a day's, a model's or everything's. Its serde form
/// adds the ratios and the words ([`Totals::saving`], [`saving_words`], the cached shares), so
/// no reader computes them again.
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
    /// USD: what was sent and what the agent's own requests would have cost, over the priced
    /// calls.
    pub sent_usd: f64,
    pub agent_usd: f64,
    /// What the cache lifetimes the engine chose saved against 5-minute breakpoints only, in USD.
    pub ttl_saving_usd: f64,
    /// Calls priced from the engine's counts (no usable usage reported), calls without a price
    /// (a model the price table lacks, a record older than the dollars), and calls no model
    /// answered (no reply, or not a success: they cost nothing).
    pub estimated_calls: usize,
    pub unpriced_calls: usize,
    pub no_model_calls: usize,
}

/// What calls cost and saved: the sums of [`Totals`] and their ratios (its serde form).
#[derive(Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(rename = "CallTotals"))]
pub(crate) struct Rated<'a> {
    #[serde(flatten, serialize_with = "Totals::serialize")]
    #[cfg_attr(test, ts(flatten))]
    sums: &'a Totals,
    /// The agent's own cost less what was sent, in USD (negative: dearer).
    saving_usd: f64,
    /// [`Totals::saving`].
    saving: f64,
    /// [`saving_words`], and its part a status bar shows ([`saving_brief`]).
    saving_text: String,
    saving_brief: String,
    /// [`saving_lines`].
    saving_lines: Vec<String>,
    /// [`Totals::cached_share`].
    cached_share: Option<f64>,
    /// [`Totals::expected_cached_share`].
    expected_cached_share: Option<f64>,
    /// [`cache_note`].
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_note: Option<&'static str>,
}

impl Serialize for Totals {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let rated = Rated {
            sums: self,
            saving_usd: self.agent_usd - self.sent_usd,
            saving: self.saving(),
            saving_text: saving_words(self),
            saving_brief: saving_brief(self),
            saving_lines: saving_lines(self),
            cached_share: self.cached_share(),
            expected_cached_share: self.expected_cached_share(),
            cache_note: cache_note(self.cache_read_tokens, self.reported_calls, self.expected_cached_tokens),
        };
        rated.serialize(serializer)
    }
}

/// Why the provider may have read nothing from its cache where the engine expected it to, when
/// it reported usage and read nothing.
pub fn cache_note(cache_read_tokens: u64, reported_calls: usize, expected_cached_tokens: u64) -> Option<&'static str> {
    (reported_calls > 0 && cache_read_tokens == 0 && expected_cached_tokens > 0).then_some(
        "the provider reported no cache reads: an upstream that does not cache (or does not report it), \
         prefixes under its minimum cacheable length (1,024 tokens on most Claude models), or a cache that lapsed between calls",
    )
}

/// A sum in dollars as every view writes it: `$0.0042`, `$0.139`, `$12.40`.
pub fn usd(value: f64) -> String {
    let abs = value.abs();
    let digits = if abs < 0.01 {
        4
    } else if abs < 10.0 {
        3
    } else {
        2
    };
    format!("${abs:.digits$}")
}

/// The share saved as a percentage: `35%` cheaper, `−4%` dearer, `0%`; half a percent rounds
/// away from zero.
pub fn percent_saved(share: f64) -> String {
    let p = (share * 100.0).round() as i64;
    if p < 0 { format!("−{}%", -p) } else { format!("{p}%") }
}

/// What `totals` cost and saved, in the words of every view (the terminal, the dashboard, the
/// editor): `$0.139 instead of $0.634: $0.495 saved (78%)`, `… $0.012 more (−4%)`, with the calls
/// estimated or left unpriced named.
pub fn saving_words(totals: &Totals) -> String {
    if totals.priced_calls() == 0 {
        return saving_brief(totals);
    }
    let mut words = format!("{} instead of {}: {}", usd(totals.sent_usd), usd(totals.agent_usd), saving_brief(totals));
    let mut marks = Vec::new();
    if totals.ttl_saving_usd.abs() >= NOT_WORTH_A_WORD_USD {
        let (amount, word) = (usd(totals.ttl_saving_usd), if totals.ttl_saving_usd < 0.0 { "cost" } else { "saved" });
        marks.push(format!("1-hour cache lifetimes {word} {amount} of it"));
    }
    if totals.estimated_calls > 0 {
        marks.push(format!("{} estimated", calls(totals.estimated_calls)));
    }
    if totals.unpriced_calls > 0 {
        marks.push(format!("{} without a price left out", calls(totals.unpriced_calls)));
    }
    if !marks.is_empty() {
        words.push_str(&format!(" [{}]", marks.join("; ")));
    }
    words
}

/// Half a hundredth of a cent: a sum of less, either way, is not worth a word (it shows as $0.0000).
const NOT_WORTH_A_WORD_USD: f64 = 0.00005;

/// The saving alone: `$0.495 saved (78%)`, `$0.012 more (−4%)`, `nothing saved`; `nothing spent
/// yet`, or `not priced: …` when no call was priced.
pub fn saving_brief(totals: &Totals) -> String {
    if totals.priced_calls() == 0 {
        return match totals.unpriced_calls {
            0 => "nothing spent yet".to_owned(),
            n => format!("not priced: {} without a price", calls(n)),
        };
    }
    let saved = totals.agent_usd - totals.sent_usd;
    // What a request sent as the agent made it saves, a float sum's rounding apart.
    if saved.abs() < NOT_WORTH_A_WORD_USD {
        return "nothing saved".to_owned();
    }
    let word = if saved < 0.0 { "more" } else { "saved" };
    format!("{} {word} ({})", usd(saved), percent_saved(totals.saving()))
}

/// What a session saved on three lines, as the editor's status bar and Prompt View say it: the
/// prompt tokens the agent sent against those the upstream received, the cached share the
/// provider reported, and [`saving_words`].
pub fn saving_lines(totals: &Totals) -> Vec<String> {
    let all = totals.calls + totals.side_calls;
    if all == 0 {
        return vec!["No call has gone through the proxy yet.".to_owned()];
    }
    let fewer = match totals.client_tokens {
        0 => 0.0,
        client => 1.0 - totals.prompt_tokens as f64 / client as f64,
    };
    let side = match totals.side_calls {
        0 => String::new(),
        1 => " and 1 side call".to_owned(),
        n => format!(" and {n} side calls"),
    };
    let cached = match totals.cached_share() {
        None => "Cached: not reported by the provider".to_owned(),
        Some(share) => format!(
            "Cached: {} of the prompt tokens, as the provider reported ({} of {all} calls)",
            percent_saved(share),
            totals.reported_calls
        ),
    };
    vec![
        format!(
            "Prompt tokens: the agent sent {}, the upstream received {} ({} fewer) over {}{side}",
            totals.client_tokens,
            totals.prompt_tokens,
            percent_saved(fewer),
            calls(totals.calls)
        ),
        cached,
        format!("Cost: {}", saving_words(totals)),
    ]
}

fn calls(n: usize) -> String {
    format!("{n} call{}", if n == 1 { "" } else { "s" })
}

impl Totals {
    /// Calls with dollars: answered by a model whose price is known.
    pub fn priced_calls(&self) -> usize {
        (self.calls + self.side_calls).saturating_sub(self.unpriced_calls + self.no_model_calls)
    }

    /// The share of the agent's own cost saved: 1 − sent / agent (0 when the agent's cost nothing).
    pub fn saving(&self) -> f64 {
        if self.agent_usd > 0.0 { 1.0 - self.sent_usd / self.agent_usd } else { 0.0 }
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

    pub fn add(&mut self, other: &Totals) {
        self.sessions += other.sessions;
        self.calls += other.calls;
        self.side_calls += other.side_calls;
        self.reported_calls += other.reported_calls;
        self.client_tokens += other.client_tokens;
        self.prompt_tokens += other.prompt_tokens;
        self.reported_prompt_tokens += other.reported_prompt_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.expected_cached_tokens += other.expected_cached_tokens;
        self.sent_usd += other.sent_usd;
        self.agent_usd += other.agent_usd;
        self.ttl_saving_usd += other.ttl_saving_usd;
        self.estimated_calls += other.estimated_calls;
        self.unpriced_calls += other.unpriced_calls;
        self.no_model_calls += other.no_model_calls;
    }

    /// Calls' sums, each as recorded. A call no model answered counts as a call and costs
    /// nothing.
    pub fn of_calls<'a>(calls: impl IntoIterator<Item = &'a CallRecord>) -> Totals {
        let mut totals = Totals { sessions: 1, ..Totals::default() };
        for call in calls {
            totals.calls += usize::from(!call.side_call);
            totals.side_calls += usize::from(call.side_call);
            if !call.answered() {
                totals.no_model_calls += 1;
                continue;
            }
            match &call.dollars {
                Some(dollars) => {
                    totals.sent_usd += dollars.sent;
                    totals.agent_usd += dollars.agent;
                    totals.ttl_saving_usd += dollars.ttl_saving;
                    totals.estimated_calls += usize::from(dollars.basis == CostBasis::Estimated);
                }
                None => totals.unpriced_calls += 1,
            }
            totals.client_tokens += call.client_tokens as u64;
            totals.prompt_tokens += call.prompt_tokens as u64;
            if let Some(usage) = call.usage {
                totals.reported_calls += 1;
                totals.reported_prompt_tokens += usage.prompt_tokens();
                totals.cache_read_tokens += usage.cache_read_tokens;
            }
            if !call.side_call {
                totals.expected_cached_tokens += call.expected_cached_tokens.min(call.prompt_tokens) as u64;
            }
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
    /// The team member whose session it is (team mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    /// The user's words: the first trace's mission.
    pub title: String,
    pub status: String,
    pub started_at: u64,
    pub updated_at: u64,
    /// The UTC day it was last active (`YYYY-MM-DD`).
    pub day: String,
    #[serde(flatten)]
    pub totals: Totals,
    /// Its sums by the model each call named.
    #[serde(skip)]
    pub models: BTreeMap<String, Totals>,
}

/// A day's and an agent's sums.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DayStats {
    pub day: String,
    pub agent: String,
    #[serde(flatten)]
    pub totals: Totals,
}

/// A day's and a team member's sums (team mode).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PersonDayStats {
    pub day: String,
    pub person: String,
    #[serde(flatten)]
    pub totals: Totals,
}

/// A model's sums (`sessions`: those that called it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelStats {
    pub model: String,
    #[serde(flatten)]
    pub totals: Totals,
}

/// Every session, the days, the models, and everything.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatsReport {
    /// Most recently active first.
    pub sessions: Vec<SessionStats>,
    /// By day (newest first), then agent.
    pub days: Vec<DayStats>,
    /// By day (newest first), then team member: sessions of team mode only.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub people: Vec<PersonDayStats>,
    /// By model, in name order.
    pub models: Vec<ModelStats>,
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
pub fn stats(traces: &[TraceCalls], since: Option<&str>) -> StatsReport {
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
        .map(|newest| session(newest, &proxied, &branches))
        .filter(|s| since.is_none_or(|day| s.day.as_str() >= day))
        .collect();
    sessions.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then_with(|| a.trace_id.cmp(&b.trace_id)));
    let mut days: BTreeMap<(String, String), Totals> = BTreeMap::new();
    let mut people: BTreeMap<(String, String), Totals> = BTreeMap::new();
    let mut models: BTreeMap<String, Totals> = BTreeMap::new();
    let mut total = Totals::default();
    for s in &sessions {
        days.entry((s.day.clone(), s.agent.clone())).or_default().add(&s.totals);
        if let Some(person) = &s.person {
            people.entry((s.day.clone(), person.clone())).or_default().add(&s.totals);
        }
        for (model, totals) in &s.models {
            models.entry(model.clone()).or_default().add(totals);
        }
        total.add(&s.totals);
    }
    let models = models.into_iter().map(|(model, totals)| ModelStats { model, totals }).collect();
    let mut days: Vec<DayStats> =
        days.into_iter().map(|((day, agent), totals)| DayStats { day, agent, totals }).collect();
    days.sort_by(|a, b| b.day.cmp(&a.day).then_with(|| a.agent.cmp(&b.agent)));
    let mut people: Vec<PersonDayStats> =
        people.into_iter().map(|((day, person), totals)| PersonDayStats { day, person, totals }).collect();
    people.sort_by(|a, b| b.day.cmp(&a.day).then_with(|| a.person.cmp(&b.person)));
    StatsReport { sessions, days, people, models, total, notes: Vec::new() }
}

/// The session whose newest trace is `newest`, its earlier parts followed back (each once), with
/// the sub-agents of its parts (`branches`: each caller's own).
fn session(
    newest: &TraceCalls,
    proxied: &BTreeMap<&str, &TraceCalls>,
    branches: &BTreeMap<&str, Vec<&TraceCalls>>,
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
    let calls: Vec<&CallRecord> = parts.iter().chain(&ran).flat_map(|part| &part.calls).collect();
    let totals = Totals::of_calls(calls.iter().copied());
    let mut models: BTreeMap<String, Vec<&CallRecord>> = BTreeMap::new();
    for call in &calls {
        models.entry(call.model.clone()).or_default().push(call);
    }
    let models = models.into_iter().map(|(model, calls)| (model, Totals::of_calls(calls))).collect();
    let first = parts[0];
    let agent = parts.iter().flat_map(|p| &p.calls).map(|c| c.agent.as_str()).find(|a| !a.is_empty());
    SessionStats {
        trace_id: newest.meta.trace_id.clone(),
        earlier: parts[..parts.len() - 1].iter().map(|p| p.meta.trace_id.clone()).collect(),
        branches: ran.iter().map(|b| b.meta.trace_id.clone()).collect(),
        agent: agent.unwrap_or_default().to_owned(),
        person: newest.meta.person.clone(),
        title: first.meta.mission.clone(),
        status: newest.meta.status.clone(),
        started_at: first.meta.created_at,
        updated_at: newest.meta.updated_at,
        day: utc_day(newest.meta.updated_at),
        totals,
        models,
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
    use crate::proxy::record::CallDollars;

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
            person: None,
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
        let report = stats(&traces, None);
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
            model: "claude-sonnet-4-5".into(),
            client_tokens: client,
            prompt_tokens: prompt,
            expected_cached_tokens: cached,
            side_call: side,
            status: Some(200),
            usage: Some(ProviderUsage { input_tokens: 100, cache_read_tokens: 300, ..ProviderUsage::default() }),
            dollars: Some(CallDollars {
                agent: client as f64 / 1e4,
                sent: prompt as f64 / 1e4,
                ..CallDollars::default()
            }),
            ..CallRecord::default()
        }
    }

    #[test]
    fn the_recorded_dollars_count_and_a_call_no_model_answered_costs_nothing() {
        let estimated = CallDollars { basis: CostBasis::Estimated, agent: 0.2, sent: 0.1, ..CallDollars::default() };
        let calls = [
            call(1000, 800, 0, false),
            CallRecord { dollars: Some(estimated), ..call(2000, 1000, 0, false) },
            CallRecord { status: Some(502), dollars: None, ..call(5000, 5000, 0, false) },
            CallRecord { status: None, dollars: None, ..call(5000, 5000, 0, false) },
            CallRecord { model: "house-model".into(), dollars: None, ..call(100, 100, 0, false) },
        ];
        let t = Totals::of_calls(&calls);
        assert_eq!((t.calls, t.client_tokens, t.prompt_tokens), (5, 3100, 1900));
        assert_eq!((t.estimated_calls, t.unpriced_calls, t.no_model_calls), (1, 1, 2));
        assert!((t.sent_usd - 0.18).abs() < 1e-9 && (t.agent_usd - 0.3).abs() < 1e-9, "{t:?}");
        assert_eq!(
            saving_words(&t),
            "$0.180 instead of $0.300: $0.120 saved (40%) [1 call estimated; 1 call without a price left out]"
        );
        let dearer = Totals { sent_usd: 0.0052, agent_usd: 0.005, calls: 1, ..Totals::default() };
        assert_eq!(saving_words(&dearer), "$0.0052 instead of $0.0050: $0.0002 more (−4%)");
        let lasting = Totals { ttl_saving_usd: 0.5, ..dearer };
        assert_eq!(
            saving_words(&lasting),
            "$0.0052 instead of $0.0050: $0.0002 more (−4%) [1-hour cache lifetimes saved $0.500 of it]"
        );
        let unreached = Totals::of_calls(&calls[2..4]);
        assert_eq!(saving_words(&unreached), "nothing spent yet");
    }

    /// The same cases as the dashboard's and the editor's tests: a saving reads the same
    /// everywhere.
    #[test]
    fn a_saving_reads_the_same_everywhere() {
        let cases = [
            (0.78, "78%"),
            (0.125, "13%"),
            (0.0, "0%"),
            (-0.004, "0%"),
            (-0.04, "−4%"),
            (-0.125, "−13%"),
            (1.0, "100%"),
        ];
        for (share, text) in cases {
            assert_eq!(percent_saved(share), text, "{share}");
        }
        let sums = [
            (0.0042, "$0.0042"),
            (0.139, "$0.139"),
            (12.4, "$12.40"),
            (-0.012, "$0.012"),
            (0.0, "$0.0000"),
            (9.9996, "$10.000"),
        ];
        for (value, text) in sums {
            assert_eq!(usd(value), text, "{value}");
        }
        let t = Totals { calls: 1, sent_usd: 12.4, agent_usd: 10.0, ..Totals::default() };
        assert_eq!(saving_brief(&t), "$2.400 more (−24%)");
        // Float sums of the same prices, a rounding error apart: no saving, and no cost either.
        let t = Totals { calls: 1, sent_usd: 0.058625000000000003, agent_usd: 0.058625, ..Totals::default() };
        assert_eq!(saving_brief(&t), "nothing saved");
    }

    #[test]
    fn sessions_days_models_and_totals_add_up() {
        const DAY: u64 = 86_400_000;
        let traces = vec![
            TraceCalls { meta: meta("a", 20_000 * DAY, None), calls: vec![call(1000, 1000, 0, false)] },
            TraceCalls {
                meta: meta("a-2", 20_000 * DAY + 5, Some("a")),
                calls: vec![
                    CallRecord { model: "gpt-4o".into(), ..call(3000, 2000, 1000, false) },
                    call(400, 400, 0, true),
                ],
            },
            TraceCalls { meta: meta("b", 20_001 * DAY, None), calls: vec![call(500, 500, 0, false)] },
            TraceCalls { meta: meta("own", 20_001 * DAY, None), calls: vec![] },
        ];
        let report = stats(&traces, None);
        let ids: Vec<(&str, &[String])> =
            report.sessions.iter().map(|s| (s.trace_id.as_str(), &s.earlier[..])).collect();
        assert_eq!(ids, [("b", &[][..]), ("a-2", &["a".to_owned()][..])]);
        let a = &report.sessions[1];
        assert_eq!((a.title.as_str(), a.day.as_str()), ("task of a", "2024-10-04"));
        assert_eq!(
            (a.totals.calls, a.totals.side_calls, a.totals.client_tokens, a.totals.prompt_tokens),
            (2, 1, 4400, 3400)
        );
        assert!((a.totals.sent_usd - 0.34).abs() < 1e-9 && (a.totals.agent_usd - 0.44).abs() < 1e-9, "{a:?}");
        assert_eq!(a.totals.cached_share(), Some(0.75));
        assert_eq!(report.days.iter().map(|d| d.day.as_str()).collect::<Vec<_>>(), ["2024-10-05", "2024-10-04"]);
        let models: Vec<(&str, usize, u64)> = report
            .models
            .iter()
            .map(|m| (m.model.as_str(), m.totals.calls + m.totals.side_calls, m.totals.client_tokens))
            .collect();
        assert_eq!(models, [("claude-sonnet-4-5", 3, 1900), ("gpt-4o", 1, 3000)]);
        assert_eq!(report.models.iter().map(|m| m.totals.sessions).collect::<Vec<_>>(), [2, 1]);
        assert_eq!((report.total.sessions, report.total.calls, report.total.client_tokens), (2, 3, 4900));
        let since = stats(&traces, Some("2024-10-05"));
        assert_eq!(since.sessions.len(), 1);
        assert_eq!(since.total.client_tokens, 500);
        // The serde form: a session's sums flattened beside its own fields, their ratios and words.
        let json = serde_json::to_value(a).unwrap();
        assert_eq!((json["trace_id"].as_str(), json["calls"].as_u64()), (Some("a-2"), Some(2)));
        assert_eq!(json["cached_share"].as_f64(), Some(0.75));
        assert_eq!(json["saving"].as_f64(), Some(a.totals.saving()));
        assert_eq!(json["saving_text"].as_str(), Some(saving_words(&a.totals).as_str()));
        assert_eq!(json["saving_lines"][2].as_str(), Some(format!("Cost: {}", saving_words(&a.totals)).as_str()));
        assert!((json["saving_usd"].as_f64().unwrap() - 0.1).abs() < 1e-9, "{json}");
        assert!(
            json["expected_cached_share"].is_f64() && json.get("totals").is_none() && json.get("models").is_none(),
            "{json}"
        );
    }

    #[test]
    fn team_sessions_are_summed_by_day_and_person() {
        const DAY: u64 = 86_400_000;
        let of = |id: &str, at: u64, person: Option<&str>| TraceCalls {
            meta: TraceMeta { person: person.map(str::to_owned), ..meta(id, at, None) },
            calls: vec![call(1000, 800, 0, false)],
        };
        let traces = vec![
            of("alice.a", 20_000 * DAY, Some("alice")),
            of("alice.b", 20_000 * DAY + 9, Some("alice")),
            of("bob.a", 20_000 * DAY, Some("bob")),
            of("bob.b", 20_001 * DAY, Some("bob")),
            of("solo", 20_001 * DAY, None),
        ];
        let report = stats(&traces, None);
        let people: Vec<(&str, &str, usize, u64)> = report
            .people
            .iter()
            .map(|p| (p.day.as_str(), p.person.as_str(), p.totals.sessions, p.totals.client_tokens))
            .collect();
        assert_eq!(
            people,
            [("2024-10-05", "bob", 1, 1000), ("2024-10-04", "alice", 2, 2000), ("2024-10-04", "bob", 1, 1000)]
        );
        assert!(stats(&traces[4..], None).people.is_empty(), "no team, no rows");
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["people"][0]["person"].as_str(), Some("bob"));
        assert_eq!(json["sessions"][0]["person"].as_str(), Some("bob"));
    }
}
