//! The goal tree inside the engine (R6 with R5.10): plan tools, attribution and stats, the plan
//! in the tail, events, and a done goal's messages replaced through the workbench's compaction.
#![cfg(not(target_arch = "wasm32"))]

use context_workbench::goals::GoalType;
use context_workbench::history::view::RewritePosition;
use context_workbench::model::{ContentPart, Role, ToolCall, ToolResult, ToolStatus};
use context_workbench::prompt::{CallInput, Layer};
use context_workbench::{Config, Engine, MessageDraft};
use context_workbench_testing::{TestHost, block_on};

fn step(engine: &Engine<TestHost>, n: usize, output: &str) {
    let call = ToolCall {
        id: format!("c{n}").into(),
        name: "Bash".into(),
        arguments: format!("{{\"command\":\"check {n}\"}}"),
    };
    engine.record(MessageDraft::new(Role::Assistant, vec![ContentPart::ToolCall(call)])).unwrap();
    let result = ToolResult {
        call_id: format!("c{n}").into(),
        name: "Bash".into(),
        status: ToolStatus::Ok,
        output: output.into(),
        stderr: None,
        exit_code: Some(0),
    };
    engine.record(MessageDraft::new(Role::Tool, vec![ContentPart::ToolResult(result)])).unwrap();
}

#[test]
fn a_done_goal_is_compacted_through_the_workbench_and_everything_is_an_event() {
    // Rewrites allowed from the second call; only the goal's end nominates one here.
    let config = r#"{"workbench": {"min_calls_between_rewrites": 1, "raw_output_share": 1.0, "family_runs": [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000]}}"#;
    let engine = Engine::new(TestHost::default(), Config::from_json(config).unwrap());
    engine.record(MessageDraft::text(Role::User, "Fix the parser so that tabs survive.")).unwrap();
    let input = CallInput { system_prompt: "You are a coding agent.".into(), ..Default::default() };
    block_on(engine.prepare_call(&input)).unwrap();

    let refused = engine.call_goal_tool("goal", r#"{"focus": "9"}"#);
    assert!(refused.is_error && refused.text.contains('9'), "{}", refused.text);
    let added = engine.call_goal_tool("goal", r#"{"add": "find the bug, fix it"}"#);
    assert!(!added.is_error, "{}", added.text);
    let focused = engine.call_goal_tool("goal", r#"{"focus": "1"}"#);
    assert!(!focused.is_error, "{}", focused.text);
    let log: String = (0..400).map(|k| format!("scanning token {k}: ok\n")).collect();
    for n in 0..6 {
        step(&engine, n, &log);
    }
    let tree = engine.goal_tree();
    let first = &tree.goals()[0];
    assert_eq!(first.self_stats.message_count, 12, "every step is attributed to the focused goal");
    assert!(engine.trace().messages[1..].iter().all(|m| m.goal_id.as_ref() == Some(&first.id)));

    let a = block_on(engine.prepare_call(&input)).unwrap();
    let tail = a.view.messages.iter().find(|m| m.layer == Layer::Tail).expect("the plan is in the tail");
    let ContentPart::Text { text: plan } = &tail.content[0] else { panic!("a text tail") };
    assert!(plan.contains("find the bug") && plan.contains("← current"), "{plan}");

    let done = engine.call_goal_tool("goal", r#"{"done": "lex() splits on all whitespace, tabs included"}"#);
    assert!(!done.is_error, "{}", done.text);
    step(&engine, 6, "ok");
    let b = block_on(engine.prepare_call(&input)).unwrap();
    assert!(a.rewrites.is_empty(), "nothing nominated a compaction before the goal ended");
    let rewrite = b.rewrites.first().expect("the finished goal is compacted");
    assert!(rewrite.reasons.iter().any(|r| r.starts_with("span goal-")), "{:?}", rewrite.reasons);
    assert_eq!(rewrite.position, RewritePosition::Tail);
    let block = &engine.history_view().blocks[0];
    assert!(block.text.contains("outcome: lex() splits on all whitespace, tabs included"), "{}", block.text);
    assert_eq!((block.start, block.end), (1, 13), "exactly the goal's messages");

    let events = engine.events_since(0);
    let kinds: Vec<String> =
        events.iter().map(|e| serde_json::to_value(e).unwrap()["type"].as_str().unwrap().to_owned()).collect();
    assert!(kinds.iter().any(|k| k == "goal_added") && kinds.iter().any(|k| k == "message_added"), "{kinds:?}");
    assert!(events.windows(2).all(|w| w[1].id == w[0].id + 1), "ids increase one by one");
    let last = events.last().unwrap().id;
    assert!(engine.events_since(last).is_empty());
    assert_eq!(engine.events_since(last - 1).len(), 1);
}

#[test]
fn the_plan_tools_are_offered_with_their_schemas() {
    let engine = Engine::new(TestHost::default(), Config::default());
    let names: Vec<String> = engine.goal_tools().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["goal", "step", "read_progress", "explore"]);
}

#[test]
fn an_abandoned_goal_carries_its_findings_into_the_replacement_and_ends_its_span() {
    let engine = Engine::new(TestHost::default(), Config::default());
    engine.record(MessageDraft::text(Role::User, "Speed up the build.")).unwrap();
    assert!(!engine.call_goal_tool("goal", r#"{"add": "cache the downloads"}"#).is_error);
    assert!(!engine.call_goal_tool("goal", r#"{"focus": "1"}"#).is_error);
    step(&engine, 0, "downloads are already cached by the CI image");
    let replaced = engine
        .call_goal_tool("goal", r#"{"abandon": "the downloads are already cached", "add": "parallelise the tests"}"#);
    assert!(!replaced.is_error, "{}", replaced.text);
    assert!(
        replaced.text.contains("What the abandoned goal found: the downloads are already cached"),
        "{}",
        replaced.text
    );
    let span = engine.trace().spans.into_iter().find(|s| s.id.as_str() == "goal-1").unwrap();
    assert_eq!(span.outcome.as_deref(), Some("abandoned: the downloads are already cached"));
    assert_eq!(span.end.as_ref().map(|m| m.as_str()), Some("m000002"));
    let plan = engine.goal_tree().to_prompt();
    assert!(!plan.contains("cache the downloads") && plan.contains("parallelise the tests"), "{plan}");
}

#[test]
fn explore_branches_keep_their_own_contexts_and_the_main_line_keeps_the_merge_summary() {
    let engine = Engine::new(TestHost::default(), Config::default());
    engine.record(MessageDraft::text(Role::User, "Find why the build is slow.")).unwrap();
    assert_eq!(
        engine.record_in_branch("A", MessageDraft::text(Role::Assistant, "x")).unwrap_err().code(),
        "invalid_input"
    );
    let refused = engine.call_goal_tool("explore", r#"{"branches": []}"#);
    assert!(refused.is_error, "{}", refused.text);
    let started = engine.call_goal_tool(
        "explore",
        r#"{"branches": ["profile the compiler", "check the cache"], "background": "The build takes 9 minutes."}"#,
    );
    assert!(!started.is_error, "{}", started.text);
    assert_eq!(started.branches, ["A", "B"]);
    let texts_of = |prompt: &context_workbench::prompt::Assembly| -> Vec<String> {
        prompt
            .view
            .messages
            .iter()
            .flat_map(|m| &m.content)
            .filter_map(|p| match p {
                ContentPart::Text { text } => Some(text.clone()),
                _ => None,
            })
            .collect()
    };
    // A branch's first call: its mission alone, the background after its description.
    let first = block_on(engine.prepare_branch_call("B", &CallInput::default())).unwrap();
    assert!(
        texts_of(&first).iter().any(|t| t == "check the cache\n\nThe build takes 9 minutes."),
        "{:?}",
        texts_of(&first)
    );

    engine.record_in_branch("A", MessageDraft::text(Role::Assistant, "Profiling: codegen takes 80%.")).unwrap();
    assert!(engine.call_branch_tool("A", "goal", r#"{"add": "profile codegen"}"#).is_ok());
    engine.record_in_branch("B", MessageDraft::text(Role::Assistant, "The cache hit rate is 95%.")).unwrap();
    let texts = texts_of(&block_on(engine.prepare_branch_call("A", &CallInput::default())).unwrap());
    assert!(
        texts.iter().any(|t| t.starts_with("profile the compiler"))
            && texts.iter().any(|t| t.contains("codegen takes 80%"))
    );
    assert!(!texts.iter().any(|t| t.contains("hit rate")), "branches do not see each other");

    assert!(!engine.finish_branch("A", "codegen dominates: 80% of the time").unwrap());
    // A branch's final answer is its summary, clipped to the plan's summary length.
    let long = format!("the cache is fine{}", " and fast".repeat(600));
    assert!(engine.finish_branch("B", &long).unwrap(), "every branch has finished");
    let kept = engine.goal_tree().branch(&"B".into()).unwrap().summary.clone().unwrap();
    assert!(kept.chars().count() < long.chars().count() && kept.starts_with("the cache is fine"), "{kept}");
    assert_eq!(engine.finish_branch("B", "again").unwrap_err().code(), "invalid_input");
    let merged = engine.merge_explore(Some("A")).unwrap();
    assert!(merged.contains("codegen dominates") && merged.contains("the cache is fine"), "{merged}");

    assert!(engine.trace().messages.iter().all(|m| m.branch_id.is_none()), "the main line holds no branch message");
    // The branches' work counts in their exploration's goal.
    let tree = engine.goal_tree();
    let explore = tree.goals().iter().find(|g| g.goal_type == GoalType::ExploreStart).unwrap();
    assert_eq!(explore.self_stats.message_count, 2, "{:?}", explore.self_stats);
    assert!(explore.self_stats.total_tokens > 0);
    assert_eq!(engine.branch_messages("A").len(), 1);
    let kinds: Vec<String> = engine
        .events_since(0)
        .iter()
        .map(|e| serde_json::to_value(e).unwrap()["type"].as_str().unwrap().to_owned())
        .collect();
    for kind in ["branch_started", "branch_goal_added", "branch_completed", "explore_completed"] {
        assert!(kinds.iter().any(|k| k == kind), "{kind} missing from {kinds:?}");
    }
}

#[test]
fn the_host_gets_every_event_and_a_delivery_without_a_plan_update_gets_one_reminder() {
    let engine = Engine::new(TestHost::default(), Config::default());
    engine.record(MessageDraft::text(Role::User, "Make the tests pass.")).unwrap();
    assert!(!engine.call_goal_tool("goal", r#"{"add": "fix test_tabs"}"#).is_error);
    assert!(!engine.call_goal_tool("goal", r#"{"focus": "1"}"#).is_error);
    let input = CallInput::default();
    let tail_of = |a: &context_workbench::prompt::Assembly| {
        a.view
            .messages
            .iter()
            .filter(|m| m.layer == Layer::Tail)
            .flat_map(|m| &m.content)
            .map(|p| match p {
                ContentPart::Text { text } => text.clone(),
                _ => String::new(),
            })
            .collect::<String>()
    };
    let first = block_on(engine.prepare_call(&input)).unwrap();
    assert!(!tail_of(&first).contains("<system-reminder>"), "the plan just changed");
    step(&engine, 0, "============ 12 passed in 0.40s ============");
    let second = block_on(engine.prepare_call(&input)).unwrap();
    assert!(tail_of(&second).contains("<system-reminder>"), "{}", tail_of(&second));
    step(&engine, 1, "============ 12 passed in 0.41s ============");
    let third = block_on(engine.prepare_call(&input)).unwrap();
    assert!(!tail_of(&third).contains("<system-reminder>"), "never on two calls in a row");

    let delivered: Vec<u64> = engine.host().events().iter().map(|e| e.id).collect();
    let all: Vec<u64> = engine.events_since(0).iter().map(|e| e.id).collect();
    assert_eq!(delivered, all, "the host got every event, in order, once");
    assert_eq!(engine.step_view().len(), 1 + 4, "the goal and the two calls with their results");
    assert!(engine.dump_tree(false).contains("fix test_tabs"));
    assert!(serde_json::from_str::<serde_json::Value>(&engine.dump_tree(true)).is_ok());
}

/// R6.8: a plain reply does not end a task whose plan has open goals; the next prompt says so,
/// and a second plain reply ends it. The phase follows the plan.
#[test]
fn a_plain_reply_with_goals_open_is_reminded_once_and_the_phase_follows_the_plan() {
    use context_workbench::goals::Phase;
    let engine = Engine::new(TestHost::default(), Config::default());
    engine.record(MessageDraft::text(Role::User, "Fix the parser.")).unwrap();
    assert_eq!(engine.phase(), Phase::Planning);
    engine.record(MessageDraft::text(Role::Assistant, "Nothing to plan.")).unwrap();
    assert!(engine.reply_ends_task(), "no plan: a plain reply ends the task");
    engine.record(MessageDraft::text(Role::User, "Fix it, with a plan.")).unwrap();
    assert!(!engine.call_goal_tool("goal", r#"{"add": "find the bug, fix it"}"#).is_error);
    assert!(!engine.call_goal_tool("goal", r#"{"focus": "2"}"#).is_error);
    assert_eq!(engine.phase(), Phase::Executing { step: 1 });
    let reminded = |engine: &Engine<TestHost>| {
        let a = block_on(engine.prepare_call(&CallInput::default())).unwrap();
        let mut tail = a.view.messages.iter().filter(|m| m.layer == Layer::Tail).flat_map(|m| &m.content);
        tail.any(|p| matches!(p, ContentPart::Text { text } if text.contains("the plan still has open goals")))
    };
    engine.record(MessageDraft::text(Role::Assistant, "I fixed it.")).unwrap();
    assert!(!engine.reply_ends_task(), "two goals are open");
    assert!(reminded(&engine));
    engine.record(MessageDraft::text(Role::Assistant, "Done, I said.")).unwrap();
    assert!(engine.reply_ends_task(), "reminded once, a second plain reply ends it");
    assert!(!engine.call_goal_tool("goal", r#"{"done": "fixed"}"#).is_error);
    assert!(!engine.call_goal_tool("goal", r#"{"focus": "1"}"#).is_error);
    assert!(!engine.call_goal_tool("goal", r#"{"done": "found"}"#).is_error);
    assert_eq!(engine.phase(), Phase::Completed);
    engine.record(MessageDraft::text(Role::Assistant, "All done.")).unwrap();
    assert!(engine.reply_ends_task() && !reminded(&engine));
}

#[test]
fn an_abandoned_goal_that_ran_is_compacted_and_hidden_and_the_trace_completes_once() {
    let config = r#"{"workbench": {"min_calls_between_rewrites": 1, "raw_output_share": 1.0, "family_runs": [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000]}, "goals": {"max_branches": 3}}"#;
    let engine = Engine::new(TestHost::default(), Config::from_json(config).unwrap());
    engine.record(MessageDraft::text(Role::User, "Speed up the build.")).unwrap();
    let input = CallInput::default();
    block_on(engine.prepare_call(&input)).unwrap();
    assert!(!engine.call_goal_tool("goal", r#"{"add": "cache the downloads"}"#).is_error);
    assert!(!engine.call_goal_tool("goal", r#"{"focus": "1"}"#).is_error);
    let log: String = (0..400).map(|k| format!("download {k}: cached\n")).collect();
    for n in 0..5 {
        step(&engine, n, &log);
    }
    let refused = engine.call_goal_tool("explore", r#"{"branches": ["a", "b", "c", "d"]}"#);
    assert!(refused.is_error && refused.text.contains("at most 3"), "the configured limit: {}", refused.text);
    let abandoned =
        engine.call_goal_tool("goal", r#"{"abandon": "everything is cached already", "add": "parallelise"}"#);
    assert!(!abandoned.is_error, "{}", abandoned.text);
    step(&engine, 5, "ok");
    let a = block_on(engine.prepare_call(&input)).unwrap();
    let rewrite = a.rewrites.first().expect("the abandoned goal's messages are compacted");
    assert!(rewrite.reasons.iter().any(|r| r == "span goal-1 ended"), "{:?}", rewrite.reasons);
    let block = &engine.history_view().blocks[0];
    assert!(block.text.contains("outcome: abandoned: everything is cached already"), "{}", block.text);
    assert_eq!((block.start, block.end), (1, 11));
    assert!(!engine.goal_tree().to_prompt().contains("cache the downloads"), "hidden from the plan");

    engine.complete_trace().unwrap();
    assert_eq!(engine.complete_trace().unwrap_err().code(), "invalid_input");
    let last = engine.host().events().last().cloned().unwrap();
    assert_eq!(serde_json::to_value(&last).unwrap()["type"], "trace_completed");
}

/// #19.5: an assistant message that adds and focuses a goal and, in the same turn, reads two files
/// belongs to that goal, as its tool results do; the host runs the plan calls after recording it.
#[test]
fn a_message_that_focuses_a_goal_belongs_to_it_with_its_other_calls() {
    let engine = Engine::new(TestHost::default(), Config::default());
    engine.record(MessageDraft::text(Role::User, "Find out why the parser drops tabs.")).unwrap();
    let call = |id: &str, name: &str, arguments: &str| {
        ContentPart::ToolCall(ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() })
    };
    let calls = vec![
        call("g1", "goal", r#"{"add": "read the lexer and its test"}"#),
        call("g2", "goal", r#"{"focus": "1"}"#),
        call("r1", "Read", r#"{"file_path": "src/lexer.rs"}"#),
        call("r2", "Read", r#"{"file_path": "tests/lexer.rs"}"#),
    ];
    engine.record(MessageDraft::new(Role::Assistant, calls)).unwrap();
    let result = |id: &str, name: &str, output: String| {
        let result = ToolResult {
            call_id: id.into(),
            name: name.into(),
            status: ToolStatus::Ok,
            output,
            stderr: None,
            exit_code: None,
        };
        MessageDraft::new(Role::Tool, vec![ContentPart::ToolResult(result)])
    };
    for (id, arguments) in [("g1", r#"{"add": "read the lexer and its test"}"#), ("g2", r#"{"focus": "1"}"#)] {
        let answer = engine.call_goal_tool("goal", arguments);
        assert!(!answer.is_error, "{}", answer.text);
        engine.record(result(id, "goal", answer.text)).unwrap();
    }
    engine.record(result("r1", "Read", "fn lex() {}".into())).unwrap();
    engine.record(result("r2", "Read", "#[test] fn tabs() {}".into())).unwrap();

    let tree = engine.goal_tree();
    let goal = &tree.goals()[0];
    let messages = engine.trace().messages;
    assert_eq!(messages[1].goal_id.as_ref(), Some(&goal.id), "the focusing message belongs to the goal it focused");
    for (i, message) in messages.iter().enumerate().skip(3) {
        assert_eq!(message.goal_id.as_ref(), Some(&goal.id), "message {i}: a result after the focus");
    }
    assert!(goal.self_stats.message_count >= 4, "the message and the results after the focus");
    let preview = goal.self_stats.preview.text().unwrap_or_default();
    assert!(preview.ends_with("read × 2"), "the goal's work shows its two reads: {preview}");
}
