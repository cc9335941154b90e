//! A team's gateway under load (#49): `BENCH_CONVERSATIONS` scripted conversations (default
//! 200) at once, each `BENCH_CALLS` managed calls (default 5) of a growing tool-calling history,
//! through three native proxies on one PostgreSQL store behind HAProxy (round robin: a
//! conversation's calls land on different proxies), and the same requests sent directly to the
//! scripted upstream with the same concurrency. Prints the p50 and p99 of each and what the
//! gateway adds, and the database's statements per call (`pg_stat_statements`). Not a test: it
//! prints. `cargo bench -p workbench-cli --bench team_load` (PostgreSQL and HAProxy from
//! `.ci/setup test`).

#[path = "../tests/proxy_support/mod.rs"]
mod proxy_support;

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use proxy_support::gateway::Gateway;
use proxy_support::postgres::Postgres;
use proxy_support::{Proxy, Received, Reply, Upstream, anthropic_usage, scratch};
use serde_json::{Value, json};

const HEADERS: [(&str, &str); 2] = [("x-api-key", "sk-ant-bench"), ("anthropic-version", "2023-06-01")];

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Call `call` (from 0) of conversation `conversation`: the task, then `call` tool steps.
fn body(conversation: usize, call: usize) -> Vec<u8> {
    let mut messages = vec![json!({"role": "user", "content": format!("Fix bug {conversation}.")})];
    for step in 0..call {
        let id = format!("toolu_{conversation}_{step}");
        messages.push(json!({"role": "assistant", "content": [tool_call(conversation, step)]}));
        let output = format!("line {step} of conversation {conversation}\n").repeat(40);
        messages
            .push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": output}]}));
    }
    json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 1000,
        "system": "You are a coding agent.",
        "tools": [{"name": "Bash", "description": "Run a command", "input_schema": {"type": "object"}}],
        "metadata": {"user_id": json!({"session_id": format!("bench-{conversation}")}).to_string()},
        "messages": messages,
    })
    .to_string()
    .into_bytes()
}

/// A tool call of step `step` of conversation `conversation`, as the model makes it and the
/// agent sends it back.
fn tool_call(conversation: usize, step: usize) -> Value {
    let id = format!("toolu_{conversation}_{step}");
    json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": format!("cat part{step}.txt")}})
}

/// The scripted model: the conversation's next tool call, whole.
fn upstream() -> Upstream {
    Upstream::start(|request: &Received| {
        let body: Value = request.json();
        let user: Value =
            serde_json::from_str(body["metadata"]["user_id"].as_str().unwrap_or("{}")).unwrap_or_default();
        let conversation =
            user["session_id"].as_str().and_then(|s| s.strip_prefix("bench-")?.parse().ok()).unwrap_or(0);
        let step = body["messages"].as_array().map_or(0, Vec::len) / 2;
        let reply = json!({"id": format!("msg_{conversation}_{step}"), "type": "message", "role": "assistant", "content": [tool_call(conversation, step)], "stop_reason": "tool_use", "usage": anthropic_usage(2000, 0)});
        Reply::Json { status: 200, body: reply.to_string() }
    })
}

/// Every call of every conversation sent to `url` at once (one thread per conversation, its
/// calls in order); each call's time.
fn load(url: &str, conversations: usize, calls: usize) -> Vec<Duration> {
    let start = Arc::new(Barrier::new(conversations));
    let threads: Vec<_> = (0..conversations)
        .map(|c| {
            let (url, start) = (format!("{url}/v1/messages"), Arc::clone(&start));
            std::thread::spawn(move || {
                let agent = proxy_support::client();
                start.wait();
                (0..calls)
                    .map(|k| {
                        let mut request = agent.post(&url).header("content-type", "application/json");
                        for (name, value) in HEADERS {
                            request = request.header(name, value);
                        }
                        let began = Instant::now();
                        let mut response = request.send(&body(c, k)[..]).expect("an answer");
                        let text = response.body_mut().read_to_string().expect("a body");
                        assert_eq!(response.status().as_u16(), 200, "{text}");
                        began.elapsed()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    threads.into_iter().flat_map(|t| t.join().expect("a conversation")).collect()
}

fn percentile(times: &mut [Duration], p: f64) -> Duration {
    times.sort();
    times[((times.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The p50 and p99 of `times` against `direct`'s, as a line.
fn row(name: &str, direct: &mut [Duration], times: &mut [Duration]) -> String {
    let [(d50, t50), (d99, t99)] = [0.5, 0.99].map(|p| (percentile(direct, p), percentile(times, p)));
    format!(
        "  {name:<28} p50 {:>7.1} ms (+{:.1}), p99 {:>7.1} ms (+{:.1})",
        ms(t50),
        ms(t50.saturating_sub(d50)),
        ms(t99),
        ms(t99.saturating_sub(d99))
    )
}

fn main() {
    let (conversations, calls) = (setting("BENCH_CONVERSATIONS", 200), setting("BENCH_CALLS", 5));
    let dir = scratch("team-load");
    let upstream = upstream();
    let mut direct = load(&upstream.url, conversations, calls);
    // One proxy on a folder store, for comparison.
    std::fs::create_dir_all(dir.join("alone")).unwrap();
    let alone = Proxy::start(&dir.join("alone"), &["--upstream", &upstream.url]);
    let mut one = load(&alone.url, conversations, calls);
    let (status, log) = alone.stop();
    assert!(status.success(), "{log}");
    let database = Postgres::start();
    let gateway = Gateway::start(&dir, &database.url(), 3, &["--upstream", &upstream.url]);
    let before = database.statements();
    let mut through = load(&gateway.url, conversations, calls);
    let statements = database.statements() - before;
    let (statuses, log) = gateway.stop();
    assert!(statuses.iter().all(|s| s.success()), "{log}");
    println!("{conversations} conversations at once × {calls} managed calls (2 cores; the upstream answers at once):");
    println!(
        "  {:<28} p50 {:>7.1} ms, p99 {:>7.1} ms",
        "direct",
        ms(percentile(&mut direct, 0.5)),
        ms(percentile(&mut direct, 0.99))
    );
    println!("{}", row("one proxy, folder store", &mut direct, &mut one));
    println!("{}", row("3 proxies, PostgreSQL, HAProxy", &mut direct, &mut through));
    let n = through.len();
    println!("  database: {statements} statements for {n} calls, {:.1} per call", statements as f64 / n as f64);
    let _ = std::fs::remove_dir_all(&dir);
}
