//! `workbench serve` and `workbench dump` from the outside: the real binary on port 0, the
//! query API over HTTP, live events over WebSocket while an engine in this process appends to
//! the trace, resuming after an id, bad input, a hundred watchers, and files left untouched.
#![cfg(not(target_arch = "wasm32"))]

#[path = "serve_support/mod.rs"]
mod support;

use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use context_workbench::MessageDraft;
use context_workbench::model::Role;
use serde_json::Value;
use support::{Server, open_trace, persist, scratch, snapshot};

/// Trace `demo`: a mission, two goals (the first focused and worked on), an explore branch.
fn write_demo(root: &Path) {
    let engine = open_trace(root, "demo");
    engine.record(MessageDraft::text(Role::User, "Fix the flaky upload test.")).unwrap();
    assert!(!engine.call_goal_tool("goal", r#"{"add": "find the flake, fix it"}"#).is_error);
    assert!(!engine.call_goal_tool("goal", r#"{"focus": "1"}"#).is_error);
    engine.record(MessageDraft::text(Role::Assistant, "The upload test sleeps 10 ms and races the server.")).unwrap();
    let started = engine.call_goal_tool("explore", r#"{"branches": ["retry the upload", "wait for the server"]}"#);
    assert!(!started.is_error, "{}", started.text);
    engine.record_in_branch("A", MessageDraft::text(Role::Assistant, "Retrying hides the race.")).unwrap();
    persist(&engine);
}

/// The internal id of the goal described `description` in `GET /api/traces/{id}`.
fn goal_id(detail: &Value, description: &str) -> String {
    let goals = detail["goal_tree"]["goals"].as_array().expect("goals");
    let goal = goals.iter().find(|g| g["description"] == description).expect("the goal");
    goal["id"].as_str().expect("an id").to_owned()
}

fn error_code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or_else(|| panic!("an error body: {body}"))
}

#[test]
fn the_rest_routes_answer_and_bad_input_gets_clear_errors_while_nothing_on_disk_changes() {
    let root = scratch("rest");
    write_demo(&root);
    // `damaged`: a goal.json cut short; `noisy`: a message file that is not JSON.
    let damaged = open_trace(&root, "damaged");
    damaged.record(MessageDraft::text(Role::User, "Rename the module.")).unwrap();
    assert!(!damaged.call_goal_tool("goal", r#"{"add": "rename it"}"#).is_error);
    persist(&damaged);
    let goal_json = root.join("damaged/goal.json");
    let text = std::fs::read_to_string(&goal_json).unwrap();
    std::fs::write(&goal_json, &text[..text.len() / 2]).unwrap();
    let noisy = open_trace(&root, "noisy");
    noisy.record(MessageDraft::text(Role::User, "Speed up the build.")).unwrap();
    assert!(!noisy.call_goal_tool("goal", r#"{"add": "profile it"}"#).is_error);
    assert!(!noisy.call_goal_tool("goal", r#"{"focus": "1"}"#).is_error);
    noisy.record(MessageDraft::text(Role::Assistant, "Linking takes most of the time.")).unwrap();
    persist(&noisy);
    std::fs::write(root.join("noisy/messages/m999999.json"), "not json {").unwrap();
    // `escape`: a link out of the root to a trace elsewhere, which the server must not follow.
    let outside = scratch("rest-outside");
    write_demo(&outside);
    std::os::unix::fs::symlink(outside.join("demo"), root.join("escape")).unwrap();
    let before = snapshot(&root);

    let server = Server::start(&root);
    let (status, list) = server.get("/api/traces");
    assert_eq!(status, 200, "{list}");
    let mut ids: Vec<&str> =
        list["traces"].as_array().unwrap().iter().map(|t| t["trace_id"].as_str().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, ["damaged", "demo", "noisy"]);
    let demo = list["traces"].as_array().unwrap().iter().find(|t| t["trace_id"] == "demo").unwrap();
    assert_eq!(
        (demo["mission"].as_str(), demo["message_count"].as_u64()),
        (Some("Fix the flaky upload test."), Some(2))
    );

    let (status, detail) = server.get("/api/traces/demo");
    assert_eq!(status, 200, "{detail}");
    assert_eq!(detail["goal_tree"]["mission"], "Fix the flaky upload test.");
    assert!(detail["branches"]["A"]["last_message"]["content"].as_str().unwrap().contains("Retrying"), "{detail}");
    assert!(detail["last_event_id"].as_u64().unwrap() > 0);
    let flake = goal_id(&detail, "find the flake");

    let (status, page) = server.get(&format!("/api/traces/demo/messages?goal_id={flake}"));
    assert_eq!(status, 200, "{page}");
    let messages = page["messages"].as_array().unwrap();
    assert!(!messages.is_empty() && messages.iter().all(|m| m["goal_id"] == flake.as_str()), "{page}");
    assert!(messages.iter().any(|m| m["description"].as_str().unwrap().contains("races the server")), "{page}");
    let (status, body) = server.get("/api/traces/demo/messages");
    assert_eq!((status, error_code(&body)), (400, "invalid_input"), "goal_id is required");
    let (status, body) = server.get("/api/traces/demo/messages?goal_id=no-such-goal");
    assert_eq!((status, error_code(&body)), (404, "host_not_found"));

    let (status, branch) = server.get("/api/traces/demo/branches/A");
    assert_eq!(status, 200, "{branch}");
    assert_eq!(branch["messages"].as_array().unwrap().len(), 1);
    assert_eq!(branch["description"], "retry the upload");
    let (status, body) = server.get("/api/traces/demo/branches/Z");
    assert_eq!((status, error_code(&body)), (404, "host_not_found"), "{body}");

    let (status, events) = server.get("/api/traces/demo/events?since_event_id=0");
    assert_eq!(status, 200);
    let last = events["last_event_id"].as_u64().unwrap();
    let ids: Vec<u64> = events["events"].as_array().unwrap().iter().map(|e| e["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, (1..=last).collect::<Vec<_>>());
    let (_, tail) = server.get(&format!("/api/traces/demo/events?since_event_id={}", last - 2));
    assert_eq!(tail["events"].as_array().unwrap().len(), 2);
    let (status, body) = server.get(&format!("/api/traces/demo/events?since_event_id={}", last + 1));
    assert_eq!((status, error_code(&body)), (400, "invalid_input"), "beyond the end: {body}");
    let (status, body) = server.get("/api/traces/demo/events?since_event_id=soon");
    assert_eq!((status, error_code(&body)), (400, "invalid_input"));

    let (status, body) = server.get("/api/traces/no-such-trace");
    assert_eq!((status, error_code(&body)), (404, "host_not_found"), "{body}");
    for traversal in [
        "/api/traces/..",
        "/api/traces/%2e%2e",
        "/api/traces/..%2F..%2Fetc",
        "/api/traces/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "/api/traces/..%2fdemo/events",
        "/api/traces/demo/branches/%2e%2e%2f..%2fdemo",
        "/api/traces/%2e%2e/watch",
    ] {
        let (status, body) = server.get(traversal);
        assert_eq!((status, error_code(&body)), (400, "invalid_input"), "{traversal}: {body}");
    }
    let (status, body) = server.get("/api/traces/escape");
    assert_eq!((status, error_code(&body)), (403, "host_outside_workspace"), "{body}");
    match server.try_watch("escape", 0) {
        Err(tungstenite::Error::Http(response)) => assert_eq!(response.status().as_u16(), 403),
        other => panic!("watching through a link out of the root: {:?}", other.map(|_| "accepted")),
    }
    let (status, body) = server.get("/no/such/route");
    assert_eq!((status, error_code(&body)), (404, "no_route"));

    let (status, detail) = server.get("/api/traces/damaged");
    assert_eq!(status, 200, "a damaged goal.json is a note: {detail}");
    assert!(detail["notes"][0].as_str().unwrap().contains("goal.json"), "{detail}");
    assert_eq!(detail["goal_tree"]["goals"], Value::Array(Vec::new()));
    let (status, body) = server.get("/api/traces/damaged/messages?goal_id=1");
    assert_eq!((status, error_code(&body)), (422, "invalid_input"), "{body}");

    let (status, detail) = server.get("/api/traces/noisy");
    assert_eq!(status, 200);
    let profile = goal_id(&detail, "profile it");
    let (status, page) = server.get(&format!("/api/traces/noisy/messages?goal_id={profile}"));
    assert_eq!(status, 200, "{page}");
    assert!(page["notes"][0].as_str().unwrap().contains("m999999.json"), "{page}");
    assert_eq!(page["messages"].as_array().unwrap().len(), 1);

    // The dashboard's reads: a search of every raw message (a damaged file is a note), the
    // original of a message as `recall` gives it, no proxied session, and no prompt saved.
    let (status, found) = server.get("/api/search?q=linking%20TAKES");
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["hits"].as_array().unwrap().len(), 1, "{found}");
    assert_eq!((found["hits"][0]["trace_id"].as_str(), found["hits"][0]["call"].as_u64()), (Some("noisy"), None));
    assert!(found["notes"].to_string().contains("m999999.json"), "{found}");
    let id = found["hits"][0]["message_id"].as_str().unwrap();
    let (status, originals) = server.get(&format!("/api/traces/noisy/originals?ref={id}"));
    assert_eq!(status, 200, "{originals}");
    assert_eq!(originals["originals"][0]["text"], "Linking takes most of the time.");
    let (status, stats) = server.get("/api/stats");
    assert_eq!((status, stats["sessions"].as_array().map(Vec::len)), (200, Some(0)), "{stats}");
    let (status, prompt) = server.get("/api/traces/noisy/prompt");
    assert_eq!((status, &prompt["prompt"]), (200, &Value::Null), "{prompt}");

    assert_eq!(snapshot(&root), before, "a reader wrote under the trace root");
    drop(server);
    std::fs::remove_dir_all(root).unwrap();
    std::fs::remove_dir_all(outside).unwrap();
}

#[test]
fn a_watcher_receives_appended_events_in_order_and_a_reconnect_receives_exactly_the_missing_ones() {
    let root = scratch("watch");
    write_demo(&root);
    let server = Server::start(&root);
    let (_, detail) = server.get("/api/traces/demo");
    let stored = detail["last_event_id"].as_u64().unwrap();

    let mut watcher = server.watch("demo", 0);
    let connected = watcher.next();
    assert_eq!(connected["event"], "connected");
    assert_eq!((connected["trace_id"].as_str(), connected["current_event_id"].as_u64()), (Some("demo"), Some(stored)));
    assert_eq!(connected["goal_tree"], detail["goal_tree"]);
    assert!(connected["branches"]["A"].is_object(), "{connected}");
    for expected in 1..=stored {
        assert_eq!(watcher.next_event().0, expected, "the stored events first, in order");
    }

    // Another writer: the trace reopened, appended to and saved in rounds.
    let writer = open_trace(&root, "demo");
    let mut last = stored;
    for round in 0..5 {
        assert!(!writer.call_goal_tool("goal", &format!(r#"{{"add": "step {round}a, step {round}b"}}"#)).is_error);
        writer.record(MessageDraft::text(Role::Assistant, format!("Round {round} done."))).unwrap();
        let newest = persist(&writer);
        assert!(newest > last, "round {round} appended events");
        for event in writer.events_since(last) {
            let (id, frame) = watcher.next_event();
            assert_eq!(id, event.id, "in order, no gaps");
            let mut stored = serde_json::to_value(&event).unwrap();
            assert_eq!(frame["event"], stored["type"]);
            stored["event"] = frame["event"].clone();
            assert_eq!(frame, stored, "the event as stored, tagged");
        }
        last = newest;
    }

    // Reconnect as a client that saw all but the last three.
    watcher.close();
    let mut again = server.watch("demo", last - 3);
    let connected = again.next();
    assert_eq!(connected["current_event_id"].as_u64(), Some(last));
    let resent: Vec<u64> = (0..3).map(|_| again.next_event().0).collect();
    assert_eq!(resent, [last - 2, last - 1, last]);
    // Nothing else was queued: the next frame is the next event appended.
    writer.record(MessageDraft::text(Role::Assistant, "One more.")).unwrap();
    let newest = persist(&writer);
    assert_eq!(again.next_event().0, last + 1);
    assert_eq!(newest, last + 1);

    // Errors refuse the upgrade with the usual statuses.
    let refused = |trace: &str, since: u64| match server.try_watch(trace, since) {
        Err(tungstenite::Error::Http(response)) => response.status().as_u16(),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("{trace} since {since} was accepted"),
    };
    assert_eq!(refused("demo", newest + 1), 400, "since_event_id beyond the end");
    assert_eq!(refused("no-such-trace", 0), 404);
    assert_eq!(refused("..%2F..", 0), 400);
    drop(server);
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn sigterm_closes_every_watcher_with_going_away_and_exits_cleanly() {
    let root = scratch("stop");
    write_demo(&root);
    let mut server = Server::start(&root);
    let mut watchers: Vec<_> = (0..3).map(|_| server.watch("demo", 0)).collect();
    for watcher in &mut watchers {
        assert_eq!(watcher.next()["event"], "connected");
    }
    let status = server.stop();
    assert!(status.success(), "a stop on request is a clean exit: {status}");
    for mut watcher in watchers {
        let close = loop {
            match watcher.socket.read() {
                Ok(tungstenite::Message::Close(frame)) => break frame,
                Ok(_) => continue, // the stored events sent before the stop
                Err(e) => panic!("expected a Close frame before the connection ended: {e}"),
            }
        };
        let frame = close.expect("a close code");
        assert_eq!(frame.code, tungstenite::protocol::frame::coding::CloseCode::Away, "{frame:?}");
    }
    assert!(std::net::TcpStream::connect(&server.address).is_err(), "nothing listens after the stop");
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn a_connection_whose_headers_never_end_is_closed_after_the_header_timeout_and_others_are_answered() {
    let root = scratch("half-open");
    write_demo(&root);
    let config = root.with_extension("toml");
    std::fs::write(&config, "[proxy]\nheader_timeout_ms = 1000\n").unwrap();
    let server = Server::start_with(&["--config", config.to_str().unwrap()], &root);
    let mut half_open = std::net::TcpStream::connect(&server.address).unwrap();
    half_open.write_all(b"GET /api/traces HTTP/1.1\r\nhost: 127.0.0.1\r\n").unwrap();
    half_open.set_read_timeout(Some(std::time::Duration::from_secs(20))).unwrap();
    let (status, _) = server.get("/api/traces");
    assert_eq!(status, 200, "a whole request beside the half-open one is answered");
    let mut answer = Vec::new();
    let ended = half_open.read_to_end(&mut answer);
    assert!(ended.is_ok(), "the connection was still open after 20 s: {ended:?}");
    drop(server);
    std::fs::remove_dir_all(root).unwrap();
    std::fs::remove_file(config).unwrap();
}

#[test]
fn a_torn_line_is_sent_once_its_writer_completes_it_and_a_bad_line_becomes_a_note() {
    let root = scratch("torn");
    let engine = open_trace(&root, "handmade");
    engine.record(MessageDraft::text(Role::User, "Write the events by hand.")).unwrap();
    persist(&engine);
    let server = Server::start(&root);
    let mut watcher = server.watch("handmade", 0);
    assert_eq!(watcher.next()["current_event_id"], 0);

    let events = root.join("handmade/events.jsonl");
    let append = |text: &str| {
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&events).unwrap();
        std::io::Write::write_all(&mut file, text.as_bytes()).unwrap();
    };
    let first = r#"{"id":1,"type":"branch_completed","branch_id":"A","summary":"done"}"#;
    append(&format!("{first}\n"));
    let (id, frame) = watcher.next_event();
    assert_eq!((id, frame["event"].as_str(), frame["summary"].as_str()), (1, Some("branch_completed"), Some("done")));
    // Half a line, a pause for the poller to see it (coverage, not an assertion), the rest.
    let second = r#"{"id":2,"type":"branch_completed","branch_id":"B","summary":"also done"}"#;
    append(&second[..20]);
    std::thread::sleep(Duration::from_millis(300));
    append(&format!("{}\nnot an event\n", &second[20..]));
    let (id, frame) = watcher.next_event();
    assert_eq!((id, frame["summary"].as_str()), (2, Some("also done")), "the completed line, whole");
    let note = watcher.next();
    assert_eq!(note["event"], "note");
    assert!(note["message"].as_str().unwrap().contains("line 3 skipped"), "{note}");
    drop(server);
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn a_hundred_watchers_connect_and_one_leaving_mid_stream_does_not_disturb_the_others() {
    let root = scratch("hundred");
    write_demo(&root);
    let server = Server::start(&root);
    let (_, detail) = server.get("/api/traces/demo");
    let stored = detail["last_event_id"].as_u64().unwrap();
    let mut watchers: Vec<_> = (0..100).map(|_| server.watch("demo", stored)).collect();
    for watcher in &mut watchers {
        let connected = watcher.next();
        assert_eq!(
            (connected["event"].as_str(), connected["current_event_id"].as_u64()),
            (Some("connected"), Some(stored))
        );
    }
    let writer = open_trace(&root, "demo");
    let goals: Vec<String> = (0..30).map(|k| format!("goal {k}")).collect();
    let add = serde_json::json!({"add": goals.join(", ")}).to_string();
    assert!(!writer.call_goal_tool("goal", &add).is_error);
    let first_batch = persist(&writer);
    // One leaves abruptly after one event of the batch (its socket dropped with frames
    // unread), one closes politely.
    let mut abrupt = watchers.remove(0);
    assert_eq!(abrupt.next_event().0, stored + 1);
    drop(abrupt);
    watchers.remove(0).close();
    for k in 0..10 {
        writer.record(MessageDraft::text(Role::Assistant, format!("Message {k}."))).unwrap();
    }
    assert!(!writer.call_goal_tool("goal", r#"{"focus": "1"}"#).is_error);
    let last = persist(&writer);
    assert!(last > first_batch);
    for (n, watcher) in watchers.iter_mut().enumerate() {
        for expected in stored + 1..=last {
            assert_eq!(watcher.next_event().0, expected, "watcher {n}");
        }
    }
    let (status, _) = server.get("/api/traces");
    assert_eq!(status, 200, "still serving");
    drop(server);
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn a_burst_of_thousands_of_events_in_one_save_reaches_every_watcher_whole_and_in_order() {
    let root = scratch("burst");
    write_demo(&root);
    let server = Server::start(&root);
    let (_, detail) = server.get("/api/traces/demo");
    let stored = detail["last_event_id"].as_u64().unwrap();
    let mut watchers: Vec<_> = (0..3).map(|_| server.watch("demo", stored)).collect();
    for watcher in &mut watchers {
        assert_eq!(watcher.next()["event"], "connected");
    }
    // One save appends thousands of lines at once, read by the poller in one or a few pieces.
    let writer = open_trace(&root, "demo");
    for k in 0..3000 {
        writer.record(MessageDraft::text(Role::Assistant, format!("Burst message {k}."))).unwrap();
    }
    let last = persist(&writer);
    assert!(last >= stored + 3000);
    for (n, watcher) in watchers.iter_mut().enumerate() {
        for expected in stored + 1..=last {
            assert_eq!(watcher.next_event().0, expected, "watcher {n}");
        }
    }
    drop(server);
    std::fs::remove_dir_all(root).unwrap();
}

fn workbench(args: &[&str], root: &Path) -> (i32, String, String) {
    let output =
        Command::new(env!("CARGO_BIN_EXE_workbench")).arg(args[0]).arg(root).args(&args[1..]).output().unwrap();
    let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
    (output.status.code().unwrap_or(-1), text(&output.stdout), text(&output.stderr))
}

#[test]
fn dump_prints_the_step_tree_of_a_persisted_trace_as_text_and_json() {
    let root = scratch("dump");
    write_demo(&root);
    let before = snapshot(&root);

    let (code, text, stderr) = workbench(&["dump"], &root);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        text.starts_with("============================================================\n Step Tree Debug\n"),
        "{text}"
    );
    for line in
        ["  trace_id: demo", "  task: Fix the flaky upload test.", "## Steps", "find the flake", "races the server"]
    {
        assert!(text.contains(line), "{line} missing from\n{text}");
    }
    assert_eq!(workbench(&["dump"], &root).1, text, "the same trace dumps to the same bytes");

    let (code, json, stderr) = workbench(&["dump", "--json", "--trace", "demo"], &root);
    assert_eq!(code, 0, "{stderr}");
    let dump: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        (dump["trace"]["trace_id"].as_str(), dump["trace"]["task"].as_str()),
        (Some("demo"), Some("Fix the flaky upload test."))
    );
    let steps = dump["steps"].as_array().unwrap();
    assert!(!steps.is_empty() && steps.iter().all(|s| s["children"].is_array()), "{json}");
    assert!(json.contains("find the flake"));
    assert_eq!(snapshot(&root), before, "dump wrote under the trace root");

    let other = open_trace(&root, "other");
    other.record(MessageDraft::text(Role::User, "Another task.")).unwrap();
    persist(&other);
    let after_second = snapshot(&root);
    let (code, _, stderr) = workbench(&["dump"], &root);
    assert_eq!(code, 2);
    assert!(stderr.contains("2 traces") && stderr.contains("--trace"), "{stderr}");
    assert!(stderr.contains("\n  demo   started ") && stderr.contains("\n  other  started "), "one a line: {stderr}");
    let (code, _, stderr) = workbench(&["dump", "--trace", "nope"], &root);
    assert_eq!(code, 2);
    assert!(stderr.contains("no trace `nope`"), "{stderr}");
    let (code, _, stderr) = workbench(&["dump", "--trace", "../demo"], &root);
    assert_eq!(code, 2);
    assert!(stderr.contains("not a plain name"), "{stderr}");

    assert_eq!(snapshot(&root), after_second, "dump wrote under the trace root");

    std::fs::write(root.join("other/goal.json"), "{\"mission\": ").unwrap();
    let (code, _, stderr) = workbench(&["dump", "--trace", "other"], &root);
    assert_eq!(code, 2);
    assert!(stderr.contains("goal.json is corrupted"), "{stderr}");
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn prompt_prints_the_prompt_of_any_saved_call_and_names_what_it_cannot() {
    use context_workbench::prompt::CallInput;
    let root = scratch("prompt");
    let engine = open_trace(&root, "talk");
    let input = CallInput { system_prompt: "You are a coding agent.".into(), ..CallInput::default() };
    engine.record(MessageDraft::text(Role::User, "Fix the flaky upload test.")).unwrap();
    let first = pollster::block_on(engine.prepare_call(&input)).unwrap();
    engine.record(MessageDraft::text(Role::Assistant, "The upload test sleeps and races the server.")).unwrap();
    engine.record(MessageDraft::text(Role::User, "Then wait for the server instead.")).unwrap();
    let second = pollster::block_on(engine.prepare_call(&input)).unwrap();
    let before = snapshot(&root);

    let (code, text, stderr) = workbench(&["prompt", "--call", "1"], &root);
    assert_eq!(code, 0, "{stderr}");
    let head = format!("call 1 of talk: {} tokens in {} messages", first.tokens, first.view.messages.len());
    assert!(text.starts_with(&head), "{text}");
    assert!(text.contains("── 2 user · input · raw#m000000 ──\nFix the flaky upload test."), "{text}");
    assert!(!text.contains("Then wait for the server"), "call 1 came before that message: {text}");
    let (code, newest, _) = workbench(&["prompt"], &root);
    assert_eq!(code, 0);
    assert!(newest.starts_with(&format!("call 2 of talk: {} tokens", second.tokens)), "{newest}");
    assert!(newest.contains("Then wait for the server instead."));
    assert_eq!(workbench(&["prompt", "--call", "2"], &root).1, newest, "the newest call's by default");

    let (code, json, _) = workbench(&["prompt", "--json", "--trace", "talk", "--call", "1"], &root);
    assert_eq!(code, 0);
    let page: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(page["prompt"], serde_json::to_value(&first).unwrap());

    let (code, _, stderr) = workbench(&["prompt", "--call", "9"], &root);
    assert_eq!(code, 2);
    assert!(stderr.contains("call 9 has no saved prompt"), "{stderr}");
    let (code, _, stderr) = workbench(&["prompt", "--call", "last"], &root);
    assert_eq!(code, 2, "{stderr}");
    let (code, _, stderr) = workbench(&["prompt", "--trace", "../talk"], &root);
    assert_eq!(code, 2);
    assert!(stderr.contains("not a plain name"), "{stderr}");
    assert_eq!(snapshot(&root), before, "prompt wrote under the trace root");
}

/// Without `--trace`, a root of several traces is refused with a list a person can choose from:
/// each trace with its start, its calls and the user's words, not bare ids.
#[test]
fn prompt_and_dump_list_the_traces_to_choose_from() {
    use context_workbench::prompt::CallInput;
    let root = scratch("choose");
    let input = CallInput { system_prompt: "You are a coding agent.".into(), ..CallInput::default() };
    for (id, task, calls) in [("9f1c", "Fix the flaky upload test.", 1), ("0a7e", "Rename the parser module.", 2)] {
        let engine = open_trace(&root, id);
        engine.record(MessageDraft::text(Role::User, task)).unwrap();
        for _ in 0..calls {
            pollster::block_on(engine.prepare_call(&input)).unwrap();
            engine.record(MessageDraft::text(Role::Assistant, "Working on it.")).unwrap();
        }
        persist(&engine);
    }
    for command in [&["prompt", "--call", "1"][..], &["dump"]] {
        let (code, _, stderr) = workbench(command, &root);
        assert_eq!(code, 2, "{stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        let head = format!("2 traces under {}: name one with --trace ID", root.display());
        assert!(lines[0].ends_with(&head), "{stderr}");
        let upload = lines.iter().find(|l| l.contains("9f1c")).expect("the upload trace listed");
        assert!(upload.contains("1 call ") && upload.ends_with("Fix the flaky upload test."), "{upload}");
        let parser = lines.iter().find(|l| l.contains("0a7e")).expect("the parser trace listed");
        assert!(parser.contains("2 calls") && parser.ends_with("Rename the parser module."), "{parser}");
        assert!(upload.contains(" started 20") && upload.contains(" UTC"), "its start: {upload}");
    }
}
