//! `workbench stats [STORE] [--since DAY] [--json]`: what the proxy's sessions under a trace
//! root cost and saved, a row per session (a conversation the agent compacted itself is one),
//! then per day and agent (and person, in team mode), then in all. The figures are the engine's (`proxy::stats`); this
//! reads the store and prints. Read-only.

use std::process::ExitCode;

use context_workbench::goals::is_utc_day;
use context_workbench::proxy::stats::{StatsReport, Totals, TraceCalls, read_traces, saving_words, stats};
use context_workbench::store::TraceStore;
use workbench_cli::native::{NativeHost, StoreFs, shown_store};

pub fn run(root: &str, since: Option<&str>, json: bool) -> ExitCode {
    if let Some(day) = since.filter(|d| !is_utc_day(d)) {
        eprintln!("workbench: stats: --since {day}: expected a day as YYYY-MM-DD (UTC)");
        return ExitCode::from(2);
    }
    let traces = match pollster::block_on(read(root)) {
        Ok(traces) => traces,
        Err(message) => {
            eprintln!("workbench: stats: {message}");
            return ExitCode::from(2);
        }
    };
    let report = stats(&traces, since);
    if json {
        println!("{}", serde_json::to_string_pretty(&report).unwrap_or_default());
    } else if let Some(day) = since.filter(|_| report.sessions.is_empty()) {
        print!("{}", none_since(&stats(&traces, None), root, day));
    } else {
        print!("{}", table(&report, root));
    }
    ExitCode::SUCCESS
}

/// Every trace under `root` with its call records; what cannot be read is said on stderr.
async fn read(root: &str) -> Result<Vec<TraceCalls>, String> {
    let host = NativeHost::new(StoreFs::open_root(root)?, None);
    let store = TraceStore::new(&host, ".").map_err(|e| e.to_string())?;
    let (traces, notes) = read_traces(&store).await.map_err(|e| e.to_string())?;
    notes.iter().for_each(|note| eprintln!("workbench: stats: note: {note}"));
    Ok(traces)
}

/// The terminal's table.
fn table(report: &StatsReport, root: &str) -> String {
    let mut out = String::new();
    if report.sessions.is_empty() {
        out.push_str(&format!(
            "No proxied session in {}. Start `workbench proxy` and point your agent at it.\n",
            shown_store(root)
        ));
        return out;
    }
    out.push_str(&format!(
        "Sessions in {} (USD at each model's list prices: what was sent instead of the agent's own requests):\n",
        shown_store(root)
    ));
    out.push_str(&row("day", "agent", "title", "status", FIGURES));
    for s in &report.sessions {
        let agent = if s.agent.is_empty() { "an agent" } else { &s.agent };
        out.push_str(&row(&s.day, agent, &s.title, &s.status, &figures(&s.totals)));
    }
    out.push_str("By day and agent:\n");
    for d in &report.days {
        out.push_str(&row(&d.day, &d.agent, &sessions(&d.totals), "", &figures(&d.totals)));
    }
    if !report.people.is_empty() {
        out.push_str("By day and person (team mode):\n");
        for p in &report.people {
            out.push_str(&row(&p.day, &p.person, &sessions(&p.totals), "", &figures(&p.totals)));
        }
    }
    out.push_str("By model:\n");
    for m in &report.models {
        out.push_str(&row("", &m.model, &sessions(&m.totals), "", &figures(&m.totals)));
    }
    out.push_str(&row("all", "", &sessions(&report.total), "", &figures(&report.total)));
    out
}

/// What `--since DAY` found nothing after: the sessions before it, or that there is none at all.
fn none_since(all: &StatsReport, root: &str, day: &str) -> String {
    let Some(last) = all.sessions.first() else { return format!("No proxied session in {}.\n", shown_store(root)) };
    let n = all.sessions.len();
    format!(
        "No proxied session in {} since {day} (UTC): {n} session{} before, the last active on {}.\n",
        shown_store(root),
        if n == 1 { "" } else { "s" },
        last.day
    )
}

/// One line of the table.
fn row(day: &str, agent: &str, title: &str, status: &str, figures: &str) -> String {
    format!("  {day:<10}  {:<20}  {:<40}  {status:<11}  {figures}\n", clip(agent, 20), clip(title, 40))
}

fn sessions(t: &Totals) -> String {
    format!("{} session{}", t.sessions, if t.sessions == 1 { "" } else { "s" })
}

const FIGURES: &str = "calls (+side)  agent sent → upstream  cached  cost";

fn figures(t: &Totals) -> String {
    let calls = if t.side_calls > 0 { format!("{} (+{})", t.calls, t.side_calls) } else { t.calls.to_string() };
    let tokens = format!("{} → {}", grouped(t.client_tokens), grouped(t.prompt_tokens));
    let cached = t.cached_share().map_or("-".to_owned(), |s| format!("{:.0}%", s * 100.0));
    format!("{calls:<13}  {tokens:<21}  {cached:>6}  {}", saving_words(t))
}

fn grouped(n: u64) -> String {
    context_workbench::prompt::template::thousands(n)
}

/// `text` on one line, at most `max` characters.
fn clip(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max {
        return line;
    }
    let mut cut: String = line.chars().take(max - 1).collect();
    cut.push('…');
    cut
}
