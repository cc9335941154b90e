//! The engine's façade on the in-memory host: recording messages, completions through the host.

use context_workbench::host::{ChatMessage, CompletionRequest, Host, HostErrorKind, block_on};
use context_workbench::model::Role;
use context_workbench::{Config, Engine, MessageDraft};
use context_workbench_testing::TestHost;

fn request(text: &str) -> CompletionRequest {
    CompletionRequest {
        messages: vec![ChatMessage { role: "user".into(), content: text.into() }],
        max_output_tokens: None,
        timeout_ms: None,
        purpose: "test".into(),
    }
}

#[test]
fn records_messages_with_ids_tokens_and_mission() {
    let engine = Engine::new(TestHost::default(), Config::default());
    let id = engine.record(MessageDraft::text(Role::User, "Fix the flaky parser test")).unwrap();
    assert_eq!(id.as_str(), "m000000");
    let trace = engine.trace();
    assert_eq!(trace.mission, "Fix the flaky parser test");
    assert_eq!(trace.messages[0].tokens, Some(5 + 4));
    assert_eq!(trace.messages[0].created_at_ms, TestHost::default().now_ms());
    let err = engine.record(MessageDraft::text(Role::Tool, "no result part")).unwrap_err();
    assert_eq!(err.code(), "invalid_input");
}

#[test]
fn completion_goes_through_the_host_and_keeps_usage() {
    let host = TestHost::default().with_reply("done").with_error(HostErrorKind::Timeout, "too slow");
    let engine = Engine::new(host, Config::default());
    let reply = block_on(engine.complete(request("summarise"))).unwrap();
    assert_eq!(reply.text, "done");
    assert!(engine.last_usage().is_some());
    let sent = engine.host().requests();
    assert_eq!(sent[0].timeout_ms, Some(120_000));
    let err = block_on(engine.complete(request("again"))).unwrap_err();
    assert_eq!((err.code(), err.to_string().as_str()), ("host_timeout", "too slow"));
}
