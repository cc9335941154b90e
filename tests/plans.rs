//! Plans of other agents on the goal tree: every Claude Code session of `../shared/traces` with
//! `TodoWrite` calls, recorded through an engine, ends with the last list as its plan and its
//! messages attributed; a hand-written Codex `update_plan` sequence opens and closes spans.
#![cfg(not(target_arch = "wasm32"))]

use std::path::Path;

use context_workbench::goals::{GoalStatus, GoalTree, PlanItem, PlanStatus, parse_plan_call};
use context_workbench::import::import;
use context_workbench::model::{Message, Role};
use context_workbench::{Config, Engine, MessageDraft};
use context_workbench_testing::TestHost;

/// Record the messages like the replay's `workbench` strategy (a leading system message is the
/// system prompt, refused messages are skipped).
fn engine_over(messages: &[Message]) -> Engine<TestHost> {
    let engine = Engine::new(TestHost::default(), Config::default());
    for (i, m) in messages.iter().enumerate() {
        if i == 0 && m.role == Role::System {
            continue;
        }
        let draft = MessageDraft::from(m);
        let _ = engine.record(draft);
    }
    engine
}

fn plan_of(m: &Message) -> Option<Vec<PlanItem>> {
    let plans = m.tool_calls().filter_map(|c| parse_plan_call(&c.name, &c.arguments)?.ok());
    plans.last()
}

/// The status a goal should have for an item; cancelled items may also be gone (never ran).
fn matches(tree: &GoalTree, item: &PlanItem) -> bool {
    let goal = tree.children(None).find(|g| g.description == item.text && g.status != GoalStatus::Abandoned);
    match (item.status, goal.map(|g| g.status)) {
        (PlanStatus::Pending, Some(GoalStatus::Pending)) => true,
        (PlanStatus::InProgress, Some(GoalStatus::InProgress)) => {
            tree.current().is_some_and(|g| g.description == item.text)
        }
        (PlanStatus::Completed, Some(GoalStatus::Completed)) => true,
        (PlanStatus::Cancelled, None) => true,
        _ => false,
    }
}

#[test]
fn claude_code_sessions_end_with_their_last_todo_list_as_the_plan() {
    let mut checked = 0;
    let mut files: Vec<_> =
        std::fs::read_dir(Path::new("../shared/traces/claude-code")).unwrap().flatten().map(|e| e.path()).collect();
    files.sort();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        let name = file.display().to_string();
        let Ok(trajectories) = import(&name, &text) else { continue };
        for t in trajectories {
            let calls: Vec<usize> = (0..t.messages.len()).filter(|&i| plan_of(&t.messages[i]).is_some()).collect();
            let (Some(&first), Some(&last)) = (calls.first(), calls.last()) else { continue };
            let expected = plan_of(&t.messages[last]).unwrap();
            let engine = engine_over(&t.messages);
            let tree = engine.goal_tree();
            tree.validate().unwrap_or_else(|e| panic!("{}: {e}", t.name));
            for item in &expected {
                assert!(matches(&tree, item), "{}: {item:?} in\n{}", t.name, tree.to_todo_string());
            }
            // Every message after a list with an item in progress belongs to that item's goal
            // (the message with the call itself stays with the goal focused before it).
            let trace = engine.trace();
            let offset = t.messages.len() - trace.messages.len();
            let mut doing: Option<String> = None;
            for (i, m) in t.messages.iter().enumerate().skip(first) {
                let recorded = &trace.messages[i - offset];
                if let Some(text) = &doing {
                    let goal = recorded.goal_id.as_ref().and_then(|g| tree.goal(g));
                    assert_eq!(
                        goal.map(|g| g.description.as_str()),
                        Some(text.as_str()),
                        "{}: {}",
                        t.name,
                        recorded.id
                    );
                }
                if let Some(items) = plan_of(m) {
                    doing = items.into_iter().find(|i| i.status == PlanStatus::InProgress).map(|i| i.text);
                }
            }
            let _ = (first, calls.len());
            checked += 1;
        }
    }
    assert!(checked >= 5, "{checked} sessions with TodoWrite calls");
}

#[test]
fn a_codex_update_plan_sequence_drives_goals_spans_and_attribution() {
    use context_workbench::model::{ContentPart, ToolCall};
    let engine = Engine::new(TestHost::default(), Config::default());
    let call = |n: u32, name: &str, args: &str| {
        let call = ToolCall { id: format!("c{n}").into(), name: name.into(), arguments: args.into() };
        engine.record(MessageDraft::new(Role::Assistant, vec![ContentPart::ToolCall(call)])).unwrap();
    };
    engine.record(MessageDraft::text(Role::User, "Fix the parser")).unwrap();
    call(
        1,
        "update_plan",
        r#"{"plan":[{"step":"find the bug","status":"in_progress"},{"step":"fix it","status":"pending"}]}"#,
    );
    engine.record(MessageDraft::text(Role::Assistant, "reading lex()")).unwrap();
    call(
        2,
        "update_plan",
        r#"{"plan":[{"step":"find the bug","status":"completed"},{"step":"fix it","status":"in_progress"}]}"#,
    );
    engine.record(MessageDraft::text(Role::Assistant, "patched")).unwrap();
    call(3, "update_plan", "{not json");
    let tree = engine.goal_tree();
    let got: Vec<(String, GoalStatus)> = tree.goals().iter().map(|g| (g.description.clone(), g.status)).collect();
    let want = vec![("find the bug".to_owned(), GoalStatus::Completed), ("fix it".to_owned(), GoalStatus::InProgress)];
    assert_eq!(got, want);
    let goals: Vec<Option<String>> =
        engine.trace().messages.iter().map(|m| m.goal_id.as_ref().map(|g| g.to_string())).collect();
    let one = |s: &str| Some(s.to_owned());
    assert_eq!(goals, vec![None, None, one("1"), one("1"), one("2"), one("2")]);
    let spans = engine.trace().spans;
    assert_eq!(spans.len(), 2);
    assert_eq!((spans[0].start.as_str(), spans[0].end.as_ref().map(|e| e.as_str())), ("m000002", Some("m000003")));
    assert_eq!(spans[0].outcome.as_deref(), Some("find the bug"));
    assert_eq!((spans[1].start.as_str(), spans[1].end.is_none()), ("m000004", true));
}
