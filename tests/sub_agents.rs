//! The agent's own sub-agents on its plan (R6.5 through a proxy): Claude Code 2.1 runs them in
//! the background (the `Agent` call's result only says it was launched; the answer comes later
//! in a `<task-notification>`); either way the answer closes the sub-agent's branch and merges
//! its exploration, and the agent's plan tool keeps driving the plan meanwhile and after.
#![cfg(not(target_arch = "wasm32"))]

use context_workbench::goals::{BranchStatus, GoalStatus, GoalType};
use context_workbench::model::{Role, ToolStatus};
use context_workbench::{Config, Engine, MessageDraft};
use context_workbench_testing::TestHost;

/// One tool call and its result, as Claude Code's requests give them.
fn call_and_result(engine: &Engine<TestHost>, id: &str, name: &str, args: &str, output: &str) {
    context_workbench_testing::record_tool_round(engine, (id, name, args), output, ToolStatus::Ok);
}

fn todos(engine: &Engine<TestHost>, id: &str, read: &str, fix: &str) {
    let args = format!(
        r#"{{"todos":[{{"content":"Read calc.py","status":"{read}","activeForm":"Reading"}},{{"content":"Fix the sign","status":"{fix}","activeForm":"Fixing"}}]}}"#
    );
    call_and_result(engine, id, "TodoWrite", &args, "Todos have been modified successfully.");
}

/// The plan's own goals (not the sub-agents' exploration) with their statuses.
fn plan(engine: &Engine<TestHost>) -> Vec<(String, GoalStatus)> {
    let tree = engine.goal_tree();
    let own =
        tree.goals().iter().filter(|g| g.goal_type != GoalType::ExploreStart && g.goal_type != GoalType::ExploreMerge);
    own.map(|g| (g.description.clone(), g.status)).collect()
}

fn owned(items: &[(&str, GoalStatus)]) -> Vec<(String, GoalStatus)> {
    items.iter().map(|(t, s)| ((*t).to_owned(), *s)).collect()
}

const AGENT: &str = r#"{"description":"Find the sign","prompt":"Find where calc.py gets the sign wrong","subagent_type":"general-purpose","run_in_background":true}"#;
const LAUNCHED: &str = "Async agent launched successfully. (This tool result is internal metadata \u{2014} never quote or paste any part of it, including the agentId below, into a user-facing reply.)\nagentId: a57bb1a9380e172dc (internal ID - do not mention to user.)\nThe agent is working in the background. You will be notified automatically when it completes.";
/// Claude Code 2.1.328's notice, as it sends it: a `system` message of the conversation.
const NOTICE: &str = "[SYSTEM NOTIFICATION - NOT USER INPUT]\nThis is an automated background-task event, NOT a message from the user.\n\n<task-notification>\n<task-id>a57bb1a9380e172dc</task-id>\n<tool-use-id>toolu_agent</tool-use-id>\n<output-file>/tmp/claude-0/tasks/a57bb1a9380e172dc.output</output-file>\n<status>completed</status>\n<summary>Agent \"Find the sign\" finished</summary>\n<note>A task-notification fires each time this agent stops with no live background children of its own.</note>\n<result>calc.py line 3 subtracts instead of adding.</result>\n<usage><subagent_tokens>1020</subagent_tokens><tool_uses>0</tool_uses><duration_ms>302</duration_ms></usage>\n</task-notification>";

#[test]
fn a_background_sub_agents_notice_merges_its_branch_and_the_last_todo_list_is_the_plan() {
    let engine = Engine::new(TestHost::default(), Config::default());
    engine.record(MessageDraft::text(Role::User, "fix calc.py")).unwrap();
    todos(&engine, "toolu_t1", "in_progress", "pending");
    call_and_result(&engine, "toolu_agent", "Agent", AGENT, LAUNCHED);
    engine.record(MessageDraft::text(Role::Assistant, "The sub-agent is looking; I will wait for it.")).unwrap();
    let branch = || engine.goal_tree().branches().iter().find(|b| b.call_id.as_deref() == Some("toolu_agent")).cloned();
    assert_eq!(branch().map(|b| b.status), Some(BranchStatus::Exploring), "launched, not answered");
    // The agent works on while its sub-agent runs: its plan tool still drives the plan.
    todos(&engine, "toolu_t2", "completed", "in_progress");
    assert_eq!(
        plan(&engine),
        owned(&[("Read calc.py", GoalStatus::Completed), ("Fix the sign", GoalStatus::InProgress)])
    );
    engine.record(MessageDraft::text(Role::System, NOTICE)).unwrap();
    let branch = branch().unwrap();
    assert_eq!(
        (branch.status, branch.summary.as_deref()),
        (BranchStatus::Completed, Some("calc.py line 3 subtracts instead of adding."))
    );
    assert_eq!(engine.goal_tree().running_explore(), None, "the exploration merged");
    todos(&engine, "toolu_t3", "completed", "completed");
    assert_eq!(
        plan(&engine),
        owned(&[("Read calc.py", GoalStatus::Completed), ("Fix the sign", GoalStatus::Completed)])
    );
}

#[test]
fn a_notice_riding_on_a_tool_result_merges_the_branch() {
    let engine = Engine::new(TestHost::default(), Config::default());
    engine.record(MessageDraft::text(Role::User, "fix calc.py")).unwrap();
    call_and_result(&engine, "toolu_agent", "Agent", AGENT, LAUNCHED);
    // Claude Code was running a command as the sub-agent finished: the notice follows its output.
    let output = format!("3 passed\n<system-reminder>\n{NOTICE}\n</system-reminder>");
    call_and_result(&engine, "toolu_bash", "Bash", r#"{"command":"pytest -q"}"#, &output);
    let tree = engine.goal_tree();
    let branch = tree.branches().iter().find(|b| b.call_id.as_deref() == Some("toolu_agent")).unwrap();
    assert_eq!(branch.status, BranchStatus::Completed);
    assert_eq!(tree.running_explore(), None);
    assert!(tree.goals().iter().all(|g| g.status == GoalStatus::Completed), "{:?}", tree.goals());
}
