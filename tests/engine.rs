//! The engine's façade on the in-memory host: recording messages, completions through the host.

use context_workbench::host::{ChatMessage, CompletionRequest, Host, HostErrorKind, block_on};
use context_workbench::model::{ContentPart, Role, ToolCall, ToolResult, ToolStatus};
use context_workbench::prompt::{CallInput, PromptView};
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

/// One turn: a Bash call and its output.
fn turn(engine: &Engine<TestHost>, n: usize, output: &str) {
    let call = ToolCall {
        id: format!("c{n}").into(),
        name: "Bash".into(),
        arguments: format!(r#"{{"command":"check {n}"}}"#),
    };
    engine.record(MessageDraft::new(Role::Assistant, vec![ContentPart::ToolCall(call)])).unwrap();
    let output = output.to_owned();
    let status = ToolStatus::Ok;
    let result = ToolResult {
        call_id: format!("c{n}").into(),
        name: "Bash".into(),
        status,
        output,
        stderr: None,
        exit_code: Some(0),
    };
    engine.record(MessageDraft::new(Role::Tool, vec![ContentPart::ToolResult(result)])).unwrap();
}

fn input() -> CallInput {
    CallInput { system_prompt: "You are a coding agent.".into(), ..Default::default() }
}

fn texts(view: &PromptView) -> Vec<String> {
    let text = |m: &context_workbench::prompt::PromptMessage| match m.content.first() {
        Some(ContentPart::Text { text }) => text.clone(),
        _ => String::new(),
    };
    view.messages.iter().map(text).collect()
}

/// Issue 45: a compaction the threshold forces re-writes the prompt from its block on, so the
/// turns after a user message in the uncompacted tail (a format reminder, say) are compacted in
/// the same call, each run of turns between the user's messages into a block of its own: the
/// re-written tail is as short as it can be. The user's message stays verbatim between them.
#[test]
fn a_forced_compaction_also_compacts_the_turns_after_a_user_message() {
    let config = r#"{"window": 8000, "workbench": {"llm_compactor": false}}"#;
    let engine = Engine::new(TestHost::default(), Config::from_json(config).unwrap());
    engine.record(MessageDraft::text(Role::User, "Fix the parser so that tabs survive.")).unwrap();
    let log = |n: usize| -> String { (0..40).map(|k| format!("module {n}.{k}: value {} checked\n", n * k)).collect() };
    for n in 0..10 {
        turn(&engine, n, &log(n));
    }
    engine.record(MessageDraft::text(Role::User, "Please give exactly one action per reply.")).unwrap();
    for n in 10..20 {
        turn(&engine, n, &log(n));
    }
    let raw: usize = engine.trace().messages.iter().map(|m| m.tokens.unwrap_or(0) as usize).sum();
    assert!(raw >= 6_400, "the threshold (80% of 8,000) forces a compaction: {raw}");
    let assembly = block_on(engine.prepare_call(&input())).unwrap();
    let texts = texts(&assembly.view);
    let blocks = texts.iter().filter(|t| t.starts_with("<compressed_turns v")).count();
    assert_eq!(blocks, 2, "{texts:#?}");
    assert!(texts.iter().any(|t| t == "Please give exactly one action per reply."));
    assert_eq!(assembly.rewrites.len(), 2);
    assert!(
        assembly.rewrites.iter().all(|r| r.reasons.iter().any(|why| why.contains("threshold"))),
        "{:?}",
        assembly.rewrites
    );
    let blocks = engine.history_view().blocks;
    assert_eq!((blocks[0].start, blocks[0].end, blocks[1].start), (1, 21, 22), "the user's message between them");
    assert_eq!(blocks[1].end, 22 + 16, "the newest two turns kept");
}

/// Issue 45, never worse than none: once the session has cost more than the agent's own prompts
/// (here a block compacted on request that is larger than the few small turns it replaced), the
/// engine sends the agent's own prompt (the raw history, no block) while that stays under the
/// compaction threshold, and goes on sending it: nothing is rewritten, the prefix stays cached,
/// and every later call costs what the agent's own would.
#[test]
fn a_session_dearer_than_the_agents_own_prompts_sends_the_agents_prompt() {
    let config = r#"{"workbench": {"llm_compactor": false, "family_runs": [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000]}}"#;
    let engine = Engine::new(TestHost::default(), Config::from_json(config).unwrap());
    engine.record(MessageDraft::text(Role::User, "Fix the parser so that tabs survive.")).unwrap();
    for n in 0..4 {
        turn(&engine, n, "ok");
    }
    let first = block_on(engine.prepare_call(&input())).unwrap();
    assert_eq!(first.cost.agent_total, first.cost.sent_total);
    block_on(engine.compact_tail()).unwrap();
    turn(&engine, 4, "ok");
    let with_block = block_on(engine.prepare_call(&input())).unwrap();
    assert!(texts(&with_block.view).iter().any(|t| t.starts_with("<compressed_turns v")));
    // The block says as data which raw messages it stands for: the range its text names.
    let named: Vec<_> = with_block.view.messages.iter().filter_map(|m| Some((m.replaces.as_deref()?, m))).collect();
    assert_eq!(named.len(), 1, "only the block names a range");
    let (range, block) = named[0];
    let text = texts(&PromptView { messages: vec![block.clone()], tools: Vec::new() }).remove(0);
    assert!(text.contains(&format!(" raw=\"{range}\"")), "{range} in {text}");
    assert!(with_block.cost.sent_total > with_block.cost.agent_total, "{:?}", with_block.cost);
    for n in 5..8 {
        turn(&engine, n, "ok");
        let call = block_on(engine.prepare_call(&input())).unwrap();
        let texts = texts(&call.view);
        assert!(!texts.iter().any(|t| t.starts_with("<compressed_turns v")), "{texts:#?}");
        assert_eq!(call.view.messages.len(), 2 + 2 * (n + 1), "system prompt, request, every turn");
        assert!(call.rewrites.is_empty());
        assert_eq!(call.tokens, call.cost.agent_tokens);
        if n > 5 {
            assert_eq!(call.cost.sent_cost, call.cost.agent_cost, "cached like the agent's own");
        }
    }
}
