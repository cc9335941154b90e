//! A proxied session's status as it is read (stats, the dashboard's list and trace, the VS Code
//! list): `running` while the agent works; `finished` once its last reply ended its turn (it
//! called no tool) and no call followed for `IDLE_MS`, with no timer and no proxy stop.
#![cfg(not(target_arch = "wasm32"))]

use serde_json::{Value, json};

use context_workbench::config::Config;
use context_workbench::engine::Engine;
use context_workbench::host::block_on;
use context_workbench::model::{ContentPart, ToolCall};
use context_workbench::proxy::stats::{read_traces, stats};
use context_workbench::proxy::*;
use context_workbench::store::{IDLE_MS, LiveTraces, TraceStore};
use context_workbench::tokens::{Encoding, TokenCounter};
use context_workbench_testing::TestHost;

/// A Claude Code request whose history is the user's task, `turns` finished tool calls, then
/// `more` messages.
fn request(turns: usize, more: &[Value]) -> ClientRequest {
    let mut messages = vec![json!({"role": "user", "content": [{"type": "text", "text": "fix the test"}]})];
    for n in 0..turns {
        messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": format!("toolu_{n}"), "name": "Bash", "input": {"command": "make test"}}]}));
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{n}"), "content": "ok"}]}));
    }
    messages.extend_from_slice(more);
    let body = json!({
        "model": "claude-opus-5-5",
        "messages": Value::Array(messages),
        "tools": [{"name": "Bash", "description": "Run a command", "input_schema": {"type": "object"}}],
        "max_tokens": 1000,
        "stream": true,
    });
    ClientRequest::parse(Format::Anthropic, body.to_string().as_bytes(), &TokenCounter::new(Encoding::O200kBase))
        .unwrap()
}

fn reply(parts: Vec<ContentPart>) -> ReplyOutcome {
    ReplyOutcome { completed: true, parts, ..ReplyOutcome::default() }
}

/// The status each reader shows: the store's list, the trace's detail, the live list, stats.
fn statuses(host: &TestHost) -> [String; 4] {
    let store = TraceStore::new(host, ".trace").unwrap();
    let listed = block_on(store.list_traces()).unwrap().traces[0].status.clone();
    let detail = block_on(store.trace("s1")).unwrap().trace.status;
    let live = block_on(LiveTraces::new(host, ".trace").unwrap().summary("s1", None)).unwrap().unwrap().meta.status;
    let (traces, _) = block_on(read_traces(&store)).unwrap();
    let report = stats(&traces, None);
    [listed, detail, live, report.sessions[0].status.clone()]
}

fn all(status: &str) -> [String; 4] {
    [(); 4].map(|()| status.to_owned())
}

#[test]
fn a_session_whose_agent_ended_its_turn_is_finished_once_no_call_follows_for_a_while() {
    let (engine, _) =
        block_on(Engine::open(TestHost::default(), session_config(Config::default(), false), Some("s1"))).unwrap();
    let mut session = ProxySession::new(engine, Format::Anthropic).unwrap();

    block_on(session.prepare(&request(0, &[])));
    let call = ToolCall { id: "toolu_0".into(), name: "Bash".into(), arguments: r#"{"command":"make test"}"#.into() };
    block_on(session.finish(200, reply(vec![ContentPart::ToolCall(call)])));
    session.engine().host().advance_clock(IDLE_MS);
    assert_eq!(statuses(session.engine().host()), all("running"), "the agent is running the tool it called");

    block_on(session.prepare(&request(1, &[])));
    block_on(session.finish(200, reply(vec![ContentPart::Text { text: "Fixed.".into() }])));
    assert_eq!(statuses(session.engine().host()), all("running"), "its user may answer");
    let live = LiveTraces::new(session.engine().host(), ".trace").unwrap();
    let stamp = block_on(live.summary("s1", None)).unwrap().unwrap().stamp;
    session.engine().host().advance_clock(IDLE_MS - 1);
    assert_eq!(statuses(session.engine().host()), all("running"));
    session.engine().host().advance_clock(1);
    assert_eq!(statuses(session.engine().host()), all("finished"));
    assert!(block_on(live.summary("s1", Some(&stamp))).unwrap().is_some(), "the live list sees it change");

    // The user writes again: the session runs again.
    let more = [
        json!({"role": "assistant", "content": [{"type": "text", "text": "Fixed."}]}),
        json!({"role": "user", "content": [{"type": "text", "text": "now the docs"}]}),
    ];
    block_on(session.prepare(&request(1, &more)));
    block_on(session.save());
    assert_eq!(statuses(session.engine().host()), all("running"));
}
