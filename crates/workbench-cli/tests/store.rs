//! The trace store (R8) on real files: a session written, dropped and resumed gives the very
//! prompts the first process would have sent; torn lines, traversal ids, damaged files and
//! secrets are handled without losing or rewriting what is on disk.
#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};

use context_workbench::host::block_on;
use context_workbench::import::{Trajectory, import};
use context_workbench::model::{ContentPart, Message, Role, ToolCall, ToolResult, ToolStatus};
use context_workbench::prompt::CallInput;
use context_workbench::prompt::assemble::canonical;
use context_workbench::store::TraceStore;
use context_workbench::{Config, Engine, MessageDraft};
use context_workbench_testing::snapshot;
use workbench_cli::native::{NativeHost, WorkspaceFs};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cw-store-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn host(dir: &Path) -> NativeHost {
    NativeHost::new(WorkspaceFs::new(dir).unwrap(), None)
}

/// The replay's engine set-up: no LLM, so the embedded compactor writes the blocks.
fn config() -> Config {
    let mut config = Config::default();
    config.workbench.llm_compactor = false;
    config
}

/// Without redaction: a redacted secret comes back as its marker, which changes the prompt
/// (see `secrets_are_redacted_on_disk_only`), and the django run holds `SECRET_KEY = "…"`.
fn exact() -> Config {
    let mut config = config();
    config.store.redact = false;
    config
}

fn trajectory(path: &str) -> Trajectory {
    let text = std::fs::read_to_string(path).unwrap();
    import(path, &text).unwrap().remove(0)
}

/// Drives an engine through a trajectory's recorded calls, as the replay does.
struct Driver<'t> {
    trajectory: &'t Trajectory,
    recorded: usize,
    input: CallInput,
}

impl<'t> Driver<'t> {
    fn new(trajectory: &'t Trajectory) -> Self {
        Driver { trajectory, recorded: 0, input: CallInput::default() }
    }

    /// Record what call `k` adds and prepare it: the canonical prompt, cached tokens, first
    /// changed byte, rewrites.
    fn call(&mut self, engine: &Engine<NativeHost>, k: usize) -> (String, usize, Option<usize>, usize) {
        let end = self.trajectory.calls[k];
        for (i, m) in self.trajectory.messages.iter().enumerate().take(end).skip(self.recorded) {
            if i == 0 && m.role == Role::System {
                self.input.system_prompt = m.content.iter().map(|p| format!("{p:?}")).collect();
                continue;
            }
            engine.record(MessageDraft::from(m)).unwrap();
        }
        self.recorded = self.recorded.max(end);
        let a = block_on(engine.prepare_call(&self.input)).unwrap();
        assert!(!a.notes.iter().any(|n| n.contains("not saved")), "{:?}", a.notes);
        (canonical(&a.view), a.expected_cached_tokens, a.first_changed_byte, a.rewrites.len())
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// Equal values, or where their debug forms first differ.
fn same_debug<T: std::fmt::Debug + PartialEq>(a: &T, b: &T, what: &str) {
    if a != b {
        let (x, y) = (format!("{a:?}"), format!("{b:?}"));
        let at = x.bytes().zip(y.bytes()).take_while(|(a, b)| a == b).count();
        let around = |s: &str| s[at.saturating_sub(100)..(at + 60).min(s.len())].to_owned();
        panic!("{what} differ at byte {at}: …{}… vs …{}…", around(&x), around(&y));
    }
}

/// The same raw trace, or the first message that differs. Two processes that went on
/// separately recorded with their own clocks: `timed` compares times too.
fn same_trace(a: &Engine<NativeHost>, b: &Engine<NativeHost>, timed: bool) {
    let untimed = |engine: &Engine<NativeHost>| {
        let mut trace = engine.trace();
        trace.messages.iter_mut().filter(|_| !timed).for_each(|m| m.created_at_ms = 0);
        trace
    };
    let (a, b) = (untimed(a), untimed(b));
    assert_eq!(a.messages.len(), b.messages.len());
    if let Some((x, y)) = a.messages.iter().zip(&b.messages).find(|(x, y)| x != y) {
        let (x, y) = (format!("{x:?}"), format!("{y:?}"));
        let at = x.bytes().zip(y.bytes()).take_while(|(a, b)| a == b).count();
        panic!(
            "message differs at byte {at}: …{}… vs …{}…",
            &x[at.saturating_sub(80)..(at + 80).min(x.len())],
            &y[at.saturating_sub(80)..(at + 80).min(y.len())]
        );
    }
    assert!(a == b, "the trace's other fields differ");
}

/// Run `path` to call `stop`, save, copy the workspace, and go on in two processes: the
/// original and one resumed from the copy. The next `compare` prompts must be the same bytes.
fn resumes_byte_identical(path: &str, name: &str, stop_share: f64, compare: usize) -> (usize, usize) {
    let trajectory = trajectory(path);
    let calls = trajectory.calls.len();
    let stop = ((calls as f64 * stop_share) as usize).clamp(1, calls - 2);
    let first = scratch(&format!("{name}-a"));
    let (engine, notes) = block_on(Engine::open(host(&first), exact(), Some(name))).unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    let mut driver = Driver::new(&trajectory);
    for k in 0..stop {
        driver.call(&engine, k);
    }
    block_on(engine.persist()).unwrap();
    let second = scratch(&format!("{name}-b"));
    copy_dir(&first, &second);

    let (resumed, notes) = block_on(Engine::open(host(&second), exact(), Some(name))).unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    same_trace(&resumed, &engine, true);
    same_debug(&resumed.history_view(), &engine.history_view(), "the prompt view and the board");
    assert!(resumed.goal_tree() == engine.goal_tree(), "the goal tree is restored");
    assert!(resumed.events_since(0) == engine.events_since(0), "the events are restored");
    let mut resumed_driver = Driver { trajectory: &trajectory, recorded: driver.recorded, input: driver.input.clone() };
    let (mut compared, mut rewrites) = (0, 0);
    for k in stop..calls.min(stop.saturating_add(compare)) {
        let before = driver.call(&engine, k);
        let after = resumed_driver.call(&resumed, k);
        assert!(before == after, "call {k} of {name} differs after the resume");
        compared += 1;
        rewrites += after.3;
    }
    drop(engine);
    let (reopened, notes) = block_on(Engine::open(host(&first), exact(), Some(name))).unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    same_trace(&reopened, &resumed, false);
    (compared, rewrites)
}

#[test]
fn a_long_vorflux_run_resumes_with_byte_identical_prompts() {
    // Stopped after the first tail compactions, so blocks, the board and the batching state
    // all have to come back.
    // 60 calls: past the next batched rewrite (at most 25 calls apart).
    let (compared, rewrites) =
        resumes_byte_identical("../../data/traces/vorflux/django__django-15973.json", "django-15973", 0.5, 60);
    assert_eq!(compared, 60);
    assert!(rewrites > 0, "a tail compaction ran after the resume, on the restored blocks and board");
}

#[test]
fn a_claude_code_session_with_a_todo_plan_resumes_with_its_goal_tree() {
    let path = "../../data/traces/claude-code/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl";
    let (compared, _) = resumes_byte_identical(path, "fe5e1c67", 0.4, usize::MAX);
    assert!(compared >= 5, "{compared} calls compared");
}

#[test]
fn the_layout_holds_every_part_and_the_query_api_reads_it() {
    let path = "../../data/traces/claude-code/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl";
    let trajectory = trajectory(path);
    let dir = scratch("layout");
    let (engine, _) = block_on(Engine::open(host(&dir), config(), Some("s1"))).unwrap();
    let mut driver = Driver::new(&trajectory);
    for k in 0..trajectory.calls.len() {
        driver.call(&engine, k);
    }
    let trace = dir.join(".trace/s1");
    for file in ["meta.json", "goal.json", "events.jsonl", "log.jsonl", "snapshots.jsonl", "state.json"] {
        assert!(trace.join(file).is_file(), "{file}");
    }
    let messages = std::fs::read_dir(trace.join("messages")).unwrap().count();
    assert_eq!(messages, engine.trace().messages.len());
    let log = std::fs::read_to_string(trace.join("log.jsonl")).unwrap();
    let results = engine.trace().messages.iter().flat_map(|m| m.tool_results().count().checked_sub(0)).sum::<usize>();
    assert_eq!(log.lines().count(), results, "one log entry per tool result");
    let snapshots = std::fs::read_to_string(trace.join("snapshots.jsonl")).unwrap();
    assert!(snapshots.lines().count() >= 2, "a snapshot at every step change:\n{snapshots}");

    let before = snapshot(&dir);
    let h = host(&dir);
    let store = TraceStore::new(&h, ".trace").unwrap();
    let list = block_on(store.list_traces()).unwrap();
    assert_eq!(list.traces.len(), 1);
    assert_eq!(list.traces[0].trace_id, "s1");
    assert_eq!(list.traces[0].message_count as usize, messages);
    let detail = block_on(store.trace("s1")).unwrap();
    let tree = engine.goal_tree();
    assert_eq!(detail.goal_tree.goals, tree.goals(), "the todo items are the goals");
    assert!(!detail.goal_tree.goals.is_empty());
    assert_eq!(detail.last_event_id, tree.events().last_id());
    let goal = &tree.goals()[0];
    let of_goal = block_on(store.goal_messages("s1", goal.id.as_str())).unwrap();
    assert_eq!(of_goal.messages.len() as u64, goal.self_stats.message_count);
    let events = block_on(store.events_after("s1", 3)).unwrap();
    assert_eq!(events.events.first().map(|e| e.id), Some(4));
    let json = serde_json::to_value(&detail).unwrap();
    assert!(json["goal_tree"]["goals"][0]["cumulative_stats"]["message_count"].is_u64(), "{json}");

    // The session's sub-agents (its `Task` calls) are branches of its plan, each saved with its answer.
    let branch = block_on(store.branch("s1", "A")).unwrap().meta.branch;
    assert_eq!(branch.description, "Setup Next.js project");
    assert!(branch.call_id.is_some() && branch.summary.is_some_and(|s| s.contains("Next.js")));
    for (err, code) in [
        (block_on(store.trace("nope")).unwrap_err(), "host_not_found"),
        (block_on(store.trace("../s1")).unwrap_err(), "invalid_input"),
        (block_on(store.goal_messages("s1", "999")).unwrap_err(), "host_not_found"),
        (block_on(store.branch("s1", "Q")).unwrap_err(), "host_not_found"),
        (block_on(store.branch("s1", "../../etc")).unwrap_err(), "invalid_input"),
        (block_on(store.events_after("s1", 10_000)).unwrap_err(), "invalid_input"),
    ] {
        assert_eq!(err.code(), code, "{err}");
    }
    assert_eq!(snapshot(&dir), before, "readers write nothing");
}

/// Trace `id` under `dir` with a request and one goal, saved.
fn saved_with_a_goal(dir: &Path, id: &str) -> Engine<NativeHost> {
    let (engine, _) = block_on(Engine::open(host(dir), config(), Some(id))).unwrap();
    engine.record(MessageDraft::text(Role::User, "Add a --json flag")).unwrap();
    assert!(!engine.call_goal_tool("goal", r#"{"add": "parse the flag, print json"}"#).is_error);
    block_on(engine.persist()).unwrap();
    engine
}

#[test]
fn a_torn_last_line_is_skipped_reported_and_never_rewritten() {
    let dir = scratch("torn");
    let engine = saved_with_a_goal(&dir, "t");
    let events = dir.join(".trace/t/events.jsonl");
    let whole = std::fs::read_to_string(&events).unwrap();
    let torn = format!("{whole}{{\"id\":99,\"type\":\"goal_ad");
    std::fs::write(&events, &torn).unwrap();
    drop(engine);

    let (resumed, notes) = block_on(Engine::open(host(&dir), config(), Some("t"))).unwrap();
    assert!(notes.iter().any(|n| n.contains("events.jsonl") && n.contains("torn")), "{notes:?}");
    assert_eq!(std::fs::read_to_string(&events).unwrap(), torn, "opening changes nothing");
    let last = resumed.events_since(0).last().unwrap().id;
    assert!(!resumed.call_goal_tool("goal", r#"{"focus": "1"}"#).is_error);
    block_on(resumed.persist()).unwrap();
    let now = std::fs::read_to_string(&events).unwrap();
    assert!(now.starts_with(&torn), "the torn line stays as it was written");
    let h = host(&dir);
    let page = block_on(TraceStore::new(&h, ".trace").unwrap().events_after("t", last)).unwrap();
    assert!(!page.events.is_empty() && page.events[0].id == last + 1, "new events follow on: {page:?}");
    assert!(page.notes.iter().any(|n| n.contains("line 3 was torn by an interrupted write")), "{:?}", page.notes);
}

#[test]
fn a_line_torn_inside_a_multibyte_character_is_skipped_like_any_torn_line() {
    // R8.2: a crash can cut an append between the bytes of one character; the file then ends
    // in half a character, which must read as a torn line, not as a file that cannot be read.
    let dir = scratch("torn-utf8");
    let engine = saved_with_a_goal(&dir, "t");
    let events = dir.join(".trace/t/events.jsonl");
    let mut torn = std::fs::read(&events).unwrap();
    torn.extend_from_slice(b"{\"id\":99,\"type\":\"goal_added\",\"title\":\"caf\xC3");
    std::fs::write(&events, &torn).unwrap();
    drop(engine);

    let (resumed, notes) = block_on(Engine::open(host(&dir), config(), Some("t"))).unwrap();
    assert!(notes.iter().any(|n| n.contains("events.jsonl") && n.contains("torn")), "{notes:?}");
    assert!(!resumed.call_goal_tool("goal", r#"{"focus": "1"}"#).is_error);
    block_on(resumed.persist()).unwrap();
    assert!(std::fs::read(&events).unwrap().starts_with(&torn), "the torn bytes stay as they were written");
    drop(resumed);

    // The next append closed the torn line; the half character is now inside the file.
    let (again, notes) = block_on(Engine::open(host(&dir), config(), Some("t"))).unwrap();
    assert!(notes.iter().any(|n| n.contains("line 3 was torn by an interrupted write")), "{notes:?}");
    let current = again.goal_tree().current().map(|g| g.description.clone());
    assert_eq!(current.as_deref(), Some("parse the flag"), "the focus saved after the torn line is kept");
}

#[test]
fn events_written_again_by_a_retried_save_are_read_once() {
    // A host append that timed out (the engine saw a failure) but landed later: the next save
    // appends the same events again. Resuming and the query API read each event once.
    let dir = scratch("retried");
    let engine = saved_with_a_goal(&dir, "t");
    let events = dir.join(".trace/t/events.jsonl");
    let first = std::fs::read_to_string(&events).unwrap();
    std::fs::write(&events, format!("{first}{first}")).unwrap();
    drop(engine);

    let (resumed, notes) = block_on(Engine::open(host(&dir), config(), Some("t")))
        .unwrap_or_else(|e| panic!("a repeated event must not stop a resume: {e}"));
    assert!(notes.iter().any(|n| n.contains("comes again") && n.contains("skipped")), "{notes:?}");
    assert!(!resumed.call_goal_tool("goal", r#"{"focus": "1"}"#).is_error);
    block_on(resumed.persist()).unwrap();
    let h = host(&dir);
    let page = block_on(TraceStore::new(&h, ".trace").unwrap().events_after("t", 0)).unwrap();
    let ids: Vec<u64> = page.events.iter().map(|e| e.id).collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>(), "every id once, in order: {ids:?}");
    assert!(ids.len() > first.lines().count(), "the focus after the resume was saved: {ids:?}");
}

#[test]
fn a_torn_line_that_is_a_whole_record_stays_skipped_after_the_next_save() {
    // A crash after an event's JSON but before its newline: on resume the record is skipped and
    // its id given again; the next save must not turn the fragment into a line of its own.
    let dir = scratch("torn-whole");
    let engine = saved_with_a_goal(&dir, "t");
    let events = dir.join(".trace/t/events.jsonl");
    let whole = std::fs::read_to_string(&events).unwrap();
    let last_line = whole.lines().last().unwrap();
    let last: serde_json::Value = serde_json::from_str(last_line).unwrap();
    let next = last["id"].as_u64().unwrap() + 1;
    let fragment = last_line.replacen(&format!("\"id\":{}", next - 1), &format!("\"id\":{next}"), 1);
    std::fs::write(&events, format!("{whole}{fragment}")).unwrap();
    drop(engine);

    for round in 0..2 {
        let (resumed, _) =
            block_on(Engine::open(host(&dir), config(), Some("t"))).unwrap_or_else(|e| panic!("resume {round}: {e}"));
        assert!(!resumed.call_goal_tool("goal", &format!(r#"{{"add": "step {round}"}}"#)).is_error);
        block_on(resumed.persist()).unwrap();
    }
    let h = host(&dir);
    let page = block_on(TraceStore::new(&h, ".trace").unwrap().events_after("t", 0)).unwrap();
    let ids: Vec<u64> = page.events.iter().map(|e| e.id).collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>(), "every id once, in order: {ids:?}");
    assert!(page.notes.iter().any(|n| n.contains("torn by an interrupted write")), "{:?}", page.notes);
}

#[test]
fn host_message_ids_never_become_paths_and_removed_files_or_a_cut_first_save_are_refused() {
    let dir = scratch("ids");
    let (engine, _) = block_on(Engine::open(host(&dir), config(), Some("h"))).unwrap();
    let history: Vec<Message> = ["../../../escaped", "a/b", "plain-1"]
        .iter()
        .enumerate()
        .map(|(i, id)| Message {
            id: (*id).into(),
            ..Message::new("h".into(), i as u64, Role::User, vec![ContentPart::Text { text: format!("request {i}") }])
        })
        .collect();
    engine.load_history(history).unwrap();
    block_on(engine.persist()).unwrap();
    drop(engine);
    let written: Vec<PathBuf> = snapshot(&dir).into_keys().collect();
    let messages = dir.join(".trace/h/messages");
    let ignore = dir.join(".trace/.gitignore");
    assert!(written.iter().all(|p| p.starts_with(dir.join(".trace/h")) || *p == ignore), "{written:?}");
    assert_eq!(written.iter().filter(|p| p.starts_with(&messages)).count(), 3, "{written:?}");
    assert!(messages.join("plain-1.json").is_file(), "a plain id names its file");
    let (resumed, _) = block_on(Engine::open(host(&dir), config(), Some("h"))).unwrap();
    let ids: Vec<String> = resumed.trace().messages.iter().map(|m| m.id.to_string()).collect();
    assert_eq!(ids, ["../../../escaped", "a/b", "plain-1"], "ids come back from the files' content");
    drop(resumed);

    // A message file removed by hand: state.json covers more than is left.
    std::fs::remove_file(messages.join("plain-1.json")).unwrap();
    let before = snapshot(&dir);
    let err = block_on(Engine::open(host(&dir), config(), Some("h"))).err().unwrap();
    assert!(err.to_string().contains("message files were removed"), "{err}");
    assert_eq!(snapshot(&dir), before, "refused without writing");

    // A first save cut before meta.json: the directory is not taken for a new trace.
    std::fs::create_dir_all(dir.join(".trace/cut/messages")).unwrap();
    std::fs::write(dir.join(".trace/cut/events.jsonl"), "{\"id\":1,\"type\":\"goal_added\"}\n").unwrap();
    let err = block_on(Engine::open(host(&dir), config(), Some("cut"))).err().unwrap();
    assert_eq!(err.code(), "invalid_input");
    assert!(err.to_string().contains("first save was interrupted"), "{err}");
}

#[test]
fn a_goal_tree_older_than_its_event_log_never_hands_out_a_logged_goal_id_again() {
    // A save cut between the events.jsonl append and the goal.json replace.
    let dir = scratch("stale-tree");
    let (engine, _) = block_on(Engine::open(host(&dir), config(), Some("g"))).unwrap();
    engine.record(MessageDraft::text(Role::User, "Speed up the build.")).unwrap();
    assert!(!engine.call_goal_tool("goal", r#"{"add": "profile it, drop a dependency"}"#).is_error);
    assert!(!engine.call_goal_tool("goal", r#"{"focus": "2"}"#).is_error);
    let abandoned = engine.call_goal_tool("goal", r#"{"abandon": "not needed"}"#);
    assert!(!abandoned.is_error, "{}", abandoned.text);
    block_on(engine.persist()).unwrap();
    let goal_json = dir.join(".trace/g/goal.json");
    let old_tree = std::fs::read(&goal_json).unwrap();
    assert!(!engine.call_goal_tool("goal", r#"{"add": "cache the toolchain"}"#).is_error);
    block_on(engine.persist()).unwrap();
    drop(engine);
    std::fs::write(&goal_json, old_tree).unwrap();

    let (resumed, notes) = block_on(Engine::open(host(&dir), config(), Some("g"))).unwrap();
    let note = notes.iter().find(|n| n.contains("older than")).unwrap_or_else(|| panic!("{notes:?}"));
    assert!(note.contains("goals 3 were added after it"), "only the goal the tree lacks, not the deleted one: {note}");
    assert!(!resumed.call_goal_tool("goal", r#"{"add": "split the crate"}"#).is_error);
    block_on(resumed.persist()).unwrap();
    let h = host(&dir);
    let page = block_on(TraceStore::new(&h, ".trace").unwrap().events_after("g", 0)).unwrap();
    let mut added: Vec<String> = page
        .events
        .iter()
        .filter_map(|e| serde_json::to_value(e).ok())
        .filter(|v| v["type"] == "goal_added")
        .map(|v| v["goal"]["id"].as_str().unwrap().to_owned())
        .collect();
    let count = added.len();
    added.sort();
    added.dedup();
    assert_eq!(added.len(), count, "a goal id was handed out twice: {added:?}");
}

#[test]
fn traversal_ids_damaged_files_and_newer_versions_are_refused_without_writing() {
    let dir = scratch("refused");
    let err = block_on(Engine::open(host(&dir), config(), Some("../escape"))).err().unwrap();
    assert_eq!(err.code(), "invalid_input");
    assert!(snapshot(&dir).is_empty(), "nothing written for a refused id");

    let (engine, _) = block_on(Engine::open(host(&dir), config(), Some("d"))).unwrap();
    engine.record(MessageDraft::text(Role::User, "Fix the date parser")).unwrap();
    assert!(!engine.call_goal_tool("goal", r#"{"add": "reproduce, fix"}"#).is_error);
    block_on(engine.persist()).unwrap();
    drop(engine);
    let trace = dir.join(".trace/d");

    std::fs::write(trace.join("goal.json"), "{\"version\": 1, \"goals\": [").unwrap();
    let before = snapshot(&dir);
    let err = block_on(Engine::open(host(&dir), config(), Some("d"))).err().unwrap();
    assert!(err.to_string().contains("goal.json is corrupted"), "{err}");
    let h = host(&dir);
    let detail = block_on(TraceStore::new(&h, ".trace").unwrap().trace("d")).unwrap();
    assert!(detail.notes.iter().any(|n| n.contains("goal.json")), "{:?}", detail.notes);
    assert_eq!(snapshot(&dir), before, "a damaged trace is left as it is");

    std::fs::write(trace.join("goal.json"), "{}").unwrap();
    std::fs::write(trace.join("messages/m000000.json"), "not json").unwrap();
    let err = block_on(Engine::open(host(&dir), config(), Some("d"))).err().unwrap();
    assert!(err.to_string().contains("m000000.json"), "{err}");

    let meta = std::fs::read_to_string(trace.join("meta.json")).unwrap();
    std::fs::write(trace.join("meta.json"), meta.replace("\"version\": 1", "\"version\": 99")).unwrap();
    let err = block_on(Engine::open(host(&dir), config(), Some("d"))).err().unwrap();
    assert_eq!(err.code(), "unsupported_version");
}

#[test]
fn secrets_are_redacted_on_disk_only() {
    let dir = scratch("secrets");
    std::fs::write(dir.join(".gitignore"), "target/\n").unwrap();
    let (engine, _) = block_on(Engine::open(host(&dir), config(), Some("s"))).unwrap();
    let key = "sk-proj-Zx81abcdefghijklmnopqrstuv";
    engine.record(MessageDraft::text(Role::User, format!("Use OPENAI_API_KEY={key} to call the API"))).unwrap();
    let input = CallInput::default();
    let a = block_on(engine.prepare_call(&input)).unwrap();
    assert!(canonical(&a.view).contains(key), "the prompt in memory keeps the key");
    let report = block_on(engine.persist()).unwrap();
    assert_eq!(report.files_written, 0, "prepare_call saved already");
    for (path, bytes) in snapshot(&dir.join(".trace")) {
        let text = String::from_utf8(bytes).unwrap();
        assert!(!text.contains(key), "{} holds the key", path.display());
    }
    let message = std::fs::read_to_string(dir.join(".trace/s/messages/m000000.json")).unwrap();
    assert!(message.contains("OPENAI_API_KEY=[REDACTED:"), "{message}");
    let ignored = std::fs::read_to_string(dir.join(".trace/.gitignore")).unwrap();
    assert!(ignored.lines().any(|l| l == "*"), "the store keeps itself out of git: {ignored}");
    assert_eq!(std::fs::read_to_string(dir.join(".gitignore")).unwrap(), "target/\n", "the project's is left alone");
    drop(engine);
    let (resumed, notes) = block_on(Engine::open(host(&dir), config(), Some("s"))).unwrap();
    assert!(notes.iter().any(|n| n.contains("redacted secrets (the first: m000000)")), "{notes:?}");
    assert!(!format!("{:?}", resumed.trace()).contains(key));
}

#[test]
fn the_execution_log_holds_each_tool_result_once_with_main_line_and_branch_saves_mixed() {
    let dir = scratch("log");
    let (engine, _) = block_on(Engine::open(host(&dir), config(), Some("l"))).unwrap();
    let call =
        |id: &str| ContentPart::ToolCall(ToolCall { id: id.into(), name: "Bash".into(), arguments: "{}".into() });
    let result = |id: &str| {
        ContentPart::ToolResult(ToolResult {
            call_id: id.into(),
            name: "Bash".into(),
            status: ToolStatus::Ok,
            output: format!("output of {id}"),
            stderr: None,
            exit_code: Some(0),
        })
    };
    engine.record(MessageDraft::text(Role::User, "Find why the build is slow.")).unwrap();
    assert!(!engine.call_goal_tool("explore", r#"{"branches": ["profile", "cache"]}"#).is_error);
    for round in 0..3 {
        let (main, side) = (format!("m{round}"), format!("b{round}"));
        engine.record(MessageDraft::new(Role::Assistant, vec![call(&main)])).unwrap();
        engine.record(MessageDraft::new(Role::Tool, vec![result(&main)])).unwrap();
        engine.record_in_branch("A", MessageDraft::new(Role::Assistant, vec![call(&side)])).unwrap();
        engine.record_in_branch("A", MessageDraft::new(Role::Tool, vec![result(&side)])).unwrap();
        block_on(engine.persist()).unwrap();
    }
    let log = std::fs::read_to_string(dir.join(".trace/l/log.jsonl")).unwrap();
    let mut calls: Vec<String> =
        log.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["call_id"].to_string()).collect();
    calls.sort();
    assert_eq!(calls, ["\"b0\"", "\"b1\"", "\"b2\"", "\"m0\"", "\"m1\"", "\"m2\""], "{log}");
}

#[test]
fn explore_branches_are_saved_in_their_own_directories_and_resume() {
    let dir = scratch("branches");
    let (engine, _) = block_on(Engine::open(host(&dir), config(), Some("x"))).unwrap();
    engine.record(MessageDraft::text(Role::User, "Find why the build is slow.")).unwrap();
    let branches = r#"{"branches": ["profile the compiler", "check the cache", "try the old linker"]}"#;
    let started = engine.call_goal_tool("explore", branches);
    assert_eq!(started.branches, ["A", "B", "C"]);
    engine.record_in_branch("A", MessageDraft::text(Role::Assistant, "Profiling: codegen takes 80%.")).unwrap();
    assert!(engine.call_branch_tool("A", "goal", r#"{"add": "profile codegen"}"#).is_ok());
    engine.record_in_branch("B", MessageDraft::text(Role::Assistant, "The cache hit rate is 95%.")).unwrap();
    assert!(!engine.finish_branch("A", "codegen dominates").unwrap());
    block_on(engine.persist()).unwrap();
    let trace = dir.join(".trace/x");
    for file in ["branches/A/meta.json", "branches/A/goal.json", "branches/A/messages", "branches/B/messages"] {
        assert!(trace.join(file).exists(), "{file}");
    }

    let h = host(&dir);
    let store = TraceStore::new(&h, ".trace").unwrap();
    let detail = block_on(store.trace("x")).unwrap();
    assert_eq!(detail.branches.keys().collect::<Vec<_>>(), ["A", "B", "C"], "{:?}", detail.notes);
    assert!(detail.notes.is_empty(), "{:?}", detail.notes);
    let c = block_on(store.branch("x", "C")).unwrap();
    assert_eq!((c.meta.message_count, c.messages.len()), (0, 0), "a branch with no message yet is still there");
    let a = &detail.branches["A"];
    assert_eq!((a.meta.goal_count, a.meta.message_count), (1, 1));
    assert_eq!(a.last_message.as_ref().unwrap().content, "Profiling: codegen takes 80%.");
    let branch = block_on(store.branch("x", "A")).unwrap();
    assert_eq!(branch.goal_tree.goals[0].description, "profile codegen");
    assert_eq!(branch.messages.len(), 1);

    drop(engine);
    let (resumed, notes) = block_on(Engine::open(host(&dir), config(), Some("x"))).unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(resumed.branch_messages("A").len(), 1);
    assert!(!resumed.finish_branch("B", "the cache is fine").unwrap(), "C is still exploring");
    assert!(resumed.finish_branch("C", "not tried").unwrap(), "A had finished before the resume");
    let merged = resumed.merge_explore(Some("A")).unwrap();
    assert!(merged.contains("codegen dominates") && merged.contains("the cache is fine"), "{merged}");
    block_on(resumed.persist()).unwrap();
    let events = block_on(store.events_after("x", 0)).unwrap();
    let kinds: Vec<&str> = events.events.iter().map(|e| e.kind.name()).collect();
    assert!(kinds.contains(&"branch_completed") && kinds.contains(&"explore_completed"), "{kinds:?}");
    let ids: Vec<u64> = events.events.iter().map(|e| e.id).collect();
    assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "ids continue without a gap across the resume: {ids:?}");
}
