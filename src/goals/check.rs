//! The invariants of a goal tree, checked when `goal.json` is loaded and by the tests after
//! every change. Cycles cannot be built through the tools; a hand-edited file is refused.

use std::collections::BTreeSet;

use super::stats::add_costs;
use super::{BranchStatus, GoalStatus, GoalTree, GoalType};
use crate::model::GoalId;

impl GoalTree {
    /// Check every invariant; the error names the first goal that breaks one.
    pub fn validate(&self) -> Result<(), String> {
        self.check_ids()?;
        self.check_links()?;
        self.check_statuses()?;
        self.check_stats()?;
        self.check_explorations()
    }

    fn check_ids(&self) -> Result<(), String> {
        let mut seen = BTreeSet::new();
        for goal in self.goals() {
            let n: u64 = goal.id.as_str().parse().map_err(|_| format!("goal id `{}` is not a number", goal.id))?;
            if n == 0 || n >= self.next_goal_id() {
                return Err(format!("goal id {} is outside 1..{}", goal.id, self.next_goal_id()));
            }
            if !seen.insert(n) {
                return Err(format!("goal id {} is used twice", goal.id));
            }
            if goal.branch_id.as_ref() != self.branch_id() {
                return Err(format!("goal {} belongs to another branch", goal.id));
            }
        }
        Ok(())
    }

    fn check_links(&self) -> Result<(), String> {
        for (index, goal) in self.goals().iter().enumerate() {
            let mut seen: BTreeSet<&GoalId> = BTreeSet::from([&goal.id]);
            let mut next = goal.parent_id.as_ref();
            while let Some(parent) = next {
                if !seen.insert(parent) {
                    return Err(format!("goal {} is its own ancestor (a parent cycle)", goal.id));
                }
                let Some(found) = self.goal(parent) else {
                    return Err(format!("goal {}'s ancestor {parent} does not exist", goal.id));
                };
                next = found.parent_id.as_ref();
            }
            if let Some(parent) = goal.parent_id.as_ref()
                && self.index_of(parent).is_none_or(|p| p >= index)
            {
                return Err(format!("goal {} stands before its parent {parent}", goal.id));
            }
        }
        Ok(())
    }

    fn check_statuses(&self) -> Result<(), String> {
        let mut chain = Vec::new();
        if let Some(current) = self.current_id() {
            let Some(goal) = self.goal(current) else {
                return Err(format!("the current goal {current} does not exist"));
            };
            if goal.goal_type != GoalType::Normal {
                return Err(format!("the current goal {current} is not a normal goal"));
            }
            chain = self.ancestors(current);
            chain.push(current.clone());
        }
        for id in &chain {
            if self.goal(id).is_some_and(|g| g.status != GoalStatus::InProgress) {
                return Err(format!("goal {id} is focused or holds the focus but is not in progress"));
            }
        }
        for goal in self.goals() {
            let children: Vec<_> = self.children(Some(&goal.id)).collect();
            match goal.status {
                GoalStatus::Completed | GoalStatus::Abandoned => {
                    if let Some(open) =
                        children.iter().find(|c| matches!(c.status, GoalStatus::Pending | GoalStatus::InProgress))
                    {
                        return Err(format!(
                            "goal {} is {:?} but its sub-goal {} is open",
                            goal.id, goal.status, open.id
                        ));
                    }
                }
                GoalStatus::InProgress
                    if goal.goal_type == GoalType::Normal
                        && !chain.contains(&goal.id)
                        && goal.cumulative_stats.message_count == 0 =>
                {
                    return Err(format!("goal {} is in progress but unfocused and nothing ran under it", goal.id));
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn check_stats(&self) -> Result<(), String> {
        for goal in self.goals() {
            let mut messages = u128::from(goal.self_stats.message_count);
            let mut tokens = u128::from(goal.self_stats.total_tokens);
            let mut cost = goal.self_stats.total_cost;
            for child in self.children(Some(&goal.id)) {
                messages += u128::from(child.cumulative_stats.message_count);
                tokens += u128::from(child.cumulative_stats.total_tokens);
                cost = add_costs(cost, child.cumulative_stats.total_cost);
            }
            let clamp = |n: u128| u64::try_from(n).unwrap_or(u64::MAX);
            let c = &goal.cumulative_stats;
            if clamp(messages) != c.message_count || clamp(tokens) != c.total_tokens {
                return Err(format!("goal {}'s cumulative stats are not its own plus its sub-goals'", goal.id));
            }
            if (cost - c.total_cost).abs() > 1e-9 * cost.abs().max(1.0) {
                return Err(format!("goal {}'s cumulative cost is not its own plus its sub-goals'", goal.id));
            }
        }
        Ok(())
    }

    fn check_explorations(&self) -> Result<(), String> {
        let mut ids = BTreeSet::new();
        for branch in self.branches() {
            if !ids.insert(&branch.id) {
                return Err(format!("branch {} is listed twice", branch.id));
            }
            let start = self.goal(&branch.explore_start_id).filter(|g| g.goal_type == GoalType::ExploreStart);
            let Some(start) = start else {
                return Err(format!("branch {}'s exploration {} does not exist", branch.id, branch.explore_start_id));
            };
            if !start.branch_ids.contains(&branch.id) {
                return Err(format!("exploration {} does not list its branch {}", start.id, branch.id));
            }
            if branch.status == BranchStatus::Exploring && start.status != GoalStatus::InProgress {
                return Err(format!("branch {} is exploring but its exploration {} is over", branch.id, start.id));
            }
        }
        let mut running = 0;
        for goal in self.goals() {
            match goal.goal_type {
                GoalType::ExploreStart => {
                    if goal.branch_ids.is_empty() {
                        return Err(format!("exploration {} has no branches", goal.id));
                    }
                    if let Some(missing) = goal.branch_ids.iter().find(|b| self.branch(b).is_none()) {
                        return Err(format!("exploration {}'s branch {missing} does not exist", goal.id));
                    }
                    if goal.status == GoalStatus::InProgress {
                        running += 1;
                    }
                }
                GoalType::ExploreMerge => {
                    let start = goal.explore_start_id.as_ref().and_then(|id| self.goal(id));
                    if !start
                        .is_some_and(|s| s.goal_type == GoalType::ExploreStart && s.status != GoalStatus::InProgress)
                    {
                        return Err(format!("merge {} does not follow a finished exploration", goal.id));
                    }
                }
                GoalType::Normal => {}
            }
        }
        if running > 1 {
            return Err(format!("{running} explorations are running at once"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::goals::fixtures::test_support::{id, tree_after};
    use crate::goals::{BranchStatus, GoalStatus, GoalTree, GoalType};
    use crate::model::GoalId;

    fn broken(change: impl FnOnce(&mut GoalTree)) -> String {
        let mut tree = tree_after(&[r#"{"add": "a, b"}"#, r#"{"focus": "1"}"#, r#"{"add": "a1"}"#]);
        tree.record_message(&id(3), 5, 0.5, &[]).unwrap();
        tree.start_explore(&["x"], None).unwrap();
        tree.validate().unwrap();
        change(&mut tree);
        tree.validate().unwrap_err()
    }

    #[test]
    fn every_invariant_is_checked() {
        assert_eq!(broken(|t| t.goals_mut()[1].id = GoalId("x".into())), "goal id `x` is not a number");
        assert_eq!(broken(|t| t.goals_mut()[1].id = id(1)), "goal id 1 is used twice");
        assert_eq!(broken(|t| t.goals_mut()[1].id = id(50)), "goal id 50 is outside 1..5");
        assert_eq!(broken(|t| t.goals_mut()[1].branch_id = Some("A".into())), "goal 2 belongs to another branch");
        assert_eq!(broken(|t| t.goals_mut()[2].parent_id = Some(id(9))), "goal 3's ancestor 9 does not exist");
        assert_eq!(broken(|t| t.goals_mut().swap(0, 2)), "goal 3 stands before its parent 1");
        assert_eq!(broken(|t| t.set_current(Some(id(8)))), "the current goal 8 does not exist");
        assert_eq!(broken(|t| t.set_current(Some(id(4)))), "the current goal 4 is not a normal goal");
        assert_eq!(
            broken(|t| t.set_current(Some(id(2)))),
            "goal 2 is focused or holds the focus but is not in progress"
        );
        assert_eq!(
            broken(|t| t.goals_mut()[0].status = GoalStatus::Completed),
            "goal 1 is focused or holds the focus but is not in progress"
        );
        assert_eq!(
            broken(|t| {
                t.set_current(None);
                t.goals_mut()[0].status = GoalStatus::Abandoned;
            }),
            "goal 1 is Abandoned but its sub-goal 3 is open"
        );
        assert_eq!(
            broken(|t| t.goals_mut()[1].status = GoalStatus::InProgress),
            "goal 2 is in progress but unfocused and nothing ran under it"
        );
        assert_eq!(
            broken(|t| t.goals_mut()[2].self_stats.message_count = 2),
            "goal 3's cumulative stats are not its own plus its sub-goals'"
        );
        assert_eq!(
            broken(|t| t.goals_mut()[0].cumulative_stats.total_cost = 9.0),
            "goal 1's cumulative cost is not its own plus its sub-goals'"
        );
        assert_eq!(broken(|t| t.goals_mut()[3].branch_ids.clear()), "exploration 4 does not list its branch A");
        assert_eq!(broken(|t| t.branches_mut()[0].explore_start_id = id(2)), "branch A's exploration 2 does not exist");
        assert_eq!(
            broken(|t| {
                let copy = t.branches()[0].clone();
                t.branches_mut().push(copy);
            }),
            "branch A is listed twice"
        );
        assert_eq!(
            broken(|t| t.goals_mut()[3].status = GoalStatus::Completed),
            "branch A is exploring but its exploration 4 is over"
        );
        assert_eq!(
            broken(|t| {
                t.branches_mut()[0].status = BranchStatus::Completed;
                let mut merge = t.new_goal(None, GoalType::ExploreMerge, "m");
                merge.explore_start_id = Some(id(4));
                t.goals_mut().push(merge);
            }),
            "merge 5 does not follow a finished exploration"
        );
    }
}
