//! `--otlp`: the proxy's spans read back from a real OpenTelemetry receiver, Arize Phoenix
//! (pinned in `tests/clients/phoenix.txt`, installed by `.ci/setup`), started by the test; and
//! a collector down, refusing (500) or silent, which neither delays nor fails a reply and is
//! counted at stop. Every case runs against both shells.
#![cfg(not(target_arch = "wasm32"))]

#[macro_use]
mod proxy_support;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use proxy_support::{
    Build, PATIENCE, Proxy, Received, Reply, Upstream, anthropic_events, calls, get, post, scratch, step_of, trace_dirs,
};
use serde_json::{Value, json};

const MODEL: &str = "claude-sonnet-4-5-20250929";

fn headers() -> Vec<(&'static str, &'static str)> {
    vec![("x-api-key", "sk-ant-test"), ("anthropic-version", "2023-06-01")]
}

/// An upstream reporting usage with cache fields: 1000 new, 4000 read, 200 written, 20 out.
fn scripted() -> Upstream {
    Upstream::start(|request: &Received| {
        let n = step_of(&request.json(), "toolu_o");
        let blocks = [
            json!({"type": "text", "text": format!("Step {n}.")}),
            json!({"type": "tool_use", "id": format!("toolu_o{n}"), "name": "Bash", "input": {"command": format!("ls {n}")}}),
        ];
        let usage = json!({"input_tokens": 1000, "cache_read_input_tokens": 4000, "cache_creation_input_tokens": 200, "output_tokens": 1});
        Reply::Events { events: anthropic_events(&format!("msg_{n}"), &blocks, usage), cut_after: None }
    })
}

/// The request of step `steps` of the conversation `session`.
fn request(session: &str, steps: usize) -> Vec<u8> {
    let mut messages =
        vec![json!({"role": "user", "content": [{"type": "text", "text": format!("Task of {session}")}]})];
    for n in 0..steps {
        messages.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": format!("Step {n}.")},
            {"type": "tool_use", "id": format!("toolu_o{n}"), "name": "Bash", "input": {"command": format!("ls {n}")}},
        ]}));
        let output = format!("file {n}\n").repeat(50);
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_o{n}"), "content": output}]}));
    }
    json!({
        "model": MODEL,
        "messages": messages,
        "system": [{"type": "text", "text": "You are a coding agent."}],
        "tools": [{"name": "Bash", "description": "Run a shell command", "input_schema": {"type": "object"}}],
        "metadata": {"user_id": json!({"device_id": "d", "session_id": session}).to_string()},
        "max_tokens": 1000,
        "stream": true,
    })
    .to_string()
    .into_bytes()
}

/// `steps` calls of the conversation `session` through `proxy`, each answered well: the
/// longest one took.
fn converse(proxy: &Proxy, session: &str, steps: usize) -> Duration {
    let mut longest = Duration::ZERO;
    for step in 0..steps {
        let started = Instant::now();
        let (status, _, body) = post(&format!("{}/v1/messages", proxy.url), &request(session, step), &headers());
        longest = longest.max(started.elapsed());
        assert_eq!(status, 200, "{body}\n{}", proxy.log());
        assert!(body.contains("message_stop"), "{body}");
    }
    longest
}

/// A free port on 127.0.0.1 (nothing listens there once this returns).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Arize Phoenix on free ports, its data in `dir`; killed when dropped.
struct Phoenix {
    child: Child,
    url: String,
}

impl Phoenix {
    fn start(dir: &Path) -> Phoenix {
        let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clients/.venv-phoenix/bin/phoenix");
        assert!(bin.exists(), "Arize Phoenix is not installed: run `bash .ci/setup`");
        let port = free_port();
        let child = Command::new(bin)
            .arg("serve")
            .env("PHOENIX_WORKING_DIR", dir)
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", free_port().to_string())
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("phoenix.log")).unwrap())
            .spawn()
            .expect("start phoenix");
        let phoenix = Phoenix { child, url: format!("http://127.0.0.1:{port}") };
        let started = Instant::now();
        while !ureq_ok(&format!("{}/healthz", phoenix.url)) {
            let log = std::fs::read_to_string(dir.join("phoenix.log")).unwrap_or_default();
            assert!(started.elapsed() < PATIENCE, "Phoenix did not start:\n{log}");
            std::thread::sleep(Duration::from_millis(200));
        }
        phoenix
    }

    /// The spans Phoenix holds, once there are `count` of them, in OTLP's JSON form.
    fn spans(&self, count: usize) -> Vec<Value> {
        let started = Instant::now();
        loop {
            let (status, _, body) = get(&format!("{}/v1/projects/default/spans/otlpv1?limit=1000", self.url), &[]);
            let spans = serde_json::from_str::<Value>(&body).ok().and_then(|v| v["data"].as_array().cloned());
            let spans = if status == 200 { spans.unwrap_or_default() } else { Vec::new() };
            if spans.len() >= count {
                return spans;
            }
            assert!(started.elapsed() < PATIENCE, "Phoenix has {} spans, not {count}: {status} {body}", spans.len());
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ureq_ok(url: &str) -> bool {
    proxy_support::client().get(url).call().is_ok_and(|r| r.status().as_u16() == 200)
}

/// A span's attributes, their OTLP `AnyValue`s by key.
fn attributes(span: &Value) -> BTreeMap<String, Value> {
    let list = span["attributes"].as_array().cloned().unwrap_or_default();
    list.into_iter().map(|kv| (kv["key"].as_str().unwrap_or_default().to_owned(), kv["value"].clone())).collect()
}

/// An integer attribute (OTLP's JSON writes `intValue` as a string or a number).
fn int(attributes: &BTreeMap<String, Value>, key: &str) -> Option<i64> {
    let value = &attributes.get(key)?["int_value"];
    let value = if value.is_null() { &attributes.get(key)?["intValue"] } else { value };
    value.as_i64().or_else(|| value.as_str()?.parse().ok())
}

fn text(attributes: &BTreeMap<String, Value>, key: &str) -> Option<String> {
    let value = attributes.get(key)?;
    value["string_value"].as_str().or_else(|| value["stringValue"].as_str()).map(str::to_owned)
}

fn boolean(attributes: &BTreeMap<String, Value>, key: &str) -> Option<bool> {
    let value = attributes.get(key)?;
    value["bool_value"].as_bool().or_else(|| value["boolValue"].as_bool())
}

fn field<'a>(span: &'a Value, snake: &str, camel: &str) -> &'a Value {
    if span[snake].is_null() { &span[camel] } else { &span[snake] }
}

fn spans_arrive_with_the_genai_and_engine_attributes_one_trace_per_session(build: Build) {
    let dir = scratch("otlp");
    let phoenix = Phoenix::start(&dir);
    let upstream = scripted();
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url, "--otlp", &phoenix.url]);
    converse(&proxy, "first", 3);
    converse(&proxy, "second", 2);
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    assert!(log.contains(&format!("OpenTelemetry: 5 of 5 spans exported to {}/v1/traces", phoenix.url)), "{log}");

    let spans = phoenix.spans(5);
    assert_eq!(spans.len(), 5, "{spans:#?}");
    let store = dir.join(".trace");
    let sessions = trace_dirs(&store);
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    let mut traces: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for span in &spans {
        let a = attributes(span);
        assert_eq!(span["name"], json!(format!("chat {MODEL}")), "{span:#}");
        assert_eq!(text(&a, "gen_ai.request.model").as_deref(), Some(MODEL));
        assert_eq!(text(&a, "gen_ai.system").as_deref(), Some("anthropic"));
        assert_eq!(text(&a, "gen_ai.operation.name").as_deref(), Some("chat"));
        assert_eq!(int(&a, "gen_ai.usage.input_tokens"), Some(5200), "{a:#?}");
        assert_eq!(int(&a, "gen_ai.usage.output_tokens"), Some(20));
        assert_eq!(int(&a, "gen_ai.usage.cache_read.input_tokens"), Some(4000));
        assert_eq!(int(&a, "gen_ai.usage.cache_creation.input_tokens"), Some(200));
        assert_eq!(boolean(&a, "workbench.managed"), Some(true));
        // The engine's own figures are the session's record of the same call.
        let session = text(&a, "gen_ai.conversation.id").expect("the session");
        let call = int(&a, "workbench.call").expect("the call's number");
        let record = calls(&store, &session).into_iter().find(|c| c["call"] == json!(call)).expect("its record");
        assert_eq!(int(&a, "workbench.agent_tokens"), record["client_tokens"].as_i64(), "{record}");
        assert_eq!(int(&a, "workbench.sent_tokens"), record["prompt_tokens"].as_i64(), "{record}");
        // Its dollars, as calls.jsonl holds them.
        let usd = |key: &str| a.get(key).and_then(|v| v["double_value"].as_f64().or_else(|| v["doubleValue"].as_f64()));
        assert_eq!(usd("workbench.usd.sent"), record["dollars"]["sent"].as_f64(), "{a:#?}");
        assert_eq!(usd("workbench.usd.agent"), record["dollars"]["agent"].as_f64(), "{a:#?}");
        assert_eq!(text(&a, "workbench.usd.basis").as_deref(), record["dollars"]["basis"].as_str());
        let start = field(span, "start_time_unix_nano", "startTimeUnixNano");
        let start = start.as_u64().or_else(|| start.as_str()?.parse().ok()).expect("a start");
        // Phoenix keeps times as floating-point seconds: within a millisecond.
        let at_ms = record["at_ms"].as_u64().unwrap();
        assert!((start / 1_000_000).abs_diff(at_ms) <= 1, "the span starts when the call was made: {start} {at_ms}");
        let trace = field(span, "trace_id", "traceId").as_str().expect("a trace id").to_owned();
        traces.entry(trace).or_default().push(session);
    }
    // One trace per session, and each session's calls in its own.
    assert_eq!(traces.len(), 2, "{traces:?}");
    for sessions_of_trace in traces.values() {
        assert!(sessions_of_trace.windows(2).all(|w| w[0] == w[1]), "{traces:?}");
    }
    let mut counts: Vec<usize> = traces.values().map(Vec::len).collect();
    counts.sort();
    assert_eq!(counts, [2, 3]);
}

fn a_collector_down_refusing_or_silent_delays_no_reply_and_the_drop_is_counted(build: Build) {
    let refusing = Upstream::start(|_: &Received| Reply::Json { status: 500, body: "{}".into() });
    let silent = Upstream::start(|_: &Received| Reply::Silent);
    let down = format!("http://127.0.0.1:{}", free_port());
    for (collector, what) in [(down, "down"), (refusing.url.clone(), "500"), (silent.url.clone(), "silent")] {
        let dir = scratch("otlp-away");
        let upstream = scripted();
        let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url, "--otlp", &collector]);
        // A call of a small session takes milliseconds here; an exporter in the way would add
        // its 5-second timeout to one at least.
        let longest = converse(&proxy, "away", 3);
        assert!(longest < Duration::from_secs(4), "collector {what}: a call took {longest:?}");
        let (status, log) = proxy.stop();
        assert!(status.success(), "collector {what}: {log}");
        let line = format!("OpenTelemetry: 0 of 3 spans exported to {collector}/v1/traces, 3 dropped");
        assert!(log.contains(&line), "collector {what}: {log}");
    }
}

both_shells!(
    spans_arrive_with_the_genai_and_engine_attributes_one_trace_per_session,
    a_collector_down_refusing_or_silent_delays_no_reply_and_the_drop_is_counted,
);
