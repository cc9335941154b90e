//! Real clients through `workbench proxy`: the official Claude Code CLI runs a 32-step session
//! in a scratch git workspace against a scripted Anthropic upstream, and the official `openai`
//! npm SDK streams a tool-calling conversation through the Chat Completions route. Both are
//! pinned in `tests/clients/package.json` and installed by `.ci/setup` (`npm ci`).
#![cfg(not(target_arch = "wasm32"))]

#[macro_use]
mod proxy_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use context_workbench::tokens::{Encoding, TokenCounter};
use proxy_support::session::{self, DONE, PLAN};
use proxy_support::{
    Build, Proxy, Received, Reply, Upstream, anthropic_events, calls, files_under, main_calls, scratch, trace_dirs,
};
use serde_json::{Value, json};

const KEY: &str = "sk-ant-api03-e2eproxykey9876543210zyxwvutsrqponmlkjihgfedcbaZYXWVU";
const OPENAI_KEY: &str = "sk-proj-e2eopenaikey0123456789abcdefghijklmnopqrstuvwxyz0123";

/// `tests/clients`, with its packages installed.
fn clients() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clients");
    assert!(
        dir.join("node_modules/@anthropic-ai/claude-code/cli-wrapper.cjs").exists()
            && dir.join("node_modules/openai").exists(),
        "the test clients are not installed: run `bash .ci/setup` (or `npm ci` in tests/clients)"
    );
    dir
}

/// The real Claude Code CLI in `work`, with its default settings (the task tools), through the
/// proxy at `proxy`.
fn claude_code(clients: &Path, work: &Path, home: &Path, proxy: &str) -> Command {
    let mut command = Command::new("node");
    command
        .arg(clients.join("node_modules/@anthropic-ai/claude-code/cli-wrapper.cjs"))
        .current_dir(work)
        .env("HOME", home)
        .env("ANTHROPIC_BASE_URL", proxy)
        .env("ANTHROPIC_API_KEY", KEY)
        .env("DISABLE_AUTOUPDATER", "1")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("CLAUDE_CODE_ENABLE_TASKS");
    command
}

/// The session `trace` in `store` numbers its calls on, and holds each of the `steps` tool
/// results once (across a kill).
fn each_call_and_result_once(store: &Path, trace: &str, records: &[Value], steps: usize, log: &str) {
    let numbers: Vec<u64> = records.iter().map(|c| c["call"].as_u64().unwrap()).collect();
    assert!(numbers.windows(2).all(|w| w[1] > w[0]), "{numbers:?}\n{log}");
    let mut results: Vec<String> = files_under(&store.join(trace).join("messages"))
        .iter()
        .filter_map(|(_, text)| serde_json::from_str::<Value>(text).ok())
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p["call_id"].as_str().map(str::to_owned))
        .collect();
    let all = results.len();
    results.sort();
    results.dedup();
    assert_eq!((results.len(), all), (steps, steps), "each step's result once across the kill\n{log}");
}

/// Claude Code on the task in `work` with its default settings (it plans with its task tools),
/// through the proxy at `url`, its output piped.
fn task_through(clients: &Path, (work, home): (&Path, &Path), url: &str) -> std::process::Child {
    claude_code(clients, work, home, url)
        .args(["-p", TASK, "--allowedTools", session::ALLOWED_TOOLS])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run Claude Code")
}

/// Once the scripted upstream has served step `step` (or the patience ran out).
fn until_served(served: &AtomicUsize, step: usize) {
    let started = std::time::Instant::now();
    while served.load(Ordering::SeqCst) < step && started.elapsed() < proxy_support::PATIENCE {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Claude Code run with `args` in `work` through a proxy of `build` in front of `upstream`; both
/// end well and Claude Code says it is done. The proxy's log.
fn run_to_done(build: Build, (work, home): (&Path, &Path), upstream: &str, args: &[&str]) -> String {
    let proxy = Proxy::start_build(build, work, &["--upstream", upstream]);
    let output = claude_code(&clients(), work, home, &proxy.url).args(args).output().expect("run Claude Code");
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success() && stdout.contains(DONE), "Claude Code: {stdout}\nproxy log:\n{log}");
    log
}

/// Strip every `cache_control`, to compare what the model reads.
fn strip(value: &Value) -> Value {
    match value {
        Value::Object(fields) => Value::Object(
            fields.iter().filter(|(k, _)| *k != "cache_control").map(|(k, v)| (k.clone(), strip(v))).collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip).collect()),
        other => other.clone(),
    }
}

/// Tokens of the common prefix of two prompts' text: what a provider's cache would serve.
fn cached_tokens(previous: Option<&str>, now: &str, counter: &TokenCounter) -> u64 {
    let Some(previous) = previous else { return 0 };
    let common = previous.bytes().zip(now.bytes()).take_while(|(a, b)| a == b).count();
    let cut = (0..=common).rev().find(|&i| now.is_char_boundary(i)).unwrap_or(0);
    counter.count(&now[..cut]) as u64
}

/// Which scripted step a request asks for: one past the step its newest tool result answers.
fn next_step(body: &Value) -> usize {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let newest =
        messages.iter().rev().flat_map(|m| m["content"].as_array().cloned().unwrap_or_default()).find_map(|b| {
            b["tool_use_id"].as_str().and_then(|id| id.strip_prefix("toolu_cc")).and_then(|n| n.parse::<usize>().ok())
        });
    newest.map_or(0, |n| n + 1)
}

/// What Claude Code is asked to do.
const TASK: &str = "Fix the failing tests in this repository.";

/// The step after which the proxy is killed and started again.
const KILL_AT: usize = 16;

/// The scripted Anthropic upstream of the Claude Code session in `work`: each call with tools
/// gets the next step of the script (a thinking block, a line of text and a tool call), then
/// the closing text; usage as a prefix cache would report it. Returns it and the highest step
/// it served.
fn scripted_claude_upstream(work: &Path) -> (Upstream, std::sync::Arc<AtomicUsize>) {
    claude_upstream(work, None)
}

/// [`scripted_claude_upstream`], streaming the reply of step `slow_at` (the first time it is
/// asked) slowly: a call that stays in flight for a few seconds.
fn claude_upstream(work: &Path, slow_at: Option<usize>) -> (Upstream, std::sync::Arc<AtomicUsize>) {
    let slowed = std::sync::atomic::AtomicBool::new(false);
    let counter = TokenCounter::new(Encoding::O200kBase);
    let previous: Mutex<Option<String>> = Mutex::new(None);
    let ids = AtomicUsize::new(0);
    let served = std::sync::Arc::new(AtomicUsize::new(0));
    let served_by_upstream = std::sync::Arc::clone(&served);
    let script_dir = work.to_path_buf();
    let upstream = Upstream::start(move |request: &Received| {
        let body = request.json();
        if request.path.contains("count_tokens") || request.method != "POST" {
            return Reply::Json { status: 200, body: json!({"input_tokens": 1000}).to_string() };
        }
        let id = format!("msg_e2e_{}", ids.fetch_add(1, Ordering::SeqCst));
        if body.get("tools").is_none() {
            let text = json!({"type": "text", "text": "Fix the inventory bugs"});
            let usage = json!({"input_tokens": 100, "output_tokens": 5});
            return match body["stream"].as_bool() {
                Some(true) => Reply::Events { events: anthropic_events(&id, &[text], usage), cut_after: None },
                _ => Reply::Json { status: 200, body: json!({"id": id, "type": "message", "role": "assistant", "content": [text], "stop_reason": "end_turn", "usage": usage}).to_string() },
            };
        }
        // A prompt cache: the prefix this prompt shares with the previous one is read from it.
        let text = strip(&json!([body["tools"], body["system"], body["messages"]])).to_string();
        let total = counter.count(&text) as u64;
        let mut previous = previous.lock().unwrap();
        let cached = cached_tokens(previous.as_deref(), &text, &counter).min(total);
        *previous = Some(text);
        // As Anthropic reports it: the prompt is what was read from the cache and what was written
        // to it (the engine's breakpoints end the prompt: no input after them).
        let usage = json!({"input_tokens": 0, "cache_read_input_tokens": cached, "cache_creation_input_tokens": total - cached, "output_tokens": 40});
        let n = next_step(&body);
        served_by_upstream.fetch_max(n, Ordering::SeqCst);
        let blocks = match session::step(n, &script_dir) {
            Some((name, input)) => vec![
                json!({"type": "thinking", "thinking": "", "signature": format!("EqQBCkYIBRgCKkB{n}+/sig==")}),
                json!({"type": "text", "text": format!("Step {n}: {name}.")}),
                json!({"type": "tool_use", "id": format!("toolu_cc{n}"), "name": name, "input": input}),
            ],
            None => vec![json!({"type": "text", "text": DONE})],
        };
        let events = anthropic_events(&id, &blocks, usage);
        if slow_at == Some(n) && !slowed.swap(true, Ordering::SeqCst) {
            return Reply::Slow { events, pause: std::time::Duration::from_millis(400) };
        }
        Reply::Events { events, cut_after: None }
    });

    (upstream, served)
}

/// Issue 45: every managed call is priced beside the agent's own request, as a prefix cache
/// would serve each, and after every call the session has cost no more than the agent's own
/// requests would have.
fn never_dearer_than_the_agents_own(records: &[Value], log: &str) {
    let costs: Vec<&Value> = records.iter().filter(|r| r["managed"] == true).map(|r| &r["cost"]).collect();
    assert!(!costs.is_empty() && costs.iter().all(|c| c["agent_tokens"].as_u64() > Some(0)), "{records:?}");
    for (k, cost) in costs.iter().enumerate() {
        let (sent, agent) = (cost["sent_total"].as_f64().unwrap(), cost["agent_total"].as_f64().unwrap());
        assert!(sent <= agent + 1e-6, "after call {k} the session cost {sent} against the agent's own {agent}\n{log}");
    }
}

/// An empty scratch workspace and an empty home for Claude Code: `(work, home)`.
fn work_and_home(name: &str) -> (PathBuf, PathBuf) {
    let root = scratch(name);
    let (work, home) = (root.join("work"), root.join("home"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    (work, home)
}

/// Claude Code's scripted session at the proxy's default window (no kill, no side calls): after
/// every call it has cost no more than the same session sent directly.
fn claude_code_session_at_the_default_window(build: Build) {
    let (work, home) = work_and_home(&format!("claude-code-default-{build:?}"));
    session::workspace(&work);
    let (upstream, _) = scripted_claude_upstream(&work);
    let log =
        run_to_done(build, (&work, &home), &upstream.url, &["-p", TASK, "--allowedTools", session::ALLOWED_TOOLS]);
    let store = work.join(".trace");
    let traces = trace_dirs(&store);
    assert_eq!(traces.len(), 1, "{traces:?}\n{log}");
    let records = main_calls(&store, &traces[0]);
    assert!(records.len() > session::steps(&work), "{} calls\n{log}", records.len());
    never_dearer_than_the_agents_own(&records, &log);
}

/// Issue 48: the saving in dollars reads the same in `workbench stats` (its table and `--json`),
/// the dashboard's API (whose `saving_text` the page shows) and the npm package's `callTotals`
/// (what the editor's status bar and Prompt View show), and equals the sum over `calls.jsonl`;
/// the sent side is priced from the upstream's reported usage. A session whose upstream could not
/// be reached costs nothing.
fn claude_code_dollars(build: Build) {
    let (work, home) = work_and_home(&format!("claude-code-dollars-{build:?}"));
    session::workspace(&work);
    let (upstream, _) = scripted_claude_upstream(&work);
    // A window small enough that the engine compacts.
    let proxy = Proxy::start_build(build, &work, &["--upstream", &upstream.url, "--window", "60000"]);
    let args = ["-p", TASK, "--allowedTools", session::ALLOWED_TOOLS];
    let output = claude_code(&clients(), &work, &home, &proxy.url).args(args).output().expect("run Claude Code");
    let (status, log) = proxy.stop();
    assert!(status.success() && String::from_utf8_lossy(&output.stdout).contains(DONE), "{log}");
    assert!(log.contains(", cost $"), "every call's log line says its dollars\n{log}");
    // A second session, against an upstream nobody listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nowhere = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let proxy = Proxy::start_build(build, &work, &["--upstream", &nowhere]);
    let output = claude_code(&clients(), &work, &home, &proxy.url)
        .env("CLAUDE_CODE_MAX_RETRIES", "0")
        .args(["-p", "Say hello."])
        .output()
        .expect("run Claude Code");
    let (_, unreachable_log) = proxy.stop();
    assert!(!String::from_utf8_lossy(&output.stdout).contains(DONE), "{unreachable_log}");
    assert!(unreachable_log.contains("cost nothing (no model answered)"), "{unreachable_log}");

    // calls.jsonl, summed here.
    let store = work.join(".trace");
    let traces = trace_dirs(&store);
    assert_eq!(traces.len(), 2, "{traces:?}");
    let of = |trace: &str| -> (f64, f64, Vec<Value>) {
        let records = calls(&store, trace);
        let sum = |side: &str| records.iter().map(|r| r["dollars"][side].as_f64().unwrap_or(0.0)).sum();
        (sum("sent"), sum("agent"), records)
    };
    let (main, dead): (Vec<&String>, Vec<&String>) = traces.iter().partition(|t| of(t).1 > 0.0);
    assert_eq!((main.len(), dead.len()), (1, 1), "one session spent, one reached no model");
    let (sent, agent, records) = of(main[0]);
    assert!(
        records.iter().filter(|r| r["side_call"] != true).all(|r| r["dollars"]["basis"] == "reported"),
        "{records:?}"
    );
    // Claude Code's own model (its default), priced from the engine's table.
    assert!(
        records
            .iter()
            .all(|r| r["dollars"]["priced_as"].as_str().is_some_and(|m| r["model"].as_str().unwrap().starts_with(m))),
        "{records:?}"
    );
    assert!(sent > 0.0 && sent < agent, "the engine's requests cost less: {sent} against {agent}");
    let (_, _, dead_records) = of(dead[0]);
    assert!(
        !dead_records.is_empty() && dead_records.iter().all(|r| r["dollars"]["basis"] == "no_model"),
        "{dead_records:?}"
    );

    // `workbench stats --json`: the same sums, and the words.
    let stats = |args: &[&str]| {
        let output =
            Command::new(env!("CARGO_BIN_EXE_workbench")).arg("stats").arg(&store).args(args).output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    };
    let report: Value = serde_json::from_str(&stats(&["--json"])).unwrap();
    let total = &report["total"];
    assert!((total["sent_usd"].as_f64().unwrap() - sent).abs() < 1e-9, "{total}");
    assert!((total["agent_usd"].as_f64().unwrap() - agent).abs() < 1e-9, "{total}");
    assert!((total["saving_usd"].as_f64().unwrap() - (agent - sent)).abs() < 1e-9, "{total}");
    let words = total["saving_text"].as_str().unwrap().to_owned();
    assert!(words.contains(" saved (") && !words.contains('−'), "{words}");
    let session_of =
        |trace: &str| report["sessions"].as_array().unwrap().iter().find(|s| s["trace_id"] == trace).unwrap().clone();
    assert_eq!(session_of(dead[0])["saving_text"], "nothing spent yet");
    assert_eq!(
        (session_of(dead[0])["sent_usd"].as_f64(), session_of(dead[0])["no_model_calls"].as_u64() > Some(0)),
        (Some(0.0), true)
    );
    assert_eq!(session_of(main[0])["saving_text"], words.as_str(), "one spending session: its words are the total's");
    // Its table says the same words.
    let table = stats(&[]);
    assert!(table.lines().any(|l| l.trim_start().starts_with("all") && l.ends_with(&words)), "{table}");
    // The dashboard's API, the page's source.
    let serve = ServeProcess::start(&store);
    assert_eq!(serve.get("/api/stats")["total"]["saving_text"], words.as_str());
    // The npm package's totals of the trace's calls, as the editor shows them (built for the npm
    // run only: the native one runs before `npm run build`).
    if build == Build::Npm {
        editor_words(&store.join(main[0]).join("calls.jsonl"), &words);
    }
}

/// The npm package's `callTotals` of `calls` (a `calls.jsonl`), what the editor's status bar and
/// Prompt View show: the same `words`, and its brief part among them.
fn editor_words(calls: &Path, words: &str) {
    let script = format!(
        "import {{ init, callTotals }} from {:?}; import {{ readFileSync }} from 'node:fs'; await init(); \
         const calls = readFileSync(process.argv[1], 'utf8').trim().split('\\n').map((l) => JSON.parse(l)); \
         const t = callTotals(calls); console.log(JSON.stringify([t.saving_text, t.saving_brief]));",
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bindings/dist/node.js").to_string_lossy()
    );
    let editor = Command::new("node").args(["--input-type=module", "-e", &script]).arg(calls).output().unwrap();
    assert!(editor.status.success(), "{}", String::from_utf8_lossy(&editor.stderr));
    let (text, brief): (String, String) = serde_json::from_slice(&editor.stdout).unwrap();
    assert_eq!(text, words);
    assert!(words.ends_with(&brief) || words.contains(&format!(": {brief}")), "{words} / {brief}");
}

/// Claude Code runs a long session through the proxy (each shell: see `both_shells!`), with its
/// default settings (the task tools), through a kill of the proxy and a restart.
fn claude_code_session(build: Build) {
    let clients = clients();
    let (work, home) = work_and_home(&format!("claude-code-{build:?}"));
    session::workspace(&work);
    let steps = session::steps(&work);
    assert!(steps >= 30);

    let (upstream, served) = scripted_claude_upstream(&work);

    let args = ["--upstream", upstream.url.as_str(), "--window", "60000"];
    let mut proxy = Proxy::start_build(build, &work, &args);
    let port = proxy.url.rsplit(':').next().unwrap().to_owned();
    let claude = task_through(&clients, (&work, &home), &proxy.url);
    // Mid-session the proxy is killed (SIGKILL: nothing saved at the end) and started again on
    // the same port; Claude Code retries, and the session goes on in its trace.
    until_served(&served, KILL_AT);
    let killed_log = proxy.log();
    drop(proxy);
    proxy = Proxy::start_build(build, &work, &[&args[..], &["--port", &port]].concat());
    let output = claude.wait_with_output().expect("Claude Code ran");
    let stdout = String::from_utf8_lossy(&output.stdout);
    // A title call and an auto-mode-style check in the same session: side calls, no session.
    let session_id = upstream
        .requests()
        .iter()
        .rev()
        .find_map(|r| r.json()["metadata"]["user_id"].as_str().map(str::to_owned))
        .expect("Claude Code names its session");
    for text in [
        "Title for: fix the failing tests",
        &format!("<transcript>{}</transcript>\nIs the next action safe?", "Bash: python3 -m unittest\n".repeat(3_000)),
    ] {
        let body = json!({"model": "claude-haiku", "max_tokens": 50, "messages": [{"role": "user", "content": text}], "metadata": {"user_id": session_id}});
        let (status, _, _) = proxy_support::post(
            &format!("{}/v1/messages", proxy.url),
            body.to_string().as_bytes(),
            &[("x-api-key", KEY), ("anthropic-version", "2023-06-01")],
        );
        assert_eq!(status, 200);
    }
    let (status, log) = proxy.stop();
    let log = format!("{killed_log}\n--- killed, started again ---\n{log}");
    assert!(status.success(), "{log}");
    assert!(
        output.status.success() && stdout.contains(DONE),
        "Claude Code: {stdout}\n{}\nproxy log:\n{log}",
        String::from_utf8_lossy(&output.stderr)
    );

    // The files are edited as scripted, and the tests pass.
    let stock = std::fs::read_to_string(work.join("inventory/stock.py")).unwrap();
    assert!(
        stock.contains("sum(item.price * item.quantity for item in items)")
            && stock.contains("item.quantity += amount")
    );
    assert!(stock.contains("\"\"\"Add `amount` to the item's stock.\"\"\""));
    assert!(std::fs::read_to_string(work.join("inventory/report.py")).unwrap().contains("[\"INVENTORY REPORT\"]"));
    let tests = Command::new("python3")
        .args(["-m", "unittest", "discover", "-s", "tests"])
        .current_dir(&work)
        .output()
        .unwrap();
    assert!(tests.status.success(), "{}", String::from_utf8_lossy(&tests.stderr));

    // What the upstream received: the engine's prompts.
    let received = upstream.requests();
    let mut main: Vec<Value> = received
        .iter()
        .filter(|r| r.method == "POST" && !r.path.contains("count_tokens"))
        .map(Received::json)
        .filter(|b| b.get("tools").is_some())
        .collect();
    // A request the kill cut after it went upstream comes again, the same: one call.
    main.dedup();
    let side = received.iter().filter(|r| r.method == "POST" && r.json().get("tools").is_none()).count();
    assert!(main.len() > steps, "{} calls for {steps} steps", main.len());
    let store = work.join(".trace");
    let traces = trace_dirs(&store);
    assert_eq!(traces.len(), 1, "one conversation, one trace, through a kill and side calls: {traces:?}\n{log}");
    let trace = traces[0].clone();
    let records = main_calls(&store, &trace);
    never_dearer_than_the_agents_own(&records, &log);
    // Side calls naming the session are counted in it, beside its calls.
    let counted = calls(&store, &trace).len() - records.len();
    assert!(counted >= 2, "the title call and the check are counted in the session: {counted}\n{log}");
    // Every call of the main loop is in it, numbered on across the kill (a call the kill caught
    // upstream is counted too, without a status, beside its retry), and every tool result
    // recorded once.
    // (None when the kill came before the call's state was saved: its retry took its number.)
    let cut = records.iter().filter(|c| c.get("status").is_none()).count();
    assert!(cut <= 1, "only the call the kill caught has no status: {cut}\n{log}");
    assert_eq!(records.len() - cut, main.len(), "{log}");
    // The rest reads each record beside the request it sent.
    let records: Vec<Value> = records.into_iter().filter(|c| c.get("status").is_some()).collect();
    each_call_and_result_once(&store, &trace, &records, steps, &log);
    assert!(log.contains("marked interrupted"), "the restart found the killed session\n{log}");
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(store.join(&trace).join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["mission"], TASK, "titled by the task's words");
    assert_eq!(meta["status"], "finished");
    let git = Command::new("git").args(["status", "--porcelain"]).current_dir(&work).output().unwrap();
    let git = String::from_utf8_lossy(&git.stdout);
    assert!(!git.contains(".trace"), "the store stays out of git status:\n{git}");
    let sent: u64 = records.iter().map(|c| c["prompt_tokens"].as_u64().unwrap()).sum();
    let agent: u64 = records.iter().map(|c| c["client_tokens"].as_u64().unwrap()).sum();
    let read: u64 = records.iter().map(|c| c["usage"]["cache_read_tokens"].as_u64().unwrap_or(0)).sum();
    let prompt: u64 = records
        .iter()
        .map(|c| {
            c["usage"]["input_tokens"].as_u64().unwrap_or(0)
                + c["usage"]["cache_read_tokens"].as_u64().unwrap_or(0)
                + c["usage"]["cache_write_tokens"].as_u64().unwrap_or(0)
        })
        .sum();
    let expected: u64 = records.iter().map(|c| c["expected_cached_tokens"].as_u64().unwrap()).sum();
    let rewrites: Vec<usize> =
        (0..records.len()).filter(|&k| !records[k]["rewrites"].as_array().unwrap().is_empty()).collect();
    eprintln!(
        "claude code through the {build:?} proxy: {} calls ({side} side calls passed through), {agent} prompt tokens from Claude Code, {sent} sent upstream ({:.2}x); cached share reported {:.1}% (engine expected {:.1}%); rewrites at calls {rewrites:?}",
        records.len(),
        sent as f64 / agent as f64,
        read as f64 * 100.0 / prompt.max(1) as f64,
        expected as f64 * 100.0 / sent.max(1) as f64,
    );
    assert!(records.iter().all(|c| c["managed"] == json!(true)), "{log}");
    assert!(records.iter().filter(|c| c["completed"] != json!(true)).count() <= 1, "only a reply the kill cut: {log}");
    assert!(!log.contains("differs from the upstream's"), "the proxy read each reply as Claude Code did:\n{log}");
    // Each call names its agent, and `prompt.json` holds what the upstream received last.
    assert!(records.iter().all(|c| c["agent"] == json!("Claude Code 2.1.328")), "the pinned CLI: {log}");
    assert!(log.contains("(Claude Code 2.1.328): "), "the first call's line names it: {log}");
    let prompt: Value =
        serde_json::from_str(&std::fs::read_to_string(store.join(&trace).join("prompt.json")).unwrap()).unwrap();
    assert_eq!(prompt["tokens"], records.last().unwrap()["prompt_tokens"], "prompt.json is the newest call's");
    assert!(prompt["view"]["messages"].as_array().is_some_and(|m| !m.is_empty()));
    assert!(sent < agent, "the engine sent fewer tokens than Claude Code: {sent} vs {agent}");
    let last = records.last().unwrap();
    assert!(last["prompt_tokens"].as_u64() < last["client_tokens"].as_u64(), "{last}");
    assert!(!rewrites.is_empty(), "the window makes the engine compact\n{log}");
    let last_body = main.last().unwrap().to_string();
    assert!(last_body.contains("<compressed_turns"), "the last prompt carries a compressed block");
    // Nothing dropped is out of reach: the block names the plain-text originals by absolute path
    // (Claude Code's Read wants one), and the files hold the originals.
    let base = work.canonicalize().unwrap().display().to_string();
    let named = last_body
        .split("Originals: the files ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .expect("a block names its originals");
    assert!(named.starts_with(&format!("{base}/.trace/")) && named.ends_with(".txt"), "{named}");
    assert!(std::path::Path::new(named).is_file(), "{named} exists");
    assert!(main.last().unwrap()["messages"].as_array().unwrap().len() < last["messages"].as_u64().unwrap() as usize);

    // Byte-identical prefixes between calls except where the engine recorded a rewrite, and
    // the breakpoints on the stable prefix.
    for (k, body) in main.iter().enumerate() {
        let marks = body.to_string().matches("cache_control").count();
        assert!((2..=4).contains(&marks), "call {k}: {marks} breakpoints");
        assert!(body["system"].as_array().unwrap().last().unwrap().get("cache_control").is_some(), "call {k}");
        // The agent's tools as it sent them: the same on every call, but for those `ToolSearch`
        // loaded (deferred tools join the list).
        if k > 0 && strip(&body["tools"]) != strip(&main[k - 1]["tools"]) {
            let names = |b: &Value| -> Vec<String> {
                b["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
            };
            let (before, now) = (names(&main[k - 1]), names(body));
            assert!(
                before.iter().all(|n| now.contains(n)) && now.len() > before.len(),
                "call {k}: {before:?} → {now:?}"
            );
        }
        if k == 0 || rewrites.contains(&k) {
            continue;
        }
        let before = strip(&main[k - 1]["messages"]);
        let before = before.as_array().unwrap();
        let now = strip(&body["messages"]);
        let prefix = serde_json::to_string(&before[..before.len() - 1]).unwrap();
        let now = serde_json::to_string(&now.as_array().unwrap()[..before.len() - 1]).unwrap();
        assert!(
            prefix == now,
            "call {k}: the prefix changed without a recorded rewrite:\n{}\n{}",
            outline(before),
            outline(strip(&body["messages"]).as_array().unwrap())
        );
        assert_eq!(strip(&body["system"]), strip(&main[k - 1]["system"]));
    }

    // Side calls (requests without tools) went through as they came.
    assert_eq!(log.matches("side call, passed through").count(), side, "{log}");
    assert!(side >= 2, "the title call and the check went through: {side}");

    // The key never reaches the store or the log.
    for (path, text) in files_under(&store) {
        assert!(!text.contains(KEY) && !text.contains("e2eproxykey"), "the key is in {}", path.display());
    }
    assert!(!log.contains("e2eproxykey"));

    // The session is in the store with its plan from the task tools, and `workbench serve` shows it.
    let serve = ServeProcess::start(&store);
    let list = serve.get("/api/traces");
    assert!(list["traces"].as_array().unwrap().iter().any(|t| t["trace_id"] == json!(trace)), "{list}");
    let detail = serve.get(&format!("/api/traces/{trace}"));
    let goals: Vec<(String, String)> = detail["goal_tree"]["goals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["description"].as_str().unwrap().to_owned(), g["status"].as_str().unwrap().to_owned()))
        .collect();
    let plan: Vec<(String, String)> = PLAN.iter().map(|p| (p.to_string(), "completed".to_owned())).collect();
    assert_eq!(goals, plan, "{detail}");
    assert!(detail["trace"]["message_count"].as_u64().unwrap() >= 2 * steps as u64);
    let served = serve.get(&format!("/api/traces/{trace}/calls"));
    let served = served["calls"].as_array().unwrap();
    assert_eq!(served.len(), records.len() + cut + counted, "the session's calls and its side calls");
    let served_main: Vec<&Value> =
        served.iter().filter(|c| c["side_call"] != json!(true) && c.get("status").is_some()).collect();
    assert_eq!(served_main.len(), records.len());
    assert!(
        served_main.iter().all(|c| c["usage"]["cache_read_tokens"].is_u64() && c["expected_cached_tokens"].is_u64())
    );
    proxy_support::coder::matrix_row(build, "Messages", false, 60_000, Some(goals.len()), &records);
}

/// What Claude Code's sub-agent is asked, through its `Agent` tool.
const SUB_TASK: &str = "Find where the parser fails and report the line.";

/// Claude Code starts a sub-agent (its `Agent` tool): the sub-agent's conversation is recorded
/// as a branch of the caller's trace, linked to the call that started it; its answer reaches
/// the caller as that call's result; the session's sums hold both.
fn claude_code_sub_agent(build: Build) {
    let (work, home) = work_and_home(&format!("claude-code-sub-agent-{build:?}"));
    let ids = AtomicUsize::new(0);
    let upstream = Upstream::start(move |request: &Received| {
        let body = request.json();
        if request.path.contains("count_tokens") || request.method != "POST" {
            return Reply::Json { status: 200, body: json!({"input_tokens": 1000}).to_string() };
        }
        let id = format!("msg_sub_{}", ids.fetch_add(1, Ordering::SeqCst));
        let opening = body["messages"][0].to_string();
        let answered = body["messages"].to_string().contains("tool_result");
        let tools = body["tools"].as_array().cloned().unwrap_or_default();
        let blocks = if tools.is_empty() {
            vec![json!({"type": "text", "text": "Parser bug"})]
        } else if opening.contains(SUB_TASK) {
            vec![json!({"type": "text", "text": "The parser fails at parser.py line 12."})]
        } else if !answered {
            let input = json!({"description": "Find the bug", "prompt": SUB_TASK, "subagent_type": "general-purpose"});
            vec![json!({"type": "tool_use", "id": "toolu_spawn1", "name": "Agent", "input": input})]
        } else {
            vec![json!({"type": "text", "text": DONE})]
        };
        let usage = json!({"input_tokens": 1000, "output_tokens": 10});
        Reply::Events { events: anthropic_events(&id, &blocks, usage), cut_after: None }
    });
    let log = run_to_done(build, (&work, &home), &upstream.url, &["-p", "Find the parser bug."]);
    let sub_requests =
        upstream.requests().iter().filter(|r| r.json()["messages"][0].to_string().contains(SUB_TASK)).count();
    assert!(sub_requests >= 1, "Claude Code ran the sub-agent through the proxy\n{log}");

    let store = work.join(".trace");
    let metas: Vec<Value> = std::fs::read_dir(&store)
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("meta.json")).ok())
        .map(|text| serde_json::from_str(&text).unwrap())
        .collect();
    let (branches, callers): (Vec<&Value>, Vec<&Value>) = metas.iter().partition(|m| m.get("branch_of").is_some());
    assert_eq!((callers.len(), branches.len()), (1, 1), "the caller and its sub-agent: {metas:?}\n{log}");
    let (caller, branch) = (callers[0]["trace_id"].as_str().unwrap(), branches[0]["trace_id"].as_str().unwrap());
    assert_eq!(branches[0]["branch_of"], json!({"trace_id": caller, "call_id": "toolu_spawn1"}), "{log}");
    assert_eq!(branches[0]["mission"], SUB_TASK);
    let branch_calls = main_calls(&store, branch);
    assert!(!branch_calls.is_empty() && branch_calls.iter().all(|c| c["managed"] == json!(true)), "{log}");
    // The sub-agent's answer is the caller's result of the call that started it.
    let results: String = files_under(&store.join(caller).join("messages")).into_iter().map(|(_, text)| text).collect();
    assert!(results.contains("toolu_spawn1") && results.contains("parser.py line 12"), "{log}");

    // The caller's plan shows the sub-agent: an exploration, its branch linked to the call, merged
    // with the sub-agent's answer.
    let serve = ServeProcess::start(&store);
    let tree = &serve.get(&format!("/api/traces/{caller}"))["goal_tree"];
    let goals: Vec<(&str, &str, &str)> = tree["goals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["type"].as_str().unwrap(), g["description"].as_str().unwrap(), g["status"].as_str().unwrap()))
        .collect();
    let want = [
        ("explore_start", "sub-agents: Find the bug", "completed"),
        ("explore_merge", "merge the exploration", "completed"),
    ];
    assert_eq!(goals, want, "{tree}");
    let branch_of_plan = &tree["branches"][0];
    assert_eq!(
        (branch_of_plan["call_id"].as_str(), branch_of_plan["status"].as_str()),
        (Some("toolu_spawn1"), Some("completed"))
    );
    assert!(branch_of_plan["summary"].as_str().unwrap().contains("parser.py line 12"), "{tree}");

    // One session in the sums, its sub-agent's calls in them.
    let report = serve.get("/api/stats");
    let sessions = report["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{report}");
    assert_eq!((sessions[0]["trace_id"].as_str(), &sessions[0]["branches"]), (Some(caller), &json!([branch])));
    let counted = calls(&store, caller).len() + calls(&store, branch).len();
    assert_eq!(sessions[0]["calls"].as_u64(), Some(counted as u64), "{report}");
}

/// The plan Claude Code's background-agent session writes with `TodoWrite`, by step: the list
/// as first written, revised while the sub-agent runs, then once its answer came.
const TODOS: [[(&str, &str); 2]; 3] = [
    [("Read parser.py", "in_progress"), ("Fix the parser", "pending")],
    [("Read parser.py", "completed"), ("Fix the parser", "in_progress")],
    [("Read parser.py", "completed"), ("Fix the parser", "completed")],
];

fn todo_write(id: &str, todos: &[(&str, &str)]) -> Value {
    let todos: Vec<Value> =
        todos.iter().map(|(text, status)| json!({"content": text, "status": status, "activeForm": text})).collect();
    json!({"type": "tool_use", "id": id, "name": "TodoWrite", "input": {"todos": todos}})
}

/// Claude Code 2.1 runs its sub-agent in the background (`run_in_background`, its `Agent`
/// tool's default): the call returns at once, the agent revises its `TodoWrite` list while the
/// sub-agent runs, and the answer comes later in a `<task-notification>`; then the list is all
/// completed. One session; the sub-agent's branch closed and merged; the plan is the last list.
fn claude_code_background_sub_agent(build: Build) {
    let (work, home) = work_and_home(&format!("claude-code-background-{build:?}"));
    let ids = AtomicUsize::new(0);
    let upstream = Upstream::start(move |request: &Received| {
        let body = request.json();
        if request.path.contains("count_tokens") || request.method != "POST" {
            return Reply::Json { status: 200, body: json!({"input_tokens": 1000}).to_string() };
        }
        let id = format!("msg_bg_{}", ids.fetch_add(1, Ordering::SeqCst));
        let said = body["messages"].to_string();
        let has = |needle: &str| said.contains(needle);
        let blocks = if body["tools"].as_array().is_none_or(Vec::is_empty) {
            vec![json!({"type": "text", "text": "Parser bug"})]
        } else if body["messages"][0].to_string().contains(SUB_TASK) {
            vec![json!({"type": "text", "text": "The parser fails at parser.py line 12."})]
        } else if !has("toolu_todo1") {
            vec![todo_write("toolu_todo1", &TODOS[0])]
        } else if !has("toolu_bg") {
            let input = json!({"description": "Find the bug", "prompt": SUB_TASK, "subagent_type": "general-purpose", "run_in_background": true});
            vec![json!({"type": "tool_use", "id": "toolu_bg", "name": "Agent", "input": input})]
        } else if !has("toolu_todo2") {
            vec![todo_write("toolu_todo2", &TODOS[1])]
        } else if !has("task-notification") {
            vec![json!({"type": "text", "text": "The sub-agent is looking; I will wait for its answer."})]
        } else if !has("toolu_todo3") {
            vec![todo_write("toolu_todo3", &TODOS[2])]
        } else {
            vec![json!({"type": "text", "text": DONE})]
        };
        let usage = json!({"input_tokens": 1000, "output_tokens": 10});
        Reply::Events { events: anthropic_events(&id, &blocks, usage), cut_after: None }
    });
    let proxy = Proxy::start_build(build, &work, &["--upstream", &upstream.url]);
    let mut command = claude_code(&clients(), &work, &home, &proxy.url);
    // `TodoWrite` rather than the task tools.
    command.env("CLAUDE_CODE_ENABLE_TASKS", "0").env("CLAUDE_CODE_ENABLE_TODO_TOOLS", "1");
    let output = command.args(["-p", "Fix the parser bug."]).output().unwrap();
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success() && stdout.contains(DONE), "Claude Code: {stdout}\nproxy log:\n{log}");
    // Claude Code's own `Agent` tool runs sub-agents in the background on request.
    let requests = upstream.requests();
    let agent_tool = requests
        .iter()
        .flat_map(|r| r.json()["tools"].as_array().cloned().unwrap_or_default())
        .find(|t| t["name"] == "Agent")
        .expect("Claude Code offers its Agent tool");
    assert!(agent_tool["input_schema"]["properties"]["run_in_background"].is_object(), "{agent_tool}");
    let launched =
        requests.iter().map(|r| r.json()["messages"].to_string()).find(|m| m.contains("Async agent launched"));
    assert!(launched.is_some(), "the sub-agent ran in the background\n{log}");

    let store = work.join(".trace");
    let serve = ServeProcess::start(&store);
    let report = serve.get("/api/stats");
    let sessions = report["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{report}");
    let caller = sessions[0]["trace_id"].as_str().unwrap().to_owned();
    assert_eq!(sessions[0]["branches"].as_array().map(Vec::len), Some(1), "{report}");
    let tree = &serve.get(&format!("/api/traces/{caller}"))["goal_tree"];
    let goals: Vec<(&str, &str, &str)> = tree["goals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["type"].as_str().unwrap(), g["description"].as_str().unwrap(), g["status"].as_str().unwrap()))
        .collect();
    let plan: Vec<(&str, &str)> = goals.iter().filter(|g| g.0 == "normal").map(|g| (g.1, g.2)).collect();
    assert_eq!(plan, TODOS[2], "the plan is the last TodoWrite: {tree}");
    assert!(goals.contains(&("explore_start", "sub-agents: Find the bug", "completed")), "{tree}");
    assert!(goals.iter().any(|g| g.0 == "explore_merge"), "{tree}");
    let branch = &tree["branches"][0];
    assert_eq!((branch["call_id"].as_str(), branch["status"].as_str()), (Some("toolu_bg"), Some("completed")));
    assert!(branch["summary"].as_str().unwrap().contains("parser.py line 12"), "{tree}");
}

/// One line per message: its role and the start of its content (for failures).
fn outline(messages: &[Value]) -> String {
    let line = |m: &Value| {
        let text = m["content"].to_string();
        let head: String = text.chars().take(70).collect();
        format!("  {} ({} bytes) {head}", m["role"].as_str().unwrap_or("?"), text.len())
    };
    messages.iter().map(line).collect::<Vec<_>>().join("\n")
}

/// `workbench serve ROOT --port 0`, stopped when dropped.
struct ServeProcess {
    child: std::process::Child,
    address: String,
}

impl ServeProcess {
    fn start(root: &Path) -> ServeProcess {
        use std::io::BufRead;
        let mut child = Command::new(env!("CARGO_BIN_EXE_workbench"))
            .arg("serve")
            .arg(root)
            .args(["--port", "0"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        ServeProcess { child, address: line.trim().to_owned() }
    }

    fn get(&self, path: &str) -> Value {
        let mut response = proxy_support::client().get(format!("{}{path}", self.address)).call().unwrap();
        serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap()
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// OpenAI chat completion chunks of one streamed reply: text, then tool calls in pieces.
fn openai_chunks(id: &str, text: &str, calls: &[(String, String, String)], usage: Value) -> Vec<(String, Value)> {
    let chunk = |delta: Value, finish: Value| {
        (
            String::new(),
            json!({"id": id, "object": "chat.completion.chunk", "created": 1, "model": "gpt-scripted", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
        )
    };
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
    if !text.is_empty() {
        let (a, b) = text.split_at(text.len() / 2);
        chunks.push(chunk(json!({"content": a}), Value::Null));
        chunks.push(chunk(json!({"content": b}), Value::Null));
    }
    for (index, (call_id, name, arguments)) in calls.iter().enumerate() {
        let (a, b) = arguments.split_at(arguments.len() / 2);
        chunks.push(chunk(json!({"tool_calls": [{"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": a}}]}), Value::Null));
        chunks.push(chunk(json!({"tool_calls": [{"index": index, "function": {"arguments": b}}]}), Value::Null));
    }
    chunks.push(chunk(json!({}), json!(if calls.is_empty() { "stop" } else { "tool_calls" })));
    chunks.push((String::new(), json!({"id": id, "object": "chat.completion.chunk", "created": 1, "model": "gpt-scripted", "choices": [], "usage": usage})));
    chunks.push((String::new(), json!("[DONE]")));
    chunks
}

/// The openai SDK streams a tool-calling conversation through the proxy.
fn openai_sdk_session(build: Build) {
    let clients = clients();
    let work = scratch(&format!("openai-sdk-{build:?}"));
    for i in 0..12 {
        let text: String =
            (0..80).map(|l| format!("notes {i}, line {l}: the quick brown fox jumps over the lazy dog\n")).collect();
        std::fs::write(work.join(format!("notes-{i}.txt")), text).unwrap();
    }
    let steps = 12;
    let counter = TokenCounter::new(Encoding::O200kBase);
    let previous: Mutex<Option<String>> = Mutex::new(None);
    let upstream = Upstream::start(move |request: &Received| {
        let body = request.json();
        let text = json!([body["tools"], body["messages"]]).to_string();
        let total = counter.count(&text) as u64;
        let mut previous = previous.lock().unwrap();
        let cached = cached_tokens(previous.as_deref(), &text, &counter).min(total);
        *previous = Some(text);
        let usage = json!({"prompt_tokens": total, "completion_tokens": 12, "total_tokens": total + 12, "prompt_tokens_details": {"cached_tokens": cached}});
        let answered = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find_map(|m| m["tool_call_id"].as_str().map(str::to_owned));
        let n =
            answered.and_then(|id| id.strip_prefix("call_").and_then(|n| n.parse::<usize>().ok())).map_or(0, |n| n + 1);
        let events = if n < steps {
            let arguments = json!({"path": format!("notes-{n}.txt")}).to_string();
            openai_chunks(
                &format!("chatcmpl-{n}"),
                &format!("Reading notes {n}."),
                &[(format!("call_{n}"), "read_file".into(), arguments)],
                usage,
            )
        } else {
            openai_chunks("chatcmpl-end", "I read all twelve notes.", &[], usage)
        };
        Reply::Events { events, cut_after: None }
    });
    let proxy = Proxy::start_build(build, &work, &["--upstream", &upstream.url, "--window", "16000"]);
    let output = Command::new("node")
        .arg(clients.join("openai-chat.mjs"))
        .current_dir(&work)
        .env("OPENAI_BASE_URL", format!("{}/v1", proxy.url))
        .env("OPENAI_API_KEY", OPENAI_KEY)
        .output()
        .expect("run the openai SDK client");
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}\n{log}", String::from_utf8_lossy(&output.stderr));
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap_or("{}")).unwrap();
    assert_eq!(summary["answer"], "I read all twelve notes.");
    assert_eq!(summary["calls"], json!(steps + 1));
    assert_eq!(summary["tool_calls"], json!(steps));

    let received = upstream.requests();
    assert_eq!(received.len(), steps + 1);
    let store = work.join(".trace");
    let trace = trace_dirs(&store).remove(0);
    let records = main_calls(&store, &trace);
    assert_eq!(records.len(), steps + 1);
    let sent: u64 = records.iter().map(|c| c["prompt_tokens"].as_u64().unwrap()).sum();
    let agent: u64 = records.iter().map(|c| c["client_tokens"].as_u64().unwrap()).sum();
    let rewrites: Vec<usize> =
        (0..records.len()).filter(|&k| !records[k]["rewrites"].as_array().unwrap().is_empty()).collect();
    eprintln!(
        "openai sdk through the {build:?} proxy: {} calls, {agent} prompt tokens from the SDK, {sent} sent upstream; rewrites at {rewrites:?}",
        records.len()
    );
    assert!(records.iter().all(|c| c["managed"] == json!(true) && c["completed"] == json!(true)), "{log}");
    assert!(sent < agent && !rewrites.is_empty(), "{log}");
    assert!(records.iter().all(|c| c["usage"]["cache_read_tokens"].is_u64()), "usage with cached tokens is recorded");
    for (k, got) in received.iter().enumerate() {
        assert_eq!(got.header("authorization"), Some(format!("Bearer {OPENAI_KEY}").as_str()));
        let body = got.json();
        assert_eq!(body["stream_options"], json!({"include_usage": true}), "the SDK's fields are kept");
        assert_eq!(body["tools"][0]["function"]["name"], "read_file");
        assert_eq!(body["messages"][0], json!({"role": "system", "content": "You read notes for the user."}));
        if k > 0 && !rewrites.contains(&k) {
            // Everything but the previous call's last message (which may carry the engine's tail).
            let before = received[k - 1].json()["messages"].as_array().unwrap().clone();
            let now = body["messages"].as_array().unwrap();
            assert!(
                before[..before.len() - 1] == now[..before.len() - 1],
                "call {k}: the prefix changed:\n{}\n{}",
                outline(&before),
                outline(now)
            );
        }
    }
    for (path, text) in files_under(&store) {
        assert!(!text.contains("e2eopenaikey"), "the key is in {}", path.display());
    }
    assert!(!log.contains("e2eopenaikey"));
}

both_shells!(
    claude_code_session,
    claude_code_dollars,
    claude_code_session_at_the_default_window,
    claude_code_sub_agent,
    claude_code_background_sub_agent,
    openai_sdk_session
);

/// Issue 49: a team's gateway. Claude Code's session goes through three native proxies on one
/// PostgreSQL store behind HAProxy (round robin: consecutive calls land on different proxies),
/// and the proxy serving a call is killed with SIGKILL while the reply streams. Claude Code
/// retries, another proxy takes the conversation over once the dead one's lease expires, and the
/// session finishes: one session, every step's result recorded once, every call numbered on.
#[test]
fn claude_code_on_a_team_gateway() {
    let clients = clients();
    let (work, home) = work_and_home("claude-code-team");
    session::workspace(&work);
    let steps = session::steps(&work);
    let database = proxy_support::postgres::Postgres::start();
    let (upstream, served) = claude_upstream(&work, Some(KILL_AT));
    let args = ["--upstream", upstream.url.as_str(), "--window", "60000"];
    let mut gateway = proxy_support::gateway::Gateway::start(&work, &database.url(), 3, &args);
    let claude = task_through(&clients, (&work, &home), &gateway.url);
    // The slow reply of step KILL_AT is streaming: the proxy serving it is killed.
    until_served(&served, KILL_AT);
    // (A side call of Claude Code's may be passing at that moment: the slow reply outlasts it.)
    let mut serving = gateway.serving();
    for _ in 0..20 {
        if serving.len() == 1 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        serving = gateway.serving();
    }
    assert_eq!(serving.len(), 1, "one call in flight: {serving:?}");
    gateway.kill(serving[0]);
    let output = claude.wait_with_output().expect("Claude Code ran");
    let (statuses, log) = gateway.stop();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains(DONE),
        "Claude Code: {stdout}\n{}\nlogs:\n{log}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(statuses.len() == 2 && statuses.iter().all(|s| s.success()), "{log}");
    let served: Vec<usize> = (0..3)
        .map(|i| {
            std::fs::read_to_string(work.join(format!("proxy-{i}.log"))).unwrap().matches(" prompt tokens (").count()
        })
        .collect();
    assert!(served.iter().all(|&n| n > 0), "every proxy served calls of the session: {served:?}\n{log}");

    // The store, copied out of the database, read as a folder.
    let store = work.join("exported");
    database.export(&store);
    let traces = trace_dirs(&store);
    assert_eq!(traces.len(), 1, "one conversation, one session, over three proxies and a kill: {traces:?}\n{log}");
    let records = main_calls(&store, &traces[0]);
    assert!(records.len() > steps, "{} calls for {steps} steps\n{log}", records.len());
    each_call_and_result_once(&store, &traces[0], &records, steps, &log);
    let unmanaged = records.iter().filter(|c| c["managed"] != json!(true)).count();
    assert!(unmanaged <= 1, "at most the call the kill cut went unmanaged: {unmanaged}\n{log}");
    eprintln!(
        "claude code through a team gateway: {} calls for {steps} steps, managed calls per proxy {served:?}, proxy {} killed at step {KILL_AT}, {unmanaged} unmanaged",
        records.len(),
        serving[0]
    );
}
