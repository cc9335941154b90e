//! The changes of the `goal` tool (R6.2, R6.4): add, focus, done (with cascade), abandon.
//!
//! Status rules, kept after every change (see [`GoalTree::validate`]):
//! - the focused goal and all its ancestors are `in_progress`;
//! - a goal left by the focus stays `in_progress` when it (or a descendant) has messages, and
//!   goes back to `pending` when nothing ran under it;
//! - a completed goal has only completed or abandoned children;
//! - nothing under an abandoned goal is pending or in progress.

use super::events::{EventKind, GoalUpdates};
use super::text::one_line;
use super::{GoalStatus, GoalTree, GoalType, ToolError};
use crate::model::GoalId;
use crate::prompt::template::thousands;

/// Where [`GoalTree::add_goals`] puts new goals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// Children of the focused goal, after its other children; top level when none is focused.
    UnderCurrent,
    /// At the end of the top level.
    TopLevel,
    /// Siblings right after this goal (replacements of an abandoned goal).
    After(GoalId),
}

/// What [`GoalTree::abandon`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Abandoned {
    pub goal: GoalId,
    /// The goal never ran, so it and its descendants were deleted; otherwise it was marked
    /// abandoned (with its unfinished descendants) and kept.
    pub removed: bool,
    /// Every goal deleted or marked, the goal first.
    pub goals: Vec<GoalId>,
    /// Where replacements go: the parent, and the list index right after the goal (or where it
    /// stood, when it was deleted).
    pub(crate) slot: (Option<GoalId>, usize),
}

impl GoalTree {
    /// Add goals (R6.2) with an optional reason; the first error leaves the tree unchanged.
    pub fn add_goals(
        &mut self,
        descriptions: &[&str],
        reason: &str,
        placement: Placement,
    ) -> Result<Vec<GoalId>, ToolError> {
        let (parent, index) = match placement {
            Placement::UnderCurrent => (self.current_id().cloned(), self.goals().len()),
            Placement::TopLevel => (None, self.goals().len()),
            Placement::After(id) => {
                let at = self.index_of(&id).ok_or_else(|| ToolError::new(format!("add: no goal with id {id}")))?;
                (self.goals()[at].parent_id.clone(), at + 1)
            }
        };
        self.insert_goals("add", parent, index, descriptions, reason)
    }

    /// Insert goals under `parent` at list position `index`, emitting `goal_added` for each.
    pub(crate) fn insert_goals(
        &mut self,
        op: &str,
        parent: Option<GoalId>,
        index: usize,
        descriptions: &[&str],
        reason: &str,
    ) -> Result<Vec<GoalId>, ToolError> {
        let descriptions = self.check_descriptions(op, descriptions)?;
        let reason = reason.trim();
        self.check_len(op, "reason", reason, self.config().max_summary_chars)?;
        let config = self.config().clone();
        if self.goals().len() + descriptions.len() > config.max_goals {
            return Err(ToolError::new(format!(
                "{op}: the tree holds {} goals and may hold at most {}; finish the plan with fewer goals",
                self.goals().len(),
                config.max_goals
            )));
        }
        let depth = parent.as_ref().map_or(0, |p| self.ancestors(p).len() + 1) + 1;
        if depth > config.max_depth {
            return Err(ToolError::new(format!(
                "{op}: the goals would be {depth} levels deep; at most {}; add them higher up",
                config.max_depth
            )));
        }
        self.transact(|tree| {
            let mut ids = Vec::new();
            let start = index.min(tree.goals().len());
            for (at, description) in (start..).zip(descriptions) {
                let mut goal = tree.new_goal(parent.clone(), GoalType::Normal, description);
                goal.reason = reason.to_owned();
                ids.push(goal.id.clone());
                tree.goals_mut().insert(at, goal);
                tree.emit_added(at);
            }
            Ok(ids)
        })
    }

    /// Focus the goal numbered `number` (R6.2): it and its ancestors become in progress.
    pub fn focus(&mut self, number: &str) -> Result<GoalId, ToolError> {
        let index = self.resolve("focus", number)?;
        self.focus_index("focus", index)
    }

    pub(crate) fn focus_index(&mut self, op: &str, index: usize) -> Result<GoalId, ToolError> {
        let goal = self.goals().get(index).ok_or_else(|| ToolError::new(format!("{op}: no such goal")))?;
        let id = goal.id.clone();
        if goal.status == GoalStatus::Completed {
            return Err(ToolError::new(format!(
                "{op}: goal {} is already completed; {}",
                self.label(index),
                self.numbers_hint()
            )));
        }
        if goal.status == GoalStatus::Abandoned {
            return Err(ToolError::new(format!("{op}: goal {} was abandoned", goal.description)));
        }
        if goal.goal_type != GoalType::Normal {
            return Err(ToolError::new(format!(
                "{op}: goal {} records an exploration; focus a normal goal",
                self.label(index)
            )));
        }
        if self.current_id() == Some(&id) {
            return Ok(id);
        }
        self.transact(|tree| {
            tree.set_current(Some(id.clone()));
            let mut changed = vec![id.clone()];
            for other in tree.settle() {
                if !changed.contains(&other) {
                    changed.push(other);
                }
            }
            tree.emit_updated(&id, &changed);
            Ok(id)
        })
    }

    /// Complete the focused goal with `summary` (R6.2); every ancestor whose children are then
    /// all completed or abandoned completes too. Returns the completed goals, the focused one
    /// first. The focus moves to the nearest ancestor still open, or to none.
    pub fn done(&mut self, summary: &str) -> Result<Vec<GoalId>, ToolError> {
        self.done_current("done", summary)
    }

    pub(crate) fn done_current(&mut self, op: &str, summary: &str) -> Result<Vec<GoalId>, ToolError> {
        let Some(id) = self.current_id().cloned() else {
            return Err(ToolError::new(format!("{op}: no goal is in progress; focus one first")));
        };
        let summary = summary.trim();
        if summary.is_empty() {
            return Err(ToolError::new(format!("{op}: the summary is empty; say in one line what the goal achieved")));
        }
        self.check_len(op, "summary", summary, self.config().max_summary_chars)?;
        let open: Vec<String> = self
            .children(Some(&id))
            .filter(|c| matches!(c.status, GoalStatus::Pending | GoalStatus::InProgress))
            .filter_map(|c| self.index_of(&c.id).map(|i| self.label(i)))
            .collect();
        if !open.is_empty() {
            let index = self.index_of(&id).unwrap_or_default();
            return Err(ToolError::new(format!(
                "{op}: goal {} still has unfinished sub-goals ({}); finish or abandon them first",
                self.label(index),
                open.join("; ")
            )));
        }
        self.transact(|tree| {
            tree.complete(&id, summary.to_owned());
            let mut completed = vec![id.clone()];
            let mut next = tree.goal(&id).and_then(|g| g.parent_id.clone());
            while let Some(parent) = next {
                let finished: Vec<&str> = tree
                    .children(Some(&parent))
                    .filter(|c| c.status != GoalStatus::Abandoned)
                    .filter_map(|c| (c.status == GoalStatus::Completed).then_some(c.summary.as_deref().unwrap_or("")))
                    .collect();
                let all_done = tree
                    .children(Some(&parent))
                    .all(|c| matches!(c.status, GoalStatus::Completed | GoalStatus::Abandoned));
                let open = tree.goal(&parent).is_some_and(|g| g.status != GoalStatus::Completed);
                if !(all_done && open) {
                    break;
                }
                let joined = finished.into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join("; ");
                let max = tree.config().max_summary_chars;
                tree.complete(&parent, one_line(&joined, max));
                completed.push(parent.clone());
                next = tree.goal(&parent).and_then(|g| g.parent_id.clone());
            }
            let focus = tree.ancestors(&id).into_iter().find(|a| completed.iter().all(|c| c != a));
            tree.set_current(focus);
            let mut changed = completed.clone();
            for other in tree.settle() {
                if !changed.contains(&other) {
                    changed.push(other);
                }
            }
            tree.emit_updated(&id, &changed);
            Ok(completed)
        })
    }

    /// Abandon the focused goal with `reason` (R6.4). A goal under which nothing ran (no
    /// message, no completed descendant) is deleted with its descendants; otherwise it is
    /// marked abandoned with the reason as its summary, its unfinished descendants with it, and
    /// kept. The focus moves to its parent.
    pub fn abandon(&mut self, reason: &str) -> Result<Abandoned, ToolError> {
        self.abandon_current("abandon", reason)
    }

    pub(crate) fn abandon_current(&mut self, op: &str, reason: &str) -> Result<Abandoned, ToolError> {
        let Some(id) = self.current_id().cloned() else {
            return Err(ToolError::new(format!("{op}: no goal is in progress; focus one first")));
        };
        let reason = reason.trim();
        if reason.is_empty() {
            return Err(ToolError::new(format!("{op}: the reason is empty; say why the goal is given up")));
        }
        self.check_len(op, "reason", reason, self.config().max_summary_chars)?;
        if let Some(running) = self.running_explore()
            && self.ancestors(&running).contains(&id)
        {
            return Err(ToolError::new(format!(
                "{op}: an exploration is still running under this goal; merge it first"
            )));
        }
        self.transact(|tree| {
            let index = tree.index_of(&id).ok_or_else(|| ToolError::new(format!("{op}: no goal with id {id}")))?;
            let parent = tree.goals()[index].parent_id.clone();
            let below = tree.descendants(index);
            let ran = tree.goals()[index].cumulative_stats.message_count > 0
                || below.iter().any(|&i| tree.goals()[i].status == GoalStatus::Completed);
            let mut goals = vec![id.clone()];
            goals.extend(below.iter().map(|&i| tree.goals()[i].id.clone()));
            tree.set_current(parent.clone());
            if ran {
                let list = tree.goals_mut();
                list[index].status = GoalStatus::Abandoned;
                list[index].summary = Some(reason.to_owned());
                let mut marked = vec![id.clone()];
                for &i in &below {
                    if matches!(list[i].status, GoalStatus::Pending | GoalStatus::InProgress) {
                        list[i].status = GoalStatus::Abandoned;
                        marked.push(list[i].id.clone());
                    }
                }
                for other in tree.settle() {
                    if !marked.contains(&other) {
                        marked.push(other);
                    }
                }
                tree.emit_updated(&id, &marked);
                Ok(Abandoned { goal: id, removed: false, goals, slot: (parent, index + 1) })
            } else {
                let list = tree.goals_mut();
                for &i in below.iter().rev() {
                    list.remove(i);
                }
                list.remove(index);
                let settled = tree.settle();
                let affected_goals = tree.affected(&settled, true);
                let current_id = tree.current_id().cloned();
                let branch_id = tree.branch_id().cloned();
                tree.push_event(EventKind::GoalRemoved {
                    branch_id,
                    goal_id: id.clone(),
                    removed: goals.clone(),
                    affected_goals,
                    current_id,
                });
                Ok(Abandoned { goal: id, removed: true, goals, slot: (parent, index) })
            }
        })
    }

    /// Restore the status rules after the focus moved; returns the goals whose status changed.
    pub(crate) fn settle(&mut self) -> Vec<GoalId> {
        let mut chain: Vec<GoalId> = Vec::new();
        if let Some(current) = self.current_id().cloned() {
            chain = self.ancestors(&current);
            chain.insert(0, current);
        }
        let mut changed = Vec::new();
        for goal in self.goals_mut().iter_mut() {
            if goal.goal_type != GoalType::Normal {
                continue;
            }
            let on_chain = chain.contains(&goal.id);
            let status = match goal.status {
                GoalStatus::Pending if on_chain => GoalStatus::InProgress,
                GoalStatus::InProgress if !on_chain && goal.cumulative_stats.message_count == 0 => GoalStatus::Pending,
                other => other,
            };
            if status != goal.status {
                goal.status = status;
                changed.push(goal.id.clone());
            }
        }
        changed
    }

    /// Set a goal completed with its summary.
    fn complete(&mut self, id: &GoalId, summary: String) {
        if let Some(index) = self.index_of(id) {
            let goal = &mut self.goals_mut()[index];
            goal.status = GoalStatus::Completed;
            goal.summary = if summary.is_empty() { None } else { Some(summary) };
        }
    }

    /// `goal_updated` about `id`, reporting `changed` (status and summary included).
    pub(crate) fn emit_updated(&mut self, id: &GoalId, changed: &[GoalId]) {
        let Some(goal) = self.goal(id) else { return };
        let updates = GoalUpdates { status: goal.status, summary: goal.summary.clone() };
        let affected_goals = self.affected(changed, true);
        let kind = EventKind::GoalUpdated {
            branch_id: self.branch_id().cloned(),
            goal_id: id.clone(),
            updates,
            affected_goals,
            current_id: self.current_id().cloned(),
        };
        self.push_event(kind);
    }

    /// Trimmed, non-empty descriptions within the configured length.
    pub(crate) fn check_descriptions<'a>(&self, op: &str, descriptions: &[&'a str]) -> Result<Vec<&'a str>, ToolError> {
        if descriptions.is_empty() {
            return Err(ToolError::new(format!("{op}: the description is empty")));
        }
        let several = descriptions.len() > 1;
        let mut out = Vec::with_capacity(descriptions.len());
        for (k, description) in descriptions.iter().enumerate() {
            let description = description.trim();
            let what = if several { format!("description {}", k + 1) } else { "description".to_owned() };
            if description.is_empty() {
                return Err(ToolError::new(format!("{op}: the {what} is empty")));
            }
            self.check_len(op, &what, description, self.config().max_description_chars)?;
            out.push(description);
        }
        Ok(out)
    }

    /// `{op}: the {what} is 10,000 characters; at most 500` when `text` is too long.
    pub(crate) fn check_len(&self, op: &str, what: &str, text: &str, max: usize) -> Result<(), ToolError> {
        let chars = text.chars().count();
        if chars > max {
            return Err(ToolError::new(format!(
                "{op}: the {what} is {} characters; at most {}",
                thousands(chars as u64),
                thousands(max as u64)
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goals::GoalConfig;
    use crate::goals::fixtures::test_support::{id, run, statuses, tree_after};

    #[test]
    fn placement_decides_parent_and_order() {
        let mut tree = tree_after(&[r#"{"add": "a, b"}"#, r#"{"focus": "1"}"#]);
        assert_eq!(tree.add_goals(&["a1"], "", Placement::UnderCurrent).unwrap(), vec![id(3)]);
        assert_eq!(tree.add_goals(&["c"], "", Placement::TopLevel).unwrap(), vec![id(4)]);
        assert_eq!(tree.add_goals(&["a0"], "why", Placement::After(id(1))).unwrap(), vec![id(5)]);
        let numbers: Vec<String> = tree.display_numbers().into_iter().map(|(g, n)| format!("{n}={g}")).collect();
        assert_eq!(numbers, vec!["1=1", "1.1=3", "2=5", "3=2", "4=4"]);
        assert_eq!(tree.goal(&id(3)).unwrap().parent_id, Some(id(1)));
        assert_eq!(tree.goal(&id(5)).unwrap().reason, "why");
        assert_eq!(tree.add_goals(&["x"], "", Placement::After(id(9))).unwrap_err().message, "add: no goal with id 9");
        tree.validate().unwrap();
    }

    #[test]
    fn focus_starts_a_goal_and_its_ancestors_and_releases_goals_that_never_ran() {
        let mut tree = tree_after(&[r#"{"add": "a, b"}"#, r#"{"focus": "1"}"#, r#"{"add": "a1, a2"}"#]);
        assert_eq!(statuses(&tree), vec!["1:in_progress", "2:pending", "3:pending", "4:pending"]);
        run(&mut tree, r#"{"focus": "1.2"}"#);
        assert_eq!(statuses(&tree), vec!["1:in_progress", "2:pending", "3:pending", "4:in_progress"]);
        // Leaving goals under which nothing ran puts them back to pending.
        run(&mut tree, r#"{"focus": "2"}"#);
        assert_eq!(statuses(&tree), vec!["1:pending", "2:in_progress", "3:pending", "4:pending"]);
        // A goal that ran stays in progress when the focus leaves it, and so do its ancestors.
        run(&mut tree, r#"{"focus": "1.1"}"#);
        tree.record_message(&id(3), 1, 0.0, &[]).unwrap();
        run(&mut tree, r#"{"focus": "2"}"#);
        assert_eq!(statuses(&tree), vec!["1:in_progress", "2:in_progress", "3:in_progress", "4:pending"]);
        // Focusing the focused goal changes nothing and says nothing.
        let events = tree.events().last_id();
        assert_eq!(tree.focus("2").unwrap(), id(2));
        assert_eq!(tree.events().last_id(), events);
        // Numbers may be written `2.` or with spaces.
        assert_eq!(tree.focus(" 1.1. ").unwrap(), id(3));
    }

    #[test]
    fn done_completes_cascades_and_moves_the_focus_up() {
        let mut tree = tree_after(&[r#"{"add": "a"}"#, r#"{"focus": "1"}"#, r#"{"add": "a1"}"#, r#"{"focus": "1.1"}"#]);
        run(&mut tree, r#"{"add": "a1x, a1y"}"#);
        run(&mut tree, r#"{"focus": "1.1.1"}"#);
        assert_eq!(tree.done("x").unwrap(), vec![id(3)]);
        assert_eq!(tree.current_id(), Some(&id(2)));
        run(&mut tree, r#"{"focus": "1.1.2"}"#);
        assert_eq!(tree.done("y").unwrap(), vec![id(4), id(2), id(1)]);
        assert_eq!(tree.current_id(), None);
        assert_eq!(statuses(&tree), vec!["1:completed", "2:completed", "3:completed", "4:completed"]);
        assert_eq!(tree.goal(&id(1)).unwrap().summary.as_deref(), Some("x; y"));
        assert_eq!(tree.done("again").unwrap_err().message, "done: no goal is in progress; focus one first");
    }

    #[test]
    fn done_checks_the_summary() {
        let mut tree = tree_after(&[r#"{"add": "a"}"#, r#"{"focus": "1"}"#])
            .with_config(GoalConfig { max_summary_chars: 5, ..GoalConfig::default() });
        assert_eq!(tree.done("123456").unwrap_err().message, "done: the summary is 6 characters; at most 5");
        assert_eq!(tree.done(" 12345 ").unwrap(), vec![id(1)]);
        assert_eq!(tree.goal(&id(1)).unwrap().summary.as_deref(), Some("12345"));
    }

    #[test]
    fn abandon_deletes_goals_that_never_ran() {
        let mut tree = tree_after(&[r#"{"add": "a, b"}"#, r#"{"focus": "1"}"#, r#"{"add": "a1, a2"}"#]);
        let abandoned = tree.abandon("wrong plan").unwrap();
        assert!(abandoned.removed);
        assert_eq!(abandoned.goals, vec![id(1), id(3), id(4)]);
        assert_eq!(abandoned.slot, (None, 0));
        assert_eq!(statuses(&tree), vec!["2:pending"]);
        assert_eq!(tree.current_id(), None);
        tree.validate().unwrap();
    }

    #[test]
    fn abandon_marks_goals_that_ran_and_keeps_them() {
        let mut tree = tree_after(&[r#"{"add": "a, b"}"#, r#"{"focus": "1"}"#, r#"{"add": "a1, a2, a3"}"#]);
        run(&mut tree, r#"{"focus": "1.1"}"#);
        tree.record_message(&id(3), 1, 0.0, &[]).unwrap();
        run(&mut tree, r#"{"done": "a1 ok", "focus": "1.2"}"#);
        run(&mut tree, r#"{"focus": "1"}"#);
        let abandoned = tree.abandon("dead end").unwrap();
        assert!(!abandoned.removed);
        assert_eq!(abandoned.slot, (None, 1));
        // The completed sub-goal stays completed; the open ones are abandoned with the goal.
        assert_eq!(statuses(&tree), vec!["1:abandoned", "2:pending", "3:completed", "4:abandoned", "5:abandoned"]);
        assert_eq!(tree.goal(&id(1)).unwrap().summary.as_deref(), Some("dead end"));
        assert_eq!(tree.display_numbers(), vec![(id(2), "1".to_owned())]);
        // Abandoning a sub-goal hands the focus to its parent.
        run(&mut tree, r#"{"focus": "1"}"#);
        run(&mut tree, r#"{"add": "b1"}"#);
        run(&mut tree, r#"{"focus": "1.1"}"#);
        tree.record_message(&id(6), 1, 0.0, &[]).unwrap();
        tree.abandon("no").unwrap();
        assert_eq!(tree.current_id(), Some(&id(2)));
        tree.validate().unwrap();
    }

    #[test]
    fn limits_on_count_depth_and_length() {
        let config = GoalConfig { max_goals: 3, max_depth: 2, max_description_chars: 4, ..GoalConfig::default() };
        let mut tree = GoalTree::new("m").with_config(config);
        tree.add_goals(&["a", "b"], "", Placement::UnderCurrent).unwrap();
        assert_eq!(
            tree.add_goals(&["c", "d"], "", Placement::UnderCurrent).unwrap_err().message,
            "add: the tree holds 2 goals and may hold at most 3; finish the plan with fewer goals"
        );
        tree.focus("1").unwrap();
        tree.add_goals(&["a1"], "", Placement::UnderCurrent).unwrap();
        tree.focus("1.1").unwrap();
        let mut bigger = tree.clone().with_config(GoalConfig { max_goals: 9, max_depth: 2, ..GoalConfig::default() });
        assert_eq!(
            bigger.add_goals(&["deep"], "", Placement::UnderCurrent).unwrap_err().message,
            "add: the goals would be 3 levels deep; at most 2; add them higher up"
        );
        assert_eq!(
            tree.add_goals(&["ok", "toolong"], "", Placement::TopLevel).unwrap_err().message,
            "add: the description 2 is 7 characters; at most 4"
        );
    }
}
