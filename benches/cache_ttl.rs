//! The cache's lifetime chosen by cost (issue #48, item 4): two synthetic Claude-Code-like
//! sessions, one with 10 minutes between calls (a user reading, a long test run) and one with 10
//! seconds, replayed through the proxy's core three times each: breakpoints written for 5
//! minutes only, for 1 hour only (both as if the agent had set the `ttl`), and for the lifetime
//! the engine chooses. Prints what the prompts sent cost, as the engine's ledger prices them, in
//! dollars. Not a test: it prints the numbers of one run (they are deterministic).
//!
//! `cargo bench --bench cache_ttl`. Dollars at `BENCH_INPUT_PRICE` (default 3.0) per million
//! uncached input tokens, Claude Sonnet 4.5's; the ledger's prices are relative to it (cache
//! read 0.1, 5-minute write 1.25, 1-hour write 2).

use serde_json::{Value, json};

use context_workbench::config::Config;
use context_workbench::engine::Engine;
use context_workbench::host::block_on;
use context_workbench::proxy::{ClientRequest, Format, ProxySession, session_config};
use context_workbench::tokens::{Encoding, TokenCounter};
use context_workbench_testing::TestHost;

/// Calls in each session.
const CALLS: usize = 40;

fn main() {
    let input_price: f64 = std::env::var("BENCH_INPUT_PRICE").ok().and_then(|p| p.parse().ok()).unwrap_or(3.0);
    let dollars = |units: f64| units * input_price / 1e6;
    println!("cache lifetime by cost: {CALLS} calls a session, ${input_price}/M uncached input tokens");
    println!(
        "{:<16} {:>12} {:>12} {:>12} {:>10} {:>14}",
        "gaps", "5m only", "1h only", "chosen", "1h calls", "saved vs 5m"
    );
    for (name, gap_ms) in [("10 minutes", 10 * 60_000), ("10 seconds", 10_000)] {
        let five = replay(gap_ms, Some("5m"));
        let hour = replay(gap_ms, Some("1h"));
        let chosen = replay(gap_ms, None);
        let hour_calls = chosen.ttls.iter().filter(|t| *t == "1h").count();
        println!(
            "{name:<16} {:>12} {:>12} {:>12} {:>7}/{CALLS} {:>14}",
            format!("${:.4}", dollars(five.sent_total)),
            format!("${:.4}", dollars(hour.sent_total)),
            format!("${:.4}", dollars(chosen.sent_total)),
            hour_calls,
            format!("${:.4}", dollars(chosen.ttl_saving_total)),
        );
    }
}

/// What one session's prompts cost, and the lifetime of each call.
struct Run {
    sent_total: f64,
    ttl_saving_total: f64,
    ttls: Vec<String>,
}

/// Replay the session with `gap_ms` between calls, its breakpoints' lifetime set by the agent
/// (`ttl`) or left to the engine.
fn replay(gap_ms: u64, ttl: Option<&str>) -> Run {
    let config = session_config(Config::default(), false);
    let (engine, _) = block_on(Engine::open(TestHost::default(), config, Some("bench"))).unwrap();
    let mut session = ProxySession::new(engine, Format::Anthropic).unwrap();
    let counter = TokenCounter::new(Encoding::O200kBase);
    let mut mark = json!({"type": "ephemeral"});
    if let Some(ttl) = ttl {
        mark["ttl"] = json!(ttl);
    }
    let mut run = Run { sent_total: 0.0, ttl_saving_total: 0.0, ttls: Vec::new() };
    for n in 0..CALLS {
        if n > 0 {
            session.engine().host().advance_clock(gap_ms);
        }
        let body = request(n, &mark).to_string();
        let request = ClientRequest::parse(Format::Anthropic, body.as_bytes(), &counter).unwrap();
        let prepared = block_on(session.prepare(&request));
        let cost = serde_json::to_value(prepared.record.cost.expect("a managed call")).unwrap();
        run.sent_total = cost["sent_total"].as_f64().unwrap();
        run.ttl_saving_total = cost["ttl_saving_total"].as_f64().unwrap();
        run.ttls.push(cost["cache_ttl"].as_str().unwrap().to_owned());
    }
    run
}

/// Claude Code's shape: a long system prompt (about 12,000 tokens) with one breakpoint, then
/// the user's request and `turns` tool turns of about 500 tokens each.
fn request(turns: usize, mark: &Value) -> Value {
    let mut messages = vec![json!({"role": "user", "content": [{"type": "text", "text": "fix the failing test"}]})];
    for n in 0..turns {
        messages.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": format!("Step {n}: run the tests again.")},
            {"type": "tool_use", "id": format!("toolu_{n}"), "name": "Bash", "input": {"command": format!("cargo test case_{n}")}},
        ]}));
        let output: String = (0..60).map(|i| format!("test case_{n}::part_{i} ... ok\n")).collect();
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("toolu_{n}"), "content": output},
        ]}));
    }
    let system: String = (0..1_000).map(|i| format!("Rule {i}: keep the change small. ")).collect();
    json!({
        "model": "claude-sonnet-4-5",
        "system": [{"type": "text", "text": system, "cache_control": mark}],
        "tools": [{"name": "Bash", "description": "Run a command", "input_schema": {"type": "object"}}],
        "messages": messages,
        "max_tokens": 4096,
    })
}
