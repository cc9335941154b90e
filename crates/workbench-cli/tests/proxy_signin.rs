//! Team mode's sign-in (#49), the real `workbench proxy` against a scripted upstream: two
//! members' conversations each recorded under their person (the same conversation twice is two
//! sessions); no token, a malformed one, an unknown one and a revoked one refused 401 in each
//! provider's error shape with nothing recorded; a base URL with the token's path prefix; the
//! token never upstream, stored or logged; and listening beyond loopback refused without a team.
#![cfg(not(target_arch = "wasm32"))]

#[macro_use]
mod proxy_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use proxy_support::{Proxy, Received, Reply, Upstream, anthropic_events, anthropic_usage, files_under, post, scratch};
use serde_json::{Value, json};

const KEY: &str = "sk-ant-api03-signintestkey0123456789abcdefghijklmnopqrstuvwxyzABCDEF";

fn workbench(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out =
        Command::new(env!("CARGO_BIN_EXE_workbench")).current_dir(dir).args(args).output().expect("run workbench");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `workbench team add NAME`: the token it printed.
fn add(dir: &Path, name: &str, admin: bool) -> String {
    let mut args = vec!["team", "add", name];
    if admin {
        args.push("--admin");
    }
    let (ok, out, err) = workbench(dir, &args);
    assert!(ok, "{err}");
    let token = out.trim().to_owned();
    assert!(token.starts_with("wbt_") && token.len() == 47 && !out.trim().contains('\n'), "{out}");
    token
}

fn upstream() -> Upstream {
    Upstream::start(|request: &Received| {
        if request.path.contains("chat/completions") {
            let reply = json!({"id": "c1", "object": "chat.completion", "model": "gpt-5", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Done."}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 900, "completion_tokens": 3, "total_tokens": 903}});
            return Reply::Json { status: 200, body: reply.to_string() };
        }
        let blocks = [json!({"type": "text", "text": "The parser is fixed."})];
        Reply::Events { events: anthropic_events("msg_1", &blocks, anthropic_usage(900, 0)), cut_after: None }
    })
}

fn anthropic(session: &str) -> Vec<u8> {
    json!({
        "model": "claude-opus-5-5",
        "messages": [{"role": "user", "content": "Fix the parser"}],
        "system": "You are a coding agent.",
        "tools": [{"name": "Bash", "description": "Run a shell command", "input_schema": {"type": "object"}}],
        "metadata": {"user_id": json!({"session_id": session}).to_string()},
        "max_tokens": 1000,
        "stream": true,
    })
    .to_string()
    .into_bytes()
}

fn openai() -> Vec<u8> {
    json!({
        "model": "gpt-5",
        "messages": [{"role": "system", "content": "You code."}, {"role": "user", "content": "Fix the parser"}],
        "tools": [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}],
    })
    .to_string()
    .into_bytes()
}

fn headers(token: Option<&str>) -> Vec<(&'static str, String)> {
    let mut headers = vec![("x-api-key", KEY.to_owned()), ("anthropic-version", "2023-06-01".to_owned())];
    if let Some(token) = token {
        headers.push(("x-workbench-token", token.to_owned()));
    }
    headers
}

fn send(url: &str, body: &[u8], headers: &[(&'static str, String)]) -> (u16, String) {
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let (status, _, body) = post(url, body, &headers);
    (status, body)
}

/// Every trace's `meta.json` under `store`, by trace id.
fn metas(store: &Path) -> Vec<(String, Value)> {
    let mut metas: Vec<(String, Value)> = std::fs::read_dir(store)
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("meta.json").is_file())
        .map(|e| {
            let meta = std::fs::read_to_string(e.path().join("meta.json")).unwrap();
            (e.file_name().to_string_lossy().into_owned(), serde_json::from_str(&meta).unwrap())
        })
        .collect();
    metas.sort_by(|a, b| a.0.cmp(&b.0));
    metas
}

#[test]
fn each_member_signs_in_and_nothing_else_is_recorded() {
    let upstream = upstream();
    let dir = scratch("signin");
    let alice = add(&dir, "alice", true);
    let bob = add(&dir, "bob", false);
    let carol = add(&dir, "carol", false);
    let dave = add(&dir, "dave", false);
    let (ok, _, err) = workbench(&dir, &["team", "revoke", "carol"]);
    assert!(ok, "{err}");
    let (_, list, _) = workbench(&dir, &["team", "list"]);
    let team = std::fs::read_to_string(dir.join(".trace/team.json")).unwrap();
    for token in [&alice, &bob, &carol] {
        assert!(!list.contains(token.as_str()) && !team.contains(token.as_str()), "a token is never kept:\n{team}");
    }
    let rows: Vec<Vec<&str>> = list.lines().skip(1).map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(
        rows.iter().map(|r| (r[0], r[1], r.len())).collect::<Vec<_>>(),
        [("alice", "yes", 5), ("bob", "no", 5), ("carol", "no", 6), ("dave", "no", 5)]
    );

    let proxy = Proxy::start(&dir, &["--upstream", &upstream.url]);
    let store = dir.join(".trace");
    let messages = format!("{}/v1/messages", proxy.url);
    // The same conversation, from Alice and from Bob: two sessions, each under its person.
    for token in [&alice, &bob] {
        let (status, body) = send(&messages, &anthropic("same-session"), &headers(Some(token)));
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("message_stop"), "{body}");
    }
    // Bob's agent cannot send headers: the token in its base URL.
    let prefixed = format!("{}/t/{bob}/v1/chat/completions", proxy.url);
    let (status, body) = send(&prefixed, &openai(), &[("authorization", "Bearer sk-openai".to_owned())]);
    assert_eq!(status, 200, "{body}");
    let recorded = metas(&store);
    let people: Vec<(&str, Option<&str>)> =
        recorded.iter().map(|(id, m)| (id.as_str(), m["person"].as_str())).collect();
    assert_eq!(people.len(), 3, "{people:?}");
    assert!(people.contains(&("alice.same-session", Some("alice"))), "{people:?}");
    assert!(people.contains(&("bob.same-session", Some("bob"))), "{people:?}");
    assert!(people.iter().any(|(id, p)| id.starts_with("bob.proxy-") && *p == Some("bob")), "{people:?}");
    let received = upstream.requests();
    assert_eq!(received.len(), 3);
    assert_eq!(received[2].path, "/v1/chat/completions", "the prefix is taken off before the upstream");
    for request in &received {
        assert!(request.header("x-workbench-token").is_none(), "the token stays here");
        assert!(!format!("{request:?}").contains("wbt_"), "no token upstream: {request:?}");
    }
    assert_eq!(received[0].header("x-api-key"), Some(KEY), "the provider's key passes as today");

    // Refused, in each provider's shape, and nothing recorded.
    let before = files_under(&store);
    let malformed = "wbt_not-a-token";
    let unknown = format!("wbt_{}", "A".repeat(43));
    for token in [None, Some(malformed), Some(unknown.as_str()), Some(carol.as_str())] {
        let (status, body) = send(&messages, &anthropic("refused"), &headers(token));
        assert_eq!(status, 401, "{token:?}: {body}");
        let error: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            (error["type"].as_str(), error["error"]["type"].as_str()),
            (Some("error"), Some("authentication_error")),
            "{body}"
        );
        let (status, body) = send(&format!("{}/v1/chat/completions", proxy.url), &openai(), &headers(token));
        let error: Value = serde_json::from_str(&body).unwrap();
        assert_eq!((status, error["error"]["type"].as_str()), (401, Some("authentication_error")), "{body}");
        let gemini = format!("{}/v1beta/models/gemini-2.5-pro:generateContent", proxy.url);
        let body = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}).to_string();
        let mut gemini_headers = vec![("x-goog-api-key", "g-key".to_owned())];
        gemini_headers.extend(token.map(|t| ("x-workbench-token", t.to_owned())));
        let (status, body) = send(&gemini, body.as_bytes(), &gemini_headers);
        let error: Value = serde_json::from_str(&body).unwrap();
        assert_eq!((status, error["error"]["status"].as_str()), (401, Some("UNAUTHENTICATED")), "{body}");
    }
    let (status, _) = send(&format!("{}/t/{carol}/v1/messages", proxy.url), &anthropic("refused"), &headers(None));
    assert_eq!(status, 401, "a revoked token in the path too");
    assert_eq!(files_under(&store), before, "nothing refused is recorded");
    assert_eq!(upstream.requests().len(), 3, "nothing refused goes upstream");
    // The proxy's own dashboard asks for a token too.
    let (status, _, body) = proxy_support::get(&format!("{}/workbench/api/traces", proxy.url), &[]);
    assert_eq!(status, 401, "{body}");
    let (status, _, body) =
        proxy_support::get(&format!("{}/workbench/api/traces", proxy.url), &[("x-workbench-token", &bob)]);
    let traces: Value = serde_json::from_str(&body).unwrap();
    assert_eq!((status, traces["traces"].as_array().map(Vec::len)), (200, Some(2)), "Bob's own two: {body}");

    // Revoked while the proxy runs: refused from the next request on.
    let (ok, _, err) = workbench(&dir, &["team", "revoke", "bob"]);
    assert!(ok, "{err}");
    let (status, body) = send(&messages, &anthropic("late"), &headers(Some(&bob)));
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("revoked"), "{body}");

    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    assert!(log.contains("refused, a revoked token"), "{log}");
    for (path, text) in files_under(&dir) {
        for token in [&alice, &bob, &carol] {
            assert!(path.ends_with("proxy.log") || !text.contains(token.as_str()), "a token in {}", path.display());
        }
    }
    for token in [&alice, &bob, &carol] {
        assert!(!log.contains(token.as_str()), "a token in the log:\n{log}");
    }
    let (ok, table, err) = workbench(&dir, &["stats"]);
    assert!(ok, "{err}");
    let people = &table[table.find("By day and person (team mode):\n").expect(&table)..];
    assert!(
        people.lines().nth(1).unwrap().contains("alice") && people.lines().nth(2).unwrap().contains("bob"),
        "{table}"
    );
    dashboard_api(&store, &alice, &bob, &dave);
}

/// `workbench serve` over the store: the API asks for a live token; Alice (an admin) reads
/// everyone's sessions and the sums per person, Dave (a member without a session) none of
/// theirs, Bob (revoked by now) nothing.
fn dashboard_api(store: &Path, alice: &str, bob: &str, dave: &str) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args(["serve", store.to_str().unwrap(), "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start workbench serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().to_owned();
    let get = |path: &str, token: Option<&str>| {
        let headers: Vec<(&str, &str)> = token.map(|t| ("x-workbench-token", t)).into_iter().collect();
        let (status, _, body) = proxy_support::get(&format!("{url}{path}"), &headers);
        (status, serde_json::from_str::<Value>(&body).unwrap_or(Value::Null))
    };
    let (status, body) = get("/api/traces", None);
    assert_eq!((status, body["error"]["code"].as_str()), (401, Some("unauthorized")), "{body}");
    assert_eq!(get("/api/stats", Some(bob)).0, 401, "a revoked token");
    let (status, traces) = get("/api/traces", Some(alice));
    assert_eq!(status, 200, "{traces}");
    assert_eq!(traces["traces"].as_array().unwrap().len(), 3, "an admin reads everyone's: {traces}");
    let (_, stats) = get("/api/stats", Some(alice));
    let people: Vec<&str> = stats["people"].as_array().unwrap().iter().map(|p| p["person"].as_str().unwrap()).collect();
    assert_eq!(people, ["alice", "bob"], "{stats}");
    let (status, traces) = get("/api/traces", Some(dave));
    assert_eq!((status, traces["traces"].as_array().map(Vec::len)), (200, Some(0)), "{traces}");
    let (status, trace) = get("/api/traces/alice.same-session", Some(dave));
    assert_eq!(status, 404, "another's session is not found: {trace}");
    assert_eq!(get("/api/traces/alice.same-session/calls", Some(dave)).0, 404);
    assert_eq!(get("/api/traces/alice.same-session", Some(alice)).0, 200);
    let (_, stats) = get("/api/stats", Some(dave));
    assert_eq!(stats["sessions"].as_array().map(Vec::len), Some(0), "{stats}");
    let (_, found) = get("/api/search?q=parser", Some(dave));
    assert_eq!(found["hits"].as_array().map(Vec::len), Some(0), "{found}");
    assert_eq!(get("/", None).0, 200, "the page itself needs no token");
    // The WebSocket, to which a browser gives no header: the token as a query parameter.
    let host = url.strip_prefix("http://").unwrap();
    let watch = |trace: &str, token: Option<&str>| {
        let query = token.map(|t| format!("?token={t}")).unwrap_or_default();
        match tungstenite::connect(format!("ws://{host}/api/traces/{trace}/watch{query}")) {
            Ok((mut socket, _)) => {
                let first = socket.read().unwrap().into_text().unwrap().to_string();
                (101, first)
            }
            Err(tungstenite::Error::Http(response)) => (response.status().as_u16(), String::new()),
            Err(e) => panic!("{e}"),
        }
    };
    assert_eq!(watch("alice.same-session", None).0, 401);
    assert_eq!(watch("alice.same-session", Some(dave)).0, 404, "another's session is not found");
    let (status, connected) = watch("alice.same-session", Some(alice));
    assert!(status == 101 && connected.contains(r#""event":"connected""#), "{connected}");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn beyond_loopback_the_proxy_needs_a_team() {
    let dir = scratch("listen");
    let (ok, _, err) = workbench(&dir, &["proxy", "--listen", "0.0.0.0:0"]);
    assert!(!ok, "refused at start");
    assert!(err.contains("team mode") && err.contains("workbench team add NAME --admin"), "{err}");
    assert!(!dir.join(".trace/team.json").exists());

    // With a member it starts, and answers requests for the gateway's own host name.
    let upstream = upstream();
    let token = add(&dir, "ada", true);
    let mut child = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .current_dir(&dir)
        .args(["proxy", "--listen", "0.0.0.0:0", "--upstream", &upstream.url])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join("proxy.log")).unwrap())
        .spawn()
        .expect("start workbench proxy");
    // Its four lines (address, base URLs, dashboard), read whole: a closed pipe would stop it.
    let lines: Vec<String> = BufReader::new(child.stdout.take().unwrap()).lines().take(4).map(Result::unwrap).collect();
    let line = &lines[0];
    let port = line.trim().strip_prefix("http://0.0.0.0:").expect(line).to_owned();
    let ask = |token: Option<&str>| {
        let body = anthropic("far");
        let mut request = format!(
            "POST /v1/messages HTTP/1.1\r\nhost: gateway.example:{port}\r\nx-api-key: {KEY}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
            body.len()
        );
        if let Some(token) = token {
            request.push_str(&format!("x-workbench-token: {token}\r\n"));
        }
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port.parse::<u16>().unwrap())).unwrap();
        stream.write_all(format!("{request}\r\n").as_bytes()).unwrap();
        stream.write_all(&body).unwrap();
        // A refusal closes the connection, perhaps with a reset after its answer.
        let mut answer = Vec::new();
        let mut piece = [0u8; 4096];
        while let Ok(n @ 1..) = stream.read(&mut piece) {
            answer.extend_from_slice(&piece[..n]);
        }
        String::from_utf8_lossy(&answer).into_owned()
    };
    let refused = ask(None);
    let log = || std::fs::read_to_string(dir.join("proxy.log")).unwrap_or_default();
    assert!(refused.starts_with("HTTP/1.1 401") && refused.contains("authentication_error"), "{refused}\n{}", log());
    let answer = ask(Some(&token));
    assert!(answer.starts_with("HTTP/1.1 200") && answer.contains("message_stop"), "{answer}");
    child.kill().unwrap();
    child.wait().unwrap();
}
