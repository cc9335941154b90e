//! The goal tree and its tools (R6, R1.5, R2.2, R8.2) through the public API: seed 002's
//! abandon example, cascades, stats, the events of a scripted session, bad input, the tool
//! schemas on the wire, and invariants under random call sequences.

use context_workbench::goals::{
    EventKind, GoalConfig, GoalStatus, GoalTree, GoalType, ToolOutcome, call_tool, goal_tool, goal_tool_specs,
};
use context_workbench::model::GoalId;
use context_workbench::prompt::PromptView;
use context_workbench::prompt::serialize::{to_anthropic, to_openai_chat};
use serde_json::{Value, json};

fn goal(tree: &mut GoalTree, args: Value) -> ToolOutcome {
    goal_tool(tree, &args).unwrap_or_else(|e| panic!("goal {args}: {e}"))
}

fn id(n: u32) -> GoalId {
    GoalId(n.to_string())
}

/// Seed 002's listing of the data, abandoned goals included: `[✓] 1. 分析代码 (内部ID: 1)`.
fn data_listing(tree: &GoalTree, new: &[GoalId]) -> String {
    let mut lines = Vec::new();
    for (goal_id, number) in tree.data_numbers() {
        let goal = tree.goal(&goal_id).unwrap();
        let mark = match goal.status {
            GoalStatus::Completed => "[✓]",
            GoalStatus::InProgress => "[→]",
            GoalStatus::Pending => "[ ]",
            GoalStatus::Abandoned => "[✗]",
        };
        let mut note = format!("内部ID: {goal_id}");
        if goal.status == GoalStatus::Abandoned {
            note.push_str(", abandoned");
        }
        if new.contains(&goal_id) {
            note.push_str(", 新建");
        }
        lines.push(format!("{mark} {number}. {} ({note})", goal.description));
    }
    lines.join("\n")
}

/// Seed text with its layout padding collapsed (the seed aligns the notes by hand).
fn collapse(text: &str) -> String {
    text.lines().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect::<Vec<_>>().join("\n")
}

#[test]
fn seed_002_abandon_example_numbering() {
    let mut tree = GoalTree::new("实现用户认证功能");
    goal(&mut tree, json!({"add": "分析代码, 实现方案 A, 测试"}));
    goal(&mut tree, json!({"focus": "1"}));
    for _ in 0..20 {
        tree.record_message(&id(1), 100, 0.001, &["read"]).unwrap();
    }
    goal(&mut tree, json!({"done": "用户模型在 models/user.py"}));
    goal(&mut tree, json!({"focus": "2"}));
    for _ in 0..30 {
        tree.record_message(&id(2), 100, 0.001, &["edit"]).unwrap();
    }

    // Before: GoalTree data.
    let before = "
  [✓] 1. 分析代码               (内部ID: 1)
  [→] 2. 实现方案 A              (内部ID: 2)
  [ ] 3. 测试                    (内部ID: 3)";
    assert_eq!(data_listing(&tree, &[]), collapse(before.trim()));
    assert_eq!(tree.to_todo_string(), "[✓] 1. 分析代码\n[→] 2. 实现方案 A  ← current\n[ ] 3. 测试");

    // Abandon plan A, which ran, and replace it with plan B in the same call.
    let outcome = goal(&mut tree, json!({"abandon": "因依赖问题失败", "add": "实现方案 B"}));
    assert_eq!(outcome.abandoned, vec![id(2)]);
    assert_eq!(outcome.added, vec![id(4)]);
    assert_eq!(outcome.replacing, Some(id(2)));
    assert_eq!(outcome.current, Some(id(4)));

    // After: GoalTree data, abandoned goals included.
    let after = "
  [✓] 1. 分析代码               (内部ID: 1)
  [✗] 2. 实现方案 A              (内部ID: 2, abandoned)
  [→] 3. 实现方案 B              (内部ID: 4, 新建)
  [ ] 4. 测试                    (内部ID: 3)";
    assert_eq!(data_listing(&tree, &outcome.added), collapse(after.trim()));

    // to_prompt() output (for the LLM, continuous numbers), byte for byte.
    let shown = "
  [✓] 1. 分析代码
  [→] 2. 实现方案 B  ← current
  [ ] 3. 测试";
    let shown: Vec<&str> = shown.trim_start_matches('\n').lines().map(|l| &l[2..]).collect();
    assert_eq!(tree.to_todo_string(), shown.join("\n"));
    let prompt = tree.to_prompt();
    let progress: Vec<&str> =
        prompt.split("**Progress**:\n").nth(1).unwrap().lines().filter(|l| !l.starts_with("    → ")).collect();
    assert_eq!(progress, shown);
    assert!(prompt.contains("**Current**: 2 实现方案 B\n"), "{prompt}");
    assert!(prompt.contains("\n    → 用户模型在 models/user.py\n"), "{prompt}");
    assert!(!prompt.contains("方案 A"), "abandoned goals are hidden: {prompt}");

    // The abandoned goal keeps its messages and its reason.
    let abandoned = tree.goal(&id(2)).unwrap();
    assert_eq!((abandoned.self_stats.message_count, abandoned.summary.as_deref()), (30, Some("因依赖问题失败")));
    assert_eq!(tree.display_number(&id(2)), None);
    tree.validate().unwrap();
}

#[test]
fn completing_every_sub_goal_completes_the_parent() {
    let mut tree = GoalTree::new("auth");
    goal(&mut tree, json!({"add": "analyse, implement, test"}));
    goal(&mut tree, json!({"focus": "2"}));
    goal(&mut tree, json!({"add": "design, code"}));
    goal(&mut tree, json!({"focus": "2.1"}));
    goal(&mut tree, json!({"add": "schema"}));
    goal(&mut tree, json!({"focus": "2.1.1"}));
    tree.record_message(&id(6), 10, 0.0, &["edit"]).unwrap();

    // 2.1.1 done: 2.1 has no other sub-goal, so it completes too; 2 still has 2.2.
    let first = goal(&mut tree, json!({"done": "tables defined"}));
    assert_eq!(first.completed, vec![id(6), id(4)]);
    assert_eq!(first.current, Some(id(2)));
    assert!(first.text.starts_with("completed 2.1.1 schema\ncompleted 2.1 design (all its sub-goals are done)\n"));
    assert_eq!(tree.goal(&id(4)).unwrap().summary.as_deref(), Some("tables defined"));

    // The parent cannot be done while a sub-goal is open.
    let err = goal_tool(&mut tree, &json!({"done": "all of it"})).unwrap_err();
    assert_eq!(
        err.message,
        "done: goal 2 implement still has unfinished sub-goals (2.2 code); finish or abandon them first"
    );

    goal(&mut tree, json!({"focus": "2.2"}));
    let last = goal(&mut tree, json!({"done": "login works"}));
    assert_eq!(last.completed, vec![id(5), id(2)]);
    assert_eq!(tree.goal(&id(2)).unwrap().summary.as_deref(), Some("tables defined; login works"));
    assert_eq!(last.current, None);
    assert!(last.text.contains("next: focus 1 analyse"), "{}", last.text);

    // An abandoned sibling does not hold the cascade back.
    goal(&mut tree, json!({"focus": "3"}));
    goal(&mut tree, json!({"add": "unit, e2e"}));
    goal(&mut tree, json!({"focus": "3.2"}));
    tree.record_message(&id(8), 1, 0.0, &["bash"]).unwrap();
    goal(&mut tree, json!({"abandon": "no browser here"}));
    goal(&mut tree, json!({"focus": "3.1"}));
    assert_eq!(goal(&mut tree, json!({"done": "green"})).completed, vec![id(7), id(3)]);
    tree.validate().unwrap();
}

#[test]
fn stats_run_up_the_ancestor_chain() {
    let mut tree = GoalTree::new("m");
    goal(&mut tree, json!({"add": "a"}));
    goal(&mut tree, json!({"focus": "1"}));
    goal(&mut tree, json!({"add": "b"}));
    goal(&mut tree, json!({"focus": "1.1"}));
    goal(&mut tree, json!({"add": "c"}));
    assert_eq!(tree.record_message(&id(1), 5, 0.5, &["glob"]).unwrap(), vec![id(1)]);
    assert_eq!(tree.record_message(&id(3), 100, 0.25, &["read", "edit_file"]).unwrap(), vec![id(3), id(2), id(1)]);
    assert_eq!(tree.record_message(&id(3), 50, 0.25, &["str_replace", "bash"]).unwrap(), vec![id(3), id(2), id(1)]);

    let c = tree.goal(&id(3)).unwrap();
    assert_eq!((c.self_stats.message_count, c.self_stats.total_tokens, c.self_stats.total_cost), (2, 150, 0.5));
    assert_eq!(c.self_stats.preview.text().as_deref(), Some("read → edit × 2 → bash"));
    let b = tree.goal(&id(2)).unwrap();
    assert_eq!(b.self_stats.message_count, 0);
    assert_eq!(b.cumulative_stats, c.cumulative_stats);
    let a = tree.goal(&id(1)).unwrap();
    assert_eq!((a.self_stats.message_count, a.self_stats.total_tokens), (1, 5));
    assert_eq!(
        (a.cumulative_stats.message_count, a.cumulative_stats.total_tokens, a.cumulative_stats.total_cost),
        (3, 155, 1.0)
    );
    assert_eq!(a.cumulative_stats.preview.text().as_deref(), Some("glob → read → edit × 2 → bash"));
    assert_eq!(tree.totals().total_tokens, 155);

    // The event reports the goal with both stats, then the ancestors with cumulative stats.
    let Some(EventKind::MessageAdded { goal_id, affected_goals, .. }) = tree.events().events().last().map(|e| &e.kind)
    else {
        panic!("no message_added")
    };
    assert_eq!(goal_id, &id(3));
    let ids: Vec<&GoalId> = affected_goals.iter().map(|a| &a.goal_id).collect();
    assert_eq!(ids, vec![&id(3), &id(2), &id(1)]);
    assert!(affected_goals[0].self_stats.is_some() && affected_goals[1].self_stats.is_none());
    assert_eq!(affected_goals[2].cumulative_stats.total_tokens, 155);

    assert_eq!(tree.record_message(&id(99), 1, 0.0, &[]).unwrap_err().message, "no goal with id 99");
    tree.validate().unwrap();
}

/// One line per event: its id, type and the goals or branches it is about.
fn summarize(kind: &EventKind) -> String {
    let affected = |list: &[context_workbench::goals::AffectedGoal]| {
        list.iter()
            .map(|a| match a.status {
                Some(status) => format!("{}:{}", a.goal_id, serde_json::to_value(status).unwrap().as_str().unwrap()),
                None => a.goal_id.to_string(),
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    let current = |c: &Option<GoalId>| c.as_ref().map_or("-".to_owned(), |c| c.to_string());
    match kind {
        EventKind::GoalAdded { goal, parent_id } => {
            format!("goal_added {} parent={}", goal.id, current(parent_id))
        }
        EventKind::GoalUpdated { goal_id, affected_goals, current_id, .. } => {
            format!("goal_updated {goal_id} [{}] current={}", affected(affected_goals), current(current_id))
        }
        EventKind::GoalRemoved { goal_id, removed, current_id, .. } => {
            let removed: Vec<String> = removed.iter().map(ToString::to_string).collect();
            format!("goal_removed {goal_id} [{}] current={}", removed.join(","), current(current_id))
        }
        EventKind::MessageAdded { goal_id, affected_goals, .. } => {
            format!("message_added {goal_id} [{}]", affected(affected_goals))
        }
        EventKind::TraceCompleted { stats } => format!("trace_completed messages={}", stats.message_count),
        EventKind::BranchStarted { explore_start_id, branch } => {
            format!("branch_started {} from {explore_start_id}", branch.id)
        }
        EventKind::BranchGoalAdded { branch_id, goal } => format!("branch_goal_added {branch_id} {}", goal.id),
        EventKind::BranchMessageAdded { branch_id, goal_id, .. } => {
            format!("branch_message_added {branch_id} {goal_id}")
        }
        EventKind::BranchCompleted { branch_id, summary } => format!("branch_completed {branch_id} {summary}"),
        EventKind::ExploreCompleted { explore_start_id, merge_goal_id, selected_branch, .. } => format!(
            "explore_completed {explore_start_id} merge={merge_goal_id} selected={}",
            selected_branch.as_ref().map_or("-".to_owned(), |b| b.to_string())
        ),
        EventKind::PlanRevised { revision } => format!("plan_revised from item {}", revision.from_item),
    }
}

#[test]
fn a_scripted_session_emits_exactly_these_events() {
    let mut tree = GoalTree::new("fix the parser");
    goal(&mut tree, json!({"add": "analyse, implement, test"}));
    goal(&mut tree, json!({"focus": "2"}));
    goal(&mut tree, json!({"add": "design, code"}));
    goal(&mut tree, json!({"focus": "2.1"}));
    tree.record_message(&id(4), 100, 0.5, &["read"]).unwrap();
    goal(&mut tree, json!({"done": "designed", "focus": "2.2"}));
    tree.record_message(&id(5), 50, 0.25, &["edit"]).unwrap();
    goal(&mut tree, json!({"done": "coded"}));
    goal(&mut tree, json!({"focus": "3"}));
    let removed = goal(&mut tree, json!({"abandon": "not needed"}));
    assert_eq!(removed.removed, vec![id(3)]);
    goal(&mut tree, json!({"add": "test again", "focus": "3"}));
    tree.record_message(&id(6), 10, 0.0, &["bash"]).unwrap();
    goal(&mut tree, json!({"abandon": "flaky runner"}));

    let explore = call_tool(&mut tree, "explore", r#"{"branches": ["JWT", "sessions"]}"#).unwrap();
    let [a, b] = explore.branches.as_slice() else { panic!("{explore:?}") };
    assert_eq!((a.as_str(), b.as_str()), ("A", "B"));
    // Branch A's own tree: its events move into the trace's log.
    let mut branch = GoalTree::for_branch(a.clone(), "JWT");
    goal(&mut branch, json!({"add": "try jwt", "focus": "1"}));
    branch.record_message(&id(1), 5, 0.0, &["edit"]).unwrap();
    tree.events_mut().append_from(branch.events_mut());
    tree.finish_branch(a, "JWT works, tokens are large").unwrap();
    tree.finish_branch(b, "sessions need Redis").unwrap();
    let merged = tree.merge(Some(a)).unwrap();
    assert_eq!(merged.goal_id, id(8));
    tree.complete_trace().unwrap();

    let lines: Vec<String> =
        tree.events().events().iter().map(|e| format!("{} {}", e.id, summarize(&e.kind))).collect();
    let expected = [
        "1 goal_added 1 parent=-",
        "2 goal_added 2 parent=-",
        "3 goal_added 3 parent=-",
        "4 goal_updated 2 [2:in_progress] current=2",
        "5 goal_added 4 parent=2",
        "6 goal_added 5 parent=2",
        "7 goal_updated 4 [4:in_progress] current=4",
        "8 message_added 4 [4,2]",
        "9 goal_updated 4 [4:completed] current=2",
        "10 goal_updated 5 [5:in_progress] current=5",
        "11 message_added 5 [5,2]",
        "12 goal_updated 5 [5:completed,2:completed] current=-",
        "13 goal_updated 3 [3:in_progress] current=3",
        "14 goal_removed 3 [3] current=-",
        "15 goal_added 6 parent=-",
        "16 goal_updated 6 [6:in_progress] current=6",
        "17 message_added 6 [6]",
        "18 goal_updated 6 [6:abandoned] current=-",
        "19 goal_added 7 parent=-",
        "20 branch_started A from 7",
        "21 branch_started B from 7",
        "22 branch_goal_added A 1",
        "23 goal_updated 1 [1:in_progress] current=1",
        "24 branch_message_added A 1",
        "25 branch_completed A JWT works, tokens are large",
        "26 branch_completed B sessions need Redis",
        "27 goal_added 8 parent=-",
        "28 goal_updated 7 [7:completed] current=-",
        "29 explore_completed 7 merge=8 selected=A",
        "30 trace_completed messages=3",
    ];
    assert_eq!(lines, expected);

    // The branch's goal update says which branch it is about.
    let Some(EventKind::GoalUpdated { branch_id, .. }) = tree.events().since(22).first().map(|e| &e.kind) else {
        panic!()
    };
    assert_eq!(branch_id.as_ref(), Some(a));
    // A consumer resuming after event 27 gets the last three.
    assert_eq!(tree.events().since(27).iter().map(|e| e.id).collect::<Vec<_>>(), vec![28, 29, 30]);
    // The persisted log reads back identical.
    let log = context_workbench::goals::EventLog::from_jsonl(&tree.events().to_jsonl()).unwrap();
    assert_eq!(&log, tree.events());

    let merge = tree.goal(&id(8)).unwrap();
    assert_eq!(merge.goal_type, GoalType::ExploreMerge);
    assert_eq!(merge.selected_branch.as_ref(), Some(a));
    let summary = merge.merge_summary.as_deref().unwrap();
    assert_eq!(
        summary,
        "## Exploration results\n\n### Branch A: JWT\nJWT works, tokens are large\n\n\
         ### Branch B: sessions\nsessions need Redis\n\n---\nBranch A was selected."
    );
    assert_eq!(
        tree.to_todo_string(),
        "[ ] 1. analyse\n[✓] 2. implement\n[✓] 3. explore 2 branches\n[✓] 4. merge the exploration, keep branch A"
    );
    tree.validate().unwrap();
    branch.validate().unwrap();
}

/// A call that must fail with `message` and leave the tree (and its events) exactly as it was.
fn refused(tree: &mut GoalTree, tool: &str, args: &str, message: &str) {
    let before = tree.clone();
    let err = call_tool(tree, tool, args).expect_err(args);
    assert_eq!(err.message, message, "{tool} {args}");
    assert_eq!(*tree, before, "{tool} {args} changed the tree");
}

#[test]
fn bad_input_is_a_clear_error_and_changes_nothing() {
    let mut tree = GoalTree::new("m");
    refused(
        &mut tree,
        "goal",
        r#"{"focus": "1"}"#,
        "focus: no goal numbered 1; there are no goals yet; add some first",
    );
    refused(&mut tree, "goal", r#"{"done": "x"}"#, "done: no goal is in progress; focus one first");
    goal(&mut tree, json!({"add": "a, b, c"}));
    goal(&mut tree, json!({"focus": "2"}));
    goal(&mut tree, json!({"add": "b1"}));
    goal(&mut tree, json!({"focus": "3"}));
    tree.record_message(&id(3), 1, 0.0, &[]).unwrap();
    goal(&mut tree, json!({"abandon": "dead end"}));

    let long = "x".repeat(10_000);
    let cases: Vec<(&str, String, &str)> = vec![
        ("goal", r#"{"focus": "7"}"#.into(), "focus: no goal numbered 7; goals are 1, 2, 2.1"),
        ("goal", r#"{"focus": 2.5}"#.into(), "focus: no goal numbered 2.5; goals are 1, 2, 2.1"),
        ("goal", r#"{"focus": "3"}"#.into(), "focus: goal 3 was abandoned; goals are 1, 2, 2.1"),
        ("goal", r#"{"done": "x"}"#.into(), "done: no goal is in progress; focus one first"),
        ("goal", r#"{"abandon": "x"}"#.into(), "abandon: no goal is in progress; focus one first"),
        ("goal", r#"{"add": ""}"#.into(), "add: the description is empty"),
        ("goal", r#"{"add": "a, , b"}"#.into(), "add: the description 2 is empty"),
        ("goal", format!(r#"{{"add": "{long}"}}"#), "add: the description is 10,000 characters; at most 500"),
        ("goal", "{}".into(), "goal: give at least one of add, done, abandon, focus"),
        (
            "goal",
            r#"{"add": "a", "target": 1}"#.into(),
            "goal: unknown argument `target`; the arguments are add, done, abandon, focus, reason",
        ),
        ("goal", r#"{"done": 3}"#.into(), "goal: `done` must be a string, not a number"),
        (
            "goal",
            r#"{"done": "a", "abandon": "b"}"#.into(),
            "goal: done and abandon exclude each other; call one of them",
        ),
        ("goal", r#"["add"]"#.into(), "goal: the arguments must be a JSON object, not an array"),
        (
            "goal",
            "{not json".into(),
            "goal: the arguments are not valid JSON (key must be a string at line 1 column 2); send a JSON object",
        ),
        // All or nothing: the add would succeed, the focus fails, so the add is not kept either.
        ("goal", r#"{"add": "d", "focus": "9"}"#.into(), "focus: no goal numbered 9; goals are 1, 2, 2.1, 3"),
        ("explore", r#"{"branches": []}"#.into(), "explore: no branches; give at least one description"),
        (
            "explore",
            format!(r#"{{"branches": {}}}"#, json!(vec!["way"; 50])),
            "explore: 50 branches; at most 8; keep the most promising ones",
        ),
        ("explore", "{}".into(), "explore: branches is missing; give one description per branch"),
        ("explore", r#"{"branches": ["a", " "]}"#.into(), "explore: the description 2 is empty"),
        ("step", r#"{"complete": true}"#.into(), "step: complete needs a summary of what the step achieved"),
        (
            "step",
            r#"{"focus": "nothing like it"}"#.into(),
            "focus: no goal numbered nothing like it; goals are 1, 2, 2.1",
        ),
        ("read_progress", r#"{"verbose": true}"#.into(), "read_progress: unknown argument `verbose`; it takes none"),
        ("todo", "{}".into(), "unknown tool `todo`; the plan tools are goal, step, read_progress, explore"),
    ];
    for (tool, args, message) in &cases {
        refused(&mut tree, tool, args, message);
    }

    goal(&mut tree, json!({"focus": "1"}));
    goal(&mut tree, json!({"done": "a done"}));
    refused(&mut tree, "goal", r#"{"focus": "1"}"#, "focus: goal 1 a is already completed; goals are 1, 2, 2.1");
    goal(&mut tree, json!({"focus": "2"}));
    refused(
        &mut tree,
        "goal",
        r#"{"done": "  "}"#,
        "done: the summary is empty; say in one line what the goal achieved",
    );
    refused(&mut tree, "goal", r#"{"abandon": ""}"#, "abandon: the reason is empty; say why the goal is given up");
    call_tool(&mut tree, "explore", r#"{"branches": ["x"]}"#).unwrap();
    refused(
        &mut tree,
        "explore",
        r#"{"branches": ["y"]}"#,
        "explore: an exploration is still running (open branches: A); merge it first",
    );
    refused(
        &mut tree,
        "goal",
        r#"{"focus": "2.2"}"#,
        "focus: goal 2.2 explore 1 branches records an exploration; focus a normal goal",
    );
    let before = tree.clone();
    assert_eq!(tree.merge(None).unwrap_err().message, "merge: branches A have not finished");
    assert_eq!(tree.finish_branch(&"Z".into(), "s").unwrap_err().message, "finish_branch: no branch Z; branches are A");
    assert_eq!(tree.merge(Some(&"B".into())).unwrap_err().message, "merge: branches A have not finished");
    assert_eq!(tree, before);
    tree.finish_branch(&"A".into(), "fine").unwrap();
    assert_eq!(
        tree.merge(Some(&"B".into())).unwrap_err().message,
        "merge: branch B is not part of this exploration; its branches are A"
    );
    tree.validate().unwrap();
}

#[test]
fn the_step_tool_follows_seed_004() {
    let mut tree = GoalTree::new("修改配置文件");
    call_tool(&mut tree, "step", r#"{"plan": ["探索代码库", "修改配置", "运行测试"]}"#).unwrap();
    assert_eq!(tree.to_todo_string(), "[ ] 1. 探索代码库\n[ ] 2. 修改配置\n[ ] 3. 运行测试");
    call_tool(&mut tree, "step", r#"{"focus": "探索代码库"}"#).unwrap();
    tree.record_message(&id(1), 10, 0.0, &["glob"]).unwrap();
    let out = call_tool(
        &mut tree,
        "step",
        r#"{"complete": true, "summary": "主配置在 /src/config.yaml", "focus": "修改配置"}"#,
    )
    .unwrap();
    assert_eq!(out.completed, vec![id(1)]);
    assert_eq!(tree.to_todo_string(), "[✓] 1. 探索代码库\n[→] 2. 修改配置  ← current\n[ ] 3. 运行测试");
    // New steps are appended at the top level, whatever is focused.
    call_tool(&mut tree, "step", r#"{"plan": ["备份配置"]}"#).unwrap();
    assert_eq!(tree.display_number(&id(4)).as_deref(), Some("4"));
    assert_eq!(call_tool(&mut tree, "read_progress", "").unwrap().text, tree.to_todo_string());
    tree.validate().unwrap();
}

#[test]
fn plan_tool_schemas_go_on_the_wire_as_openai_functions_and_anthropic_tools() {
    let specs = goal_tool_specs(&GoalConfig::default());
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["goal", "step", "read_progress", "explore"]);
    let view = PromptView { messages: Vec::new(), tools: specs.clone() };

    let openai = to_openai_chat(&view);
    let tools = openai["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 4);
    for (tool, spec) in tools.iter().zip(&specs) {
        assert_eq!(tool["type"], "function");
        let function = tool["function"].as_object().unwrap();
        let keys: Vec<&str> = function.keys().map(String::as_str).collect();
        assert_eq!(keys, vec!["description", "name", "parameters"]);
        assert_eq!(function["name"], spec.name.as_str());
        assert!(!function["description"].as_str().unwrap().is_empty());
        check_object_schema(&function["parameters"]);
    }

    let anthropic = to_anthropic(&view);
    let tools = anthropic["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 4);
    for tool in tools {
        let keys: Vec<&str> = tool.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, vec!["description", "input_schema", "name"]);
        assert_eq!(tool["input_schema"]["type"], "object");
        check_object_schema(&tool["input_schema"]);
        // Anthropic tool names: ^[a-zA-Z0-9_-]{1,64}$.
        let name = tool["name"].as_str().unwrap();
        assert!(name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
    }

    // A call the schema describes is one the tool takes.
    let explore = &specs[3].parameters;
    assert_eq!(explore["required"], json!(["branches"]));
    assert_eq!(explore["properties"]["branches"]["maxItems"], 8);
}

/// A plain object schema: `type: object`, `properties` (each with a type and a description),
/// `required` naming only properties, and none of the keywords function calling refuses at the
/// top level.
fn check_object_schema(schema: &Value) {
    let object = schema.as_object().unwrap();
    assert_eq!(object["type"], "object");
    for keyword in ["oneOf", "anyOf", "allOf", "enum", "not", "$ref"] {
        assert!(!object.contains_key(keyword), "{keyword} at the top level");
    }
    let properties = object["properties"].as_object().unwrap();
    for (name, property) in properties {
        assert!(property["type"].is_string(), "{name}");
        assert!(!property["description"].as_str().unwrap().is_empty(), "{name}");
    }
    for required in object["required"].as_array().unwrap() {
        assert!(properties.contains_key(required.as_str().unwrap()));
    }
}

#[test]
fn goal_json_round_trips_and_refuses_broken_trees() {
    let mut tree = GoalTree::new("m");
    goal(&mut tree, json!({"add": "a, b"}));
    goal(&mut tree, json!({"focus": "1"}));
    goal(&mut tree, json!({"add": "a1"}));
    tree.record_message(&id(1), 7, 0.5, &["read", "read"]).unwrap();
    tree.start_explore(&["x", "y"], None).unwrap();
    let json = tree.to_json();
    let loaded = GoalTree::from_json(&json).unwrap();
    assert_eq!(loaded.to_json(), json);
    assert_eq!(loaded.goals(), tree.goals());
    assert_eq!(loaded.branches(), tree.branches());
    assert!(loaded.events().events().is_empty());

    let mut value: Value = serde_json::from_str(&json).unwrap();
    value["goals"][0]["parent_id"] = json!("3");
    let err = GoalTree::from_json(&value.to_string()).unwrap_err().to_string();
    assert_eq!(err, "invalid input: goal tree: goal 1 is its own ancestor (a parent cycle)");

    let mut value: Value = serde_json::from_str(&json).unwrap();
    value["version"] = json!(2);
    assert_eq!(GoalTree::from_json(&value.to_string()).unwrap_err().code(), "unsupported_version");

    let mut value: Value = serde_json::from_str(&json).unwrap();
    value["goals"][1]["status"] = json!("done");
    let err = GoalTree::from_json(&value.to_string()).unwrap_err().to_string();
    assert!(err.contains("goals[1].status"), "{err}");

    let mut value: Value = serde_json::from_str(&json).unwrap();
    value["current_id"] = json!("2");
    let err = GoalTree::from_json(&value.to_string()).unwrap_err().to_string();
    assert_eq!(err, "invalid input: goal tree: goal 2 is focused or holds the focus but is not in progress");

    assert!(GoalTree::from_json("[]").is_err());
    assert!(GoalTree::from_json("").is_err());
}

/// xorshift64*: a fixed, dependency-free pseudo-random sequence.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Display numbers are continuous: the children of every shown goal are numbered 1, 2, … in
/// order, and every number resolves back to its goal.
fn check_numbering(tree: &GoalTree) {
    let numbers = tree.display_numbers();
    let mut expected_next: std::collections::BTreeMap<String, usize> = Default::default();
    for (goal_id, number) in &numbers {
        let (parent, last) = match number.rsplit_once('.') {
            Some((parent, last)) => (parent.to_owned(), last),
            None => (String::new(), number.as_str()),
        };
        let next = expected_next.entry(parent.clone()).or_insert(1);
        assert_eq!(last.parse::<usize>().unwrap(), *next, "{numbers:?}");
        *next += 1;
        let goal = tree.goal(goal_id).unwrap();
        assert_ne!(goal.status, GoalStatus::Abandoned);
        let parent_number = goal.parent_id.as_ref().and_then(|p| tree.display_number(p)).unwrap_or_default();
        assert_eq!(parent_number, parent);
    }
}

#[test]
fn random_call_sequences_keep_every_invariant() {
    let calls: &[(&str, &str)] = &[
        ("goal", r#"{"add": "alpha, beta"}"#),
        ("goal", r#"{"add": "gamma"}"#),
        ("goal", r#"{"add": "delta", "reason": "needed"}"#),
        ("goal", r#"{"focus": "1"}"#),
        ("goal", r#"{"focus": "2"}"#),
        ("goal", r#"{"focus": "1.1"}"#),
        ("goal", r#"{"focus": "2.1"}"#),
        ("goal", r#"{"focus": "1.2.1"}"#),
        ("goal", r#"{"focus": "3"}"#),
        ("goal", r#"{"focus": "99"}"#),
        ("goal", r#"{"done": "ok"}"#),
        ("goal", r#"{"done": "ok", "focus": "2"}"#),
        ("goal", r#"{"abandon": "bad idea"}"#),
        ("goal", r#"{"abandon": "bad idea", "add": "plan b, plan c"}"#),
        ("goal", r#"{"done": "ok", "add": "next thing"}"#),
        ("goal", r#"{"done": ""}"#),
        ("goal", r#"{"add": ""}"#),
        ("goal", r#"{"add": 5}"#),
        ("goal", "null"),
        ("goal", "garbage"),
        ("step", r#"{"plan": ["s1", "s2"]}"#),
        ("step", r#"{"complete": true, "summary": "fine", "focus": "1"}"#),
        ("step", r#"{"focus": "alpha"}"#),
        ("read_progress", "{}"),
        ("explore", r#"{"branches": ["x", "y"]}"#),
        ("explore", r#"{"branches": []}"#),
    ];
    for seed in 1..=200u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let config = GoalConfig { max_goals: 40, max_depth: 4, ..GoalConfig::default() };
        let mut tree = GoalTree::new("random").with_config(config);
        for step in 0..80 {
            let before = tree.clone();
            let last_event = tree.events().last_id();
            let what = rng.below(calls.len() + 4);
            let result = if what < calls.len() {
                let (tool, args) = calls[what];
                call_tool(&mut tree, tool, args).map(|_| ())
            } else if what == calls.len() {
                let goal_id = id(rng.below(20) as u32 + 1);
                tree.record_message(&goal_id, rng.below(100) as u64, 0.25, &["read", "edit"]).map(|_| ())
            } else if what == calls.len() + 1 {
                let branch = tree.branches().get(rng.below(4)).map(|b| b.id.clone()).unwrap_or_else(|| "A".into());
                tree.finish_branch(&branch, "branch summary")
            } else if what == calls.len() + 2 {
                let selected = tree.branches().last().map(|b| b.id.clone());
                tree.merge(selected.as_ref()).map(|_| ())
            } else {
                tree.merge(None).map(|_| ())
            };
            match result {
                Ok(()) => assert!(tree.events().last_id() >= last_event),
                Err(e) => {
                    assert!(!e.message.is_empty());
                    assert_eq!(tree, before, "seed {seed} step {step}: a failed call changed the tree ({e})");
                }
            }
            if let Err(broken) = tree.validate() {
                panic!("seed {seed} step {step}: {broken}\n{}", tree.to_json());
            }
            check_numbering(&tree);
            let ids: Vec<u64> = tree.events().events().iter().map(|e| e.id).collect();
            assert!(ids.windows(2).all(|w| w[1] == w[0] + 1) && ids.first().is_none_or(|&f| f == 1));
            // Renderings never fail, and the tree round-trips through goal.json.
            if step % 10 == 9 {
                let _ = (tree.to_prompt(), tree.to_history_string(&[]));
                assert_eq!(GoalTree::from_json(&tree.to_json()).unwrap().goals(), tree.goals());
            }
        }
    }
}
