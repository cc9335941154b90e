//! The playground's replay session on real trajectories: its prompts are the `workbench`
//! strategy's, blocks name the raw messages they replaced, a Claude Code session's todo list
//! becomes its goal tree, and bad input is refused with a code.
#![cfg(not(target_arch = "wasm32"))]

use context_workbench::config::Prices;
use context_workbench::goals::{GoalStatus, GoalType, parse_plan_call};
use context_workbench::import::import;
use context_workbench::replay::{
    CallStep, MAX_TRAJECTORY_BYTES, ReplaySession, ViewKind, Workbench, flatten, replay_with,
};
use context_workbench::{Encoding, TokenCounter};

const WINDOW: usize = 200_000;
const TODO_SESSION: &str = "data/traces/claude-code/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl";
const VORFLUX: &str = "data/traces/vorflux/sympy__sympy-17630.json";

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e} (the shared traces sit beside the clone)"))
}

/// Every step of the session, and the texts as the session handed them out.
fn run(session: &mut ReplaySession) -> (Vec<CallStep>, Vec<String>) {
    let (mut steps, mut texts) = (Vec::new(), Vec::new());
    while let Some(step) = session.step() {
        assert_eq!(step.texts_from as usize, texts.len(), "texts are handed out in order, once");
        texts.extend(step.texts.iter().cloned());
        steps.push(step);
    }
    (steps, texts)
}

#[test]
fn prompts_are_the_workbench_strategys_and_blocks_name_what_they_replaced() {
    let text = read(VORFLUX);
    // A window this run outgrows: at 200,000 a session of no known family chooses no rewrite
    // it cannot be all but sure pays back.
    let window = 64_000;
    let mut session = ReplaySession::import(VORFLUX, &text, window).unwrap();
    let (steps, texts) = run(&mut session);
    let trajectory = import(VORFLUX, &text).unwrap().remove(0);
    assert_eq!(steps.len(), trajectory.calls.len());

    let mut strategy: Vec<Box<dyn context_workbench::replay::Strategy>> = vec![Box::new(Workbench::new(window))];
    let mut expected = Vec::new();
    replay_with(&trajectory, &mut strategy, &Prices::default(), window, &mut |_, _, prompt| {
        expected.push(prompt.messages.iter().map(|m| (m.role, m.content.to_string())).collect::<Vec<_>>());
    })
    .unwrap();
    let mut blocks = 0;
    for (step, want) in steps.iter().zip(&expected) {
        let got: Vec<_> = step.call.messages.iter().map(|m| (m.role, texts[m.text as usize].clone())).collect();
        assert_eq!(&got, want, "call {}", step.call.call);
        assert!(step.call.fallback.is_none());
        for m in step.call.messages.iter().filter(|m| m.kind == ViewKind::Block) {
            let [start, end] = m.replaces.expect("a block names its range");
            assert!(start < end && end <= step.call.history, "call {}: {start}..{end}", step.call.call);
            let raw: usize =
                trajectory.messages[start..end].iter().map(|r| flatten(r.role, &r.content).content.len()).sum();
            assert!(texts[m.text as usize].len() < raw, "a block is smaller than what it replaced");
            blocks += 1;
        }
        for m in &step.call.messages {
            if let Some(i) = m.source {
                assert!(i < step.call.history);
                let raw = flatten(trajectory.messages[i].role, &trajectory.messages[i].content);
                assert_eq!(raw.content.as_ref() == texts[m.text as usize], !m.altered, "call {}", step.call.call);
            }
        }
    }
    assert!(blocks > 0, "the workbench compacted this run");
    assert!(session.board().version > 0, "blocks bring state deltas");

    // The chart's baseline: the recorded history's tokens at each call, counted as the engine counts.
    let counter = TokenCounter::new(Encoding::O200kBase);
    for step in &steps {
        let raw: usize =
            trajectory.messages[..step.call.history].iter().map(|m| counter.count_message_content(&m.content)).sum();
        assert_eq!(step.call.raw_tokens, raw, "call {}", step.call.call);
    }
    let last = &steps.last().unwrap().call;
    assert!(last.tokens * 2 < last.raw_tokens, "the saving shows: {} of {}", last.tokens, last.raw_tokens);
}

#[test]
fn a_claude_code_sessions_todo_list_is_its_goal_tree() {
    let text = read(TODO_SESSION);
    let mut session = ReplaySession::import(TODO_SESSION, &text, WINDOW).unwrap();
    let infos = session.trajectories();
    assert_eq!(infos[0].format, "claude_code");
    assert!(infos.len() > 1, "the sub-agents are their own trajectories");
    let (steps, _) = run(&mut session);
    assert_eq!(steps.len(), infos[0].calls);
    // The last TodoWrite of the main session, item by item.
    let last_plan = session
        .raw_messages()
        .iter()
        .flat_map(|m| m.tool_calls())
        .filter_map(|c| parse_plan_call(&c.name, &c.arguments)?.ok())
        .last()
        .expect("the main session keeps a todo list");
    let tree = session.goal_tree();
    let plan = || tree.goals().iter().filter(|g| g.goal_type == GoalType::Normal);
    let goals: Vec<&str> = plan().map(|g| g.description.as_str()).collect();
    let todos: Vec<&str> = last_plan.iter().map(|i| i.text.as_str()).collect();
    assert_eq!(goals, todos);
    // The last list has every item completed; the sub-agents did most of the work, so only the
    // main line's own messages in between are attributed.
    assert!(plan().all(|g| g.status == GoalStatus::Completed));
    assert!(plan().map(|g| g.self_stats.message_count).sum::<u64>() > 0);
    // Its sub-agents (three `Task` calls in one reply, then two) are two explorations of the plan,
    // each branch linked to its call and finished with the sub-agent's report.
    let explorations: Vec<&str> =
        tree.goals().iter().filter(|g| g.goal_type == GoalType::ExploreStart).map(|g| g.description.as_str()).collect();
    assert_eq!(
        explorations,
        [
            "sub-agents: Setup Next.js project; Create data models; Build TODO components",
            "sub-agents: Implement state management; Create main page integration"
        ]
    );
    assert_eq!(tree.branches().len(), 5);
    assert!(tree.goals().iter().all(|g| g.status == GoalStatus::Completed));
    let calls: Vec<String> =
        session.raw_messages().iter().flat_map(|m| m.tool_calls()).map(|c| c.id.to_string()).collect();
    for branch in tree.branches() {
        assert!(calls.contains(branch.call_id.as_ref().unwrap()), "{branch:?}");
        assert!(branch.summary.as_ref().is_some_and(|s| s.len() > 100), "{branch:?}");
    }
}

#[test]
fn same_input_same_steps() {
    let text = read(TODO_SESSION);
    let json = |session: &mut ReplaySession| serde_json::to_string(&run(session)).unwrap();
    let a = json(&mut ReplaySession::import(TODO_SESSION, &text, WINDOW).unwrap());
    let b = json(&mut ReplaySession::import(TODO_SESSION, &text, WINDOW).unwrap());
    assert_eq!(a, b);
}

#[test]
fn selecting_a_sub_agent_starts_over_on_it() {
    let text = read(TODO_SESSION);
    let mut session = ReplaySession::import(TODO_SESSION, &text, WINDOW).unwrap();
    let first = session.step().unwrap();
    session.select(1).unwrap();
    assert_eq!(session.selected(), 1);
    let step = session.step().unwrap();
    assert_eq!((step.call.call, step.texts_from), (0, 0));
    assert_ne!(first.texts, step.texts);
    let err = session.select(99).unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    assert!(err.to_string().contains("no trajectory 99"), "{err}");
}

#[test]
fn bad_input_is_refused_with_a_code() {
    let not_a_trace = ReplaySession::import("notes.md", "# just some notes\n", WINDOW).err().unwrap();
    assert_eq!(not_a_trace.code(), "invalid_trajectory");
    let user_only = r#"{"type":"user","uuid":"u1","message":{"role":"user","content":"hello"}}"#;
    let no_calls = ReplaySession::import("s.jsonl", user_only, WINDOW).err().unwrap();
    assert_eq!(no_calls.code(), "invalid_trajectory", "{no_calls}");
    let huge = " ".repeat(MAX_TRAJECTORY_BYTES + 1);
    let err = ReplaySession::import("huge.jsonl", &huge, WINDOW).err().unwrap();
    assert_eq!(err.code(), "invalid_input");
    assert!(err.to_string().contains("huge.jsonl is 67.1 MB"), "{err}");
}
