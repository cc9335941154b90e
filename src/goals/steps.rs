//! The step view (R1.4, seed 004): the goals of a tree and the messages of its line as one
//! tree of typed steps, every field inferred without an LLM.
//!
//! Types: a goal of the tree is a `goal` step. An assistant message calling `goal` with `done`
//! or `step` with `complete` is an `evaluation` (its summary); one with other tool calls an
//! `action`; one with only text a `response` when it is the last of its round (a user message
//! or the end follows), else a `thought`. A tool message is a `result`. User, system and summary
//! messages are not steps.
//!
//! Parents (seed 004's table): a goal's parent is the goal it is a sub-goal of (the table says
//! "the previous goal", but the tree examples of the same seed show top-level goals as
//! siblings); thoughts, actions, evaluations and responses belong to their message's goal; a
//! result belongs to the action that made its call.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::render::key_argument;
use super::stats::clean_cost;
use super::text::one_line;
use super::tool::{GOAL_TOOL, STEP_TOOL};
use super::{GoalStatus, GoalTree};
use crate::model::{ContentPart, GoalId, Message, Role, ToolStatus};

/// Characters of a step's description and of a value in its data.
const DESCRIPTION_CHARS: usize = 80;
const DATA_CHARS: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum StepType {
    Goal,
    Thought,
    Evaluation,
    Response,
    Action,
    Result,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Planned,
    InProgress,
    Completed,
    Failed,
    Skipped,
}

/// One step (seed 004's `Step`, its automatic fields only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct Step {
    /// The message id, or `goal-<id>` for a goal.
    pub step_id: String,
    pub step_type: StepType,
    pub status: StepStatus,
    /// The message's sequence; `None` for goals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    pub description: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[cfg_attr(test, ts(type = "Record<string, unknown>", optional = nullable))]
    pub data: BTreeMap<String, Value>,
    /// Only on evaluations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at_ms: Option<u64>,
}

/// The step id of a goal.
pub fn goal_step_id(id: &GoalId) -> String {
    format!("goal-{id}")
}

/// The steps of `tree` and of the `messages` of its line, in tree pre-order: a node's children
/// ordered by their first message (goals that never ran last, in plan order).
pub fn step_view(messages: &[Message], tree: &GoalTree) -> Vec<Step> {
    let line: Vec<&Message> = messages.iter().filter(|m| m.branch_id.as_ref() == tree.branch_id()).collect();
    let mut steps: Vec<(u64, Step)> = Vec::new();

    // Where each call was made, and what answered it.
    let mut call_owner: BTreeMap<&str, &str> = BTreeMap::new();
    let mut answers: BTreeMap<&str, (ToolStatus, u64)> = BTreeMap::new();
    for m in &line {
        for call in m.tool_calls() {
            call_owner.entry(call.id.as_str()).or_insert(m.id.as_str());
        }
        for result in m.tool_results() {
            answers.entry(result.call_id.as_str()).or_insert((result.status, m.created_at_ms));
        }
    }
    let goal_parent = |m: &Message| m.goal_id.as_ref().filter(|g| tree.goal(g).is_some()).map(goal_step_id);

    for (k, m) in line.iter().enumerate() {
        let step = match m.role {
            Role::Assistant => {
                let last_of_round = line
                    .get(k + 1..)
                    .unwrap_or(&[])
                    .iter()
                    .take_while(|n| n.role != Role::User)
                    .all(|n| n.role != Role::Assistant && n.role != Role::Tool);
                assistant_step(m, last_of_round, &answers, goal_parent(m))
            }
            Role::Tool => {
                let call = m
                    .tool_call_id
                    .as_ref()
                    .map(|c| c.as_str())
                    .or_else(|| m.tool_results().next().map(|r| r.call_id.as_str()));
                let parent = call.and_then(|c| call_owner.get(c)).map(|id| (*id).to_owned()).or_else(|| goal_parent(m));
                result_step(m, parent)
            }
            Role::User | Role::System | Role::Summary | Role::Observation => continue,
        };
        steps.push((m.sequence, step));
    }

    // Goals: first message time and sequence over their subtree.
    let mut first_seq: BTreeMap<&GoalId, u64> = BTreeMap::new();
    let mut span: BTreeMap<&GoalId, (u64, u64)> = BTreeMap::new();
    for m in &line {
        let Some(goal) = m.goal_id.as_ref().and_then(|g| tree.goal(g)) else { continue };
        let mut ids = vec![goal.id.clone()];
        ids.extend(tree.ancestors(&goal.id));
        for id in ids {
            let Some(found) = tree.goal(&id) else { continue };
            let seq = first_seq.entry(&found.id).or_insert(m.sequence);
            *seq = (*seq).min(m.sequence);
            let (start, end) = span.entry(&found.id).or_insert((m.created_at_ms, m.created_at_ms));
            *start = (*start).min(m.created_at_ms);
            *end = (*end).max(m.created_at_ms);
        }
    }
    for goal in tree.goals() {
        let status = match goal.status {
            GoalStatus::Pending => StepStatus::Planned,
            GoalStatus::InProgress => StepStatus::InProgress,
            GoalStatus::Completed => StepStatus::Completed,
            GoalStatus::Abandoned if goal.cumulative_stats.message_count > 0 => StepStatus::Failed,
            GoalStatus::Abandoned => StepStatus::Skipped,
        };
        let mut data = BTreeMap::from([("description".to_owned(), json!(goal.description))]);
        if let Some(number) = tree.display_number(&goal.id) {
            data.insert("number".to_owned(), json!(number));
        }
        let stats = &goal.cumulative_stats;
        let times = span.get(&goal.id).copied();
        steps.push((
            first_seq.get(&goal.id).copied().unwrap_or(u64::MAX),
            Step {
                step_id: goal_step_id(&goal.id),
                step_type: StepType::Goal,
                status,
                sequence: None,
                parent_id: goal.parent_id.as_ref().map(goal_step_id),
                description: one_line(&goal.description, DESCRIPTION_CHARS),
                data,
                summary: None,
                duration_ms: times.map(|(start, end)| end - start),
                cost: (stats.total_cost > 0.0).then_some(stats.total_cost),
                tokens: (stats.total_tokens > 0).then_some(stats.total_tokens),
                created_at_ms: times.map(|(start, _)| start),
            },
        ));
    }
    pre_order(steps)
}

/// Order `(key, step)` pairs as a tree: roots and each node's children sorted by key (stable),
/// each node followed by its subtree. Steps whose parent is unknown are roots.
fn pre_order(steps: Vec<(u64, Step)>) -> Vec<Step> {
    let index: BTreeMap<String, usize> = steps.iter().enumerate().map(|(i, (_, s))| (s.step_id.clone(), i)).collect();
    let mut roots = Vec::new();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); steps.len()];
    for (i, (_, step)) in steps.iter().enumerate() {
        match step.parent_id.as_ref().and_then(|p| index.get(p)).copied().filter(|&p| p != i) {
            Some(p) => children[p].push(i),
            None => roots.push(i),
        }
    }
    let key = |i: &usize| steps[*i].0;
    roots.sort_by_key(key);
    for list in &mut children {
        list.sort_by_key(key);
    }
    let mut order = Vec::with_capacity(steps.len());
    let mut seen = vec![false; steps.len()];
    let mut stack: Vec<usize> = roots.into_iter().rev().collect();
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        order.push(i);
        stack.extend(children[i].iter().rev());
    }
    let mut slots: Vec<Option<Step>> = steps.into_iter().map(|(_, s)| Some(s)).collect();
    order.into_iter().filter_map(|i| slots.get_mut(i).and_then(Option::take)).collect()
}

fn assistant_step(
    m: &Message,
    last_of_round: bool,
    answers: &BTreeMap<&str, (ToolStatus, u64)>,
    parent: Option<String>,
) -> Step {
    let calls: Vec<_> = m.tool_calls().collect();
    let mut step = base_step(m, parent);
    if calls.is_empty() {
        let text = first_text(m);
        step.step_type = if last_of_round { StepType::Response } else { StepType::Thought };
        step.description = one_line(&text, DESCRIPTION_CHARS);
        step.data.insert("content".to_owned(), json!(one_line(&text, DATA_CHARS)));
        return step;
    }
    let mut failed = false;
    let mut missing = false;
    let mut last_answer = m.created_at_ms;
    for call in &calls {
        match answers.get(call.id.as_str()) {
            Some((ToolStatus::Error, at)) => {
                failed = true;
                last_answer = last_answer.max(*at);
            }
            Some((ToolStatus::Ok, at)) => last_answer = last_answer.max(*at),
            None => missing = true,
        }
    }
    step.status = if failed {
        StepStatus::Failed
    } else if missing {
        StepStatus::InProgress
    } else {
        StepStatus::Completed
    };
    if !missing {
        step.duration_ms = Some(last_answer - m.created_at_ms);
    }
    let evaluation = calls.iter().find_map(|c| evaluation_summary(&c.name, &c.arguments));
    if let Some(summary) = evaluation {
        step.step_type = StepType::Evaluation;
        step.description = one_line(&summary, DESCRIPTION_CHARS);
        step.summary = Some(summary);
        return step;
    }
    step.step_type = StepType::Action;
    let described: Vec<String> = calls
        .iter()
        .map(|c| match key_argument(&c.arguments) {
            Some(arg) => format!("{}({arg})", c.name),
            None => c.name.clone(),
        })
        .collect();
    step.description = one_line(&described.join(", "), DESCRIPTION_CHARS);
    let arguments = |raw: &str| serde_json::from_str::<Value>(raw).unwrap_or_else(|_| json!(raw));
    if let [call] = calls.as_slice() {
        step.data.insert("tool_name".to_owned(), json!(call.name));
        step.data.insert("arguments".to_owned(), arguments(&call.arguments));
    } else {
        let list: Vec<Value> =
            calls.iter().map(|c| json!({"tool_name": c.name, "arguments": arguments(&c.arguments)})).collect();
        step.data.insert("tool_calls".to_owned(), Value::Array(list));
    }
    step
}

fn result_step(m: &Message, parent: Option<String>) -> Step {
    let mut step = base_step(m, parent);
    step.step_type = StepType::Result;
    let results: Vec<_> = m.tool_results().collect();
    if results.iter().any(|r| r.status == ToolStatus::Error) {
        step.status = StepStatus::Failed;
    }
    let output = results.iter().map(|r| r.output.as_str()).collect::<Vec<_>>().join("\n");
    let first = output.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    let name = results.first().map_or(m.description.as_str(), |r| r.name.as_str());
    step.description = one_line(&format!("{name}: {first}"), DESCRIPTION_CHARS);
    step.data.insert("output".to_owned(), json!(one_line(&output, DATA_CHARS)));
    step
}

/// The summary when this call completes a goal: `goal` with `done`, or `step` with `complete`.
fn evaluation_summary(name: &str, arguments: &str) -> Option<String> {
    let args: Value = serde_json::from_str(arguments).ok()?;
    let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
    match name {
        GOAL_TOOL => text("done"),
        STEP_TOOL if args.get("complete").is_some_and(|c| c == &json!(true) || c == &json!("true")) => {
            Some(text("summary").unwrap_or_default())
        }
        _ => None,
    }
}

fn base_step(m: &Message, parent: Option<String>) -> Step {
    Step {
        step_id: m.id.to_string(),
        step_type: StepType::Thought,
        status: StepStatus::Completed,
        sequence: Some(m.sequence),
        parent_id: parent,
        description: String::new(),
        data: BTreeMap::new(),
        summary: None,
        duration_ms: None,
        cost: m.cost.map(clean_cost),
        tokens: m.tokens.map(u64::from),
        created_at_ms: Some(m.created_at_ms),
    }
}

/// The first non-blank text of a message, else its first reasoning.
fn first_text(m: &Message) -> String {
    let find = |reasoning: bool| {
        m.content.iter().find_map(|p| match p {
            ContentPart::Text { text } if !reasoning && !text.trim().is_empty() => Some(text.clone()),
            ContentPart::Reasoning { text, .. } if reasoning && !text.trim().is_empty() => Some(text.clone()),
            _ => None,
        })
    };
    find(false).or_else(|| find(true)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goals::fixtures::conversation::seed_004;

    #[test]
    fn messages_map_to_step_types_and_parents_by_seed_004() {
        let (tree, messages) = seed_004();
        let steps = step_view(&messages, &tree);
        let rows: Vec<String> = steps
            .iter()
            .map(|s| {
                let kind = serde_json::to_value(s.step_type).unwrap();
                let status = serde_json::to_value(s.status).unwrap();
                let parent = s.parent_id.as_deref().unwrap_or("-");
                format!(
                    "{} {} {} <- {parent}: {}",
                    s.step_id,
                    kind.as_str().unwrap(),
                    status.as_str().unwrap(),
                    s.description
                )
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                "goal-1 goal completed <- -: 探索代码库",
                "m000001 thought completed <- goal-1: 需要先了解项目结构",
                "m000002 action completed <- goal-1: glob_files(**/*.py)",
                "m000003 result completed <- m000002: glob_files: src/main.py",
                "m000004 evaluation completed <- goal-1: 主配置在 /src/config.yaml",
                "m000005 result completed <- m000004: step: completed 1 探索代码库",
                "goal-2 goal in_progress <- -: 修改配置",
                "m000006 action completed <- goal-2: read_file(config.yaml)",
                "m000007 result completed <- m000006: read_file: db_host=prod.db.com",
                "m000008 response completed <- goal-2: 配置已读取,下一步修改 db_host。",
                "goal-3 goal planned <- -: 运行测试",
            ]
        );
        let evaluation = &steps[4];
        assert_eq!(evaluation.summary.as_deref(), Some("主配置在 /src/config.yaml"));
        assert_eq!((evaluation.duration_ms, evaluation.tokens, evaluation.sequence), (Some(1000), Some(104), Some(4)));
        let goal = &steps[0];
        assert_eq!(
            (goal.created_at_ms, goal.duration_ms, goal.tokens),
            (Some(1_705_329_011_000), Some(4000), Some(515))
        );
    }

    #[test]
    fn unanswered_and_failed_calls_show_in_the_action_status() {
        let (tree, mut messages) = seed_004();
        messages.truncate(7); // the read's result is gone
        let steps = step_view(&messages, &tree);
        assert_eq!(steps.iter().find(|s| s.step_id == "m000006").unwrap().status, StepStatus::InProgress);
        let (tree, mut messages) = seed_004();
        if let ContentPart::ToolResult(result) = &mut messages[7].content[0] {
            result.status = ToolStatus::Error;
        }
        let steps = step_view(&messages, &tree);
        let failed: Vec<&str> =
            steps.iter().filter(|s| s.status == StepStatus::Failed).map(|s| s.step_id.as_str()).collect();
        assert_eq!(failed, vec!["m000006", "m000007"]);
    }
}
