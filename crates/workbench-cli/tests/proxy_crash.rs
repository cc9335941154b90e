//! The proxy killed: `kill -9` at varied moments of a scripted session (as a request arrives,
//! the moment its messages reach the disk, while the reply streams, after it), restarted on the
//! same store, the conversation going on; the upstream never gets a message the agent did not
//! send, and nothing is recorded twice. Every case runs against both shells.
#![cfg(not(target_arch = "wasm32"))]

#[macro_use]
mod proxy_support;

use std::path::Path;
use std::time::{Duration, Instant};

use proxy_support::{
    Build, PATIENCE, Proxy, Received, Reply, Upstream, anthropic_events, anthropic_usage, post, scratch, step_of,
    trace_dirs,
};
use serde_json::{Value, json};

/// The tool steps of the scripted session before its answer.
const STEPS: usize = 12;

fn headers() -> Vec<(&'static str, &'static str)> {
    vec![("x-api-key", "sk-ant-test"), ("anthropic-version", "2023-06-01")]
}

/// The scripted reply of step `n`: a tool call, and past the last step the answer.
fn step_blocks(n: usize) -> Vec<Value> {
    if n >= STEPS {
        return vec![json!({"type": "text", "text": "The parser is fixed."})];
    }
    vec![
        json!({"type": "text", "text": format!("Step {n}: reading.")}),
        json!({"type": "tool_use", "id": format!("toolu_k{n}"), "name": "Bash", "input": {"command": format!("cat part{n}.txt")}}),
    ]
}

fn scripted() -> Upstream {
    Upstream::start(|request: &Received| {
        let n = step_of(&request.json(), "toolu_k");
        Reply::Events {
            events: anthropic_events(&format!("msg_{n}"), &step_blocks(n), anthropic_usage(5000, 4000)),
            cut_after: None,
        }
    })
}

/// The conversation after `steps` steps, as the agent holds it (small enough to be sent whole).
fn conversation(steps: usize) -> Vec<Value> {
    let mut messages = vec![json!({"role": "user", "content": [{"type": "text", "text": "Survive the kills"}]})];
    for n in 0..steps {
        messages.push(json!({"role": "assistant", "content": step_blocks(n)}));
        let output = format!("line {n} of the part\n").repeat(100);
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_k{n}"), "content": output}]}));
    }
    messages
}

fn request(session: &str, steps: usize) -> Vec<u8> {
    proxy_support::claude_code_request(session, conversation(steps))
}

/// When the proxy is killed during a call.
#[derive(Debug, Clone, Copy)]
enum Moment {
    /// This long after the request was sent.
    After(Duration),
    /// The moment a new message of the call is on disk (in the middle of the save behind it).
    MessagesOnDisk,
}

/// The kill of each step: every step's call is killed once, at moments that vary.
fn moment_of(step: usize) -> Moment {
    const DELAYS_MS: [u64; 6] = [0, 4, 9, 15, 30, 60];
    if step.is_multiple_of(2) {
        Moment::MessagesOnDisk
    } else {
        Moment::After(Duration::from_millis(DELAYS_MS[step / 2 % 6]))
    }
}

/// The message files of the trace's directory (whole ones: not a temporary), in order.
fn message_paths(store: &Path, trace: &str) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(store.join(trace).join("messages"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

fn message_files(store: &Path, trace: &str) -> Vec<Value> {
    let read = |f: &std::path::PathBuf| serde_json::from_str(&std::fs::read_to_string(f).ok()?).ok();
    message_paths(store, trace).iter().filter_map(read).collect()
}

fn without_breakpoints(mut value: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(fields) => {
                fields.remove("cache_control");
                fields.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

/// Send step `steps`'s request and kill the proxy at `moment`; the agent's request fails, or not.
fn killed_during(proxy: Proxy, store: &Path, steps: usize, moment: Moment) {
    let before = message_paths(store, "crash").len();
    let url = format!("{}/v1/messages", proxy.url);
    let agent = std::thread::spawn(move || post(&url, &request("crash", steps), &headers()));
    let sent = Instant::now();
    match moment {
        Moment::After(delay) => std::thread::sleep(delay),
        Moment::MessagesOnDisk => {
            while message_paths(store, "crash").len() <= before && !agent.is_finished() {
                assert!(sent.elapsed() < PATIENCE, "the call's messages never reached the disk");
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }
    drop(proxy); // SIGKILL
    let _ = agent.join();
}

fn killed_at_varied_moments_the_proxy_sends_and_records_each_message_once(build: Build) {
    let upstream = scripted();
    let dir = scratch("crash");
    let store = dir.join(".trace");
    let start = || Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let mut proxy = start();
    for steps in 0..=STEPS {
        killed_during(proxy, &store, steps, moment_of(steps));
        proxy = start();
        // The agent sends its request again, until the whole reply comes.
        let (status, _, body) = post(&format!("{}/v1/messages", proxy.url), &request("crash", steps), &headers());
        assert_eq!(status, 200, "step {steps}: {body}");
        assert!(body.contains("message_stop"), "step {steps}: {body}");
    }
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");

    // Every request the upstream got holds what the agent sent for that step, each message once.
    for received in upstream.requests() {
        let body = without_breakpoints(received.json());
        let (steps, sent) = (step_of(&body, "toolu_k"), body["messages"].as_array().cloned().unwrap_or_default());
        let held = conversation(steps);
        assert_eq!(
            sent.len(),
            held.len(),
            "the upstream got {} messages where the agent sent {}",
            sent.len(),
            held.len()
        );
        assert_eq!(sent, held, "step {steps}\n{log}");
    }
    assert_eq!(trace_dirs(&store), ["crash"], "one conversation, one trace\n{log}");
    let roles: Vec<String> =
        message_files(&store, "crash").iter().map(|m| m["role"].as_str().unwrap_or("").to_owned()).collect();
    let mut expected = vec!["user"];
    (0..STEPS).for_each(|_| expected.extend(["assistant", "tool"]));
    expected.push("assistant");
    assert_eq!(roles, expected, "nothing recorded twice\n{log}");
    let calls = proxy_support::main_calls(&store, "crash");
    // The kills did land between a save's messages and its state (7 of the 13 in a usual run).
    let claims = calls.iter().filter(|c| c["notes"].to_string().contains("were on disk already")).count();
    assert!(claims > 0, "no kill cut a save after its messages\n{log}");
    let numbers: Vec<u64> = calls.iter().map(|c| c["call"].as_u64().unwrap()).collect();
    assert!(numbers.iter().copied().eq(1..=numbers.len() as u64), "each call once, without a gap: {numbers:?}");
}

fn status(store: &Path, trace: &str) -> String {
    let meta = std::fs::read_to_string(store.join(trace).join("meta.json")).unwrap_or_default();
    serde_json::from_str::<Value>(&meta).unwrap_or_default()["status"].as_str().unwrap_or_default().to_owned()
}

/// Issue 49: a second proxy on a folder store is refused, naming the first, whose sessions stay
/// live; a proxy killed with SIGKILL leaves the store to the next, which marks its session
/// interrupted.
fn a_second_proxy_on_a_folder_store_is_refused_and_the_first_ones_sessions_stay_live(build: Build) {
    let upstream = scripted();
    let dir = scratch("two");
    let store = dir.join(".trace");
    let start = || Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let turn = |proxy: &Proxy, session: &str, steps: usize| {
        let (status, _, body) = post(&format!("{}/v1/messages", proxy.url), &request(session, steps), &headers());
        assert_eq!(status, 200, "{body}");
    };
    let killed = start();
    turn(&killed, "killed", 0);
    drop(killed); // SIGKILL
    let first = start();
    turn(&first, "live", 0);
    let second = build
        .command()
        .current_dir(&dir)
        .args(["proxy", "--port", "0", "--upstream", &upstream.url])
        .output()
        .expect("run a second proxy");
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "{said}");
    let refusal = format!("the store .trace is in use by another proxy (the process {})", first.pid());
    assert!(said.contains(&refusal), "{said}");
    assert_eq!(status(&store, "live"), "running", "the first proxy's session is live");
    // The first proxy's conversation goes on in its session, untouched.
    turn(&first, "live", 1);
    let (stopped, log) = first.stop();
    assert!(stopped.success(), "{log}");
    assert!(log.contains("marked interrupted: killed\n"), "{log}");
    assert_eq!((status(&store, "killed"), status(&store, "live")), ("interrupted".into(), "stopped".into()));
    assert_eq!(trace_dirs(&store), ["killed", "live"]);
    assert_eq!(message_files(&store, "live").len(), 4, "{log}");
    // Stopped, it leaves the store to the next.
    let (stopped, log) = start().stop();
    assert!(stopped.success(), "{log}");
}

/// A call the kill caught upstream (its messages and its state saved, its reply never back) is
/// recorded by the next proxy's start, under its own number: the session's calls count on
/// without a gap, and neither its resume nor a kill after a reply ended records anything twice.
fn a_call_in_flight_at_a_kill_is_recorded_once_by_the_next_proxy(build: Build) {
    let first = std::sync::atomic::AtomicBool::new(true);
    let upstream = Upstream::start(move |request: &Received| {
        if first.swap(false, std::sync::atomic::Ordering::SeqCst) {
            return Reply::Silent;
        }
        let n = step_of(&request.json(), "toolu_k");
        Reply::Events {
            events: anthropic_events(&format!("msg_{n}"), &step_blocks(n), anthropic_usage(5000, 0)),
            cut_after: None,
        }
    });
    let dir = scratch("cut");
    let store = dir.join(".trace");
    let start = || Proxy::start_build(build, &dir, &["--upstream", &upstream.url]);
    let turn = |proxy: &Proxy, steps: usize| {
        let (status, _, body) = post(&format!("{}/v1/messages", proxy.url), &request("cut", steps), &headers());
        assert_eq!(status, 200, "{body}");
    };
    let proxy = start();
    let url = format!("{}/v1/messages", proxy.url);
    let agent = std::thread::spawn(move || post(&url, &request("cut", 0), &headers()));
    upstream.wait_for_a_request();
    // The call is upstream; its session's state is saved behind it, counting it.
    let state = store.join("cut").join("state.json");
    let sent = Instant::now();
    while !std::fs::read_to_string(&state).is_ok_and(|s| s.contains("\"proxy_calls\": 1")) {
        assert!(sent.elapsed() < PATIENCE, "the session's state was never saved");
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(proxy); // SIGKILL, the reply not come
    let _ = agent.join();
    // The next proxy records it as it starts, before the agent comes back (if it ever does).
    let proxy = start();
    let cut = proxy_support::main_calls(&store, "cut");
    assert_eq!(cut.len(), 1, "{cut:?}");
    turn(&proxy, 0); // the agent's retry
    drop(proxy); // SIGKILL after the reply: recorded already
    let proxy = start();
    turn(&proxy, 1);
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    let calls = proxy_support::main_calls(&store, "cut");
    let numbers: Vec<u64> = calls.iter().map(|c| c["call"].as_u64().unwrap()).collect();
    assert_eq!(numbers, [1, 2, 3], "each call once, counted on without a gap\n{log}");
    assert_eq!((calls[0]["completed"].clone(), calls[0].get("status")), (json!(false), None), "{}", calls[0]);
    assert!(
        calls[0]["notes"].to_string().contains("the reply was never recorded (the proxy stopped before it ended)"),
        "{}",
        calls[0]
    );
    assert!(calls[1..].iter().all(|c| c["completed"] == json!(true)), "{calls:?}");
}

both_shells!(
    killed_at_varied_moments_the_proxy_sends_and_records_each_message_once,
    a_second_proxy_on_a_folder_store_is_refused_and_the_first_ones_sessions_stay_live,
    a_call_in_flight_at_a_kill_is_recorded_once_by_the_next_proxy,
);
