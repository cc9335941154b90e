//! The cache's lifetime chosen by cost (issue #48, item 4): a session through the proxy's core
//! whose calls come 10 minutes apart gets 1-hour breakpoints, one whose calls come 10 seconds
//! apart keeps the 5-minute default; the breakpoints stay at most four, in the order the
//! provider requires, and a lifetime the agent set is kept.

use serde_json::{Value, json};

use context_workbench::config::Config;
use context_workbench::engine::Engine;
use context_workbench::host::block_on;
use context_workbench::proxy::*;
use context_workbench::tokens::{Encoding, TokenCounter};
use context_workbench_testing::TestHost;

const SECOND: u64 = 1_000;
const MINUTE: u64 = 60 * SECOND;

/// An Anthropic request of `turns` tool turns, its system block marked with `system_mark`.
fn request(turns: usize, system_mark: Value, tools: Value) -> Value {
    let mut messages = vec![json!({"role": "user", "content": [{"type": "text", "text": "fix the failing test"}]})];
    for n in 0..turns {
        messages.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": format!("Step {n}.")},
            {"type": "tool_use", "id": format!("toolu_{n}"), "name": "Bash", "input": {"command": format!("cargo test {n}")}},
        ]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("toolu_{n}"), "content": format!("test {n} ... ok\n").repeat(40)},
        ]}));
    }
    json!({
        "model": "claude-sonnet-4-5",
        "system": [{"type": "text", "text": "You are a coding agent. ".repeat(200), "cache_control": system_mark}],
        "tools": tools,
        "messages": messages,
        "max_tokens": 4096,
    })
}

fn bash_tool() -> Value {
    json!([{"name": "Bash", "description": "Run a command", "input_schema": {"type": "object"}}])
}

/// The upstream bodies and call records of a session of `calls` calls, `gap_ms` apart.
fn session(calls: usize, gap_ms: u64, system_mark: Value, tools: Value) -> Vec<(Value, Value)> {
    let (engine, _) =
        block_on(Engine::open(TestHost::default(), session_config(Config::default(), false), Some("s1"))).unwrap();
    let mut session = ProxySession::new(engine, Format::Anthropic).unwrap();
    let counter = TokenCounter::new(Encoding::O200kBase);
    (0..calls)
        .map(|n| {
            if n > 0 {
                session.engine().host().advance_clock(gap_ms);
            }
            let body = request(n, system_mark.clone(), tools.clone()).to_string();
            let prepared =
                block_on(session.prepare(&ClientRequest::parse(Format::Anthropic, body.as_bytes(), &counter).unwrap()));
            let sent = serde_json::from_str(prepared.body.as_deref().expect("a managed call")).unwrap();
            (sent, serde_json::to_value(&prepared.record).unwrap())
        })
        .collect()
}

/// Every `cache_control` of `body`, in the order the provider reads them: tools, system, messages.
fn marks(body: &Value) -> Vec<Value> {
    fn walk(value: &Value, out: &mut Vec<Value>) {
        match value {
            Value::Object(fields) => {
                if let Some(mark) = fields.get("cache_control") {
                    out.push(mark.clone());
                }
                fields.iter().filter(|(k, _)| *k != "cache_control").for_each(|(_, v)| walk(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for field in ["tools", "system", "messages"] {
        walk(&body[field], &mut out);
    }
    out
}

/// A mark's lifetime as the provider reads it (no `ttl`: five minutes).
fn ttl(mark: &Value) -> &str {
    mark.get("ttl").and_then(Value::as_str).unwrap_or("5m")
}

/// At most four breakpoints, and no 1-hour one after a 5-minute one.
fn assert_valid(body: &Value) {
    let marks = marks(body);
    let ttls: Vec<&str> = marks.iter().map(ttl).collect();
    assert!(ttls.len() <= MAX_BREAKPOINTS, "{ttls:?}");
    let first_short = ttls.iter().position(|&t| t == "5m").unwrap_or(ttls.len());
    assert!(ttls[first_short..].iter().all(|&t| t == "5m"), "a 1-hour breakpoint after a 5-minute one: {ttls:?}");
}

fn plain() -> Value {
    json!({"type": "ephemeral"})
}

#[test]
fn ten_minute_gaps_get_one_hour_breakpoints_and_say_what_they_saved() {
    let calls = session(6, 10 * MINUTE, plain(), bash_tool());
    let (body, record) = calls.last().unwrap();
    let marks = marks(body);
    assert!(!marks.is_empty());
    assert!(marks.iter().all(|m| ttl(m) == "1h"), "{marks:?}");
    assert_valid(body);
    assert_eq!(record["cost"]["cache_ttl"], "1h");
    // Each 10-minute gap lapses a 5-minute cache: the prefix would have been written again.
    let saving = record["cost"]["ttl_saving_total"].as_f64().unwrap();
    assert!(saving > 0.0, "{saving}");
    // The agent's own prompt, cached for five minutes, lapses too: nothing of it is served.
    assert_eq!(record["cost"]["agent_cached_tokens"], 0);
}

#[test]
fn ten_second_gaps_keep_the_five_minute_default() {
    let calls = session(6, 10 * SECOND, plain(), bash_tool());
    for (body, record) in &calls {
        assert!(marks(body).iter().all(|m| m == &plain()), "{:?}", marks(body));
        assert_eq!(record["cost"]["cache_ttl"], "5m");
        assert_eq!(record["cost"]["ttl_saving_total"], 0.0);
    }
    let (_, last) = calls.last().unwrap();
    assert!(last["cost"]["agent_cached_tokens"].as_u64().unwrap() > 0, "a live 5-minute cache serves the prefix");
}

/// The agent's tool breakpoints (no lifetime set) share the room with the engine's and take the
/// engine's 1-hour choice, so no 1-hour breakpoint follows a 5-minute one.
#[test]
fn breakpoints_stay_four_at_most_and_in_the_providers_order() {
    let tools = json!([
        {"name": "A", "input_schema": {}, "cache_control": {"type": "ephemeral"}},
        {"name": "B", "input_schema": {}, "cache_control": {"type": "ephemeral"}},
        {"name": "Bash", "input_schema": {}, "cache_control": {"type": "ephemeral"}},
    ]);
    for gap in [10 * SECOND, 10 * MINUTE] {
        for (body, _) in session(5, gap, plain(), tools.clone()) {
            assert_valid(&body);
        }
    }
    // Claude Code's 1-hour system breakpoint after tool breakpoints left at the default.
    let one_hour = json!({"type": "ephemeral", "ttl": "1h"});
    for (body, _) in session(3, 10 * SECOND, one_hour, tools) {
        assert_eq!(marks(&body).len(), MAX_BREAKPOINTS);
        assert_valid(&body);
    }
}

#[test]
fn a_lifetime_the_agent_set_is_kept_and_priced() {
    // 10-minute gaps would choose an hour: the agent's explicit five minutes stay, and a tool
    // breakpoint it left unset before them stays five minutes too.
    let five = json!({"type": "ephemeral", "ttl": "5m"});
    let tools = json!([{"name": "Bash", "input_schema": {}, "cache_control": {"type": "ephemeral"}}]);
    let calls = session(4, 10 * MINUTE, five.clone(), tools);
    // Written for five minutes, each 10-minute gap lapses the prefix: it costs as much as
    // writing the whole prompt, and the agent's own prompt (the same lifetime) the same.
    let (_, last) = calls.last().unwrap();
    let cost = &last["cost"];
    assert_eq!(cost["agent_cached_tokens"], 0, "{cost}");
    let written = last["prompt_tokens"].as_f64().unwrap() * Config::default().prices.cache_write;
    assert!((cost["sent_cost"].as_f64().unwrap() - written).abs() < 1e-6, "{cost}");
    for (body, record) in &calls {
        let marks = marks(body);
        assert_eq!(marks[0], plain());
        assert!(marks[1..].iter().all(|m| m == &five), "{marks:?}");
        assert_eq!(record["cost"]["cache_ttl"], "5m");
    }
    // 10-second gaps would choose five minutes: the agent's hour stays on every breakpoint.
    let one_hour = json!({"type": "ephemeral", "ttl": "1h"});
    for (body, record) in session(4, 10 * SECOND, one_hour.clone(), bash_tool()) {
        assert!(marks(&body).iter().all(|m| m == &one_hour), "{:?}", marks(&body));
        assert_eq!(record["cost"]["cache_ttl"], "1h");
    }
}
