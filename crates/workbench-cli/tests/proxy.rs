//! The proxy as an agent uses it, against a scripted upstream on 127.0.0.1: a managed
//! conversation saved in the store, pass-through routes and side calls byte-identical, every
//! bad input and upstream failure, 50 sessions at once, and agreement with the replay's
//! `workbench` strategy on recorded Claude Code sessions. Every case runs against both shells:
//! `workbench proxy` and the npm package's `context-workbench proxy`; those the exchange decides
//! run a third time against the machine itself, with no socket (`proxy_support/machine.rs`).
#![cfg(not(target_arch = "wasm32"))]

#[macro_use]
mod proxy_support;

use std::io::{Read, Write};
use std::path::Path;

use context_workbench::replay::ReplaySession;
use proxy_support::{
    Build, Proxy, Received, Reply, Upstream, anthropic_events, anthropic_usage, calls, files_under, get, head, post,
    scratch, send, step_of, trace_dirs,
};
use serde_json::{Value, json};

const KEY: &str = "sk-ant-api03-proxytestkey0123456789abcdefghijklmnopqrstuvwxyzABCDEF";

fn headers() -> Vec<(&'static str, &'static str)> {
    vec![("x-api-key", KEY), ("anthropic-version", "2023-06-01"), ("anthropic-beta", "claude-code-20250219")]
}

/// The scripted reply of step `n` of a small session: a tool call, then at step 3 an answer.
fn step_blocks(n: usize) -> Vec<Value> {
    if n >= 3 {
        return vec![json!({"type": "text", "text": "The parser is fixed."})];
    }
    vec![
        json!({"type": "thinking", "thinking": "", "signature": format!("EqQB{n}sig==")}),
        json!({"type": "text", "text": format!("Step {n}: reading.")}),
        json!({"type": "tool_use", "id": format!("toolu_s{n}"), "name": "Bash", "input": {"command": format!("cat part{n}.txt")}}),
    ]
}

/// An upstream that plays the small session for requests with tools and answers side calls.
fn scripted() -> Upstream {
    Upstream::start(|request: &Received| {
        let body = request.json();
        if body.get("tools").is_none() {
            return Reply::Json { status: 200, body: json!({"id": "msg_side", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "A title"}], "usage": anthropic_usage(50, 0)}).to_string() };
        }
        let n = step_of(&body, "toolu_s");
        Reply::Events {
            events: anthropic_events(&format!("msg_{n}"), &step_blocks(n), anthropic_usage(5000, 4000)),
            cut_after: None,
        }
    })
}

/// A Claude Code-shaped request of `messages`.
fn request(session: &str, messages: &[Value]) -> Vec<u8> {
    json!({
        "model": "claude-opus-5-5",
        "messages": messages,
        "system": [{"type": "text", "text": "You are a coding agent.", "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "Bash", "description": "Run a shell command", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}],
        "metadata": {"user_id": json!({"device_id": "d", "session_id": session}).to_string()},
        "max_tokens": 32000,
        "stream": true,
    })
    .to_string()
    .into_bytes()
}

/// The conversation after `steps` scripted steps, as the agent holds it.
fn conversation(task: &str, steps: usize) -> Vec<Value> {
    let mut messages = vec![json!({"role": "user", "content": [{"type": "text", "text": task}]})];
    for n in 0..steps {
        messages.push(json!({"role": "assistant", "content": step_blocks(n)}));
        let output = format!("part {n}: ").repeat(200 + 40 * n);
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_s{n}"), "content": output, "is_error": false}]}));
    }
    messages
}

fn sse(events: &[(String, Value)]) -> String {
    events.iter().map(|(e, d)| format!("event: {e}\ndata: {d}\n\n")).collect()
}

fn message_files(store: &Path, trace: &str) -> Vec<Value> {
    let mut files: Vec<_> =
        std::fs::read_dir(store.join(trace).join("messages")).unwrap().flatten().map(|e| e.path()).collect();
    files.sort();
    files.iter().map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap()).collect()
}

fn assert_no_key(dir: &Path, log: &str) {
    for (path, text) in files_under(dir) {
        assert!(!text.contains(KEY) && !text.contains("proxytestkey"), "the key is in {}", path.display());
    }
    assert!(!log.contains(KEY) && !log.contains("proxytestkey"), "the key is in the log:\n{log}");
}

fn a_conversation_goes_through_the_engine_and_is_saved(build: Build) {
    let upstream = scripted();
    let dir = scratch("managed");
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let url = format!("{}/v1/messages?beta=true", proxy.url);
    for steps in 0..4 {
        let (status, kind, body) = post(&url, &request("sess-1", &conversation("Fix the parser", steps)), &headers());
        assert_eq!((status, kind.as_str()), (200, "text/event-stream"), "{body}");
        let expected = anthropic_events(&format!("msg_{steps}"), &step_blocks(steps), anthropic_usage(5000, 4000));
        assert_eq!(body, sse(&expected), "the reply reaches the agent unchanged");
    }
    let received = upstream.requests();
    assert_eq!(received.len(), 4);
    for (n, got) in received.iter().enumerate() {
        assert_eq!(got.path, "/v1/messages?beta=true");
        assert_eq!(got.header("x-api-key"), Some(KEY), "the key is forwarded to the upstream");
        assert_eq!(got.header("anthropic-beta"), Some("claude-code-20250219"));
        let body = got.json();
        let sent: Value = serde_json::from_slice(&request("sess-1", &conversation("Fix the parser", n))).unwrap();
        for field in ["model", "tools", "metadata", "max_tokens", "stream"] {
            assert_eq!(body[field], sent[field], "{field} kept as it came");
        }
        assert_eq!(body["messages"][0]["content"][0]["text"], "Fix the parser");
        let marks = body.to_string().matches("cache_control").count();
        assert!((1..=4).contains(&marks), "{marks} breakpoints");
    }
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    let store = dir.join(".trace");
    let messages = message_files(&store, "sess-1");
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"]);
    assert_eq!(messages[7]["content"][0]["text"], "The parser is fixed.", "the last reply is saved at shutdown");
    assert_eq!(messages[1]["content"][0]["signature"], "EqQB0sig==");
    let calls = calls(&store, "sess-1");
    assert_eq!(calls.len(), 4);
    assert_eq!(calls.iter().map(|c| c["new_messages"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 2, 2, 2]);
    assert!(calls.iter().all(|c| c["managed"] == json!(true) && c["completed"] == json!(true)));
    assert_eq!(calls[3]["usage"]["cache_read_tokens"], json!(4000));
    assert!(calls[3]["expected_cached_tokens"].as_u64().unwrap() > 0);
    assert!(log.contains("sess-1 #4 claude-opus-5-5: 2 new of 7 messages"), "{log}");
    assert!(log.contains("cached 4000 of 5000 (80%"), "{log}");
    assert_no_key(&dir, &log);
}

/// A reply the agent has is in its session's record: the reply, whole or streamed, ends only
/// once its call is in `calls.jsonl` (a long reply, so recording it takes a while).
fn a_reply_ends_once_it_is_recorded(build: Build) {
    let text = "The parser is fixed. ".repeat(20_000);
    let upstream = Upstream::start(move |request: &Received| {
        let blocks = [json!({"type": "text", "text": text})];
        if request.json()["stream"] == json!(true) {
            return Reply::Events {
                events: anthropic_events("msg_long", &blocks, anthropic_usage(900, 0)),
                cut_after: None,
            };
        }
        let body = json!({"id": "msg_long", "type": "message", "role": "assistant", "content": blocks, "stop_reason": "end_turn", "usage": anthropic_usage(900, 0)});
        Reply::Json { status: 200, body: body.to_string() }
    });
    let dir = scratch("recorded-before-end");
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let url = format!("{}/v1/messages", proxy.url);
    for (session, stream) in [("sess-whole", false), ("sess-streamed", true)] {
        let mut body: Value = serde_json::from_slice(&request(session, &conversation("Fix the parser", 0))).unwrap();
        body["stream"] = json!(stream);
        let (status, _, reply) = post(&url, body.to_string().as_bytes(), &headers());
        assert_eq!(status, 200, "{reply}");
        let recorded = calls(&dir.join(".trace"), session);
        assert_eq!(recorded.len(), 1, "{session}: the call is recorded when the agent has its reply");
        assert_eq!(recorded[0]["completed"], json!(true), "{session}");
    }
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
}

fn pass_through_routes_and_side_calls_arrive_byte_identical(build: Build) {
    let upstream = Upstream::start(|request: &Received| Reply::Json {
        status: 200,
        body: format!("{{\"echo\":{}}}", request.body.len()),
    });
    let dir = scratch("passthrough");
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let (status, _, body) = send("GET", &format!("{}/v1/models?limit=2", proxy.url), b"", &[("x-api-key", KEY)]);
    assert_eq!((status, body.as_str()), (200, "{\"echo\":0}"));
    let count =
        br#"{"model":"m",  "messages":[{"role":"user","content":"hi"}], "tools":[{"name":"x","input_schema":{}}]}"#;
    post(&format!("{}/v1/messages/count_tokens?beta=true", proxy.url), count, &headers());
    let side = b"{\"max_tokens\": 50, \"model\":\"claude-haiku\",\n \"messages\":[{\"role\":\"user\",\"content\":\"Title for: fix the parser\"}]}";
    let (status, _, _) = post(&format!("{}/v1/messages", proxy.url), side, &headers());
    assert_eq!(status, 200);
    let received = upstream.requests();
    assert_eq!((received[0].method.as_str(), received[0].path.as_str()), ("GET", "/v1/models?limit=2"));
    assert_eq!(received[0].header("x-api-key"), Some(KEY));
    assert_eq!(
        (received[1].path.as_str(), received[1].body.as_slice()),
        ("/v1/messages/count_tokens?beta=true", &count[..])
    );
    assert_eq!(received[2].body, side, "a side call goes through byte-identical");
    let (_, log) = proxy.stop();
    assert!(log.contains("side call, passed through"), "{log}");
    let store = dir.join(".trace");
    assert!(!store.exists() || trace_dirs(&store).is_empty(), "no session for side calls");
    assert_no_key(&dir, &log);
}

/// A side call (a title, Claude Code's auto-mode classifier) that names a session held here is
/// counted in that session's `calls.jsonl`, after the call it came beside; it opens no session
/// of its own, reaches the upstream byte for byte, and one of an unknown session is counted
/// nowhere.
fn side_calls_of_a_session_are_counted_in_it(build: Build) {
    let upstream = scripted();
    let dir = scratch("side-counted");
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let url = format!("{}/v1/messages?beta=true", proxy.url);
    let side = |session: &str| {
        let transcript = "<transcript>User: fix the parser. Assistant: reads part0.txt</transcript> ".repeat(300);
        json!({
            "model": "claude-haiku",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": [{"type": "text", "text": transcript}]}],
            "metadata": {"user_id": json!({"device_id": "d", "session_id": session}).to_string()},
        })
        .to_string()
        .into_bytes()
    };
    post(&url, &request("sess-side", &conversation("Fix the parser", 0)), &headers());
    let (status, _, body) = post(&url, &side("sess-side"), &headers());
    assert_eq!((status, body.contains("A title")), (200, true), "{body}");
    post(&url, &request("sess-side", &conversation("Fix the parser", 1)), &headers());
    post(&url, &side("sess-unknown"), &headers());
    let received = upstream.requests();
    assert_eq!(received[1].body, side("sess-side"), "a side call goes through byte-identical");
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    let store = dir.join(".trace");
    assert_eq!(trace_dirs(&store), ["sess-side"], "{log}");
    let calls = calls(&store, "sess-side");
    let shape: Vec<(u64, bool, bool)> = calls
        .iter()
        .map(|c| (c["call"].as_u64().unwrap(), c["managed"] == json!(true), c["side_call"] == json!(true)))
        .collect();
    assert_eq!(shape, [(1, true, false), (1, false, true), (2, true, false)], "{calls:?}");
    let counted = &calls[1];
    assert_eq!((counted["status"].as_u64(), counted["model"].as_str()), (Some(200), Some("claude-haiku")));
    assert!(counted["client_tokens"].as_u64().unwrap() > 1000, "the side call's tokens are counted: {counted}");
    assert_eq!(counted["client_tokens"], counted["prompt_tokens"], "it went upstream as it came");
    assert_eq!(message_files(&store, "sess-side").len(), 4, "its messages are not the session's");
    assert_no_key(&dir, &log);
}

/// An agent that acts through text and sends no session id (mini-swe-agent's text mode): its
/// first call is a one-shot (no tools, no assistant turn) and goes through as one; once its next
/// call continues that conversation, the session it opens counts the first as call 1. A one-shot
/// that nothing continues (a title) opens nothing.
fn a_text_agents_first_call_is_counted_once_its_conversation_goes_on(build: Build) {
    // The opening one-shot is answered 529 (overloaded); the agent goes on all the same.
    let upstream = Upstream::start(|request: &Received| {
        let status = if request.json()["messages"].as_array().is_some_and(|m| m.len() == 1) { 529 } else { 200 };
        let body = json!({"id": "msg_text", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "```bash\nls\n```"}], "usage": anthropic_usage(50, 0)});
        Reply::Json { status, body: body.to_string() }
    });
    let dir = scratch("opening");
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let url = format!("{}/v1/messages", proxy.url);
    let system = "You act through one bash block per reply.";
    let body =
        |messages: Value| json!({"model": "m", "max_tokens": 64, "system": system, "messages": messages}).to_string();
    let task = json!({"role": "user", "content": "Fix the sign in calc.py"});
    let first = body(json!([task]));
    let title = body(json!([{"role": "user", "content": "Title for: another task"}]));
    let next = body(
        json!([task, {"role": "assistant", "content": "```bash\ncat calc.py\n```"}, {"role": "user", "content": "<output>return a - b</output>"}]),
    );
    for request in [&first, &title, &next] {
        post(&url, request.as_bytes(), &headers());
    }
    let received = upstream.requests();
    assert_eq!(received[0].body, first.as_bytes(), "the first call went through as it came");
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    let store = dir.join(".trace");
    let traces = trace_dirs(&store);
    assert_eq!(traces.len(), 1, "one session, the title's one-shot opens none: {traces:?}");
    let calls = calls(&store, &traces[0]);
    let shape: Vec<(u64, bool, bool)> = calls
        .iter()
        .map(|c| (c["call"].as_u64().unwrap(), c["managed"] == json!(true), c["side_call"] == json!(true)))
        .collect();
    assert_eq!(shape, [(1, false, false), (2, true, false)], "{calls:?}");
    let opening = &calls[0];
    assert!(opening["notes"][0].as_str().unwrap().starts_with("the conversation's first call"), "{opening}");
    assert_eq!(opening["messages"].as_u64(), Some(1), "{opening}");
    assert_eq!((&opening["status"], &opening["completed"]), (&json!(529), &json!(false)), "{opening}");
    assert_eq!(opening["client_tokens"], opening["prompt_tokens"], "it went upstream as it came");
    assert!(opening["client_tokens"].as_u64().unwrap() > 0);
}

fn each_api_goes_to_its_own_upstream_by_its_path(build: Build) {
    let echo = |name: &'static str| {
        Upstream::start(move |request: &Received| Reply::Json {
            status: 200,
            body: format!("{{\"upstream\":\"{name}\",\"bytes\":{}}}", request.body.len()),
        })
    };
    let (anthropic, openai, gemini) = (echo("anthropic"), echo("openai"), echo("gemini"));
    let dir = scratch("by-api");
    let flags = [
        format!("anthropic={}", anthropic.url),
        format!("openai={}/v1", openai.url),
        format!("gemini={}/v1beta", gemini.url),
    ];
    let args: Vec<&str> = flags.iter().flat_map(|f| ["--upstream", f.as_str()]).collect();
    let proxy = Proxy::start_build(build, &dir, &args);
    let gemini_body = br#"{"contents":[{"role":"user","parts":[{"text":"fix calc.py"}]}],"tools":[]}"#;
    let path = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse";
    let (status, _, body) = post(&format!("{}{path}", proxy.url), gemini_body, &[("x-goog-api-key", KEY)]);
    assert_eq!((status, body.contains("\"gemini\"")), (200, true), "{body}");
    let responses = br#"{"model":"gpt-5","input":"fix calc.py","previous_response_id":"resp_1"}"#;
    let (_, _, body) = post(&format!("{}/v1/responses", proxy.url), responses, &[("authorization", "Bearer k")]);
    assert!(body.contains("\"openai\""), "the path decides, whatever the headers: {body}");
    let side = br#"{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"Title for: fix calc.py"}]}"#;
    let (_, _, body) = post(&format!("{}/messages", proxy.url), side, &headers());
    assert!(body.contains("\"anthropic\""), "Messages without /v1 (Cline's form): {body}");

    let got = gemini.requests();
    assert_eq!(got[0].path, path, "one /v1beta, the query kept");
    assert_eq!((got[0].body.as_slice(), got[0].header("x-goog-api-key")), (&gemini_body[..], Some(KEY)));
    assert_eq!(openai.requests()[0].path, "/v1/responses");
    assert_eq!(anthropic.requests()[0].path, "/v1/messages", "given the version the real API needs");
    let (_, log) = proxy.stop();
    assert!(log.contains(&format!("{}/v1beta (Gemini)", gemini.url)), "the start line names every upstream:\n{log}");
    assert!(log.contains("streamGenerateContent: side call, passed through"), "a one-turn call without tools: {log}");
    assert!(log.contains("unmanaged (`previous_response_id`: the history is kept by the server"), "{log}");
    assert_no_key(&dir, &log);
}

fn bad_requests_get_errors_in_the_providers_shape(build: Build) {
    let upstream = scripted();
    let dir = scratch("bad");
    std::fs::write(dir.join("proxy.toml"), "[proxy]\nmax_body_bytes = 4000\nheader_timeout_ms = 1000\n").unwrap();
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url, "--config", "proxy.toml"]);
    let anthropic = format!("{}/v1/messages", proxy.url);
    // A connection whose headers never end is closed after `proxy.header_timeout_ms` (a shell's:
    // the machine has no connection).
    if build != Build::Machine {
        let mut half_open = std::net::TcpStream::connect(proxy.url.trim_start_matches("http://")).unwrap();
        half_open.write_all(b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\n").unwrap();
        half_open.set_read_timeout(Some(std::time::Duration::from_secs(20))).unwrap();
        let mut answer = Vec::new();
        let ended = half_open.read_to_end(&mut answer);
        assert!(ended.is_ok(), "the connection was still open after 20 s: {ended:?}");
        // A body the agent stops sending short of its length (its side closed) gets the same
        // error in its provider's shape from both shells, not the HTTP parser's bare 400.
        let mut cut = std::net::TcpStream::connect(proxy.url.trim_start_matches("http://")).unwrap();
        let head = "POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n";
        cut.write_all(format!("{head}{{\"messages\": [").as_bytes()).unwrap();
        cut.shutdown(std::net::Shutdown::Write).unwrap();
        cut.set_read_timeout(Some(std::time::Duration::from_secs(20))).unwrap();
        let mut answer = String::new();
        let _ = cut.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
        assert!(answer.contains(r#""type":"request_too_large""#) && answer.contains("or was cut short"), "{answer}");
    }
    let cases: [(&[u8], u16, &str); 4] = [
        (b"{\"messages\": [", 400, "the body is not JSON"),
        (
            br#"{"model": "m", "messages": [{"role": "user", "content": [{"type": "text"}]}]}"#,
            400,
            "needs a string `text`",
        ),
        (br#"{"model": "m", "messages": [{"role": "user", "content": [{"text": "no type"}]}]}"#, 400, "has no `type`"),
        (&[b' '; 5000], 413, "over the limit of 4000 bytes"),
    ];
    for (body, status, message) in cases {
        let (got, kind, text) = post(&anthropic, body, &headers());
        assert_eq!((got, kind.as_str()), (status, "application/json"), "{text}");
        let error: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(error["type"], "error", "{text}");
        assert!(error["error"]["message"].as_str().unwrap().contains(message), "{text}");
        let kind = if status == 413 { "request_too_large" } else { "invalid_request_error" };
        assert_eq!(error["error"]["type"], kind);
    }
    // A body far over the limit, as Python's clients send it (all of it before reading the
    // answer): the 413, not a connection reset.
    let (got, _, text) = post(&anthropic, &vec![b' '; 8 << 20], &headers());
    assert_eq!(got, 413, "{text}");
    let (status, _, text) = post(&format!("{}/v1/chat/completions", proxy.url), b"{\"messages\": 3}", &[]);
    assert_eq!(status, 400);
    let error: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(error["error"]["type"], "invalid_request_error", "OpenAI's shape: {text}");
    assert!(upstream.requests().is_empty(), "nothing malformed went upstream");
    // A role the engine does not read is the upstream's to judge: it goes as it came.
    let robot = br#"{"model": "m", "messages": [{"role": "robot", "content": "x"}], "tools": [{"name": "t", "input_schema": {}}]}"#;
    let (status, _, _) = post(&anthropic, robot, &headers());
    assert_eq!((status, upstream.requests().len()), (200, 1));
    assert_eq!(upstream.requests()[0].body, robot);
    // A block of a type the engine does not know is no error: it goes upstream as it came.
    let mystery = json!({"type": "mystery_block", "payload": {"z": [1, 2.5, "é"], "a": null}});
    let messages = [json!({"role": "user", "content": [{"type": "text", "text": "look"}, mystery]})];
    let (status, _, _) = post(&anthropic, &request("mystery", &messages), &headers());
    assert_eq!(status, 200);
    assert_eq!(upstream.requests()[1].json()["messages"][0]["content"][1], mystery);
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
}

/// Claude Code's `HEAD /api/hello` (a path of no provider's API, without a key) goes to the
/// only upstream the user named, not to OpenAI's.
fn a_request_of_no_api_goes_to_the_upstream_named_alone(build: Build) {
    let upstream = Upstream::start(|_: &Received| Reply::Json { status: 200, body: "{}".into() });
    let dir = scratch("hello");
    let flag = format!("anthropic={}", upstream.url);
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &flag]);
    assert_eq!(head(&format!("{}/api/hello", proxy.url)), 200);
    let got = upstream.requests();
    assert_eq!((got.len(), got[0].path.as_str()), (1, "/api/hello"), "it reached the Anthropic upstream");
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
}

/// A web page can neither drive the proxy (a form's `text/plain` POST carries its site's
/// `Origin`) nor read its replies through a host name rebound to 127.0.0.1: every route checks
/// `Host` and `Origin`, as the dashboard does.
fn a_web_page_can_neither_drive_nor_read_the_proxy(build: Build) {
    let upstream = scripted();
    let dir = scratch("web-page");
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let messages = [json!({"role": "user", "content": "delete everything"})];
    let body = request("web-page", &messages);
    for (url, extra) in [
        (format!("{}/v1/messages", proxy.url), ("origin", "https://evil.example")),
        (format!("{}/v1/messages", proxy.url), ("host", "rebound.example:8787")),
        (format!("{}/v1/models", proxy.url), ("host", "rebound.example:8787")),
    ] {
        let mut sent = headers();
        sent.push(extra);
        let (status, _, text) = post(&url, &body, &sent);
        assert_eq!(status, 403, "{url} {extra:?}: {text}");
        let error: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(error["error"]["type"], "permission_error", "{text}");
    }
    assert!(upstream.requests().is_empty(), "nothing a web page sent went upstream");
    assert!(trace_dirs(&dir.join(".trace")).is_empty(), "nor into the store");
    let (status, _, _) = post(&format!("{}/v1/messages", proxy.url), &body, &headers());
    assert_eq!((status, upstream.requests().len()), (200, 1), "the agent's own request passes");
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    assert!(log.contains("POST /v1/messages: refused, this server answers its own pages only"), "{log}");
}

fn an_upstream_that_is_down_slow_failing_or_cut_short_reaches_the_agent_and_loses_nothing(build: Build) {
    let dir = scratch("upstream");
    // Down: nothing listens on the port.
    let down = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed = format!("http://{}", down.local_addr().unwrap());
    drop(down);
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &closed]);
    let (status, _, text) =
        post(&format!("{}/v1/messages", proxy.url), &request("down", &conversation("t", 0)), &headers());
    assert_eq!(status, 502, "{text}");
    let error: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(error["error"]["type"], "api_error");
    assert!(error["error"]["message"].as_str().unwrap().contains("cannot connect"), "{text}");
    let (_, log) = proxy.stop();
    assert_no_key(&dir, &log);

    // Failing, slow, and cut short halfway through a reply, by request.
    let upstream = Upstream::start(|request: &Received| {
        let body = request.json();
        let task = body["messages"][0]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
        let n = step_of(&body, "toolu_s");
        match task.as_str() {
            "overloaded" => Reply::Json {
                status: 529,
                body: r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#.into(),
            },
            "slow" => Reply::Silent,
            "cut" if n == 1 && !request.path.contains("retry") => {
                let events = anthropic_events("msg_cut", &step_blocks(1), anthropic_usage(100, 0));
                let half = events.len() / 2;
                Reply::Events { events, cut_after: Some(half) }
            }
            _ => Reply::Events {
                events: anthropic_events(&format!("msg_{n}"), &step_blocks(n), anthropic_usage(100, 0)),
                cut_after: None,
            },
        }
    });
    std::fs::write(dir.join("slow.toml"), "[proxy]\nupstream_timeout_ms = 1500\n").unwrap();
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url, "--config", "slow.toml"]);
    let url = format!("{}/v1/messages", proxy.url);
    let (status, _, text) = post(&url, &request("overloaded", &conversation("overloaded", 0)), &headers());
    assert_eq!(
        (status, text.as_str()),
        (529, r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#)
    );
    let (status, _, text) = post(&url, &request("slow", &conversation("slow", 0)), &headers());
    assert_eq!(status, 504, "{text}");
    assert!(text.contains("did not answer in time"), "{text}");

    post(&url, &request("cut", &conversation("cut", 0)), &headers());
    let (status, _, text) = post(&url, &request("cut", &conversation("cut", 1)), &headers());
    assert_eq!(status, 200);
    let full = sse(&anthropic_events("msg_cut", &step_blocks(1), anthropic_usage(100, 0)));
    assert!(text.len() < full.len() && full.starts_with(text.split("event: error").next().unwrap()), "{text}");
    assert!(text.contains("event: error\ndata: {"), "the agent is told the stream broke off: {text}");
    // The agent retries; the retry completes; the broken reply was never recorded.
    let (status, _, _) = post(&format!("{url}?retry=1"), &request("cut", &conversation("cut", 1)), &headers());
    assert_eq!(status, 200);
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    let store = dir.join(".trace");
    let cut_calls = calls(&store, "cut");
    assert_eq!(cut_calls.iter().map(|c| c["completed"] == json!(true)).collect::<Vec<_>>(), [true, false, true]);
    assert_eq!(cut_calls[2]["new_messages"], json!(0), "the retry repeats the request: nothing recorded twice");
    let roles: Vec<String> =
        message_files(&store, "cut").iter().map(|m| m["role"].as_str().unwrap().to_owned()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"], "one reply per call that completed");
    let overloaded = calls(&store, "overloaded");
    assert_eq!((overloaded[0]["status"].as_u64(), overloaded[0]["completed"].as_bool()), (Some(529), Some(false)));
    assert_eq!(message_files(&store, "overloaded").len(), 1, "a failed reply is not recorded");
    assert_no_key(&dir, &log);
}

/// An agent that closes its connection before the reply came: the upstream's call is dropped,
/// the call is recorded and logged as cut short by the agent (499, as servers log it), and the
/// conversation's next request (the agent's retry) is not held behind it until the upstream's
/// timeout.
fn an_agent_that_leaves_before_the_reply_is_recorded_and_holds_nothing_up(build: Build) {
    let upstream = Upstream::start(|request: &Received| {
        if request.path.contains("wait") {
            return Reply::Silent;
        }
        let n = step_of(&request.json(), "toolu_s");
        let events = anthropic_events(&format!("msg_{n}"), &step_blocks(n), anthropic_usage(100, 0));
        Reply::Events { events, cut_after: None }
    });
    let dir = scratch("agent-left");
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let body = request("left", &conversation("Fix the parser", 0));
    drop(send_raw(&proxy, &upstream, "/v1/messages?wait=1", &body)); // the agent leaves
    let (status, _, text) = post(&format!("{}/v1/messages", proxy.url), &body, &headers());
    assert_eq!(status, 200, "the retry is answered: {text}");
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    let left = log.lines().find(|l| l.contains(" #1 ")).unwrap_or_else(|| panic!("no line for the call left:\n{log}"));
    assert!(left.contains("status 499 (incomplete)"), "{left}");
    let recorded = calls(&dir.join(".trace"), "left");
    let outcomes: Vec<_> = recorded.iter().map(|c| (c["status"].as_u64(), c["completed"].as_bool())).collect();
    assert_eq!(outcomes, [(Some(499), Some(false)), (Some(200), Some(true))], "{recorded:?}");
    assert_eq!(recorded[1]["new_messages"], json!(0), "the retry repeats the request: nothing recorded twice");
}

/// An agent that stopped reading its streamed reply without closing the connection (suspended,
/// hung) is cut off once the shutdown grace is over: the proxy still saves and exits.
fn an_agent_that_stopped_reading_holds_up_no_shutdown(build: Build) {
    let upstream = Upstream::start(|_: &Received| {
        let piece = json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x".repeat(64 << 10)}});
        let events = vec![("content_block_delta".to_owned(), piece); 400];
        Reply::Slow { events, pause: std::time::Duration::from_millis(1) }
    });
    let dir = scratch("stalled");
    std::fs::write(dir.join("grace.toml"), "[proxy]\nshutdown_grace_ms = 300\n").unwrap();
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url, "--config", "grace.toml"]);
    let body = request("stalled", &conversation("Print a lot", 0));
    let agent = send_raw(&proxy, &upstream, "/v1/messages", &body);
    // The reply fills the connection's buffers while the agent reads nothing.
    std::thread::sleep(std::time::Duration::from_secs(2));
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    assert!(log.contains("1 request still in flight after 300 ms cut short"), "{log}");
    drop(agent);
}

/// An agent's request to `target` on a connection of its own, which the caller holds (reading
/// nothing) or drops, once the call has reached the upstream.
fn send_raw(proxy: &Proxy, upstream: &Upstream, target: &str, body: &[u8]) -> std::net::TcpStream {
    let mut agent = std::net::TcpStream::connect(proxy.url.trim_start_matches("http://")).unwrap();
    let head = format!(
        "POST {target} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nx-api-key: {KEY}\r\n\
         anthropic-version: 2023-06-01\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    agent.write_all(&[head.as_bytes(), body].concat()).unwrap();
    upstream.wait_for_a_request();
    agent
}

/// The terminal closing (SIGHUP) stops the proxy as Ctrl-C does: the request in flight finishes
/// and every session is saved.
fn a_closed_terminal_stops_the_proxy_as_ctrl_c_does_finishing_the_requests_in_flight(build: Build) {
    let upstream = Upstream::start(|request: &Received| {
        let n = step_of(&request.json(), "toolu_s");
        let events = anthropic_events(&format!("msg_{n}"), &step_blocks(n), anthropic_usage(100, 0));
        Reply::Slow { events, pause: std::time::Duration::from_millis(150) }
    });
    let dir = scratch("ctrl-c");
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let url = format!("{}/v1/messages", proxy.url);
    let in_flight = std::thread::spawn(move || post(&url, &request("late", &conversation("Stop me", 1)), &headers()));
    upstream.wait_for_a_request();
    let (status, log) = proxy.stop_on(libc::SIGHUP);
    assert!(status.success(), "{log}");
    assert!(log.contains("stopping: no new requests; 1 in flight given 5000 ms to finish"), "{log}");
    assert!(log.contains("stopping: saving every session"), "{log}");
    let (status, _, body) = in_flight.join().unwrap();
    let expected = anthropic_events("msg_1", &step_blocks(1), anthropic_usage(100, 0));
    assert_eq!((status, body), (200, sse(&expected)), "the request in flight finished");
    let store = dir.join(".trace");
    assert_eq!(calls(&store, "late")[0]["completed"], json!(true));
    let roles: Vec<String> =
        message_files(&store, "late").iter().map(|m| m["role"].as_str().unwrap().to_owned()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"], "its reply saved too");
}

fn when_the_engine_fails_the_request_goes_through_unmanaged(build: Build) {
    let upstream = scripted();
    let dir = scratch("overflow");
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url, "--window", "3000"]);
    let task = "word ".repeat(4000);
    let body = request("big", &conversation(&task, 0));
    let (status, _, _) = post(&format!("{}/v1/messages", proxy.url), &body, &headers());
    assert_eq!(status, 200);
    assert_eq!(upstream.requests()[0].body, body, "the agent's own request, byte-identical");
    let (status, log) = proxy.stop();
    assert!(status.success());
    assert!(log.contains("unmanaged") && log.contains("context_overflow"), "{log}");
    assert_eq!(calls(&dir.join(".trace"), "big")[0]["managed"], json!(false));
}

/// The safety net: the upstream refuses the engine's first request as invalid; the agent's own
/// goes once instead, answers the agent, and the session keeps the refusal. A request sent with
/// `x-workbench: off` goes as it came, without the header.
fn a_request_the_upstream_refuses_in_the_engines_form_goes_as_the_agent_sent_it(build: Build) {
    let refused = std::sync::atomic::AtomicBool::new(false);
    let upstream = Upstream::start(move |request: &Received| {
        let body = request.json();
        if !refused.swap(true, std::sync::atomic::Ordering::SeqCst) {
            let error = json!({"type": "invalid_request_error", "message": "messages.0.content.0: unexpected block"});
            return Reply::Json { status: 400, body: json!({"type": "error", "error": error}).to_string() };
        }
        let n = step_of(&body, "toolu_s");
        Reply::Events {
            events: anthropic_events(&format!("msg_{n}"), &step_blocks(n), anthropic_usage(500, 0)),
            cut_after: None,
        }
    });
    let dir = scratch("fallback");
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let url = format!("{}/v1/messages", proxy.url);
    for steps in 0..3 {
        let body = request("net", &conversation("Fix the parser", steps));
        let (status, _, reply) = post(&url, &body, &headers());
        assert_eq!(status, 200, "step {steps}: {}", reply);
        assert!(reply.contains("message_stop"), "step {steps}: {reply}");
        if steps == 0 {
            assert_eq!(upstream.requests()[1].body, body, "the agent's own request, byte-identical");
        }
    }
    let mut off = headers();
    off.push(("x-workbench", "off"));
    let body = request("net", &conversation("Fix the parser", 3));
    assert_eq!(post(&url, &body, &off).0, 200);
    let last = upstream.requests().pop().unwrap();
    assert_eq!(last.body, body, "left unmanaged: the agent's own request");
    assert!(last.headers.iter().all(|(name, _)| name != "x-workbench"), "the proxy's header stays here");
    let (status, log) = proxy.stop();
    assert!(status.success());
    assert!(log.contains("refused the engine's request as invalid (messages.0.content.0: unexpected block)"), "{log}");
    assert!(log.contains("unmanaged (x-workbench: off), passed through"), "{log}");
    let store = dir.join(".trace");
    let records = calls(&store, "net");
    assert_eq!(records.len(), 3, "three calls, the refused one among them once: {records:?}");
    assert_eq!((records[0]["managed"].clone(), records[0]["status"].clone()), (json!(false), json!(200)));
    let note = records[0]["notes"].to_string();
    assert!(note.contains("the agent's own request was sent instead"), "{note}");
    assert_eq!(records[1]["managed"], json!(true), "the next call is managed again");
    let fallbacks = &meta(&store, "net")["fallbacks"];
    assert!(fallbacks[0]["why"].as_str().unwrap().contains("unexpected block"), "{fallbacks}");
    assert_eq!(fallbacks[0]["call"], json!(1), "the session names its fallback: {fallbacks}");
}

fn a_history_that_departs_starts_a_new_session(build: Build) {
    let upstream = scripted();
    let dir = scratch("departs");
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let url = format!("{}/v1/messages", proxy.url);
    post(&url, &request("s", &conversation("Fix it", 2)), &headers());
    let mut edited = conversation("Fix it", 2);
    edited[2]["content"][0]["content"] = json!("the user edited this");
    post(&url, &request("s", &edited), &headers());
    // Longer, starting alike, but without either session's last reply: a sibling (a sub-agent
    // given the same task), not a revision of either.
    let mut sibling = conversation("Fix it", 3);
    sibling[1]["content"][1]["text"] = json!("Step 0: elsewhere.");
    sibling[5]["content"][1]["text"] = json!("Step 2: elsewhere.");
    post(&url, &request("s", &sibling), &headers());
    let (_, log) = proxy.stop();
    assert!(log.contains("a new session: the request does not extend s's history"), "{log}");
    let store = dir.join(".trace");
    assert_eq!(message_files(&store, "s").len(), 5 + 1);
    assert_eq!(message_files(&store, "s-2").len(), 5 + 1, "the other history in its own session");
    assert_eq!(message_files(&store, "s-3").len(), 7 + 1, "the sibling in its own session");
    assert_eq!(meta(&store, "s-2").get("continues"), None, "an edit is not a compaction");
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let summary = "This session is being continued from a previous conversation that ran out of context. Summary: …";
    post(&format!("{}/v1/messages", proxy.url), &request("s", &conversation(summary, 1)), &headers());
    proxy.stop();
    assert_eq!(meta(&store, "s-4")["continues"], json!("s-3"), "the agent's own compaction links back");
}

/// aider's requests: no tools, its edit format's examples, then the files it shows and the task
/// with its format reminder; at each call it renders the files anew (an edit changed them), moves
/// the reminder to the newest message, and sends what ran since (its test command's output, as
/// `I ran this command`). Each call sends the history again changed: one session, revised.
fn aider_request(version: usize, turns: &[&str]) -> Vec<u8> {
    const REMINDER: &str = "\n\nReply with *SEARCH/REPLACE blocks* only.";
    let files =
        format!("I have *added these files to the chat*.\n\ncalc.py\n```\nreturn a - b  # version-{version}\n```");
    let mut messages = vec![
        json!({"role": "user", "content": "Change the greeting"}),
        json!({"role": "assistant", "content": "hello.py\n<<<<<<< SEARCH\nhi\n=======\nhello\n>>>>>>> REPLACE"}),
        json!({"role": "user", "content": files}),
        json!({"role": "assistant", "content": "Ok, any changes I propose will be to those files."}),
    ];
    for (k, turn) in turns.iter().enumerate() {
        let role = if k % 2 == 0 { "user" } else { "assistant" };
        let reminder = if k + 1 == turns.len() { REMINDER } else { "" };
        messages.push(json!({"role": role, "content": format!("{turn}{reminder}")}));
    }
    json!({"model": "m", "max_tokens": 512, "system": "Act with SEARCH/REPLACE blocks.", "messages": messages})
        .to_string()
        .into_bytes()
}

fn a_history_sent_again_changed_is_revised_in_its_session(build: Build) {
    let upstream = scripted();
    let dir = scratch("revised");
    let store = dir.join(".trace");
    let start = || Proxy::start_build(build, &dir, &["--upstream", &upstream.url, "--window", "20000"]);
    let call = |proxy: &Proxy, body: Vec<u8>| {
        let (status, _, text) = post(&format!("{}/v1/messages", proxy.url), &body, &headers());
        assert_eq!(status, 200, "{text}");
    };
    let log: String = (0..600).map(|i| format!("test_calc.py::test_{i:03} PASSED [{i}%]\n")).collect();
    let run = format!("I ran this command:\n\npytest\n\nAnd got this output:\n\n{log}FAILED test_calc.py::test_add");
    let run = run.as_str();
    let proxy = start();
    call(&proxy, aider_request(1, &["Fix calc.py"]));
    call(&proxy, aider_request(2, &["Fix calc.py", "A title", run, "Ok.", run]));
    assert!(proxy.stop().0.success());
    // After a restart, the stored session is revised.
    let proxy = start();
    call(&proxy, aider_request(3, &["Fix calc.py", "A title", run, "Ok.", run, "A title", run, "Ok.", run]));
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");

    let traces = trace_dirs(&store);
    assert_eq!(traces.len(), 1, "one session: {traces:?}\n{log}");
    let mission = meta(&store, &traces[0])["mission"].as_str().unwrap_or_default().to_owned();
    assert!(mission.starts_with("Fix calc.py"), "the task, not the example before it: {mission}");
    let calls = calls(&store, &traces[0]);
    assert!(calls.iter().all(|c| c["managed"] == json!(true)), "{calls:?}");
    let revised =
        |c: &&Value| c["notes"][0].as_str().is_some_and(|n| n.starts_with("the agent sent its history again"));
    let revisions: Vec<&str> = calls.iter().filter(revised).filter_map(|c| c["notes"][0].as_str()).collect();
    assert_eq!(revisions.len(), 2, "{calls:?}");
    assert!(revisions.iter().all(|n| n.starts_with("the agent sent its history again changed from message 2 on")));
    let new: Vec<u64> = calls.iter().map(|c| c["new_messages"].as_u64().unwrap()).collect();
    assert_eq!(new, [5, 7, 11], "each call records its version from the first changed message");
    let last = String::from_utf8_lossy(&upstream.requests()[2].body).into_owned();
    assert!(last.contains("version-3") && !last.contains("version-1") && !last.contains("version-2"), "{last}");
    assert_eq!(last.matches("Reply with *SEARCH/REPLACE blocks*").count(), 1, "{last}");
    // Its reports of the commands it ran are outputs: shown in their history form, the failure kept.
    assert!(last.contains("raw#") && last.matches("FAILED test_calc.py::test_add").count() == 4, "{last}");
    let (sent, given) = (calls[2]["prompt_tokens"].as_u64().unwrap(), calls[2]["client_tokens"].as_u64().unwrap());
    assert!(sent * 4 < given, "{sent} of {given} tokens");
    // The raw trace keeps every version: 5, 7 more, the reply recorded at the stop, 11 more, the
    // last reply.
    assert_eq!(message_files(&store, &traces[0]).len(), 5 + 7 + 1 + 11 + 1);
}

fn fifty_sessions_at_once_stay_apart(build: Build) {
    let upstream = scripted();
    let dir = scratch("fifty");
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let sessions: Vec<String> = (0..50).map(|i| format!("par-{i}")).collect();
    agents_at_once(&proxy, &sessions, 3, |session| format!("task {}", &session[4..]));
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    let store = dir.join(".trace");
    for i in 0..50 {
        let messages = message_files(&store, &format!("par-{i}"));
        assert_eq!(messages.len(), 6, "par-{i}");
        assert_eq!(messages[0]["content"][0]["text"], format!("task {i}"));
        assert_eq!(calls(&store, &format!("par-{i}")).len(), 3);
    }
    assert_eq!(upstream.requests().len(), 150);
}

fn meta(store: &Path, trace: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(store.join(trace).join("meta.json")).unwrap()).unwrap()
}

fn sessions_are_titled_by_the_users_words_and_end_finished_stopped_or_interrupted(build: Build) {
    let upstream = scripted();
    let dir = scratch("status");
    let store = dir.join(".trace");
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let url = format!("{}/v1/messages", proxy.url);
    let reminded = |steps: usize| {
        let mut messages = conversation("Fix the parser", steps);
        messages[0]["content"] = json!([
            {"type": "text", "text": "<system-reminder>\nThe date is 2026-11-26.\n</system-reminder>"},
            {"type": "text", "text": "Fix the parser"},
        ]);
        messages
    };
    for steps in 0..4 {
        post(&url, &request("done", &reminded(steps)), &headers());
    }
    post(&url, &request("midway", &conversation("Half a task", 1)), &headers());
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    assert_eq!(meta(&store, "done")["mission"], "Fix the parser", "the user's words, not the agent's reminder");
    assert_eq!(meta(&store, "done")["status"], "finished", "the conversation ended with the agent's answer");
    assert_eq!(meta(&store, "midway")["status"], "stopped", "closed in the middle of its task");

    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    post(&format!("{}/v1/messages", proxy.url), &request("killed", &conversation("Kill me", 1)), &headers());
    assert_eq!(meta(&store, "killed")["status"], "running");
    drop(proxy); // SIGKILL: nothing is saved at the end
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    // Stopped the moment it gave its address: a clean stop, its log whole.
    let (status, log) = proxy.stop();
    assert!(status.success(), "{status:?}\n{log}");
    assert_eq!(meta(&store, "killed")["status"], "interrupted", "{log}");
    assert!(log.contains("1 session(s) left running by a proxy that was killed, marked interrupted: killed"), "{log}");
    assert_eq!(meta(&store, "done")["status"], "finished", "what ended is left as it ended");
    let ignored = std::fs::read_to_string(store.join(".gitignore")).unwrap();
    assert!(ignored.lines().any(|l| l == "*"), "the store keeps out of git: {ignored}");
}

fn a_conversation_continued_after_a_restart_a_kill_or_an_eviction_resumes_its_session(build: Build) {
    let upstream = scripted();
    let dir = scratch("resume");
    let store = dir.join(".trace");
    let start = || Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let turn = |proxy: &Proxy, steps: usize| {
        let (status, _, body) =
            post(&format!("{}/v1/messages", proxy.url), &request("r", &conversation("Resume me", steps)), &headers());
        assert_eq!(status, 200, "{body}");
    };
    let proxy = start();
    turn(&proxy, 0);
    turn(&proxy, 1);
    assert!(proxy.stop().0.success());
    let proxy = start();
    turn(&proxy, 2);
    drop(proxy); // SIGKILL after the third call: its reply was never echoed back
    let proxy = start();
    turn(&proxy, 3);
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    assert_eq!(trace_dirs(&store), ["r"], "one conversation, one trace");
    let roles: Vec<String> =
        message_files(&store, "r").iter().map(|m| m["role"].as_str().unwrap().to_owned()).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"],
        "nothing twice"
    );
    let calls = calls(&store, "r");
    let numbers: Vec<u64> = calls.iter().map(|c| c["call"].as_u64().unwrap()).collect();
    assert_eq!(numbers, [1, 2, 3, 4], "the calls go on counting");
    let new: Vec<u64> = calls.iter().map(|c| c["new_messages"].as_u64().unwrap()).collect();
    assert_eq!(new, [1, 2, 1, 2], "after a resume only what is new is recorded");
    assert!(calls.iter().all(|c| c["managed"] == json!(true)), "{calls:?}");

    // Past proxy.max_sessions the least recently used conversation makes room; it resumes.
    std::fs::write(dir.join("one.toml"), "[proxy]\nmax_sessions = 1\n").unwrap();
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url, "--config", "one.toml"]);
    let url = format!("{}/v1/messages", proxy.url);
    post(&url, &request("a", &conversation("Task a", 0)), &headers());
    post(&url, &request("b", &conversation("Task b", 0)), &headers());
    post(&url, &request("a", &conversation("Task a", 1)), &headers());
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    assert_eq!(trace_dirs(&store), ["a", "b", "r"], "{log}");
    assert_eq!(message_files(&store, "a").len(), 4, "a's history once, and its last reply");
}

/// Four agents at once on a proxy that holds one conversation: each request closes another
/// conversation to make room, and a conversation opened again while its last closing is still
/// saving waits for it. Each stays one session, with each message once.
fn conversations_that_take_each_others_room_stay_one_session_each(build: Build) {
    let upstream = scripted();
    let dir = scratch("room");
    std::fs::write(dir.join("one.toml"), "[proxy]\nmax_sessions = 1\n").unwrap();
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url, "--config", "one.toml"]);
    let sessions = ["a", "b", "c", "d"].map(str::to_owned);
    agents_at_once(&proxy, &sessions, 6, |session| format!("Task {session}"));
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    let store = dir.join(".trace");
    assert_eq!(trace_dirs(&store), ["a", "b", "c", "d"], "{log}");
    for session in ["a", "b", "c", "d"] {
        assert_eq!(message_files(&store, session).len(), 12, "{session}: its history once, and its last reply");
    }
}

/// Each of `sessions` an agent of its own, all at once: `steps` requests of its conversation on
/// the task `task_of` names, each answered.
fn agents_at_once(proxy: &Proxy, sessions: &[String], steps: usize, task_of: fn(&str) -> String) {
    let agents: Vec<_> = sessions
        .iter()
        .map(|session| {
            let (url, session) = (format!("{}/v1/messages", proxy.url), session.clone());
            std::thread::spawn(move || {
                for step in 0..steps {
                    let body = request(&session, &conversation(&task_of(&session), step));
                    let (status, _, text) = post(&url, &body, &headers());
                    assert_eq!(status, 200, "{text}");
                }
            })
        })
        .collect();
    for agent in agents {
        agent.join().unwrap();
    }
}

/// A conversation of 10,000 messages (5,000 tool results, about 200,000 tokens).
fn long_history() -> Vec<Value> {
    let mut messages = vec![json!({"role": "user", "content": [{"type": "text", "text": "Fix the parser"}]})];
    for n in 0..4_999 {
        messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": format!("toolu_l{n}"), "name": "Bash", "input": {"command": format!("sed -n {n}p src/parse.rs")}}]}));
        let output = format!("{n}: fn parse_{n}(input: &str) -> Result<Token, Error> {{ lex(input, {n}) }}");
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_l{n}"), "content": output}]}));
    }
    messages
}

/// A long body is read (parsed, its tokens counted) off the thread that serves the other
/// requests: a short request sent while a 12 MB side call is being read is answered at once, not
/// once the long one has been read.
fn a_long_body_is_read_without_holding_up_other_requests(build: Build) {
    let upstream = scripted();
    let dir = scratch("long-read");
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let url = format!("{}/v1/messages", proxy.url);
    let text: String = (0..150_000)
        .map(|n| format!("{n}: fn parse_{n}(input: &str) -> Result<Token, Error> {{ lex(input) }}\n"))
        .collect();
    let long = json!({"model": "m", "max_tokens": 20, "messages": [{"role": "user", "content": text}]}).to_string();
    let started = std::time::Instant::now();
    let long = {
        let url = url.clone();
        std::thread::spawn(move || {
            let (status, _, body) = post(&url, long.as_bytes(), &headers());
            assert_eq!(status, 200, "{body}");
            started.elapsed()
        })
    };
    // The long body has arrived and is being read.
    std::thread::sleep(std::time::Duration::from_millis(250));
    let sent = std::time::Instant::now();
    let short =
        br#"{"model": "m", "max_tokens": 20, "messages": [{"role": "user", "content": "Title for: fix the parser"}]}"#;
    let (status, _, _) = post(&url, short, &headers());
    assert_eq!(status, 200);
    let short = sent.elapsed();
    let long = long.join().unwrap();
    assert!(short * 4 < long, "the short request waited {short:?} while the long one took {long:?}");
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
}

/// While one conversation's long history is prepared, a side call, a forwarded request and
/// another conversation's call are answered: each before the long one is.
fn a_long_prepare_in_one_session_holds_up_no_other_request(build: Build) {
    let upstream = scripted();
    let dir = scratch("stall");
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let url = format!("{}/v1/messages", proxy.url);
    let long = {
        let url = url.clone();
        std::thread::spawn(move || {
            let (status, _, body) = post(&url, &request("long", &long_history()), &headers());
            assert_eq!(status, 200, "{body}");
            std::time::Instant::now()
        })
    };
    // The long request is on its way and being prepared (it takes seconds).
    std::thread::sleep(std::time::Duration::from_millis(300));
    if !long.is_finished() {
        let side = br#"{"model": "m", "max_tokens": 20, "messages": [{"role": "user", "content": "Title for: fix the parser"}]}"#;
        let (status, _, _) = post(&url, side, &headers());
        assert_eq!(status, 200);
        let (status, _, _) = post(&url, &request("other", &conversation("Another task", 0)), &headers());
        assert_eq!(status, 200);
        let models = proxy_support::client().get(format!("{}/v1/models", proxy.url)).header("x-api-key", KEY).call();
        assert_eq!(models.unwrap().status().as_u16(), 200);
        let others_done = std::time::Instant::now();
        let long_done = long.join().unwrap();
        assert!(others_done < long_done, "the other requests waited for the long one");
        let (status, log) = proxy.stop();
        assert!(status.success(), "{log}");
        return;
    }
    panic!("the long request was answered before the others were sent: nothing was measured");
}

/// A resume after a restart sends a long history at once: 10,000 messages (5,000 tool results,
/// about 200,000 tokens) prepared in seconds, not minutes (the bound is generous: a debug build
/// on a loaded machine; `cargo bench --bench long_history` has the figures).
fn a_long_history_arriving_at_once_is_prepared_in_seconds(build: Build) {
    let upstream = scripted();
    let dir = scratch("long");
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let started = std::time::Instant::now();
    let (status, _, body) = post(&format!("{}/v1/messages", proxy.url), &request("long", &long_history()), &headers());
    let took = started.elapsed();
    assert_eq!(status, 200, "{body}");
    assert!(took < std::time::Duration::from_secs(120), "10,000 messages took {took:?}");
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    let call = &calls(&dir.join(".trace"), "long")[0];
    assert_eq!((call["managed"].as_bool(), call["new_messages"].as_u64()), (Some(true), Some(9_999)), "{call}");
    assert!(call["client_tokens"].as_u64().unwrap() > 150_000, "{call}");
}

// ---------------------------------------------------------------------------------------------
// Agreement with the replay

/// The request Claude Code would have sent for `messages` (the importer's inverse: tool results
/// and the user text after them are one user message, as one line of the log; assistant blocks
/// in order).
fn claude_code_request(session: &str, messages: &[context_workbench::model::Message]) -> Vec<u8> {
    use context_workbench::model::{ContentPart, Role};
    let mut wire: Vec<Value> = Vec::new();
    let mut previous = None;
    for message in messages {
        let blocks: Vec<Value> = message
            .content
            .iter()
            .filter_map(|part| match part {
                ContentPart::Text { text } => Some(json!({"type": "text", "text": text})),
                ContentPart::Reasoning { text, signature } => {
                    Some(json!({"type": "thinking", "thinking": text, "signature": signature.clone().unwrap_or_default()}))
                }
                ContentPart::ToolCall(call) => {
                    let input: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::String(call.arguments.clone()));
                    Some(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}))
                }
                ContentPart::ToolResult(result) => Some(json!({"type": "tool_result", "tool_use_id": result.call_id, "content": result.output, "is_error": result.status == context_workbench::model::ToolStatus::Error})),
                ContentPart::Opaque(o) => serde_json::from_str(&o.json).ok(),
            })
            .collect();
        let role = if message.role == Role::Assistant { "assistant" } else { "user" };
        match wire.last_mut() {
            Some(last) if role == "user" && previous == Some(Role::Tool) => {
                last["content"].as_array_mut().unwrap().extend(blocks);
            }
            _ => wire.push(json!({"role": role, "content": blocks})),
        }
        previous = Some(message.role);
    }
    json!({
        "model": "claude-replayed",
        "messages": wire,
        "metadata": {"user_id": json!({"session_id": session}).to_string()},
        "max_tokens": 1000,
        "stream": true,
    })
    .to_string()
    .into_bytes()
}

fn the_proxy_and_the_replays_workbench_strategy_agree_call_by_call(build: Build) {
    let file = "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl";
    let text = std::fs::read_to_string(format!("{}/../../data/traces/claude-code/{file}", env!("CARGO_MANIFEST_DIR")))
        .unwrap();
    let trajectories = context_workbench::import::import(file, &text).unwrap();
    let upstream = Upstream::start(|_: &Received| {
        // No usage: the engine keeps its own count, as in the replay.
        let events = vec![
            ("message_start".to_owned(), json!({"type": "message_start", "message": {"id": "msg", "content": []}})),
            (
                "content_block_start".to_owned(),
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "ok"}}),
            ),
            ("content_block_stop".to_owned(), json!({"type": "content_block_stop", "index": 0})),
            ("message_stop".to_owned(), json!({"type": "message_stop"})),
        ];
        Reply::Events { events, cut_after: None }
    });
    for window in [200_000u32, 15_000] {
        let dir = scratch(&format!("agree-{window}"));
        // The log records no tools, so the client sends none; then no request is a side call.
        // The replay keeps no store: forms and blocks name no plain-text originals in either.
        let config = "[proxy]\nside_calls = false\n\n[store]\nname_originals = false\n";
        std::fs::write(dir.join("agree.toml"), config).unwrap();
        let args = ["--upstream", &upstream.url, "--window", &window.to_string(), "--config", "agree.toml"];
        let proxy = Proxy::start_build(build, &dir, &args);
        let url = format!("{}/v1/messages", proxy.url);
        let mut sessions = Vec::new();
        for (index, trajectory) in trajectories.iter().enumerate().filter(|(_, t)| !t.calls.is_empty()) {
            let session = format!("agree-{index}");
            for &end in &trajectory.calls {
                let (status, _, body) =
                    post(&url, &claude_code_request(&session, &trajectory.messages[..end]), &headers());
                assert_eq!(status, 200, "{body}");
            }
            sessions.push((index, session));
        }
        let (status, log) = proxy.stop();
        assert!(status.success(), "{log}");
        let mut rewrites = 0;
        let mut compared = 0;
        let mut fallbacks = 0;
        let contexts = sessions.len();
        for (index, session) in sessions {
            let mut replay = ReplaySession::import(file, &text, window as usize).unwrap();
            replay.select(index).unwrap();
            let proxied = calls(&dir.join(".trace"), &session);
            assert_eq!(proxied.len(), trajectories[index].calls.len(), "{session}");
            for (k, record) in proxied.iter().enumerate() {
                let step = replay.step().unwrap().call;
                // Where the engine cannot prepare the call (a context overflow), both fall back.
                let managed = record["managed"] == json!(true);
                assert_eq!(step.fallback.is_none(), managed, "{session} call {k}: {:?}", record["notes"]);
                if !managed {
                    fallbacks += 1;
                    continue;
                }
                let tokens = record["prompt_tokens"].as_u64().unwrap() as usize;
                assert_eq!(tokens, step.tokens, "{session} call {k} (window {window}): prompt tokens");
                let replayed: Vec<String> =
                    step.rewrites.iter().map(|r| format!("{} {}..{}", r.mechanism, r.start, r.end)).collect();
                assert_eq!(record["rewrites"], json!(replayed), "{session} call {k} (window {window}): rewrites");
                rewrites += replayed.len();
                compared += 1;
            }
        }
        eprintln!(
            "proxy = replay on {file}, window {window}: {contexts} contexts, {compared} calls equal ({rewrites} rewrites), {fallbacks} calls unmanaged in both"
        );
        if window == 15_000 {
            assert!(rewrites > 4, "the small window makes the engine rewrite more");
        }
    }
}

/// The TodoWrite lists of a small session: five items planned, two done, then the list
/// rewritten with a changed third item; `None` is the answer that ends it.
const TODO_LISTS: [Option<[(&str, &str); 5]>; 5] = [
    Some([("a", "in_progress"), ("b", "pending"), ("c", "pending"), ("d", "pending"), ("e", "pending")]),
    Some([("a", "completed"), ("b", "in_progress"), ("c", "pending"), ("d", "pending"), ("e", "pending")]),
    Some([("a", "completed"), ("b", "completed"), ("c", "in_progress"), ("d", "pending"), ("e", "pending")]),
    Some([
        ("a", "completed"),
        ("b", "completed"),
        ("c, done another way", "in_progress"),
        ("d", "pending"),
        ("e", "pending"),
    ]),
    None,
];

fn todo_blocks(n: usize) -> Vec<Value> {
    let Some(list) = TODO_LISTS[n] else { return vec![json!({"type": "text", "text": "Done."})] };
    let todos: Vec<Value> = list.iter().map(|(t, s)| json!({"content": t, "status": s, "activeForm": t})).collect();
    vec![json!({"type": "tool_use", "id": format!("toolu_p{n}"), "name": "TodoWrite", "input": {"todos": todos}})]
}

/// A Claude Code plan revised through the proxy: the rewritten TodoWrite list keeps the two
/// finished items, revises the rest, drops the changed one, and the store and the dashboard's
/// API hold the revision and its event.
fn a_rewritten_todo_list_revises_the_plan(build: Build) {
    let upstream = Upstream::start(|request: &Received| {
        let n = request.json()["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").count();
        Reply::Events {
            events: anthropic_events(&format!("msg_p{n}"), &todo_blocks(n), anthropic_usage(900, 0)),
            cut_after: None,
        }
    });
    let dir = scratch("revision");
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let mut messages = vec![json!({"role": "user", "content": [{"type": "text", "text": "Do a to e"}]})];
    for n in 0..TODO_LISTS.len() {
        let (status, _, body) = post(&format!("{}/v1/messages", proxy.url), &request("plan-1", &messages), &headers());
        assert_eq!(status, 200, "{body}");
        messages.push(json!({"role": "assistant", "content": todo_blocks(n)}));
        let result = "Todos have been modified successfully. Ensure that you continue to use the todo list.";
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_p{n}"), "content": result}]}));
    }
    // The dashboard is the shells' (the machine serves requests of the agents' APIs only).
    let detail = (build != Build::Machine).then(|| get(&format!("{}/workbench/api/traces/plan-1", proxy.url), &[]).2);
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    let store = dir.join(".trace");
    let tree: Value = serde_json::from_str(&std::fs::read_to_string(store.join("plan-1/goal.json")).unwrap()).unwrap();
    let goals: Vec<(&str, &str)> = tree["goals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["description"].as_str().unwrap(), g["status"].as_str().unwrap()))
        .collect();
    let want = [
        ("a", "completed"),
        ("b", "completed"),
        ("c, done another way", "in_progress"),
        ("c", "abandoned"),
        ("d", "pending"),
        ("e", "pending"),
    ];
    assert_eq!(goals, want, "{tree}");
    let revision = json!([{"from_item": 3, "kept": ["1", "2"], "revised": ["6", "4", "5"], "dropped": ["c"]}]);
    assert_eq!(tree["revisions"], revision, "{tree}");
    if let Some(detail) = detail {
        let detail: Value = serde_json::from_str(&detail).unwrap();
        assert_eq!(detail["goal_tree"]["revisions"], revision, "the dashboard's API shows it: {detail}");
    }
    let events = std::fs::read_to_string(store.join("plan-1/events.jsonl")).unwrap();
    let revised: Vec<Value> = events
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "plan_revised")
        .collect();
    assert_eq!(revised.len(), 1, "{events}");
    assert_eq!(json!([revised[0]["revision"]]), revision);
}

both_shells! {
    machine: [
        a_conversation_goes_through_the_engine_and_is_saved,
        a_reply_ends_once_it_is_recorded,
        a_rewritten_todo_list_revises_the_plan,
        pass_through_routes_and_side_calls_arrive_byte_identical,
        side_calls_of_a_session_are_counted_in_it,
        a_text_agents_first_call_is_counted_once_its_conversation_goes_on,
        each_api_goes_to_its_own_upstream_by_its_path,
        bad_requests_get_errors_in_the_providers_shape,
        a_web_page_can_neither_drive_nor_read_the_proxy,
        a_request_of_no_api_goes_to_the_upstream_named_alone,
        an_upstream_that_is_down_slow_failing_or_cut_short_reaches_the_agent_and_loses_nothing,
        when_the_engine_fails_the_request_goes_through_unmanaged,
        a_request_the_upstream_refuses_in_the_engines_form_goes_as_the_agent_sent_it,
        a_history_that_departs_starts_a_new_session,
        a_history_sent_again_changed_is_revised_in_its_session,
        fifty_sessions_at_once_stay_apart,
        the_proxy_and_the_replays_workbench_strategy_agree_call_by_call,
        sessions_are_titled_by_the_users_words_and_end_finished_stopped_or_interrupted,
        a_conversation_continued_after_a_restart_a_kill_or_an_eviction_resumes_its_session,
    ],
    shells: [
        an_agent_that_leaves_before_the_reply_is_recorded_and_holds_nothing_up,
        a_closed_terminal_stops_the_proxy_as_ctrl_c_does_finishing_the_requests_in_flight,
        an_agent_that_stopped_reading_holds_up_no_shutdown,
        conversations_that_take_each_others_room_stay_one_session_each,
        a_long_history_arriving_at_once_is_prepared_in_seconds,
        a_long_prepare_in_one_session_holds_up_no_other_request,
        a_long_body_is_read_without_holding_up_other_requests,
        the_dashboard_at_the_proxys_address_reads_the_store_and_refuses_bad_input,
        help_and_messages_name_the_shell_and_what_it_speaks,
    ],
}

/// `proxy --help` names every API the proxy speaks and only the flags this shell takes; its lines
/// and errors name the program the user ran; a store it cannot create is named by its absolute
/// path, without a `--store` the user never passed.
fn help_and_messages_name_the_shell_and_what_it_speaks(build: Build) {
    let program = build.program();
    let help = build.command().args(["proxy", "--help"]).output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(help.starts_with(&format!("usage: {program} proxy ")), "{help}");
    let apis = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(apis.contains("Anthropic Messages, OpenAI Chat Completions, OpenAI Responses or Gemini"), "{help}");
    assert_eq!(help.contains("--llm-url"), build == Build::Native, "only the native shell takes --llm-url: {help}");
    assert!(help.lines().all(|line| line.len() <= 100), "{help}");
    let flags = help.split("\n\n").nth(2).unwrap_or_default();
    assert!(flags.lines().all(|line| line.starts_with("  ")), "every flag's lines indented alike: {flags}");
    let bogus = build.command().args(["proxy", "--bogus"]).output().unwrap();
    assert_eq!(bogus.status.code(), Some(2));
    let expected = format!("{program}: proxy: invalid option '--bogus' ({program} proxy --help lists the flags)\n");
    assert_eq!(String::from_utf8_lossy(&bogus.stderr), expected, "alike in both shells");

    let dir = scratch(&format!("blocked-{build:?}"));
    std::fs::write(dir.join(".trace"), "a file where the store would go").unwrap();
    let blocked = build.command().current_dir(&dir).args(["proxy", "--port", "0"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&blocked.stderr);
    assert_eq!(blocked.status.code(), Some(2), "{stderr}");
    let store = dir.canonicalize().unwrap().join(".trace");
    let expected = format!("{program}: proxy: cannot create the trace store {}: ", store.display());
    assert!(stderr.starts_with(&expected), "{stderr}");
    assert!(!stderr.contains("--store"), "no --store was passed: {stderr}");

    // A port another process holds, worded alike by both shells.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let dir = scratch(&format!("port-{build:?}"));
    let refused = build.command().current_dir(&dir).args(["proxy", "--port", &port]).output().unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    let expected = format!(
        "{program}: proxy: cannot listen on 127.0.0.1:{port}: the address is in use (--port 0 picks a free port)\n"
    );
    assert_eq!(stderr, expected);
    let ignored = std::fs::read_to_string(dir.join(".trace/.gitignore")).unwrap_or_default();
    assert!(ignored.ends_with("\n*\n"), "a start that failed leaves its store out of `git status`: {ignored:?}");

    let upstream = scripted();
    let dir = scratch(&format!("lines-{build:?}"));
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    post(&format!("{}/v1/messages", proxy.url), &request("sess-lines", &conversation("Name the shell", 0)), &headers());
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    let lines: Vec<&str> = log.lines().filter(|l| !l.is_empty()).collect();
    assert!(lines.len() >= 3, "{log}");
    for line in lines {
        assert!(line.starts_with(&format!("{program} proxy: ")), "{line}");
    }
}

/// The proxy serves the dashboard under /workbench/ (the page under a strict CSP, the store's API
/// beside it; `Proxy::start` checks that it prints the address); what the API answers is the store's record, and bad input
/// gets the API's errors.
fn the_dashboard_at_the_proxys_address_reads_the_store_and_refuses_bad_input(build: Build) {
    let upstream = scripted();
    let dir = scratch(&format!("dashboard-{build:?}"));
    let proxy = Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let base = format!("{}/workbench", proxy.url);
    let (status, answered, _) = get(&base, &[]);
    assert_eq!((status, answered.get("location").map(String::as_str)), (308, Some("/workbench/")));
    let (status, answered, page) = get(&format!("{base}/"), &[]);
    assert_eq!(status, 200);
    assert!(page.contains("<script type=\"module\" src=\"dashboard.js\">"), "{page}");
    assert!(answered["content-security-policy"].contains("script-src 'self'"), "{answered:?}");
    for asset in ["dashboard.js", "dashboard.css", "dom.js", "chart.js", "views.js"] {
        let (status, answered, _) = get(&format!("{base}/{asset}"), &[]);
        assert_eq!(status, 200, "{asset}");
        assert!(answered.contains_key("content-security-policy"), "{asset}");
    }
    let (_, _, empty) = get(&format!("{base}/api/stats"), &[]);
    assert_eq!(serde_json::from_str::<Value>(&empty).unwrap()["sessions"], json!([]));

    let url = format!("{}/v1/messages?beta=true", proxy.url);
    for steps in 0..3 {
        post(&url, &request("sess-dash", &conversation("Fix the parser", steps)), &headers());
    }
    let api = |path: &str| {
        let (status, _, body) = get(&format!("{base}/api/{path}"), &[]);
        (status, serde_json::from_str::<Value>(&body).unwrap_or_else(|_| panic!("{path}: {body}")))
    };
    let store = dir.join(".trace");
    let records = calls(&store, "sess-dash");
    let (status, stats) = api("stats");
    assert_eq!(status, 200);
    let session = &stats["sessions"][0];
    assert_eq!((session["title"].as_str(), session["calls"].as_u64()), (Some("Fix the parser"), Some(3)), "{stats}");
    let sent: u64 = records.iter().map(|c| c["prompt_tokens"].as_u64().unwrap()).sum();
    assert_eq!(session["prompt_tokens"].as_u64(), Some(sent));
    // A tool output's words, found in the raw trace and named by the call that first held them.
    let (_, found) = api("search?q=PART%201%3A");
    let hit = &found["hits"][0];
    assert_eq!((hit["trace_id"].as_str(), hit["call"].as_u64()), (Some("sess-dash"), Some(3)), "{found}");
    assert!(hit["excerpt"].as_str().unwrap().contains("part 1: "), "{found}");
    let id = hit["message_id"].as_str().unwrap();
    let (_, originals) = api(&format!("traces/sess-dash/originals?ref=raw%23{id}"));
    assert_eq!(originals["originals"][0]["text"].as_str(), Some("part 1: ".repeat(240).as_str()));
    let (_, newest) = api("traces/sess-dash/calls?from=2");
    assert_eq!(newest["calls"].as_array().map(Vec::len), Some(records.len() - 2), "only the calls after the first 2");
    let (_, prompt) = api("traces/sess-dash/prompt");
    assert!(prompt["prompt"]["tokens"].as_u64().unwrap() > 0, "{prompt}");
    // Any managed call's prompt, numbered as in calls.jsonl; the newest is prompt.json's.
    let managed: Vec<&Value> = records.iter().filter(|c| c["managed"] == json!(true)).collect();
    assert_eq!(managed.len(), 3);
    for record in &managed {
        let (status, page) = api(&format!("traces/sess-dash/prompt?call={}", record["call"]));
        assert_eq!(status, 200);
        assert_eq!(
            (&page["prompt"]["call"], &page["prompt"]["tokens"]),
            (&record["call"], &record["prompt_tokens"]),
            "{page}"
        );
    }
    assert_eq!(api(&format!("traces/sess-dash/prompt?call={}", managed[2]["call"])).1["prompt"], prompt["prompt"]);
    let (status, compactions) = api("traces/sess-dash/compactions");
    assert_eq!((status, &compactions["compactions"]), (200, &json!([])), "three short calls compact nothing");
    let (_, missing) = api("traces/sess-dash/prompt?call=99");
    assert!(
        missing["prompt"].is_null() && missing["notes"][0].as_str().unwrap().contains("no saved prompt"),
        "{missing}"
    );

    // Bad input: the API's errors; another host name: refused.
    for (path, status, code) in [
        ("search?q=%20", 400, "invalid_input"),
        ("search", 400, "invalid_input"),
        ("traces/sess-dash/calls?from=-1", 400, "invalid_input"),
        ("stats?since=yesterday", 400, "invalid_input"),
        ("traces/sess-dash/originals?ref=m9..m1", 400, "invalid_input"),
        ("traces/sess-dash/originals?ref=m000999", 404, "host_not_found"),
        ("traces/nobody/prompt", 404, "host_not_found"),
        ("traces/sess-dash/prompt?call=last", 400, "invalid_input"),
        ("traces/nobody/compactions", 404, "host_not_found"),
        ("traces/..%2Fx/prompt", 400, "invalid_input"),
    ] {
        let (got, body) = api(path);
        assert_eq!((got, body["error"]["code"].as_str()), (status, Some(code)), "{path}: {body}");
    }
    let (status, _, body) = get(&format!("{base}/api/stats"), &[("host", "rebound.example:80")]);
    assert_eq!(status, 403, "{body}");
    // Another site's page (a browser sends its Origin with every cross-site request and WebSocket).
    let (status, _, body) = get(&format!("{base}/api/stats"), &[("origin", "https://evil.example")]);
    assert_eq!(status, 403, "{body}");
    let (status, _, _) = get(&format!("{base}/"), &[("origin", &proxy.url)]);
    assert_eq!(status, 200);
    // A request target a URL parser refuses gets an answer and stops nothing.
    for target in ["http://a:99999/workbench/", "//[::1/workbench/"] {
        let mut stream = std::net::TcpStream::connect(proxy.url.trim_start_matches("http://")).unwrap();
        write!(stream, "GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 "), "{target}: {answer}");
    }
    assert_eq!(get(&format!("{base}/api/stats"), &[]).0, 200, "the proxy still answers");
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
}

/// Under `nohup` (SIGHUP ignored from the start) the terminal closing leaves `workbench proxy`
/// running; SIGTERM still stops it.
#[test]
fn under_nohup_a_closed_terminal_leaves_the_native_proxy_running() {
    let dir = scratch("nohup");
    let mut child = std::process::Command::new("nohup")
        .arg(env!("CARGO_BIN_EXE_workbench"))
        .args(["proxy", "--port", "0"])
        .current_dir(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(dir.join("proxy.log")).unwrap())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut url = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut url).unwrap();
    let pid = child.id() as i32;
    assert_eq!(unsafe { libc::kill(pid, libc::SIGHUP) }, 0);
    std::thread::sleep(std::time::Duration::from_millis(500));
    let log = std::fs::read_to_string(dir.join("proxy.log")).unwrap();
    assert!(child.try_wait().unwrap().is_none(), "the hangup stopped it: {log}");
    assert_eq!(get(&format!("{}/workbench/api/stats", url.trim()), &[]).0, 200, "it still answers");
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    assert!(child.wait().unwrap().success());
}

/// `workbench stats` on a store the proxy recorded: its figures are the sums of the store's
/// `calls.jsonl`, the side call counted apart, the title the task's words.
#[test]
fn stats_add_up_a_recorded_store() {
    let upstream = scripted();
    let dir = scratch("stats");
    let proxy = Proxy::start_build(Build::Native, &dir, &["--upstream", &upstream.url]);
    let url = format!("{}/v1/messages?beta=true", proxy.url);
    for steps in 0..4 {
        post(&url, &request("sess-stats", &conversation("Fix the parser", steps)), &headers());
        if steps == 1 {
            let metadata = json!({"user_id": json!({"session_id": "sess-stats"}).to_string()});
            let title = json!({"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "Title?"}], "metadata": metadata});
            post(&url, title.to_string().as_bytes(), &headers());
        }
    }
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    let store = dir.join(".trace");
    let stats = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_workbench"))
            .arg("stats")
            .arg(&store)
            .args(args)
            .output()
            .unwrap()
    };
    let output = stats(&["--json"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let records = calls(&store, "sess-stats");
    let sum = |key: &str| records.iter().map(|c| c[key].as_u64().unwrap()).sum::<u64>();
    let session = &report["sessions"][0];
    assert_eq!(report["sessions"].as_array().unwrap().len(), 1, "{report}");
    assert_eq!(session["title"], "Fix the parser");
    assert_eq!((session["calls"].as_u64(), session["side_calls"].as_u64()), (Some(4), Some(1)), "{session}");
    assert_eq!(session["client_tokens"].as_u64(), Some(sum("client_tokens")));
    assert_eq!(session["prompt_tokens"].as_u64(), Some(sum("prompt_tokens")));
    let read: u64 = records.iter().filter_map(|c| c["usage"]["cache_read_tokens"].as_u64()).sum();
    assert_eq!(session["cache_read_tokens"].as_u64(), Some(read));
    assert_eq!(report["total"]["client_tokens"], session["client_tokens"]);
    let table = String::from_utf8(stats(&[]).stdout).unwrap();
    assert!(table.contains("Fix the parser") && table.contains("4 (+1)"), "{table}");
    let later = String::from_utf8(stats(&["--since", "2999-01-01"]).stdout).unwrap();
    let day = report["sessions"][0]["day"].as_str().unwrap();
    let none = format!(
        "No proxied session in {} since 2999-01-01 (UTC): 1 session before, the last active on {day}.\n",
        store.display()
    );
    assert_eq!(later, none, "the store has sessions, only none since that day");
    let bad = stats(&["--since", "yesterday"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("expected a day as YYYY-MM-DD"));
}
