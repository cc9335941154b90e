//! The tools the model calls (R6.2, R6.5, R6.6): `goal`, `step`, `read_progress` and
//! `explore`. Each takes its JSON arguments and either changes the tree as a whole or, on
//! error, leaves it untouched and says what to do instead.

use std::collections::BTreeMap;

use serde_json::Value;

use super::numbering::Numbered;
use super::text::{fill, text};
use super::{GoalStatus, GoalTree, GoalType, Placement};
use crate::model::{BranchId, GoalId};

pub const GOAL_TOOL: &str = "goal";
pub const STEP_TOOL: &str = "step";
pub const READ_PROGRESS_TOOL: &str = "read_progress";
pub const EXPLORE_TOOL: &str = "explore";

/// Whether this plan call sets where the work goes (a focus, a new goal or plan): the message
/// making it belongs to the goal focused once it ran. Ending a goal alone does not.
pub fn focuses(tool: &str, arguments: &str) -> bool {
    let keys: &[&str] = match tool {
        GOAL_TOOL => &["focus", "add"],
        STEP_TOOL => &["focus", "plan"],
        _ => return false,
    };
    parse_arguments(tool, arguments).is_ok_and(|v| keys.iter().any(|k| v.get(k).is_some_and(|x| !x.is_null())))
}

/// A refused tool call: the message is the tool result the model reads and can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    pub message: String,
}

impl ToolError {
    pub fn new(message: impl Into<String>) -> Self {
        ToolError { message: message.into() }
    }
}

/// What a tool call did: the text the model reads, and the goals the engine must act on
/// (compact the spans of completed and abandoned goals, R6.3/R6.4; run branches, R6.5).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolOutcome {
    /// The tool result for the model: what changed, then the plan.
    pub text: String,
    pub added: Vec<GoalId>,
    /// Completed goals: the focused one first, then cascaded ancestors.
    pub completed: Vec<GoalId>,
    /// Goals marked abandoned (kept in the data, hidden from the prompt).
    pub abandoned: Vec<GoalId>,
    /// Goals deleted because they never ran.
    pub removed: Vec<GoalId>,
    /// The abandoned goal the added goals replace: its summary goes into the first message of
    /// the first added goal (R6.4).
    pub replacing: Option<GoalId>,
    /// The focused goal after the call.
    pub current: Option<GoalId>,
    /// Branches `explore` started, for the host to run.
    pub branches: Vec<BranchId>,
}

/// Dispatch a call by tool name, the arguments as the model wrote them.
pub fn call_tool(tree: &mut GoalTree, name: &str, arguments: &str) -> Result<ToolOutcome, ToolError> {
    let args = parse_arguments(name, arguments)?;
    match name {
        GOAL_TOOL => goal_tool(tree, &args),
        STEP_TOOL => step_tool(tree, &args),
        READ_PROGRESS_TOOL => read_progress_tool(tree, &args),
        EXPLORE_TOOL => explore_tool(tree, &args),
        other => Err(ToolError::new(format!(
            "unknown tool `{other}`; the plan tools are {GOAL_TOOL}, {STEP_TOOL}, {READ_PROGRESS_TOOL}, {EXPLORE_TOOL}"
        ))),
    }
}

/// Parse raw arguments: blank means none; a JSON string holding a JSON object (arguments
/// encoded twice) is read as that object.
pub fn parse_arguments(tool: &str, raw: &str) -> Result<Value, ToolError> {
    if raw.trim().is_empty() {
        return Ok(Value::Null);
    }
    let value: Value = serde_json::from_str(raw)
        .map_err(|e| ToolError::new(format!("{tool}: the arguments are not valid JSON ({e}); send a JSON object")))?;
    if let Value::String(inner) = &value
        && let Ok(object @ Value::Object(_)) = serde_json::from_str::<Value>(inner)
    {
        return Ok(object);
    }
    Ok(value)
}

/// `goal` (R6.2): `done` or `abandon` first, then `add`, then `focus`. With `abandon`, added
/// goals replace the abandoned one (its siblings, where it stood) and the first takes the focus.
pub fn goal_tool(tree: &mut GoalTree, args: &Value) -> Result<ToolOutcome, ToolError> {
    let args = Arguments::read(GOAL_TOOL, args, &["add", "done", "abandon", "focus", "reason"])?;
    let done = args.string("done")?;
    let abandon = args.string("abandon")?;
    let add = args.list("add")?;
    let focus = args.number("focus")?;
    let reason = args.string("reason")?;
    if reason.is_some() && add.is_none() {
        return Err(ToolError::new("goal: reason goes with add"));
    }
    if done.is_none() && abandon.is_none() && add.is_none() && focus.is_none() {
        return Err(ToolError::new("goal: give at least one of add, done, abandon, focus"));
    }
    if done.is_some() && abandon.is_some() {
        return Err(ToolError::new("goal: done and abandon exclude each other; call one of them"));
    }
    tree.transact(|tree| {
        let mut out = ToolOutcome::default();
        let mut lines = Vec::new();
        if let Some(summary) = done {
            let label = current_label(tree);
            out.completed = tree.done_current("done", summary)?;
            report_completed(tree, &out.completed, label, &mut lines);
        }
        let mut slot = None;
        if let Some(reason) = abandon {
            let label = current_label(tree);
            let abandoned = tree.abandon_current("abandon", reason)?;
            let section = if abandoned.removed { "removed" } else { "abandoned" };
            lines.push(fill(section, &[("goal", &label)]));
            if abandoned.removed {
                out.removed = abandoned.goals;
            } else {
                out.abandoned = abandoned.goals;
            }
            out.replacing = Some(abandoned.goal).filter(|_| !abandoned.removed);
            slot = Some(abandoned.slot);
        }
        if let Some(items) = &add {
            let items: Vec<&str> = items.iter().map(String::as_str).collect();
            let reason = reason.unwrap_or("");
            out.added = match slot.clone() {
                Some((parent, index)) => tree.insert_goals("add", parent, index, &items, reason)?,
                None => tree.add_goals(&items, reason, Placement::UnderCurrent)?,
            };
            lines.push(added_line(tree, &out.added));
        }
        if out.added.is_empty() {
            out.replacing = None;
        }
        let focused = if let Some(number) = &focus {
            let index = tree.resolve("focus", number)?;
            tree.focus_index("focus", index)?;
            Some(index)
        } else if slot.is_some()
            && let Some(index) = out.added.first().and_then(|id| tree.index_of(id))
        {
            tree.focus_index("add", index)?;
            Some(index)
        } else {
            None
        };
        Ok(conclude(tree, out, lines, focused))
    })
}

/// `step` (seed 004): `complete` (with `summary`) first, then `plan` (appended at the top
/// level), then `focus` (a number or an exact description).
pub fn step_tool(tree: &mut GoalTree, args: &Value) -> Result<ToolOutcome, ToolError> {
    let args = Arguments::read(STEP_TOOL, args, &["plan", "focus", "complete", "summary"])?;
    let plan = args.list("plan")?;
    let focus = args.number("focus")?;
    let complete = args.flag("complete")?;
    let summary = args.string("summary")?;
    if summary.is_some() && !complete {
        return Err(ToolError::new("step: summary goes with complete: true"));
    }
    if complete && summary.is_none() {
        return Err(ToolError::new("step: complete needs a summary of what the step achieved"));
    }
    if plan.is_none() && focus.is_none() && !complete {
        return Err(ToolError::new("step: give at least one of plan, focus, complete"));
    }
    tree.transact(|tree| {
        let mut out = ToolOutcome::default();
        let mut lines = Vec::new();
        if let Some(summary) = summary {
            let label = current_label(tree);
            out.completed = tree.done_current("complete", summary)?;
            report_completed(tree, &out.completed, label, &mut lines);
        }
        if let Some(items) = &plan {
            let items: Vec<&str> = items.iter().map(String::as_str).collect();
            out.added = tree.insert_goals("plan", None, tree.goals().len(), &items, "")?;
            lines.push(added_line(tree, &out.added));
        }
        let focused = match &focus {
            Some(wanted) => {
                let index = resolve_step(tree, wanted)?;
                tree.focus_index("focus", index)?;
                Some(index)
            }
            None => None,
        };
        Ok(conclude(tree, out, lines, focused))
    })
}

/// `read_progress` (R6.6): the todo list, read on demand; takes no arguments.
pub fn read_progress_tool(tree: &GoalTree, args: &Value) -> Result<ToolOutcome, ToolError> {
    Arguments::read(READ_PROGRESS_TOOL, args, &[])?;
    Ok(ToolOutcome { text: todo_or_none(tree), current: tree.current_id().cloned(), ..ToolOutcome::default() })
}

/// `explore` (R6.5): start one branch per description; the host runs them, then calls
/// [`GoalTree::finish_branch`] for each and [`GoalTree::merge`], whose summary is the result.
pub fn explore_tool(tree: &mut GoalTree, args: &Value) -> Result<ToolOutcome, ToolError> {
    let args = Arguments::read(EXPLORE_TOOL, args, &["branches", "background"])?;
    let Some(descriptions) = args.list("branches")? else {
        return Err(ToolError::new("explore: branches is missing; give one description per branch"));
    };
    let background = args.string("background")?;
    if let Some(background) = background {
        let max = tree.config().max_summary_chars.saturating_mul(4);
        tree.check_len(EXPLORE_TOOL, "background", background, max)?;
    }
    let items: Vec<&str> = descriptions.iter().map(String::as_str).collect();
    let branches = tree.start_explore(&items, background)?;
    let listed: Vec<String> =
        branches.iter().zip(&descriptions).map(|(id, d)| format!("{id} ({})", d.trim())).collect();
    let line = fill("explore_started", &[("branches", &listed.join(", "))]);
    Ok(ToolOutcome {
        text: line,
        added: tree.running_explore().into_iter().collect(),
        current: tree.current_id().cloned(),
        branches,
        ..ToolOutcome::default()
    })
}

/// The arguments object of one call, nulls dropped, unknown names refused.
struct Arguments<'a> {
    tool: &'static str,
    values: BTreeMap<&'a str, &'a Value>,
}

impl<'a> Arguments<'a> {
    fn read(tool: &'static str, args: &'a Value, known: &[&str]) -> Result<Self, ToolError> {
        let mut values = BTreeMap::new();
        match args {
            Value::Null => {}
            Value::Object(map) => {
                for (name, value) in map {
                    if !known.contains(&name.as_str()) {
                        let expected = if known.is_empty() {
                            "it takes none".to_owned()
                        } else {
                            format!("the arguments are {}", known.join(", "))
                        };
                        return Err(ToolError::new(format!("{tool}: unknown argument `{name}`; {expected}")));
                    }
                    if !value.is_null() {
                        values.insert(name.as_str(), value);
                    }
                }
            }
            other => {
                return Err(ToolError::new(format!(
                    "{tool}: the arguments must be a JSON object, not {}",
                    kind(other)
                )));
            }
        }
        Ok(Arguments { tool, values })
    }

    fn string(&self, name: &str) -> Result<Option<&'a str>, ToolError> {
        match self.values.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(other) => Err(self.wrong(name, "a string", other)),
        }
    }

    /// A goal number: a string, or a JSON number (`2`, `2.1`).
    fn number(&self, name: &str) -> Result<Option<String>, ToolError> {
        match self.values.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(other) => Err(self.wrong(name, "a goal number such as \"2.1\"", other)),
        }
    }

    /// A list of descriptions: an array of strings, or one string split at commas.
    fn list(&self, name: &str) -> Result<Option<Vec<String>>, ToolError> {
        match self.values.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.split([',', '，']).map(str::to_owned).collect())),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(self.wrong(name, "strings", other)),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(other) => Err(self.wrong(name, "a string or an array of strings", other)),
        }
    }

    /// A boolean; `"true"`/`"false"` strings are read too. Absent is false.
    fn flag(&self, name: &str) -> Result<bool, ToolError> {
        match self.values.get(name) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(Value::String(s)) if s.trim().eq_ignore_ascii_case("true") => Ok(true),
            Some(Value::String(s)) if s.trim().eq_ignore_ascii_case("false") => Ok(false),
            Some(other) => Err(self.wrong(name, "true or false", other)),
        }
    }

    fn wrong(&self, name: &str, expected: &str, got: &Value) -> ToolError {
        ToolError::new(format!("{}: `{name}` must be {expected}, not {}", self.tool, kind(got)))
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The focused goal as `2.1 description` (empty when none is focused).
fn current_label(tree: &GoalTree) -> String {
    tree.current_id().and_then(|id| tree.index_of(id)).map(|i| tree.label(i)).unwrap_or_default()
}

fn report_completed(tree: &GoalTree, completed: &[GoalId], first: String, lines: &mut Vec<String>) {
    lines.push(fill("completed", &[("goal", &first)]));
    for id in completed.iter().skip(1) {
        if let Some(index) = tree.index_of(id) {
            lines.push(fill("cascaded", &[("goal", &tree.label(index))]));
        }
    }
}

/// `added: 2.1 a, 2.2 b`, the goals a call added.
fn added_line(tree: &GoalTree, added: &[GoalId]) -> String {
    let labels: Vec<String> = added.iter().filter_map(|id| tree.index_of(id)).map(|i| tree.label(i)).collect();
    fill("added", &[("goals", &labels.join(", "))])
}

/// A tool's answer, finished: the goal it focused, or else where to go next after a goal was
/// completed; then the focused goal and the text with the plan.
fn conclude(tree: &GoalTree, mut out: ToolOutcome, mut lines: Vec<String>, focused: Option<usize>) -> ToolOutcome {
    if let Some(index) = focused {
        lines.push(fill("focused", &[("goal", &tree.label(index))]));
    } else if !out.completed.is_empty()
        && let Some(next) = next_open(tree)
    {
        lines.push(fill("next", &[("goal", &tree.label(next))]));
    }
    out.current = tree.current_id().cloned();
    out.text = finish(lines, tree);
    out
}

/// The first open normal goal shown, not focused, with no open sub-goal: where to go next.
fn next_open(tree: &GoalTree) -> Option<usize> {
    let open = |status: GoalStatus| matches!(status, GoalStatus::Pending | GoalStatus::InProgress);
    tree.numbered(false).into_iter().map(|n| n.index).find(|&i| {
        let Some(goal) = tree.goals().get(i) else { return false };
        goal.goal_type == GoalType::Normal
            && open(goal.status)
            && tree.current_id() != Some(&goal.id)
            && !tree.children(Some(&goal.id)).any(|c| open(c.status))
    })
}

/// A step by number, else by exact description among the goals shown.
fn resolve_step(tree: &GoalTree, wanted: &str) -> Result<usize, ToolError> {
    let by_number = tree.resolve("focus", wanted);
    if by_number.is_ok() {
        return by_number;
    }
    let matches: Vec<Numbered> = tree
        .numbered(false)
        .into_iter()
        .filter(|n| tree.goals().get(n.index).is_some_and(|g| g.description == wanted.trim()))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.index),
        [] => by_number,
        several => {
            let numbers: Vec<&str> = several.iter().map(|n| n.number.as_str()).collect();
            Err(ToolError::new(format!(
                "focus: {} steps are described `{}`; use the number ({})",
                several.len(),
                wanted.trim(),
                numbers.join(", ")
            )))
        }
    }
}

fn todo_or_none(tree: &GoalTree) -> String {
    let todo = tree.to_todo_string();
    if todo.is_empty() { text("no_goals").to_owned() } else { todo }
}

/// What changed, a blank line, then the plan.
fn finish(lines: Vec<String>, tree: &GoalTree) -> String {
    let mut text = lines.join("\n");
    text.push_str("\n\n");
    text.push_str(&todo_or_none(tree));
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::goals::fixtures::test_support::{id, run, statuses, tree_after};

    #[test]
    fn raw_arguments_parse_leniently_but_never_guess() {
        assert_eq!(parse_arguments("goal", "  ").unwrap(), Value::Null);
        assert_eq!(parse_arguments("goal", r#""{\"focus\": \"1\"}""#).unwrap(), json!({"focus": "1"}));
        assert_eq!(parse_arguments("goal", r#""just text""#).unwrap(), json!("just text"));
        assert!(
            parse_arguments("goal", "{").unwrap_err().message.starts_with("goal: the arguments are not valid JSON")
        );
    }

    #[test]
    fn goal_reports_what_changed_then_the_plan() {
        let mut tree = tree_after(&[]);
        let out = run(&mut tree, r#"{"add": ["a, with comma", "b"], "reason": "asked for"}"#);
        assert_eq!(out.text, "added 1 a, with comma, 2 b\n\n[ ] 1. a, with comma\n[ ] 2. b");
        assert_eq!(tree.goal(&id(2)).unwrap().reason, "asked for");
        let out = run(&mut tree, r#"{"focus": 1}"#);
        assert_eq!(out.text, "focused 1 a, with comma\n\n[→] 1. a, with comma  ← current\n[ ] 2. b");
        let out = run(&mut tree, r#"{"done": "done it"}"#);
        assert_eq!(out.text, "completed 1 a, with comma\nnext: focus 2 b\n\n[✓] 1. a, with comma\n[ ] 2. b");
        assert_eq!(goal_tool(&mut tree, &json!({"reason": "x"})).unwrap_err().message, "goal: reason goes with add");
        let out = run(&mut tree, r#"{"focus": "2", "add": "b1, b2"}"#);
        // add runs before focus: the new goals go under the goal focused before the call.
        assert_eq!(out.added, vec![id(3), id(4)]);
        assert_eq!(tree.goal(&id(3)).unwrap().parent_id, None);
    }

    #[test]
    fn a_replacement_takes_the_place_of_a_goal_that_never_ran() {
        let mut tree = tree_after(&[r#"{"add": "a, b, c"}"#, r#"{"focus": "2"}"#]);
        let out = run(&mut tree, r#"{"abandon": "wrong", "add": "b2"}"#);
        assert_eq!((out.removed.clone(), out.added.clone(), out.replacing.clone()), (vec![id(2)], vec![id(4)], None));
        assert_eq!(
            out.text,
            "removed 2 b (it never ran)\nadded 2 b2\nfocused 2 b2\n\n[ ] 1. a\n[→] 2. b2  ← current\n[ ] 3. c"
        );
        assert_eq!(statuses(&tree), vec!["1:pending", "4:in_progress", "3:pending"]);
    }

    #[test]
    fn step_reads_flags_and_plans_at_the_top_level() {
        let mut tree = tree_after(&[r#"{"add": "a", "focus": "1"}"#]);
        let out = step_tool(&mut tree, &json!({"plan": "b, c", "complete": "false"})).unwrap();
        assert_eq!(out.added, vec![id(2), id(3)]);
        assert_eq!(tree.goal(&id(2)).unwrap().parent_id, None);
        assert_eq!(
            step_tool(&mut tree, &json!({"summary": "x"})).unwrap_err().message,
            "step: summary goes with complete: true"
        );
        assert_eq!(
            step_tool(&mut tree, &json!({"complete": 1, "summary": "x"})).unwrap_err().message,
            "step: `complete` must be true or false, not a number"
        );
        let out = step_tool(&mut tree, &json!({"complete": "true", "summary": "a done", "focus": "c"})).unwrap();
        assert_eq!((out.completed, out.current), (vec![id(1)], Some(id(3))));
        tree.add_goals(&["c"], "", Placement::TopLevel).unwrap();
        assert_eq!(
            step_tool(&mut tree, &json!({"focus": "c"})).unwrap_err().message,
            "focus: 2 steps are described `c`; use the number (3, 4)"
        );
    }

    #[test]
    fn explore_and_read_progress() {
        let mut tree = tree_after(&[r#"{"add": "a"}"#]);
        assert_eq!(read_progress_tool(&tree, &Value::Null).unwrap().text, "[ ] 1. a");
        assert_eq!(read_progress_tool(&GoalTree::new("m"), &json!({})).unwrap().text, "(no goals yet)");
        let out = explore_tool(&mut tree, &json!({"branches": ["jwt", "sessions"], "background": "auth"})).unwrap();
        assert_eq!(out.text, "started branches A (jwt), B (sessions)");
        assert_eq!((out.added, out.branches.len()), (vec![id(2)], 2));
        assert_eq!(
            explore_tool(&mut tree, &json!({"branches": "x", "background": 3})).unwrap_err().message,
            "explore: `background` must be a string, not a number"
        );
    }
}
