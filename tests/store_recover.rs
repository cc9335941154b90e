//! What a killed host left in the store, found at the next start (`store::recover`): a trace
//! still `running` is marked `interrupted`; one whose first save was cut before its `meta.json`
//! is adopted with one, from the messages on disk; what ended stays as it ended; what another
//! live process holds (its owner lock) is left as it is.

use context_workbench::config::Config;
use context_workbench::engine::{Engine, MessageDraft};
use context_workbench::host::Host;
use context_workbench::model::Role;
use context_workbench::store::recover::mark_interrupted;
use context_workbench::store::{SessionEnd, layout};
use context_workbench_testing::{TestHost, block_on};
use serde_json::Value;

fn saved(host: TestHost, id: &str, task: &str, end: Option<SessionEnd>) -> TestHost {
    let (engine, _) = block_on(Engine::open(host, Config::default(), Some(id))).unwrap();
    engine.record(MessageDraft::text(Role::User, task)).unwrap();
    if let Some(end) = end {
        engine.end_session(end);
    }
    block_on(engine.persist()).unwrap();
    engine.into_host()
}

fn meta(host: &TestHost, id: &str) -> Value {
    serde_json::from_str(&block_on(host.read_file(&format!(".trace/{id}/meta.json"))).unwrap().text).unwrap()
}

#[test]
fn a_killed_hosts_traces_are_marked_interrupted_and_a_cut_first_save_adopted() {
    let host = saved(TestHost::default(), "live", "Fix the parser", None);
    let host = saved(host, "done", "Write the docs", Some(SessionEnd::Finished));
    let host = saved(host, "cut", "<system-reminder>x</system-reminder>Rename the module", None);
    // The first save of `cut` never reached its metadata or its state.
    block_on(host.remove(".trace/cut/meta.json")).unwrap();
    block_on(host.remove(".trace/cut/state.json")).unwrap();
    let marked = block_on(mark_interrupted(&host, ".trace")).unwrap();
    assert_eq!(marked, ["cut", "live"]);
    assert_eq!(meta(&host, "live")["status"], "interrupted");
    assert_eq!(meta(&host, "done")["status"], "finished", "what ended stays as it ended");
    let adopted = meta(&host, "cut");
    assert_eq!((adopted["status"].as_str(), adopted["message_count"].as_u64()), (Some("interrupted"), Some(1)));
    assert_eq!(adopted["mission"], "Rename the module", "titled by the user's words");
    // A resume of the running one goes on; nothing more is marked at the next start.
    let (engine, _) = block_on(Engine::open(host, Config::default(), Some("live"))).unwrap();
    assert_eq!(engine.trace().messages.len(), 1);
    let host = engine.into_host();
    assert!(block_on(mark_interrupted(&host, ".trace")).unwrap().is_empty());
}

#[test]
fn traces_another_live_process_holds_are_left_as_they_are() {
    let host = saved(TestHost::default(), "theirs", "Fix the parser", None);
    let host = saved(host, "dead", "Write the docs", None);
    let host = saved(host, "cut", "Rename the module", None);
    block_on(host.remove(".trace/cut/meta.json")).unwrap();
    let owner = |id: &str| format!(".trace/{id}/{}", layout::OWNER);
    let shared = host.held_by_another(&owner("theirs")).held_by_another(&owner("cut"));
    assert_eq!(block_on(mark_interrupted(&shared, ".trace")).unwrap(), ["dead"]);
    assert_eq!(meta(&shared, "theirs")["status"], "running", "its owner is alive");
    assert!(block_on(shared.stat(".trace/cut/meta.json")).unwrap().is_none(), "its first save goes on");
    assert_eq!(meta(&shared, "dead")["status"], "interrupted");
}
