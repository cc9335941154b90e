//! More real agents through the proxy, each against a scripted upstream of its own API, fixing
//! a typo in a scratch git workspace with its own tools, for real: the Codex CLI (OpenAI
//! Responses; its commands and its `apply_patch`) and Gemini CLI (the Gemini API; its shell
//! tool and its plan). Pinned in `tests/clients/package.json`, installed by `.ci/setup`.
#![cfg(not(target_arch = "wasm32"))]

#[macro_use]
mod proxy_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use context_workbench::proxy::CALLS_FILE;
use proxy_support::{Build, Proxy, Received, Reply, Upstream, files_under, scratch};
use serde_json::{Value, json};

const KEY: &str = "sk-proj-e2eagentkey0123456789abcdefghijklmnopqrstuvwxyz0123456";

/// An agent's launcher in `tests/clients/node_modules`.
fn client(path: &str) -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clients/node_modules").join(path);
    assert!(bin.exists(), "the test clients are not installed: run `bash .ci/setup` (or `npm ci` in tests/clients)");
    bin
}

/// A scratch git workspace with a typo in `notes.txt` and a 3,000-line log; returns (workspace,
/// home).
fn workspace(name: &str) -> (PathBuf, PathBuf) {
    let root = scratch(name);
    let (work, home) = (root.join("work"), root.join("home"));
    std::fs::create_dir_all(work.join("logs")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(work.join("notes.txt"), "Helo world\n").unwrap();
    let log: String =
        (0..3000).map(|i| format!("[{i:05}] INFO sync: reconciled sku-{i} after {} ms\n", i * 37 % 900)).collect();
    std::fs::write(work.join("logs/build.log"), log).unwrap();
    git(&work, &["init", "-q", "."]);
    git(&work, &["add", "."]);
    git(&work, &["commit", "-qm", "start"]);
    (work, home)
}

/// Prompt tokens the agent sent and the engine sent, over a session's calls.
fn tokens(records: &[Value]) -> (u64, u64) {
    let sum = |key: &str| records.iter().map(|c| c[key].as_u64().unwrap()).sum();
    (sum("client_tokens"), sum("prompt_tokens"))
}

fn calls(store: &Path, trace: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(store.join(trace).join(CALLS_FILE)).unwrap_or_default();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn traces(store: &Path) -> Vec<String> {
    let dirs = std::fs::read_dir(store).map(|d| d.flatten().collect::<Vec<_>>()).unwrap_or_default();
    dirs.iter().filter(|e| e.path().is_dir()).map(|e| e.file_name().to_string_lossy().into_owned()).collect()
}

fn git(dir: &Path, args: &[&str]) {
    let mut command = Command::new("git");
    command.args(["-c", "user.email=t@e.st", "-c", "user.name=t"]).args(args).current_dir(dir);
    assert!(command.status().unwrap().success(), "git {args:?}");
}

/// What each agent is asked to do.
const TASK: &str = "Fix the typo in notes.txt.";

const CODEX_DONE: &str = "Fixed: notes.txt now says Hello world.";

/// The Codex session's steps: read a large log, find the typo, patch it, check it.
fn codex_step(n: usize) -> Option<Value> {
    let command = |cmd: &str| json!({"type": "function_call", "name": "exec_command", "arguments": json!({"cmd": cmd}).to_string()});
    Some(match n {
        0 => command("cat logs/build.log"),
        1 => command("grep -n Helo notes.txt"),
        2 => json!({"type": "custom_tool_call", "name": "apply_patch",
            "input": "*** Begin Patch\n*** Update File: notes.txt\n@@\n-Helo world\n+Hello world\n*** End Patch\n"}),
        3 => command("cat notes.txt"),
        _ => return None,
    })
}

/// Responses server-sent events of a reply of `output` items.
fn responses_events(id: &str, output: &[Value], usage: Value) -> Vec<(String, Value)> {
    let mut events = vec![(
        "response.created".to_owned(),
        json!({"type": "response.created", "response": {"id": id, "object": "response", "status": "in_progress", "output": []}}),
    )];
    for (i, item) in output.iter().enumerate() {
        events.push((
            "response.output_item.added".into(),
            json!({"type": "response.output_item.added", "output_index": i, "item": item}),
        ));
        events.push((
            "response.output_item.done".into(),
            json!({"type": "response.output_item.done", "output_index": i, "item": item}),
        ));
    }
    let done = json!({"id": id, "object": "response", "status": "completed", "output": output, "usage": usage});
    events.push(("response.completed".into(), json!({"type": "response.completed", "response": done})));
    events
}

/// The Codex CLI runs a session through the proxy (each shell): its requests are managed (the
/// engine's `input`, Codex's reasoning items sent back as they came), its commands and patch
/// run for real, and the session is one trace.
fn codex_session(build: Build) {
    let (work, home) = workspace(&format!("codex-{build:?}"));
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    let served = Mutex::new(0usize);
    let upstream = Upstream::start(move |request: &Received| {
        if request.method != "POST" || !request.path.ends_with("/responses") {
            return Reply::Json { status: 404, body: json!({"error": {"message": "not scripted"}}).to_string() };
        }
        let body = request.json();
        // One past the step whose output the request ends with.
        let answered = body["input"].as_array().into_iter().flatten().rev().find_map(|i| {
            i["type"].as_str().filter(|t| t.ends_with("_output")).and(i["call_id"].as_str().map(str::to_owned))
        });
        let n = answered
            .and_then(|id| id.strip_prefix("call_cx").and_then(|n| n.parse::<usize>().ok()))
            .map_or(0, |n| n + 1);
        let mut served = served.lock().unwrap();
        *served += 1;
        let reasoning = json!({"type": "reasoning", "id": format!("rs_{n}"), "summary": [], "encrypted_content": format!("gAAAAB{n}scripted-reasoning==")});
        let output = match codex_step(n) {
            Some(mut call) => {
                call["id"] = json!(format!("fc_{n}"));
                call["call_id"] = json!(format!("call_cx{n}"));
                call["status"] = json!("completed");
                let note = json!({"type": "message", "id": format!("msg_{n}"), "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": format!("Step {n}."), "annotations": []}]});
                vec![reasoning, note, call]
            }
            None => vec![
                reasoning,
                json!({"type": "message", "id": "msg_done", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": CODEX_DONE, "annotations": []}]}),
            ],
        };
        let usage = json!({"input_tokens": 9000, "input_tokens_details": {"cached_tokens": 8000}, "output_tokens": 30, "total_tokens": 9030});
        Reply::Events { events: responses_events(&format!("resp_{served}"), &output, usage), cut_after: None }
    });

    let proxy = Proxy::start_build(build, &work, &["--upstream", &upstream.url, "--window", "20000"]);
    let config = format!(
        "model = \"gpt-5.5\"\nmodel_provider = \"proxy\"\napproval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n\n[model_providers.proxy]\nname = \"proxy\"\nbase_url = \"{}/v1\"\nenv_key = \"CODEX_TEST_KEY\"\nwire_api = \"responses\"\n",
        proxy.url
    );
    std::fs::write(home.join(".codex/config.toml"), config).unwrap();
    let output = Command::new("node")
        .arg(client("@openai/codex/bin/codex.js"))
        .args(["exec", "--skip-git-repo-check", TASK])
        .current_dir(&work)
        .env("HOME", &home)
        .env("CODEX_HOME", home.join(".codex"))
        .env("CODEX_TEST_KEY", KEY)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .expect("run Codex");
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains(CODEX_DONE),
        "Codex: {stdout}\n{}\nproxy log:\n{log}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(std::fs::read_to_string(work.join("notes.txt")).unwrap(), "Hello world\n", "Codex's patch ran");

    // One trace, every call managed and completed, named after Codex.
    let store = work.join(".trace");
    let traces = traces(&store);
    assert_eq!(traces.len(), 1, "{traces:?}\n{log}");
    let records = calls(&store, &traces[0]);
    let received: Vec<Value> =
        upstream.requests().iter().filter(|r| r.path.ends_with("/responses")).map(Received::json).collect();
    assert_eq!(records.len(), received.len(), "{log}");
    assert_eq!(received.len(), 5, "four steps and the answer:\n{log}");
    assert!(records.iter().all(|c| c["managed"] == json!(true) && c["completed"] == json!(true)), "{log}");
    assert!(records.iter().all(|c| c["agent"].as_str().is_some_and(|a| a.starts_with("Codex 0.169.0"))), "{log}");
    assert!(!log.contains("differs from the upstream's"), "the proxy read each reply as Codex did:\n{log}");

    // What the upstream received: Codex's fields, its reasoning items as they were sent, and a
    // prefix that stays byte-identical from call to call.
    for (k, body) in received.iter().enumerate() {
        assert_eq!(body["store"], json!(false));
        assert_eq!(body["include"], json!(["reasoning.encrypted_content"]), "Codex's fields are kept");
        let input = body["input"].as_array().unwrap();
        assert_eq!(input[0]["role"], "developer", "Codex's system prompt stays first");
        // Codex's copy of a reasoning item (it adds `"content": null`) goes back as Codex sent it.
        for step in 0..k {
            let sealed = format!("gAAAAB{step}scripted-reasoning==");
            let kept = input.iter().any(|i| i["type"] == "reasoning" && i["encrypted_content"] == json!(sealed));
            assert!(kept, "call {k}: step {step}'s reasoning is in the prompt");
        }
        if k > 0 && records[k]["rewrites"].as_array().is_some_and(Vec::is_empty) {
            let before = received[k - 1]["input"].as_array().unwrap();
            assert_eq!(before[..before.len() - 1], input[..before.len() - 1], "call {k}: the prefix changed");
        }
    }
    // The 3,000-line log Codex read is cut down in the prompts after the one that read it.
    let sent: u64 = records.iter().map(|c| c["prompt_tokens"].as_u64().unwrap()).sum();
    let agent: u64 = records.iter().map(|c| c["client_tokens"].as_u64().unwrap()).sum();
    eprintln!(
        "codex through the {build:?} proxy: {} calls, {agent} prompt tokens from Codex, {sent} sent upstream",
        records.len()
    );
    assert!(sent * 2 < agent, "{sent} vs {agent}\n{log}");
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(store.join(&traces[0]).join("meta.json")).unwrap()).unwrap();
    assert_eq!((meta["status"].as_str(), meta["mission"].as_str()), (Some("finished"), Some(TASK)), "{meta}");
    let messages = files_under(&store.join(&traces[0]).join("messages"));
    assert!(messages.iter().any(|(_, text)| text.contains("*** Begin Patch")), "the patch is in the trace");
    for (path, text) in files_under(&store) {
        assert!(!text.contains("e2eagentkey"), "the key is in {}", path.display());
    }
    assert!(!log.contains("e2eagentkey"));
}

const GEMINI_DONE: &str = "Fixed: notes.txt says Hello world.";

/// The Gemini CLI session's steps: read a large log, plan, fix the typo, check it.
fn gemini_step(n: usize) -> Option<(&'static str, Value)> {
    let shell = |command: &str| ("run_shell_command", json!({"command": command}));
    Some(match n {
        0 => shell("cat logs/build.log"),
        1 => (
            "write_todos",
            json!({"todos": [{"description": "Find the typo", "status": "completed"}, {"description": "Fix notes.txt", "status": "in_progress"}]}),
        ),
        2 => shell("sed -i 's/Helo/Hello/' notes.txt"),
        3 => shell("cat notes.txt"),
        _ => return None,
    })
}

/// Gemini CLI runs a session through the proxy (each shell): its `streamGenerateContent`
/// requests are managed (the engine's `contents`, each call's `thoughtSignature` kept), its
/// commands run for real, its `write_todos` becomes the session's plan, and the session is one
/// trace.
fn gemini_cli_session(build: Build) {
    let (work, home) = workspace(&format!("gemini-{build:?}"));
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    let settings =
        json!({"security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"disableAutoUpdate": true}});
    std::fs::write(home.join(".gemini/settings.json"), settings.to_string()).unwrap();

    let upstream = Upstream::start(move |request: &Received| {
        if request.method != "POST" || !request.path.contains(":streamGenerateContent") {
            let text = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "{}"}]}, "finishReason": "STOP"}]});
            return Reply::Json { status: 200, body: text.to_string() };
        }
        let body = request.json();
        // One past the step whose response the request ends with (the CLI names its calls).
        let calls = body["contents"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default());
        let n = calls.filter(|p| p.get("functionResponse").is_some()).count();
        let parts = match gemini_step(n) {
            Some((name, args)) => vec![
                json!({"text": format!("Step {n}.")}),
                json!({"functionCall": {"name": name, "args": args}, "thoughtSignature": format!("c2lnbmF0dXJl{n}")}),
            ],
            None => vec![json!({"text": GEMINI_DONE})],
        };
        let usage = json!({"promptTokenCount": 9000, "cachedContentTokenCount": 6000, "candidatesTokenCount": 30, "totalTokenCount": 9030});
        let chunk = json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}], "usageMetadata": usage, "modelVersion": "gemini-2.5-flash"});
        Reply::Events { events: vec![(String::new(), chunk)], cut_after: None }
    });
    let proxy = Proxy::start_build(build, &work, &["--upstream", &upstream.url, "--window", "20000"]);
    let output = Command::new("node")
        .arg(client("@google/gemini-cli/bundle/gemini.js"))
        .args(["-m", "gemini-2.5-flash", "--yolo", "-p", TASK])
        .current_dir(&work)
        .env("HOME", &home)
        .env("GEMINI_API_KEY", KEY)
        .env("GOOGLE_GEMINI_BASE_URL", &proxy.url)
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .env_remove("GOOGLE_API_KEY")
        .env_remove("GOOGLE_CLOUD_PROJECT")
        .output()
        .expect("run Gemini CLI");
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains(GEMINI_DONE),
        "Gemini CLI: {stdout}\n{}\nproxy log:\n{log}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(std::fs::read_to_string(work.join("notes.txt")).unwrap(), "Hello world\n", "its command ran");

    let store = work.join(".trace");
    let traces = traces(&store);
    assert_eq!(traces.len(), 1, "{traces:?}\n{log}");
    let records = calls(&store, &traces[0]);
    let received: Vec<Value> =
        upstream.requests().iter().filter(|r| r.path.contains(":streamGenerateContent")).map(Received::json).collect();
    assert_eq!((records.len(), received.len()), (5, 5), "four steps and the answer:\n{log}");
    assert!(records.iter().all(|c| c["managed"] == json!(true) && c["completed"] == json!(true)), "{log}");
    assert!(records.iter().all(|c| c["model"] == json!("gemini-2.5-flash")), "the model, from the path");
    assert!(records.iter().all(|c| c["agent"].as_str().is_some_and(|a| a.starts_with("Gemini CLI 0.61.0"))), "{log}");
    assert!(!log.contains("differs from the upstream's"), "the proxy read each reply as the CLI did:\n{log}");
    for (k, body) in received.iter().enumerate() {
        assert!(body["systemInstruction"].is_object() && body["generationConfig"].is_object(), "kept as they came");
        let contents = body["contents"].as_array().unwrap();
        for step in 0..k {
            let signed = contents.iter().flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default()).any(|p| {
                p.get("functionCall").is_some() && p["thoughtSignature"] == json!(format!("c2lnbmF0dXJl{step}"))
            });
            assert!(signed, "call {k}: step {step}'s call went back with its signature");
        }
        if k > 0 && records[k]["rewrites"].as_array().is_some_and(Vec::is_empty) {
            let before = received[k - 1]["contents"].as_array().unwrap();
            assert_eq!(before[..before.len() - 1], contents[..before.len() - 1], "call {k}: the prefix changed");
        }
    }
    let (agent, sent) = tokens(&records);
    eprintln!(
        "gemini cli through the {build:?} proxy: {} calls, {agent} prompt tokens from it, {sent} sent upstream",
        records.len()
    );
    assert!(sent * 2 < agent, "{sent} vs {agent}\n{log}");
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(store.join(&traces[0]).join("meta.json")).unwrap()).unwrap();
    assert_eq!((meta["status"].as_str(), meta["mission"].as_str()), (Some("finished"), Some(TASK)), "{meta}");
    let plan: Value =
        serde_json::from_str(&std::fs::read_to_string(store.join(&traces[0]).join("goal.json")).unwrap()).unwrap();
    let goals: Vec<(&str, &str)> = plan["goals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["description"].as_str().unwrap(), g["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        goals,
        [("Find the typo", "completed"), ("Fix notes.txt", "in_progress")],
        "its write_todos is the plan"
    );
    for (path, text) in files_under(&store) {
        assert!(!text.contains("e2eagentkey"), "the key is in {}", path.display());
    }
    assert!(!log.contains("e2eagentkey"));
}

both_shells!(codex_session, gemini_cli_session);
