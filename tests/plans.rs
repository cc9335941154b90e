//! Plans of other agents on the goal tree, from the plan calls that ran (their results): every
//! Claude Code session of `data/traces` with `TodoWrite` calls, recorded through an engine,
//! ends with the last list as its plan and its messages attributed; a hand-written Codex
//! `update_plan` sequence opens and closes spans; a refused call changes nothing; Claude Code's
//! task tools make a plan; Cline's focus chain (a checklist on any tool call) does too.
#![cfg(not(target_arch = "wasm32"))]

use std::path::Path;

use context_workbench::goals::{GoalStatus, GoalTree, PlanItem, PlanStatus, parse_plan_call};
use context_workbench::import::import;
use context_workbench::model::{Message, Role, ToolStatus};
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
        std::fs::read_dir(Path::new("data/traces/claude-code")).unwrap().flatten().map(|e| e.path()).collect();
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
            // From the successful result of a list with an item in progress on, every message
            // belongs to that item's goal (the call itself stays with the goal focused before).
            let trace = engine.trace();
            let offset = t.messages.len() - trace.messages.len();
            let plans: std::collections::BTreeMap<String, Vec<PlanItem>> = t
                .messages
                .iter()
                .flat_map(|m| m.tool_calls())
                .filter_map(|c| Some((c.id.to_string(), parse_plan_call(&c.name, &c.arguments)?.ok()?)))
                .collect();
            let mut doing: Option<String> = None;
            for (i, m) in t.messages.iter().enumerate().skip(first) {
                let ran = m.tool_results().filter(|r| r.status == ToolStatus::Ok);
                if let Some(items) = ran.filter_map(|r| plans.get(r.call_id.as_str())).last() {
                    doing = items.iter().find(|i| i.status == PlanStatus::InProgress).map(|i| i.text.clone());
                }
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
            }
            let _ = (first, calls.len());
            checked += 1;
        }
    }
    assert!(checked >= 5, "{checked} sessions with TodoWrite calls");
}

#[test]
fn a_codex_update_plan_sequence_drives_goals_spans_and_attribution() {
    use context_workbench::model::{ContentPart, ToolCall, ToolResult, ToolStatus};
    let engine = Engine::new(TestHost::default(), Config::default());
    let call = |n: u32, name: &str, args: &str| {
        let call = ToolCall { id: format!("c{n}").into(), name: name.into(), arguments: args.into() };
        engine.record(MessageDraft::new(Role::Assistant, vec![ContentPart::ToolCall(call)])).unwrap();
        let result = ToolResult {
            call_id: format!("c{n}").into(),
            name: name.into(),
            status: ToolStatus::Ok,
            output: "Plan updated".into(),
            stderr: None,
            exit_code: None,
        };
        let mut draft = MessageDraft::new(Role::Tool, vec![ContentPart::ToolResult(result)]);
        draft.tool_call_id = Some(format!("c{n}").into());
        engine.record(draft).unwrap();
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
    // A call belongs to the goal focused before it ran; its result, to the goal its plan focused.
    let goals: Vec<Option<String>> =
        engine.trace().messages.iter().map(|m| m.goal_id.as_ref().map(|g| g.to_string())).collect();
    let one = |s: &str| Some(s.to_owned());
    assert_eq!(goals, vec![None, None, one("1"), one("1"), one("1"), one("2"), one("2"), one("2"), one("2")]);
    let spans = engine.trace().spans;
    assert_eq!(spans.len(), 2);
    assert_eq!((spans[0].start.as_str(), spans[0].end.as_ref().map(|e| e.as_str())), ("m000002", Some("m000004")));
    assert_eq!(spans[0].outcome.as_deref(), Some("find the bug"));
    assert_eq!((spans[1].start.as_str(), spans[1].end.is_none()), ("m000005", true));
}

/// One tool call and its result, as an agent's session records them.
fn call_and_result(engine: &Engine<TestHost>, id: &str, name: &str, args: &str, output: &str, failed: bool) {
    use context_workbench::model::ToolStatus;
    let status = if failed { ToolStatus::Error } else { ToolStatus::Ok };
    context_workbench_testing::record_tool_round(engine, (id, name, args), output, status);
}

fn plan(engine: &Engine<TestHost>) -> Vec<(String, GoalStatus)> {
    engine.goal_tree().goals().iter().map(|g| (g.description.clone(), g.status)).collect()
}

#[test]
fn a_plan_call_the_agent_refused_changes_nothing() {
    let engine = Engine::new(TestHost::default(), Config::default());
    engine.record(MessageDraft::text(Role::User, "fix calc.py")).unwrap();
    let todos = r#"{"todos":[{"content":"Read calc.py","status":"in_progress","activeForm":"Reading"}]}"#;
    let refused = "<tool_use_error>Error: No such tool available: TodoWrite</tool_use_error>";
    call_and_result(&engine, "t1", "TodoWrite", todos, refused, true);
    assert_eq!(plan(&engine), [], "Claude Code refused the call: no plan");
    call_and_result(&engine, "t2", "TodoWrite", todos, "Todos have been modified successfully.", false);
    assert_eq!(plan(&engine), [("Read calc.py".to_owned(), GoalStatus::InProgress)]);
}

#[test]
fn claude_code_task_tools_make_the_plan_from_their_results() {
    let engine = Engine::new(TestHost::default(), Config::default());
    engine.record(MessageDraft::text(Role::User, "fix calc.py")).unwrap();
    let create = |id: &str, subject: &str, n: u32| {
        let args = format!(r#"{{"subject":"{subject}","description":"{subject}, carefully"}}"#);
        call_and_result(&engine, id, "TaskCreate", &args, &format!("Task #{n} created successfully: {subject}"), false);
    };
    create("a", "Read calc.py", 1);
    create("b", "Fix the sign", 2);
    create("c", "Run the tests", 3);
    let update = |id: &str, task: u32, status: &str, output: &str| {
        let args = format!(r#"{{"taskId":"{task}","status":"{status}"}}"#);
        call_and_result(&engine, id, "TaskUpdate", &args, output, false);
    };
    update("d", 1, "in_progress", "Updated task #1 status");
    update("e", 1, "completed", "Updated task #1 status");
    update("f", 2, "in_progress", "Updated task #2 status");
    update("g", 9, "completed", "Task #9 not found");
    let owned = |items: &[(&str, GoalStatus)]| -> Vec<(String, GoalStatus)> {
        items.iter().map(|(t, s)| ((*t).to_owned(), *s)).collect()
    };
    assert_eq!(
        plan(&engine),
        owned(&[
            ("Read calc.py", GoalStatus::Completed),
            ("Fix the sign", GoalStatus::InProgress),
            ("Run the tests", GoalStatus::Pending)
        ])
    );
    assert_eq!(engine.goal_tree().current().map(|g| g.description.clone()).as_deref(), Some("Fix the sign"));
}

#[test]
fn clines_focus_chain_on_any_tool_call_is_its_plan() {
    let engine = Engine::new(TestHost::default(), Config::default());
    engine.record(MessageDraft::text(Role::User, "fix calc.py")).unwrap();
    let read = r#"{"path":"calc.py","task_progress":"- [-] Read calc.py\n- [ ] Fix the sign"}"#;
    call_and_result(&engine, "c1", "read_file", read, "def total(): ...", false);
    assert_eq!(
        plan(&engine),
        [("Read calc.py".to_owned(), GoalStatus::InProgress), ("Fix the sign".to_owned(), GoalStatus::Pending)]
    );
    // A call without the checklist leaves the plan; the next checklist moves it on.
    call_and_result(&engine, "c2", "execute_command", r#"{"command":"pytest"}"#, "1 failed", false);
    let fix = r#"{"path":"calc.py","diff":"-a\n+b","task_progress":"- [x] Read calc.py\n- [-] Fix the sign"}"#;
    call_and_result(&engine, "c3", "replace_in_file", fix, "ok", false);
    assert_eq!(
        plan(&engine),
        [("Read calc.py".to_owned(), GoalStatus::Completed), ("Fix the sign".to_owned(), GoalStatus::InProgress)]
    );
}

#[test]
fn each_saved_call_keeps_the_plan_it_saw() {
    use context_workbench::host::{Host, block_on};
    use context_workbench::prompt::CallInput;
    use context_workbench::store::query::TraceStore;
    let (engine, _) = block_on(Engine::open(TestHost::default(), Config::default(), Some("run"))).unwrap();
    engine.record(MessageDraft::text(Role::User, "fix calc.py")).unwrap();
    let todos = |id: &str, read: &str, fix: &str| {
        let args = format!(
            r#"{{"todos":[{{"content":"Read calc.py","status":"{read}","activeForm":"Reading"}},{{"content":"Fix the sign","status":"{fix}","activeForm":"Fixing"}}]}}"#
        );
        context_workbench_testing::record_tool_round(
            &engine,
            (id, "TodoWrite", &args),
            "Todos modified.",
            ToolStatus::Ok,
        );
    };
    let call = || block_on(engine.prepare_call(&CallInput::default())).unwrap();
    todos("t1", "in_progress", "pending");
    call();
    context_workbench_testing::record_tool_round(
        &engine,
        ("b1", "Bash", r#"{"command":"ls"}"#),
        "calc.py",
        ToolStatus::Ok,
    );
    call();
    todos("t2", "completed", "completed");
    call();
    let store = TraceStore::new(engine.host(), ".trace").unwrap();
    let seen = |call: u64| -> Vec<(String, String)> {
        let page = block_on(store.prompt("run", Some(call))).unwrap();
        let plan = page.plan.unwrap_or_else(|| panic!("call {call} has its plan: {:?}", page.notes));
        let goals = plan["goals"].as_array().unwrap().iter();
        let items = goals.filter(|g| matches!(g["description"].as_str(), Some("Read calc.py" | "Fix the sign")));
        items.map(|g| (g["description"].as_str().unwrap().into(), g["status"].as_str().unwrap().into())).collect()
    };
    let at_first =
        vec![("Read calc.py".to_owned(), "in_progress".to_owned()), ("Fix the sign".into(), "pending".into())];
    assert_eq!(seen(1), at_first);
    assert_eq!(seen(2), at_first, "a call whose plan did not change has the one before it");
    assert_eq!(
        seen(3),
        [("Read calc.py".to_owned(), "completed".to_owned()), ("Fix the sign".into(), "completed".into())]
    );
    let lines = block_on(engine.host().read_file(".trace/run/prompts.jsonl")).unwrap().text;
    let kept: Vec<bool> =
        lines.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["plan"].is_object()).collect();
    assert_eq!(kept, [true, false, true], "a plan is kept once, when it changed");
}
