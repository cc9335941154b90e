//! The PostgreSQL store (`--store postgres://…`): the real `workbench proxy`, `stats` and
//! `store import` on a cluster each test starts in a temporary folder; the store's file
//! operations as rows (SQL-shaped text included), leases, a database that is down, and a store
//! made by a newer version.
#![cfg(not(target_arch = "wasm32"))]

#[macro_use]
mod proxy_support;
mod serve_support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use proxy_support::postgres::{PASSWORD, Postgres, free_port};
use proxy_support::{PATIENCE, Proxy, Received, Reply, Upstream, anthropic_events, anthropic_usage, post, scratch};
use serde_json::{Value, json};
use workbench_cli::native::{PgStore, StoreFs};

/// Text shaped to break a query built by formatting.
const SQL_TEXT: &str = "Fix it'); DROP TABLE store_files; -- $1 \\x00 E'\\\\' \"; SELECT pg_sleep(9);";

fn headers() -> Vec<(&'static str, &'static str)> {
    vec![("x-api-key", "sk-ant-test"), ("anthropic-version", "2023-06-01")]
}

fn step_blocks(n: usize) -> Vec<Value> {
    vec![
        json!({"type": "text", "text": format!("Step {n}: reading.")}),
        json!({"type": "tool_use", "id": format!("toolu_p{n}"), "name": "Bash", "input": {"command": format!("cat part{n}.txt")}}),
    ]
}

fn scripted() -> Upstream {
    Upstream::start(|request: &Received| {
        let n = proxy_support::step_of(&request.json(), "toolu_p");
        Reply::Events {
            events: anthropic_events(&format!("msg_{n}"), &step_blocks(n), anthropic_usage(5000, 4000)),
            cut_after: None,
        }
    })
}

/// The agent's request after `steps` tool steps of session `session`.
fn request(session: &str, steps: usize) -> Vec<u8> {
    let mut messages = vec![json!({"role": "user", "content": [{"type": "text", "text": SQL_TEXT}]})];
    for n in 0..steps {
        messages.push(json!({"role": "assistant", "content": step_blocks(n)}));
        let output = format!("line {n} of the part ' OR 1=1; --\n").repeat(40);
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_p{n}"), "content": output}]}));
    }
    proxy_support::claude_code_request(session, messages)
}

fn turn(proxy: &Proxy, session: &str, steps: usize) {
    let (status, _, body) = post(&format!("{}/v1/messages", proxy.url), &request(session, steps), &headers());
    assert_eq!(status, 200, "step {steps}: {body}\n{}", proxy.log());
    assert!(body.contains("message_stop"), "step {steps}: {body}");
}

/// `workbench ARGS` in `dir`: exit code, stdout, stderr.
fn workbench(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_workbench")).current_dir(dir).args(args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (output.status.code().unwrap_or(-1), text(&output.stdout), text(&output.stderr))
}

fn stats_json(dir: &Path, store: &str) -> Value {
    let (code, out, err) = workbench(dir, &["stats", "--store", store, "--json"]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// The trace folders of a database store.
fn traces(store: &StoreFs) -> Vec<String> {
    store.list_dir("").unwrap().into_iter().filter(|e| e.is_dir).map(|e| e.name).collect()
}

/// The records of a trace's `calls.jsonl`.
fn calls(store: &StoreFs, trace: &str) -> Vec<Value> {
    let text = store.read_file(&format!("{trace}/calls.jsonl")).map(|c| c.text).unwrap_or_default();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn a_conversation_is_one_session_in_the_database_and_a_restart_resumes_it() {
    let (pg, upstream, dir) = (Postgres::start(), scripted(), scratch("pg-resume"));
    let url = pg.url();
    let start = || Proxy::start(&dir, &["--upstream", &upstream.url, "--store", &url]);
    let proxy = start();
    for steps in 0..3 {
        turn(&proxy, "pg", steps);
    }
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    assert!(!log.contains(PASSWORD), "the password stays out of the log:\n{log}");
    assert!(log.contains("postgres://workbench:***@127.0.0.1"), "the log names the store:\n{log}");
    let proxy = start();
    for steps in 3..6 {
        turn(&proxy, "pg", steps);
    }
    // The proxy's dashboard reads the same rows.
    let (code, _, listed) = proxy_support::get(&format!("{}/workbench/api/traces", proxy.url), &[]);
    assert_eq!(code, 200, "{listed}");
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    assert_eq!(pg.psql("postgres", "SELECT count(*) FROM store_leases"), "0", "a stopped proxy lets go");

    assert!(!dir.join(".trace").exists(), "nothing of the store on disk");
    let store = StoreFs::open_root(&url).unwrap();
    let ids = traces(&store);
    assert_eq!(ids.len(), 1, "one conversation, one session: {ids:?}\n{log}");
    assert!(listed.contains(&ids[0]), "{listed}");
    let numbers: Vec<u64> = calls(&store, &ids[0]).iter().map(|c| c["call"].as_u64().unwrap()).collect();
    assert_eq!(numbers, [1, 2, 3, 4, 5, 6], "every call once, numbered on across the restart\n{log}");
    // A session on a shared store is held for a call at a time, never closed by a proxy's stop.
    let rows = pg.psql("postgres", "SELECT trace_id, status, calls FROM store_sessions");
    assert_eq!(rows, format!("{}|running|6", ids[0]), "the sessions view");
    // The SQL-shaped text is a message like any other, and every table is still there.
    let found = pg.psql(
        "postgres",
        "SELECT count(*) FROM store_chunks WHERE position('DROP TABLE store_files' IN convert_from(data, 'UTF8')) > 0",
    );
    assert_ne!(found, "0", "the user's words are stored as they came");

    let report = stats_json(&dir, &url);
    assert_eq!(report["sessions"].as_array().map(Vec::len), Some(1), "{report}");
    assert_eq!(report["total"]["calls"], json!(6), "{report}");
}

#[test]
fn an_import_keeps_every_session_and_a_second_one_copies_nothing_again() {
    let (pg, upstream, dir) = (Postgres::start(), scripted(), scratch("pg-import"));
    let proxy = Proxy::start(&dir, &["--upstream", &upstream.url]);
    for session in ["one", "two"] {
        for steps in 0..2 {
            turn(&proxy, session, steps);
        }
    }
    let (status, log) = proxy.stop();
    assert!(status.success(), "{log}");
    let before = stats_json(&dir, ".trace");
    assert_eq!(before["sessions"].as_array().map(Vec::len), Some(2), "{before}");

    let url = pg.create_database("imported");
    let (code, out, err) = workbench(&dir, &["store", "import", ".trace", &url]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("imported 2 sessions ("), "{out}");
    assert!(!out.contains(PASSWORD) && out.contains("workbench:***@"), "{out}");
    assert_eq!(stats_json(&dir, &url), before, "the same sessions, calls and totals");

    let (code, out, err) = workbench(&dir, &["store", "import", ".trace", &url]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("imported 0 sessions (0 files)") && out.contains("2 already there"), "{out}");
    assert_eq!(stats_json(&dir, &url), before);
}

#[test]
fn a_database_that_is_down_is_a_clear_error_without_the_password() {
    let dir = scratch("pg-down");
    let url = format!("postgres://workbench:{PASSWORD}@127.0.0.1:{}/postgres", free_port());
    let shown = url.replace(PASSWORD, "***");
    for args in [vec!["proxy", "--port", "0", "--store", &url], vec!["stats", "--store", &url], vec!["serve", &url]] {
        let started = Instant::now();
        let (code, out, err) = workbench(&dir, &args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(&format!("cannot open the PostgreSQL store {shown}")), "{args:?}: {err}");
        assert!(!err.contains(PASSWORD) && !out.contains(PASSWORD), "{err}");
        assert!(started.elapsed() < PATIENCE, "{args:?} gave up in time");
    }
}

#[test]
fn a_store_made_by_a_newer_version_is_refused_in_words() {
    let (pg, dir) = (Postgres::start(), scratch("pg-newer"));
    let url = pg.url();
    let (code, _, err) = workbench(&dir, &["stats", "--store", &url]);
    assert_eq!(code, 0, "a new store is made: {err}");
    pg.psql(
        "postgres",
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES (90001, 'from the future', true, '\\x00', 0)",
    );
    let (code, _, err) = workbench(&dir, &["stats", "--store", &url]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("was made by a newer workbench (its schema is at version 90001"), "{err}");
    assert!(err.contains("upgrade workbench") && !err.contains(PASSWORD), "{err}");
}

#[test]
fn files_as_rows_keep_the_folder_stores_semantics() {
    let pg = Postgres::start();
    let store = StoreFs::open_root(&pg.url()).unwrap();
    assert!(store.is_shared());
    let odd = "t'1/messages/a'); DROP TABLE store_files; --.json";
    store.write_file(odd, SQL_TEXT).unwrap();
    store.append_file("t'1/events.jsonl", "{\"id\":1}\n").unwrap();
    store.append_file("t'1/events.jsonl", "{\"id\":2}\n").unwrap();
    assert_eq!(store.read_file(odd).unwrap().text, SQL_TEXT);
    assert_eq!(store.read_file("t'1/events.jsonl").unwrap().text, "{\"id\":1}\n{\"id\":2}\n");
    assert_eq!(store.stat("t'1/events.jsonl").unwrap().unwrap().size, 18);
    // Whole-file writes replace; renames replace their target.
    store.write_file("t'1/meta.json.tmp", "new").unwrap();
    store.write_file("t'1/meta.json", "old").unwrap();
    store.rename("t'1/meta.json.tmp", "t'1/meta.json").unwrap();
    assert_eq!(store.read_file("t'1/meta.json").unwrap().text, "new");
    assert_eq!(store.stat("t'1/meta.json.tmp").unwrap(), None);
    assert_eq!(store.rename("t'1/gone", "t'1/x").unwrap_err().kind, context_workbench::host::HostErrorKind::NotFound);
    let names = |dir: &str| -> Vec<(String, bool)> {
        store.list_dir(dir).unwrap().into_iter().map(|e| (e.name, e.is_dir)).collect()
    };
    assert_eq!(names(""), [("t'1".to_owned(), true)]);
    assert_eq!(
        names("t'1"),
        [("events.jsonl".to_owned(), false), ("messages".to_owned(), true), ("meta.json".to_owned(), false)]
    );
    assert!(store.stat("t'1/messages").unwrap().unwrap().is_dir);
    assert_eq!(store.list_dir("t").unwrap_err().kind, context_workbench::host::HostErrorKind::NotFound);
    store.remove(odd).unwrap();
    store.remove(odd).unwrap();
    assert_eq!(names("t'1").len(), 2, "the folder went with its last file");
    assert_eq!(pg.psql("postgres", "SELECT count(*) FROM store_files"), "2", "every table still there");
    store.write_file("t'1/meta.json", "{\"status\": \"running\", \"calls\": 2").unwrap();
    assert_eq!(pg.psql("postgres", "SELECT trace_id, status FROM store_sessions"), "t'1|", "a damaged meta.json");
    assert_eq!(store.read_file("../x").unwrap_err().kind, context_workbench::host::HostErrorKind::OutsideWorkspace);
}

#[test]
fn a_live_lease_is_kept_and_a_dead_holders_lease_is_taken_over() {
    let pg = Postgres::start();
    let (ours, theirs) = (PgStore::connect(&pg.url()).unwrap(), PgStore::connect(&pg.url()).unwrap());
    assert_ne!(ours.holder(), theirs.holder());
    assert!(ours.try_lock("a/owner.lock").unwrap());
    assert!(ours.try_lock("a/owner.lock").unwrap(), "held already");
    assert!(!theirs.try_lock("a/owner.lock").unwrap(), "a live lease is not taken");
    assert_eq!(theirs.lease_holder("a/owner.lock").unwrap().as_deref(), Some(ours.holder()));
    // A holder that died: its lease ran out.
    pg.psql(
        "postgres",
        "INSERT INTO store_leases VALUES ('b/owner.lock', 'dead 1 pid 1', now() - interval '1 second')",
    );
    assert!(theirs.try_lock("b/owner.lock").unwrap(), "an expired lease is taken over");
    ours.unlock("a/owner.lock").unwrap();
    assert!(theirs.try_lock("a/owner.lock").unwrap(), "a lease let go is free");
}

#[test]
fn a_killed_proxys_leases_expire_while_a_live_ones_are_renewed() {
    let (pg, dir) = (Postgres::start(), scratch("pg-lease"));
    // A reply that streams for 7 s: the call holds its session's lease that long.
    let upstream = Upstream::start(|request: &Received| {
        let n = proxy_support::step_of(&request.json(), "toolu_p");
        let events = anthropic_events(&format!("msg_{n}"), &step_blocks(n), anthropic_usage(5000, 4000));
        Reply::Slow { events, pause: Duration::from_millis(700) }
    });
    let url = pg.url();
    let args = ["--upstream", &upstream.url, "--store", &url];
    let proxy = Proxy::start_env(proxy_support::Build::Native, &dir, &args, &[("WORKBENCH_STORE_LEASE_MS", "2000")]);
    let target = format!("{}/v1/messages", proxy.url);
    std::thread::spawn(move || post(&target, &request("lease", 0), &headers()));
    let live = "SELECT count(*) FROM store_leases WHERE expires_at > now()";
    let started = Instant::now();
    while pg.psql("postgres", live) != "1" {
        assert!(started.elapsed() < Duration::from_secs(20), "the call never took its session's lease");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(4_000));
    assert_eq!(pg.psql("postgres", live), "1", "renewed past its 2 s while the call lasts");
    drop(proxy); // SIGKILL, the call in flight
    let died = Instant::now();
    while pg.psql("postgres", live) != "0" {
        assert!(died.elapsed() < Duration::from_secs(20), "the dead proxy's lease never expired");
        std::thread::sleep(Duration::from_millis(100));
    }
    let store = PgStore::connect(&url).unwrap();
    let lease = pg.psql("postgres", "SELECT path FROM store_leases");
    assert!(store.try_lock(&lease).unwrap(), "taken over: {lease}");
}

#[test]
fn serve_reads_and_watches_a_database_store() {
    use context_workbench::MessageDraft;
    use context_workbench::model::Role;
    let pg = Postgres::start();
    let url = pg.url();
    let mut config = context_workbench::Config::default();
    config.store.root = ".".into();
    let host = workbench_cli::native::NativeHost::new(StoreFs::open_root(&url).unwrap(), None);
    let (writer, _) = pollster::block_on(context_workbench::Engine::open(host, config, Some("demo"))).unwrap();
    writer.record(MessageDraft::text(Role::User, SQL_TEXT)).unwrap();
    assert!(!writer.call_goal_tool("goal", r#"{"add": "find it, fix it"}"#).is_error);
    pollster::block_on(writer.persist()).unwrap();
    let stored = writer.events_since(0).last().map_or(0, |e| e.id);
    assert!(stored > 0);

    let server = serve_support::Server::start(Path::new(&url));
    let (status, list) = server.get("/api/traces");
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["traces"][0]["trace_id"], "demo", "{list}");
    let mut watcher = server.watch("demo", 0);
    let connected = watcher.next();
    assert_eq!(connected["current_event_id"].as_u64(), Some(stored), "{connected}");
    for expected in 1..=stored {
        assert_eq!(watcher.next_event().0, expected, "the stored events first");
    }
    assert!(!writer.call_goal_tool("goal", r#"{"add": "test it"}"#).is_error);
    pollster::block_on(writer.persist()).unwrap();
    for event in writer.events_since(stored) {
        assert_eq!(watcher.next_event().0, event.id, "appended rows reach the watcher, in order");
    }
    let (code, out, err) = workbench(Path::new("."), &["dump", &url, "--trace", "demo"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("goal: find it") && out.contains("goal: test it"), "{out}");
}

#[test]
fn the_password_may_stay_out_of_the_command_line() {
    let (pg, dir) = (Postgres::start(), scratch("pg-env"));
    let url = pg.url().replace(&format!(":{PASSWORD}@"), "@");
    let run = |password: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_workbench"));
        command.current_dir(&dir).args(["stats", "--store", &url]).env_remove("PGPASSWORD");
        if let Some(password) = password {
            command.env("PGPASSWORD", password);
        }
        let output = command.output().unwrap();
        (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    assert_eq!(run(Some(PASSWORD)), (Some(0), String::new()), "PGPASSWORD, as libpq reads it");
    let (code, err) = run(Some("wrong"));
    assert_eq!(code, Some(2));
    assert!(err.contains(&format!("cannot open the PostgreSQL store {url}")), "{err}");
}
