//! Plans of other agents mapped onto the goal tree (issue 7 item 10). Each agent's plan tool
//! rewrites its whole list on every call:
//!
//! | tool | agent | arguments |
//! |---|---|---|
//! | `TodoWrite`, `todowrite`, `todo_write` | Claude Code, OpenCode, Qwen Code | `{"todos": [{"content", "status"}]}` |
//! | `write_todos` | Gemini CLI | `{"todos": [{"description", "status"}]}` |
//! | `update_plan` | Codex | `{"plan": [{"step", "status"}]}` |
//! | `todo__write` | goose | `{"content": "- [ ] a\n- [x] b"}`, a Markdown checklist |
//! | any tool | Cline (its focus chain) | `{…, "task_progress": "- [ ] a\n- [x] b"}` |
//!
//! [`sync_plan`] reconciles the list with the top-level goals: it matches by text, adds new
//! items, completes, abandons, reopens, and focuses the item in progress.

use serde_json::Value;

use super::text::{fill, one_line, text};
use super::tool::parse_arguments;
use super::{Goal, GoalStatus, GoalTree, GoalType, PlanRevision, ToolError, ToolOutcome};
use crate::model::GoalId;

/// The abandon reason of an item the agent cancelled.
pub const CANCELLED_REASON: &str = "cancelled in the agent's plan";

/// The abandon reason of an open goal a revised plan no longer holds.
pub const REVISED_REASON: &str = "revised out of the agent's plan";

/// One item of an agent's plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanItem {
    pub text: String,
    pub status: PlanStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlanStatus {
    Pending,
    InProgress,
    Completed,
    Cancelled,
}

/// The items of a plan-tool call: `None` when `tool_name` is no plan tool (see the module's
/// table; any case) and the call carries no `task_progress` checklist; `Err` naming what is
/// malformed. Never guesses: one bad item fails the whole call.
pub fn parse_plan_call(tool_name: &str, arguments: &str) -> Option<Result<Vec<PlanItem>, String>> {
    let (list, field) = match tool_name.trim().to_ascii_lowercase().as_str() {
        "todowrite" | "todo_write" => ("todos", "content"),
        "write_todos" => ("todos", "description"),
        "update_plan" => ("plan", "step"),
        "todo__write" => ("content", ""),
        _ if arguments.contains(TASK_PROGRESS) => (TASK_PROGRESS, ""),
        _ => return None,
    };
    let tool = tool_name.trim();
    let args = match parse_arguments(tool, arguments) {
        Ok(args) => args,
        Err(e) => return Some(Err(e.message)),
    };
    let items = match args.get(list) {
        Some(Value::String(text)) if field.is_empty() => return Some(checklist(tool, list, text)),
        // Cline's checklist is optional on any tool: a call without it is no plan call.
        None if list == TASK_PROGRESS => return None,
        Some(Value::Array(items)) if !field.is_empty() => items,
        Some(_) if field.is_empty() => return Some(Err(format!("{tool}: `{list}` must be text"))),
        Some(_) => return Some(Err(format!("{tool}: `{list}` must be an array"))),
        None => return Some(Err(format!("{tool}: `{list}` is missing"))),
    };
    Some(items.iter().enumerate().map(|(k, item)| parse_item(tool, k + 1, item, field)).collect())
}

/// The argument in which Cline passes its focus chain (its plan) with any tool call.
const TASK_PROGRESS: &str = "task_progress";

/// The items of a Markdown checklist (`tool`'s argument `list`): each `- [ ] text` (or `*`, `+`,
/// a numbered item) is pending, `[x]` completed, `[-]` or `[~]` in progress; other lines
/// (headings, notes) are not items. A checklist without one item is an error.
fn checklist(tool: &str, list: &str, text: &str) -> Result<Vec<PlanItem>, String> {
    let items: Vec<PlanItem> = text
        .lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let rest = line.strip_prefix(['-', '*', '+']).or_else(|| {
                let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                line[digits..].strip_prefix('.').filter(|_| digits > 0)
            })?;
            let rest = rest.trim_start().strip_prefix('[')?;
            let (mark, text) = rest.split_once(']')?;
            let status = match mark.trim() {
                "" => PlanStatus::Pending,
                "x" | "X" => PlanStatus::Completed,
                "-" | "~" => PlanStatus::InProgress,
                _ => return None,
            };
            let text = text.trim();
            (!text.is_empty()).then(|| PlanItem { text: text.to_owned(), status })
        })
        .collect();
    if items.is_empty() {
        return Err(format!("{tool}: `{list}` has no checklist item (`- [ ] …`)"));
    }
    Ok(items)
}

fn parse_item(tool: &str, n: usize, item: &Value, field: &str) -> Result<PlanItem, String> {
    let Value::Object(item) = item else { return Err(format!("{tool}: item {n} is not an object")) };
    let text = match item.get(field) {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_owned(),
        _ => return Err(format!("{tool}: item {n} has no `{field}` text")),
    };
    let status = match item.get("status").and_then(Value::as_str).map(str::trim) {
        Some("pending") => PlanStatus::Pending,
        Some("in_progress") => PlanStatus::InProgress,
        Some("completed") => PlanStatus::Completed,
        Some("cancelled" | "canceled") => PlanStatus::Cancelled,
        Some(other) => return Err(format!("{tool}: item {n} has an unknown status `{other}`")),
        None => return Err(format!("{tool}: item {n} has no `status`")),
    };
    Ok(PlanItem { text, status })
}

/// Reconcile the tree with `items`, the agent's whole plan. Items match top-level goals by
/// text (exact, then ignoring case and whitespace); new items are added at the top level in
/// list order; completed items are done (summary: the text), cancelled ones abandoned, pending
/// ones reopened or released; the first item in progress takes the focus (kept on a sub-goal of
/// it). With none in progress the focus stays, unless its goal was completed.
///
/// A list that differs from the previous plan before that plan's end, adding items or dropping
/// open ones, is a revision (R6.9): the goals before the first difference are kept as they
/// were, the open goals no longer listed are abandoned (removed when they never ran), and the
/// revision is recorded with its event. Statuses stay the agent's: a revised item it calls
/// done is done. Appending items, or dropping finished ones, is no revision. All or nothing:
/// on error the tree is unchanged.
pub fn sync_plan(tree: &mut GoalTree, items: &[PlanItem]) -> Result<ToolOutcome, ToolError> {
    tree.transact(|tree| {
        let max = tree.config().max_description_chars.saturating_sub(1).max(1);
        let descriptions: Vec<String> = items.iter().map(|i| one_line(&i.text, max)).collect();
        let mut ids = match_items(tree, items, &descriptions);
        let revision = revision_of(tree, items, &descriptions, &ids);
        let original = tree.current_id().cloned();
        let mut out = ToolOutcome::default();
        let mut lines = Vec::new();
        add_new(tree, items, &descriptions, &mut ids, &mut out, &mut lines)?;
        for (k, item) in items.iter().enumerate() {
            let Some(id) = ids[k].clone() else { continue };
            let status = tree.goal(&id).map(|g| g.status);
            match (item.status, status) {
                (PlanStatus::Completed, Some(GoalStatus::Pending | GoalStatus::InProgress)) => {
                    let index = focus(tree, &id)?;
                    let label = tree.label(index);
                    let completed = tree.done_current("plan", &descriptions[k])?;
                    lines.push(fill("completed", &[("goal", &label)]));
                    out.completed.extend(completed);
                }
                (PlanStatus::Cancelled, Some(GoalStatus::Pending | GoalStatus::InProgress)) => {
                    abandon(tree, &id, CANCELLED_REASON, &mut out, &mut lines)?;
                }
                (PlanStatus::Pending | PlanStatus::InProgress, Some(GoalStatus::Completed)) => {
                    set_status(tree, &id, GoalStatus::Pending);
                    if let Some(index) = tree.index_of(&id) {
                        lines.push(format!("reopened {}", tree.label(index)));
                    }
                }
                _ => {}
            }
        }
        if let Some(revision) = &revision {
            for (id, _) in &revision.dropped {
                abandon(tree, id, REVISED_REASON, &mut out, &mut lines)?;
            }
        }
        let target =
            items.iter().zip(&ids).find(|(i, _)| i.status == PlanStatus::InProgress).and_then(|(_, id)| id.clone());
        let open = |tree: &GoalTree, id: &GoalId| {
            tree.goal(id).is_some_and(|g| matches!(g.status, GoalStatus::Pending | GoalStatus::InProgress))
        };
        let keep = original.clone().filter(|o| open(tree, o));
        let focus_on = match (target, keep) {
            (Some(t), Some(o)) if tree.ancestors(&o).contains(&t) => Some(o),
            (Some(t), _) => Some(t),
            (None, keep) => keep,
        };
        if let Some(id) = focus_on
            && tree.current_id() != Some(&id)
        {
            let index = focus(tree, &id)?;
            if original.as_ref() != Some(&id) {
                lines.push(fill("focused", &[("goal", &tree.label(index))]));
            }
        }
        release_pending(tree, items, &ids);
        if let Some(revision) = revision {
            lines.push(format!("the plan was revised from item {}", revision.from_item));
            let listed = items.iter().zip(&ids).filter(|(i, _)| i.status != PlanStatus::Cancelled);
            let listed: Vec<GoalId> = listed.filter_map(|(_, id)| id.clone()).collect();
            let (kept, revised) = listed.split_at((revision.from_item - 1).min(listed.len()));
            tree.push_revision(PlanRevision {
                from_item: revision.from_item,
                kept: kept.to_vec(),
                revised: revised.to_vec(),
                dropped: revision.dropped.into_iter().map(|(_, description)| description).collect(),
            });
        }
        if lines.is_empty() {
            lines.push("the plan is unchanged".to_owned());
        }
        out.current = tree.current_id().cloned();
        let todo = tree.to_todo_string();
        let plan = if todo.is_empty() { text("no_goals").to_owned() } else { todo };
        out.text = format!("{}\n\n{plan}", lines.join("\n"));
        Ok(out)
    })
}

/// A revision [`sync_plan`] is making: the first item that differs, and the open goals the new
/// list drops (id, description).
struct Revising {
    from_item: usize,
    dropped: Vec<(GoalId, String)>,
}

/// Whether `items` (matched to goals as `ids`, before new ones are added) revise the previous
/// plan: the top-level normal goals not abandoned, in order.
fn revision_of(
    tree: &GoalTree,
    items: &[PlanItem],
    descriptions: &[String],
    ids: &[Option<GoalId>],
) -> Option<Revising> {
    let previous: Vec<&Goal> =
        tree.children(None).filter(|g| g.goal_type == GoalType::Normal && g.status != GoalStatus::Abandoned).collect();
    let listed = items.iter().zip(descriptions).filter(|(i, _)| i.status != PlanStatus::Cancelled);
    let listed: Vec<String> = listed.map(|(_, d)| normalise(d)).collect();
    let first = (0..previous.len()).find(|&k| listed.get(k) != Some(&normalise(&previous[k].description)))?;
    let added = items.iter().zip(ids).any(|(i, id)| id.is_none() && i.status != PlanStatus::Cancelled);
    let open = |g: &&Goal| matches!(g.status, GoalStatus::Pending | GoalStatus::InProgress);
    let dropped: Vec<(GoalId, String)> = previous
        .iter()
        .filter(|g| open(g) && !ids.contains(&Some(g.id.clone())))
        .map(|g| (g.id.clone(), g.description.clone()))
        .collect();
    (added || !dropped.is_empty()).then_some(Revising { from_item: first + 1, dropped })
}

/// The top-level normal goal of each item: exact descriptions first, then normalised ones.
/// Each goal matches one item at most; only cancelled items match abandoned goals.
fn match_items(tree: &GoalTree, items: &[PlanItem], descriptions: &[String]) -> Vec<Option<GoalId>> {
    let candidates: Vec<_> = tree.children(None).filter(|g| g.goal_type == GoalType::Normal).collect();
    let mut used = vec![false; candidates.len()];
    let mut out = vec![None; items.len()];
    let exact = |a: &str, b: &str| a == b;
    let loose = |a: &str, b: &str| normalise(a) == normalise(b);
    for same in [&exact as &dyn Fn(&str, &str) -> bool, &loose] {
        for (k, item) in items.iter().enumerate() {
            if out[k].is_some() {
                continue;
            }
            let found = candidates.iter().enumerate().position(|(c, g)| {
                !used[c]
                    && (item.status == PlanStatus::Cancelled || g.status != GoalStatus::Abandoned)
                    && same(&g.description, &descriptions[k])
            });
            if let Some(c) = found {
                used[c] = true;
                out[k] = Some(candidates[c].id.clone());
            }
        }
    }
    out
}

fn normalise(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// Add the unmatched items (cancelled ones are skipped) right after the previous item's goal,
/// or before the first listed goal, or at the end.
fn add_new(
    tree: &mut GoalTree,
    items: &[PlanItem],
    descriptions: &[String],
    ids: &mut [Option<GoalId>],
    out: &mut ToolOutcome,
    lines: &mut Vec<String>,
) -> Result<(), ToolError> {
    for k in 0..items.len() {
        if ids[k].is_some() || items[k].status == PlanStatus::Cancelled {
            continue;
        }
        let after = ids[..k].iter().rev().flatten().find_map(|id| tree.index_of(id));
        let index = match after {
            Some(i) => i + tree.descendants(i).len() + 1,
            None => ids[k..].iter().flatten().filter_map(|id| tree.index_of(id)).min().unwrap_or(tree.goals().len()),
        };
        let added = tree.insert_goals("plan", None, index, &[descriptions[k].as_str()], "")?;
        ids[k] = added.first().cloned();
        out.added.extend(added);
    }
    let labels: Vec<String> = out.added.iter().filter_map(|id| tree.index_of(id)).map(|i| tree.label(i)).collect();
    if !labels.is_empty() {
        lines.push(fill("added", &[("goals", &labels.join(", "))]));
    }
    Ok(())
}

/// Abandon the goal `id` for `reason` (removed when it never ran), and report it.
fn abandon(
    tree: &mut GoalTree,
    id: &GoalId,
    reason: &str,
    out: &mut ToolOutcome,
    lines: &mut Vec<String>,
) -> Result<(), ToolError> {
    let index = focus(tree, id)?;
    let label = tree.label(index);
    let abandoned = tree.abandon_current("plan", reason)?;
    if abandoned.removed {
        lines.push(fill("removed", &[("goal", &label)]));
        out.removed.extend(abandoned.goals);
    } else {
        lines.push(fill("abandoned", &[("goal", &label)]));
        out.abandoned.extend(abandoned.goals);
    }
    Ok(())
}

fn focus(tree: &mut GoalTree, id: &GoalId) -> Result<usize, ToolError> {
    let index = tree.index_of(id).ok_or_else(|| ToolError::new(format!("plan: no goal with id {id}")))?;
    tree.focus_index("plan", index)?;
    Ok(index)
}

/// Set a goal's status (clearing the summary when it reopens) and report it.
fn set_status(tree: &mut GoalTree, id: &GoalId, status: GoalStatus) {
    let Some(index) = tree.index_of(id) else { return };
    let goal = &mut tree.goals_mut()[index];
    if goal.status == GoalStatus::Completed {
        goal.summary = None;
    }
    goal.status = status;
    tree.emit_updated(id, std::slice::from_ref(id));
}

/// Pending items whose goal stays in progress off the focus (it ran) go back to pending, as
/// the agent's plan says; a goal with an open sub-goal keeps its status.
fn release_pending(tree: &mut GoalTree, items: &[PlanItem], ids: &[Option<GoalId>]) {
    let mut chain = Vec::new();
    if let Some(current) = tree.current_id().cloned() {
        chain = tree.ancestors(&current);
        chain.push(current);
    }
    for (item, id) in items.iter().zip(ids) {
        let Some(id) = id else { continue };
        let in_progress = tree.goal(id).is_some_and(|g| g.status == GoalStatus::InProgress);
        let open_child = tree.children(Some(id)).any(|c| c.status == GoalStatus::InProgress);
        if item.status == PlanStatus::Pending && in_progress && !chain.contains(id) && !open_child {
            set_status(tree, id, GoalStatus::Pending);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goals::fixtures::test_support::{id, statuses};

    fn plan(items: &[(&str, PlanStatus)]) -> Vec<PlanItem> {
        items.iter().map(|(t, s)| PlanItem { text: (*t).to_owned(), status: *s }).collect()
    }

    fn sync(tree: &mut GoalTree, items: &[(&str, PlanStatus)]) -> ToolOutcome {
        let out = sync_plan(tree, &plan(items)).unwrap();
        tree.validate().unwrap();
        out
    }

    use PlanStatus::{Cancelled, Completed, InProgress, Pending};

    fn err_of(name: &str, args: &str) -> String {
        parse_plan_call(name, args).unwrap().unwrap_err()
    }

    #[test]
    fn parses_every_agents_shape_and_names_what_is_malformed() {
        let claude = r#"{"todos":[{"content":"a","status":"in_progress","activeForm":"A-ing"}]}"#;
        assert_eq!(parse_plan_call("TodoWrite", claude), Some(Ok(plan(&[("a", InProgress)]))));
        let codex =
            r#"{"explanation":"x","plan":[{"step":" b ","status":"completed"},{"step":"c","status":"pending"}]}"#;
        assert_eq!(parse_plan_call("update_plan", codex), Some(Ok(plan(&[("b", Completed), ("c", Pending)]))));
        let open = r#"{"todos":[{"content":"d","status":"cancelled","priority":"high","id":"1"}]}"#;
        assert_eq!(parse_plan_call("todowrite", open), Some(Ok(plan(&[("d", Cancelled)]))));
        let qwen = r#"{"todos":[{"id":"1","content":"e","status":"pending"}]}"#;
        assert_eq!(parse_plan_call("todo_write", qwen), Some(Ok(plan(&[("e", Pending)]))));
        let gemini = r#"{"todos":[{"description":"f","status":"in_progress"}]}"#;
        assert_eq!(parse_plan_call("write_todos", gemini), Some(Ok(plan(&[("f", InProgress)]))));
        let goose = r##"{"content":"# Fix\n- [x] read calc.py\n  * [ ] fix total\n1. [-] run tests\nnotes: [x] no"}"##;
        let items = [("read calc.py", Completed), ("fix total", Pending), ("run tests", InProgress)];
        assert_eq!(parse_plan_call("todo__write", goose), Some(Ok(plan(&items))));
        assert_eq!(
            parse_plan_call("todo__write", r#"{"content":"just notes"}"#).unwrap().unwrap_err(),
            "todo__write: `content` has no checklist item (`- [ ] …`)"
        );
        assert_eq!(err_of("todo__write", r#"{"content":[]}"#), "todo__write: `content` must be text");
        // Cline's focus chain rides on any tool call, when it is there.
        let cline = r#"{"path":"calc.py","diff":"…","task_progress":"- [x] read calc.py\n- [ ] fix total"}"#;
        let items = [("read calc.py", Completed), ("fix total", Pending)];
        assert_eq!(parse_plan_call("replace_in_file", cline), Some(Ok(plan(&items))));
        assert_eq!(parse_plan_call("execute_command", r#"{"command":"grep -r task_progress ."}"#), None);
        assert_eq!(
            err_of("read_file", r#"{"path":"a","task_progress":"nothing yet"}"#),
            "read_file: `task_progress` has no checklist item (`- [ ] …`)"
        );
        assert_eq!(
            err_of("write_todos", r#"{"todos":[{"status":"pending"}]}"#),
            "write_todos: item 1 has no `description` text"
        );
        assert_eq!(parse_plan_call("Bash", "{}"), None);
        assert_eq!(parse_plan_call("goal", "{}"), None);
        let err = |name: &str, args: &str| parse_plan_call(name, args).unwrap().unwrap_err();
        assert_eq!(err("TodoWrite", "{}"), "TodoWrite: `todos` is missing");
        assert_eq!(err("update_plan", r#"{"plan": "x"}"#), "update_plan: `plan` must be an array");
        assert_eq!(err("TodoWrite", r#"{"todos": ["x"]}"#), "TodoWrite: item 1 is not an object");
        assert_eq!(
            err("TodoWrite", r#"{"todos": [{"status": "pending"}]}"#),
            "TodoWrite: item 1 has no `content` text"
        );
        assert_eq!(
            err("update_plan", r#"{"plan": [{"step": "a", "status": "done"}]}"#),
            "update_plan: item 1 has an unknown status `done`"
        );
        assert!(err("TodoWrite", "{").starts_with("TodoWrite: the arguments are not valid JSON"));
    }

    #[test]
    fn adds_completes_focuses_and_relisting_changes_nothing() {
        let mut tree = GoalTree::new("m");
        let out = sync(&mut tree, &[("a", InProgress), ("b", Pending), ("c", Pending)]);
        assert_eq!((out.added.clone(), out.current.clone()), (vec![id(1), id(2), id(3)], Some(id(1))));
        assert_eq!(statuses(&tree), vec!["1:in_progress", "2:pending", "3:pending"]);
        tree.record_message(&id(1), 10, 0.0, &[]).unwrap();
        let out = sync(&mut tree, &[("A", Completed), ("b", InProgress), ("c", Pending)]);
        assert_eq!((out.completed, out.current), (vec![id(1)], Some(id(2))));
        assert_eq!(tree.goal(&id(1)).unwrap().summary.as_deref(), Some("A"), "the item text");
        assert_eq!(statuses(&tree), vec!["1:completed", "2:in_progress", "3:pending"]);
        let events = tree.events().last_id();
        let out = sync(&mut tree, &[("a", Completed), ("b", InProgress), ("c", Pending)]);
        assert!(out.text.starts_with("the plan is unchanged"), "{}", out.text);
        assert_eq!((tree.events().last_id(), out.current), (events, Some(id(2))));
    }

    #[test]
    fn cancels_inserts_in_order_drops_what_leaves_the_plan_and_reopens() {
        let mut tree = GoalTree::new("m");
        sync(&mut tree, &[("a", InProgress), ("b", Pending), ("c", Pending)]);
        tree.record_message(&id(1), 10, 0.0, &[]).unwrap();
        // `a` ran: cancelled, it is kept as abandoned; `b` never ran: it is removed.
        let out = sync(&mut tree, &[("a", Cancelled), ("b", Cancelled), ("x", Pending), ("c", Pending)]);
        assert_eq!((out.abandoned, out.removed, out.current), (vec![id(1)], vec![id(2)], None));
        assert_eq!(tree.goal(&id(1)).unwrap().summary.as_deref(), Some(CANCELLED_REASON));
        assert_eq!(statuses(&tree), vec!["1:abandoned", "4:pending", "3:pending"]);
        // `c` left the plan: revised out, and removed (it never ran). With nothing in progress
        // the focus stays where it was.
        let out = sync(&mut tree, &[("x", InProgress)]);
        assert_eq!(out.removed, vec![id(3)]);
        let out = sync(&mut tree, &[("x", Pending), ("y", Pending)]);
        assert_eq!(out.current, Some(id(4)));
        assert_eq!(statuses(&tree), vec!["1:abandoned", "4:in_progress", "5:pending"]);
        // Completing the focused goal drops the focus; listing it again reopens it.
        let out = sync(&mut tree, &[("x", Completed), ("y", Pending)]);
        assert_eq!(out.current, None);
        let out = sync(&mut tree, &[("x", InProgress), ("y", Pending)]);
        assert!(out.text.starts_with("reopened 1 x\nfocused 1 x"), "{}", out.text);
        assert_eq!(tree.goal(&id(4)).unwrap().summary, None);
    }

    #[test]
    fn a_rewritten_plan_keeps_the_finished_prefix_and_records_the_revision() {
        let mut tree = GoalTree::new("m");
        let five = |first: PlanStatus, second: PlanStatus, third: (&'static str, PlanStatus)| {
            [("a", first), ("b", second), third, ("d", Pending), ("e", Pending)]
        };
        sync(&mut tree, &five(InProgress, Pending, ("c", Pending)));
        tree.record_message(&id(1), 10, 0.0, &[]).unwrap();
        sync(&mut tree, &five(Completed, InProgress, ("c", Pending)));
        tree.record_message(&id(2), 10, 0.0, &[]).unwrap();
        sync(&mut tree, &five(Completed, Completed, ("c", InProgress)));
        tree.record_message(&id(3), 10, 0.0, &[]).unwrap();
        assert!(tree.revisions().is_empty(), "status changes are no revision");

        let out = sync(&mut tree, &five(Completed, Completed, ("c, done another way", InProgress)));
        assert!(out.text.contains("the plan was revised from item 3"), "{}", out.text);
        assert_eq!((out.abandoned, out.added, out.current), (vec![id(3)], vec![id(6)], Some(id(6))));
        assert_eq!(
            statuses(&tree),
            vec!["1:completed", "2:completed", "6:in_progress", "3:abandoned", "4:pending", "5:pending"]
        );
        assert_eq!(tree.goal(&id(3)).unwrap().summary.as_deref(), Some(REVISED_REASON));
        let revision = PlanRevision {
            from_item: 3,
            kept: vec![id(1), id(2)],
            revised: vec![id(6), id(4), id(5)],
            dropped: vec!["c".to_owned()],
        };
        assert_eq!(tree.revisions(), std::slice::from_ref(&revision));
        let last = tree.events().since(0).last().unwrap().kind.clone();
        assert_eq!(last, crate::goals::EventKind::PlanRevised { revision });

        // Appending an item, or leaving finished ones out, is no revision.
        let six = [("c, done another way", InProgress), ("d", Pending), ("e", Pending), ("f", Pending)];
        sync(&mut tree, &[[("a", Completed), ("b", Completed)].as_slice(), &six].concat());
        sync(&mut tree, &six);
        assert_eq!(tree.revisions().len(), 1);
        let json = serde_json::to_string(&tree).unwrap();
        assert_eq!(GoalTree::from_json(&json).unwrap().revisions(), tree.revisions(), "goal.json keeps them");
    }

    #[test]
    fn a_refused_sync_leaves_the_tree_as_it_was() {
        let mut tree = GoalTree::new("m").with_config(crate::goals::GoalConfig { max_goals: 2, ..Default::default() });
        sync(&mut tree, &[("a", InProgress)]);
        let before = tree.clone();
        assert!(sync_plan(&mut tree, &plan(&[("a", Completed), ("b", Pending), ("c", Pending)])).is_err());
        assert_eq!(tree, before);
    }
}
