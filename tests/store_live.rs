//! The reads a viewer of live sessions makes (`store::live`), over the in-memory host: a saved
//! trace read back, unchanged traces not read again, damage as notes, a newer format refused.

use context_workbench::config::Config;
use context_workbench::engine::{Engine, MessageDraft};
use context_workbench::error::Error;
use context_workbench::host::Host;
use context_workbench::model::Role;
use context_workbench::prompt::CallInput;
use context_workbench::store::live::LiveTraces;
use context_workbench_testing::{TestHost, block_on};
use serde_json::Value;

const CALL_1: &str = r#"{"call":1,"at_ms":5,"model":"m","agent":"","stream":true,"managed":true,"messages":1,"new_messages":1,"client_tokens":900,"prompt_tokens":800,"expected_cached_tokens":0,"rewrites":[],"status":200,"completed":true,"notes":[]}"#;
const CALL_2: &str = r#"{"call":2,"at_ms":9,"model":"m","agent":"claude-cli/2.1.3","stream":true,"managed":true,"messages":3,"new_messages":2,"client_tokens":1900,"prompt_tokens":1200,"expected_cached_tokens":800,"rewrites":[],"status":200,"completed":true,"notes":[]}"#;

/// A trace the engine saved: a first message, a plan, one prepared call (its prompt.json).
fn saved_trace() -> Engine<TestHost> {
    let (engine, _) = block_on(Engine::open(TestHost::default(), Config::default(), Some("s1"))).unwrap();
    engine.record(MessageDraft::text(Role::User, "Fix the parser")).unwrap();
    assert!(!engine.call_goal_tool("goal", r#"{"add": "read the test, fix it"}"#).is_error);
    block_on(
        engine.prepare_call(&CallInput { system_prompt: "You are a coding agent.".into(), ..CallInput::default() }),
    )
    .unwrap();
    block_on(engine.persist()).unwrap();
    engine
}

#[test]
fn a_saved_trace_reads_back_with_its_plan_prompt_and_first_message() {
    let engine = saved_trace();
    let live = LiveTraces::new(engine.host(), ".trace").unwrap();
    assert_eq!(block_on(live.trace_ids()).unwrap(), ["s1"]);
    let summary = block_on(live.summary("s1", None)).unwrap().unwrap();
    assert_eq!((summary.meta.mission.as_str(), summary.proxied, summary.agent.as_str()), ("Fix the parser", false, ""));
    let state = block_on(live.state("s1", None)).unwrap().unwrap();
    assert_eq!(state.notes, Vec::<String>::new());
    let goals: Vec<&str> = state.goal_tree.as_ref().unwrap().goals().iter().map(|g| g.description.as_str()).collect();
    assert_eq!(goals, ["read the test", "fix it"]);
    let prompt = state.prompt.unwrap();
    assert!(
        prompt.tokens > 0
            && prompt.view.messages.iter().any(|m| m.source.as_ref().is_some_and(|s| s.as_str() == "m000000"))
    );
    assert!(state.calls.is_empty());
    let first = block_on(live.first_message("s1")).unwrap().unwrap();
    assert_eq!(first.description, "Fix the parser");
    assert_eq!(block_on(live.message("s1", "m000099")).unwrap(), None);
    // An id that is not a plain name never becomes a path: there is no such message.
    assert_eq!(block_on(live.message("s1", "../../meta")).unwrap(), None);
    assert_eq!(block_on(live.summary("nope", None)).unwrap_err().code(), "host_not_found");
    assert_eq!(block_on(live.summary("../x", None)).unwrap_err().code(), "invalid_input");
}

#[test]
fn an_unchanged_trace_is_not_read_again_and_a_landed_call_changes_the_stamp() {
    let engine = saved_trace();
    let host = engine.host();
    let calls = ".trace/s1/calls.jsonl";
    block_on(host.write_file(calls, &format!("{CALL_1}\n"))).unwrap();
    let live = LiveTraces::new(host, ".trace").unwrap();
    let summary = block_on(live.summary("s1", None)).unwrap().unwrap();
    assert!(summary.proxied);
    assert_eq!(summary.agent, "", "no call names its agent yet");
    let state = block_on(live.state("s1", None)).unwrap().unwrap();
    assert_eq!(block_on(live.summary("s1", Some(&summary.stamp))).unwrap(), None);
    assert_eq!(block_on(live.state("s1", Some(&state.stamp))).unwrap(), None);
    // The next call lands, and a third is half written.
    host.advance_clock(1);
    block_on(host.append_file(calls, &format!("{CALL_2}\n{}", &CALL_1[..40]))).unwrap();
    let grown = block_on(live.state("s1", Some(&state.stamp))).unwrap().unwrap();
    assert_eq!(grown.calls.iter().map(|c| c["call"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(grown.notes, Vec::<String>::new(), "a line still being written is no damage");
    let summary = block_on(live.summary("s1", Some(&summary.stamp))).unwrap().unwrap();
    assert_eq!(summary.agent, "claude-cli/2.1.3");
}

#[test]
fn damage_is_a_note_and_a_newer_format_is_refused() {
    let engine = saved_trace();
    let host = engine.host();
    block_on(host.write_file(".trace/s1/calls.jsonl", &format!("{CALL_1}\nnot json\n{{\"call\":\"x\"}}\n{CALL_2}\n")))
        .unwrap();
    block_on(host.write_file(".trace/s1/goal.json", "{\"goals\": [")).unwrap();
    block_on(host.write_file(".trace/s1/prompt.json", "[]")).unwrap();
    let live = LiveTraces::new(host, ".trace").unwrap();
    let state = block_on(live.state("s1", None)).unwrap().unwrap();
    assert_eq!(state.calls.len(), 2);
    assert!(state.goal_tree.is_none() && state.prompt.is_none());
    assert_eq!(state.notes.len(), 4, "{:?}", state.notes);
    assert!(state.notes[0].contains("goal.json"), "{:?}", state.notes);
    assert!(state.notes[1].contains("calls.jsonl: line 2 is not a JSON record"), "{:?}", state.notes);
    assert!(state.notes[2].contains("line 3") && state.notes[2].contains("not a call record"), "{:?}", state.notes);
    assert!(state.notes[3].contains("prompt.json is not valid"), "{:?}", state.notes);
    block_on(host.write_file(".trace/s1/messages/m000000.json", "{")).unwrap();
    assert_eq!(block_on(live.first_message("s1")).unwrap_err().code(), "invalid_input");
    let mut meta: Value = serde_json::from_str(&block_on(host.read_file(".trace/s1/meta.json")).unwrap().text).unwrap();
    meta["version"] = 9.into();
    block_on(host.write_file(".trace/s1/meta.json", &meta.to_string())).unwrap();
    let newer = block_on(live.summary("s1", None)).unwrap_err();
    assert_eq!(
        newer,
        Error::UnsupportedVersion { found: 9, supported: context_workbench::store::STORE_FORMAT_VERSION }
    );
}

#[test]
fn a_missing_root_has_no_traces_and_a_directory_without_meta_is_not_one_yet() {
    let host = TestHost::default().with_file(".trace/creating/goal.json", "{}");
    let live = LiveTraces::new(&host, ".trace").unwrap();
    assert_eq!(block_on(live.trace_ids()).unwrap(), ["creating"]);
    assert_eq!(block_on(live.summary("creating", None)).unwrap_err().code(), "host_not_found");
    assert_eq!(block_on(LiveTraces::new(&host, "elsewhere").unwrap().trace_ids()).unwrap(), Vec::<String>::new());
    assert!(LiveTraces::new(&host, "../out").is_err());
}
