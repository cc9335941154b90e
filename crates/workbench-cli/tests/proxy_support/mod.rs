//! Shared by the proxy's tests: a scripted LLM upstream on 127.0.0.1 (the only stand-in: it
//! plays replies in the providers' wire formats and records every request it receives), the
//! real `workbench proxy` binary, and a plain HTTP client; and the machine without sockets
//! (`machine.rs`) that the suite runs against a third time.
#![allow(dead_code)]

pub mod coder;
pub mod gateway;
mod machine;
#[path = "../postgres_support/mod.rs"]
pub mod postgres;
pub mod session;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// Generous: a loaded 2-core machine may be slow.
pub const PATIENCE: Duration = Duration::from_secs(120);

/// A request the upstream received.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    /// The path with its query, as sent.
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Received {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// What the upstream answers.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Server-sent events (`event`, `data`); with `cut_after`, the connection drops after that
    /// many events, mid-reply.
    Events { events: Vec<(String, Value)>, cut_after: Option<usize> },
    /// The same events, one every `pause`.
    Slow { events: Vec<(String, Value)>, pause: Duration },
    /// A whole body with a status.
    Json { status: u16, body: String },
    /// Nothing, for longer than any test waits.
    Silent,
}

type Script = dyn Fn(&Received) -> Reply + Send + Sync;

/// The scripted upstream, stopped when dropped.
pub struct Upstream {
    pub url: String,
    pub received: Arc<Mutex<Vec<Received>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

#[derive(Clone)]
struct Shared {
    received: Arc<Mutex<Vec<Received>>>,
    script: Arc<Script>,
}

/// Every scripted upstream by its address, for the machine to call in process.
static SCRIPTED: Mutex<Vec<(String, Shared)>> = Mutex::new(Vec::new());

/// The scripted upstream at `url`'s reply to the request `received` makes of its path, recorded
/// as the upstream records what it receives; none when no upstream is there.
fn answer_in_process(url: &str, received: impl FnOnce(&str) -> Received) -> Option<Reply> {
    let scripted = SCRIPTED.lock().unwrap();
    let (path, shared) = scripted.iter().find_map(|(at, shared)| {
        let path = url.strip_prefix(at.as_str())?;
        (path.is_empty() || path.starts_with('/')).then_some((path, shared))
    })?;
    let received = received(if path.is_empty() { "/" } else { path });
    let reply = (shared.script)(&received);
    shared.received.lock().unwrap().push(received);
    Some(reply)
}

impl Upstream {
    pub fn start(script: impl Fn(&Received) -> Reply + Send + Sync + 'static) -> Upstream {
        let received = Arc::new(Mutex::new(Vec::new()));
        let shared = Shared { received: Arc::clone(&received), script: Arc::new(script) };
        let in_process = shared.clone();
        let (address_tx, address_rx) = mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                address_tx.send(listener.local_addr().unwrap()).unwrap();
                let app = axum::Router::new().fallback(answer).with_state(shared);
                // As a provider's server does: no delayed-ACK wait between the pieces of a reply.
                let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
                    let _ = tcp.set_nodelay(true);
                });
                let _ = axum::serve(listener, app).with_graceful_shutdown(async { drop(stopped.await) }).await;
            });
        });
        let address = address_rx.recv_timeout(PATIENCE).expect("the upstream listens");
        let url = format!("http://{address}");
        SCRIPTED.lock().unwrap().push((url.clone(), in_process));
        Upstream { url, received, stop: Some(stop) }
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Returns once a request has arrived (within a minute).
    pub fn wait_for_a_request(&self) {
        let started = Instant::now();
        while self.received.lock().unwrap().is_empty() {
            assert!(started.elapsed() < Duration::from_secs(60), "no request reached the upstream");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        SCRIPTED.lock().unwrap().retain(|(url, _)| *url != self.url);
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn answer(State(shared): State<Shared>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default().to_vec();
    let received = Received {
        method: parts.method.to_string(),
        path: parts.uri.path_and_query().map_or("/".into(), |p| p.to_string()),
        headers: parts.headers.iter().map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("").to_owned())).collect(),
        body,
    };
    let reply = (shared.script)(&received);
    shared.received.lock().unwrap().push(received);
    match reply {
        Reply::Json { status, body } => {
            (axum::http::StatusCode::from_u16(status).unwrap(), [("content-type", "application/json")], body)
                .into_response()
        }
        Reply::Silent => {
            tokio::time::sleep(Duration::from_secs(600)).await;
            "too late".into_response()
        }
        Reply::Slow { events, pause } => events_body(events, None, pause),
        Reply::Events { events, cut_after } => events_body(events, cut_after, EVENT_PAUSE),
    }
}

/// How long the scripted upstream waits before each event of a stream.
pub const EVENT_PAUSE: Duration = Duration::from_millis(2);

/// Each event as the upstream sends it: `event: NAME` (unless unnamed) and `data: JSON`; a
/// string is sent as it is (`[DONE]`).
pub fn sse_chunks(events: &[(String, Value)]) -> Vec<String> {
    events
        .iter()
        .map(|(event, data)| {
            let data = match data {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            if event.is_empty() { format!("data: {data}\n\n") } else { format!("event: {event}\ndata: {data}\n\n") }
        })
        .collect()
}

/// A stream of server-sent events, one piece at a time, so the agent sees the first ones
/// before the connection drops (with `cut_after`) or the next one comes.
fn events_body(events: Vec<(String, Value)>, cut_after: Option<usize>, pause: Duration) -> Response {
    {
        {
            let mut chunks: Vec<Result<Bytes, std::io::Error>> =
                sse_chunks(&events).into_iter().map(|text| Ok(Bytes::from(text))).collect();
            if let Some(n) = cut_after {
                chunks.truncate(n);
                chunks.push(Err(std::io::Error::other("the scripted upstream drops the connection")));
            }
            let stream = futures_util::stream::unfold(chunks.into_iter(), move |mut chunks| async move {
                let next = chunks.next()?;
                tokio::time::sleep(if next.is_err() { Duration::from_millis(300) } else { pause }).await;
                Some((next, chunks))
            });
            ([("content-type", "text/event-stream")], Body::from_stream(stream)).into_response()
        }
    }
}

/// An Anthropic streamed message: `blocks` (text, thinking, tool_use) with usage.
pub fn anthropic_events(id: &str, blocks: &[Value], usage: Value) -> Vec<(String, Value)> {
    let mut events = vec![(
        "message_start".to_owned(),
        json!({"type": "message_start", "message": {"id": id, "type": "message", "role": "assistant", "content": [], "model": "claude-scripted", "stop_reason": null, "stop_sequence": null, "usage": usage}}),
    )];
    let mut tool_use = false;
    for (index, block) in blocks.iter().enumerate() {
        let kind = block["type"].as_str().unwrap_or("text");
        let start = match kind {
            "text" => json!({"type": "text", "text": ""}),
            "thinking" => json!({"type": "thinking", "thinking": ""}),
            "tool_use" => {
                tool_use = true;
                json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}})
            }
            _ => block.clone(),
        };
        events.push((
            "content_block_start".into(),
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        let mut delta = |delta: Value| {
            events.push((
                "content_block_delta".into(),
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        };
        match kind {
            "text" => {
                let text = block["text"].as_str().unwrap_or_default();
                let (a, b) = text.split_at(text.char_indices().nth(text.chars().count() / 2).map_or(0, |(i, _)| i));
                delta(json!({"type": "text_delta", "text": a}));
                delta(json!({"type": "text_delta", "text": b}));
            }
            "thinking" => {
                delta(json!({"type": "thinking_delta", "thinking": block["thinking"]}));
                delta(json!({"type": "signature_delta", "signature": block["signature"]}));
            }
            "tool_use" => {
                let input = block["input"].to_string();
                let cut = input.char_indices().nth(input.chars().count() / 2).map_or(0, |(i, _)| i);
                delta(json!({"type": "input_json_delta", "partial_json": &input[..cut]}));
                delta(json!({"type": "input_json_delta", "partial_json": &input[cut..]}));
            }
            _ => {}
        }
        events.push(("content_block_stop".into(), json!({"type": "content_block_stop", "index": index})));
        if index == 0 {
            events.push(("ping".into(), json!({"type": "ping"})));
        }
    }
    let stop = if tool_use { "tool_use" } else { "end_turn" };
    events.push((
        "message_delta".into(),
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 20}}),
    ));
    events.push(("message_stop".into(), json!({"type": "message_stop"})));
    events
}

/// Anthropic usage for a prompt of `prompt` tokens, `cached` of them read from the cache.
pub fn anthropic_usage(prompt: u64, cached: u64) -> Value {
    json!({"input_tokens": prompt - cached, "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0, "output_tokens": 1})
}

/// One behavioural suite for both shells: each `case(build: Build)` becomes a test against
/// `workbench proxy` and one against the npm package's bin, `#[ignore]`d because it needs the
/// package built (`.ci/test` runs them after `npm run build`, with `--ignored`). Given as
/// `machine: [...], shells: [...]`, the cases of the first list also run against the machine
/// itself (`machine.rs`: no socket, no process).
#[allow(unused_macros)]
macro_rules! both_shells {
    (machine: [$($also:ident),* $(,)?], shells: [$($case:ident),* $(,)?] $(,)?) => {
        mod machine {
            $(#[test]
            fn $also() {
                super::$also($crate::proxy_support::Build::Machine)
            })*
        }
        both_shells!($($also,)* $($case),*);
    };
    ($($case:ident),* $(,)?) => {
        mod native {
            $(#[test]
            fn $case() {
                super::$case($crate::proxy_support::Build::Native)
            })*
        }
        mod npm {
            $(#[test]
            #[ignore = "needs the npm package built: .ci/test runs it after `npm run build` (-- --ignored)"]
            fn $case() {
                super::$case($crate::proxy_support::Build::Npm)
            })*
        }
    };
}

/// Which build of the proxy a test runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// `workbench proxy`, the CLI this crate builds.
    Native,
    /// `context-workbench proxy`, the npm package's bin (`bindings/dist`, built by `npm run build`).
    Npm,
    /// The engine's `Exchange` with its effects carried out in this process, with no socket.
    Machine,
}

impl Build {
    /// The program its help and lines name.
    pub fn program(self) -> &'static str {
        match self {
            Build::Native | Build::Machine => "workbench",
            Build::Npm => "context-workbench",
        }
    }

    /// The command, before `proxy` and its flags: started as from a terminal, whatever the tests
    /// were started under (`nohup` leaves SIGHUP ignored, which `workbench proxy` keeps).
    pub fn command(self) -> Command {
        let mut command = match self {
            Build::Native => Command::new(env!("CARGO_BIN_EXE_workbench")),
            Build::Npm => {
                let cli = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bindings/dist/cli.js");
                assert!(cli.is_file(), "the npm package is not built: run `npm run build` in bindings/ first");
                let mut command = Command::new("node");
                command.arg(cli);
                command
            }
            Build::Machine => panic!("the machine is no program"),
        };
        // SAFETY: `signal` is async-signal-safe, as `pre_exec` requires.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut command, || {
                libc::signal(libc::SIGHUP, libc::SIG_DFL);
                Ok(())
            });
        }
        command
    }
}

/// `workbench proxy` running in `dir`, stopped when `stop` is called (or killed when dropped).
pub struct Proxy {
    child: Option<Child>,
    machine: Option<machine::Machine>,
    /// `http://127.0.0.1:PORT` (the machine's: `machine://N`).
    pub url: String,
    pub stderr: PathBuf,
}

impl Proxy {
    pub fn start(dir: &Path, args: &[&str]) -> Proxy {
        Proxy::start_build(Build::Native, dir, args)
    }

    pub fn start_build(build: Build, dir: &Path, args: &[&str]) -> Proxy {
        Proxy::start_env(build, dir, args, &[])
    }

    /// With more variables in its environment.
    pub fn start_env(build: Build, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Proxy {
        Proxy::start_logged(build, dir, "proxy.log", args, env)
    }

    /// [`Proxy::start_env`] with its log in `dir/{log}`.
    pub fn start_logged(build: Build, dir: &Path, log: &str, args: &[&str], env: &[(&str, &str)]) -> Proxy {
        let stderr = dir.join(log);
        if build == Build::Machine {
            assert!(env.is_empty(), "the machine takes no environment");
            let (machine, url) = machine::Machine::start(dir, stderr.clone(), args);
            return Proxy { child: None, machine: Some(machine), url, stderr };
        }
        let mut child = build
            .command()
            .envs(env.iter().copied())
            .current_dir(dir)
            .arg("proxy")
            .args(["--port", "0"])
            .args(args)
            .env_remove("WORKBENCH_LLM_URL")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("start workbench proxy");
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let first: Vec<String> = (0..4).filter_map(|_| lines.next().and_then(Result::ok)).collect();
            let _ = sender.send(first);
        });
        let lines = receiver.recv_timeout(PATIENCE).expect("workbench proxy printed its address");
        let url = lines.first().cloned().unwrap_or_default();
        assert!(url.starts_with("http://127.0.0.1:"), "{lines:?}");
        assert_eq!(lines.get(1), Some(&format!("ANTHROPIC_BASE_URL={url}")));
        assert_eq!(lines.get(2), Some(&format!("OPENAI_BASE_URL={url}/v1")));
        assert_eq!(lines.get(3), Some(&format!("dashboard: {url}/workbench/")));
        Proxy { child: Some(child), machine: None, url, stderr }
    }

    /// SIGTERM, as Ctrl-C stops it: the exit status and the log.
    pub fn stop(self) -> (ExitStatus, String) {
        self.stop_on(libc::SIGTERM)
    }

    /// Stopped by `signal`: the exit status and the log.
    pub fn stop_on(mut self, signal: libc::c_int) -> (ExitStatus, String) {
        if let Some(machine) = self.machine.take() {
            machine.stop();
            return (std::os::unix::process::ExitStatusExt::from_raw(0), self.log());
        }
        let mut child = self.child.take().expect("running");
        let pid = child.id() as i32;
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "signal the proxy");
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            assert!(started.elapsed() < PATIENCE, "the proxy did not stop after signal {signal}");
            std::thread::sleep(Duration::from_millis(20));
        };
        (status, self.log())
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A plain HTTP client: any status is an answer.
pub fn client() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).timeout_global(Some(PATIENCE)).build().into()
}

/// `POST url` with a JSON body and headers: the status, the content type and the body.
pub fn post(url: &str, body: &[u8], headers: &[(&str, &str)]) -> (u16, String, String) {
    send("POST", url, body, &[&[("content-type", "application/json")], headers].concat())
}

/// `method url` with a body (none when empty) and headers: the status, the content type and
/// the body.
pub fn send(method: &str, url: &str, body: &[u8], headers: &[(&str, &str)]) -> (u16, String, String) {
    if let Some(answer) = machine::call(method, url, body, headers) {
        return answer;
    }
    let mut request = ureq::http::Request::builder().method(method).uri(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(body.to_vec()).expect("a request");
    let sent = if body.is_empty() { client().run(request.map(|_| ())) } else { client().run(request) };
    match sent {
        Ok(mut response) => {
            let status = response.status().as_u16();
            let kind = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
            let text = response.body_mut().read_to_string().unwrap_or_else(|e| format!("<body cut: {e}>"));
            (status, kind, text)
        }
        Err(e) => (0, String::new(), format!("<no response: {e}>")),
    }
}

/// `HEAD url` as Claude Code sends it (no key, `Connection: close`): the status.
pub fn head(url: &str) -> u16 {
    if let Some((status, _, _)) = machine::call("HEAD", url, b"", &[("connection", "close")]) {
        return status;
    }
    let (address, path) = url.trim_start_matches("http://").split_once('/').expect("a path");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(stream, "HEAD /{path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    let _ = std::io::Read::read_to_string(&mut stream, &mut answer);
    let status = answer.strip_prefix("HTTP/1.1 ").and_then(|rest| rest.get(..3));
    status.and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("no status: {answer}"))
}

/// `GET url` with headers: the status, the response's headers (names lowercase) and the body.
pub fn get(url: &str, headers: &[(&str, &str)]) -> (u16, std::collections::BTreeMap<String, String>, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(PATIENCE))
        .build()
        .into();
    let mut request = agent.get(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response = request.call().unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let found =
        response.headers().iter().map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned())).collect();
    (response.status().as_u16(), found, response.body_mut().read_to_string().unwrap_or_default())
}

/// A scratch directory of its own (cases of both shells run at once in one process).
pub fn scratch(name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("cw-proxy-{}-{n}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The names of the trace folders in the store `store`, sorted.
pub fn trace_dirs(store: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(store)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The records of the trace `trace`'s `calls.jsonl` in the store `store`, in order.
pub fn calls(store: &Path, trace: &str) -> Vec<Value> {
    let text =
        std::fs::read_to_string(store.join(trace).join(context_workbench::proxy::CALLS_FILE)).unwrap_or_default();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The calls of the trace's main loop (its side calls left out).
pub fn main_calls(store: &Path, trace: &str) -> Vec<Value> {
    calls(store, trace).into_iter().filter(|c| c["side_call"] != json!(true)).collect()
}

/// Every file under `dir` with its text (lossy), sorted.
pub fn files_under(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                out.push((path, String::from_utf8_lossy(&bytes).into_owned()));
            }
        }
    }
    out.sort();
    out
}

/// Which step of a scripted session a request asks for: one past the step its last tool result
/// answers, the tool calls' ids being `{prefix}{step}`.
pub fn step_of(body: &Value, prefix: &str) -> usize {
    let last = body["messages"].as_array().and_then(|m| m.last()).cloned().unwrap_or_default();
    let id =
        last["content"].as_array().into_iter().flatten().find_map(|b| b["tool_use_id"].as_str().map(str::to_owned));
    id.and_then(|id| id.strip_prefix(prefix).and_then(|n| n.parse::<usize>().ok())).map_or(0, |n| n + 1)
}

/// A Claude Code-shaped request of session `session` with `messages`, streamed.
pub fn claude_code_request(session: &str, messages: Vec<Value>) -> Vec<u8> {
    json!({
        "model": "claude-opus-5-5",
        "messages": messages,
        "system": [{"type": "text", "text": "You are a coding agent."}],
        "tools": [{"name": "Bash", "description": "Run a shell command", "input_schema": {"type": "object"}}],
        "metadata": {"user_id": json!({"device_id": "d", "session_id": session}).to_string()},
        "max_tokens": 32000,
        "stream": true,
    })
    .to_string()
    .into_bytes()
}
