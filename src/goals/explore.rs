//! Exploration (R6.5): an `explore_start` goal with its branches, each run by the host as a
//! sub-agent with its own [`GoalTree`]; when every branch has finished, an `explore_merge` goal
//! holds their summaries, and that merge summary is all the main line keeps.

use super::events::EventKind;
use super::text::{clip, fill, one_line, text};
use super::{Branch, BranchStatus, GoalStatus, GoalTree, GoalType, ToolError};
use crate::model::{BranchId, GoalId};

/// What [`GoalTree::merge`] recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// The `explore_merge` goal.
    pub goal_id: GoalId,
    /// Every branch's summary, formatted: the `explore` tool's result.
    pub merge_summary: String,
}

impl GoalTree {
    /// Start an exploration with one branch per description (the `explore` tool; see
    /// [`GoalTree::open_exploration`]).
    pub fn start_explore(
        &mut self,
        descriptions: &[&str],
        background: Option<&str>,
    ) -> Result<Vec<BranchId>, ToolError> {
        let count = descriptions.len().to_string();
        let branches: Vec<(&str, Option<&str>)> = descriptions.iter().map(|d| (*d, None)).collect();
        let background = background.map(str::trim).filter(|b| !b.is_empty());
        let parent = self.current_id().cloned();
        let description = fill("explore_start_description", &[("count", &count)]);
        self.open_exploration(&description, &branches, Exploration { parent, joining: None }, background)
    }

    /// The agent's own sub-agents (R6.5 through a proxy), one branch per `(call id,
    /// description)` of the calls one reply made: sub-agents that run at the same time are one
    /// exploration, so calls made while an exploration of sub-agents runs (Claude Code's run in the
    /// background) join it; otherwise they open one, under a top-level goal naming them: beside
    /// the agent's plan, not inside the item it is on, since a sub-agent run in the background
    /// outlives that item and the agent's plan tool must stay free to complete it. Descriptions
    /// longer than `max_description_chars` are clipped to one line.
    pub fn start_sub_agents(&mut self, calls: &[(&str, &str)]) -> Result<Vec<BranchId>, ToolError> {
        let running = self.running_explore();
        let of_sub_agents = |start: &GoalId| {
            self.branches().iter().filter(|b| b.explore_start_id == *start).all(|b| b.call_id.is_some())
        };
        let joining = running.filter(of_sub_agents);
        let mut named: Vec<&str> = match &joining {
            Some(start) => self
                .branches()
                .iter()
                .filter(|b| b.explore_start_id == *start)
                .map(|b| b.description.as_str())
                .collect(),
            None => Vec::new(),
        };
        // An agent's description (or its prompt's first line) may be long: clipped, never refused.
        let max = self.config().max_description_chars.saturating_sub(1).max(1);
        let clipped: Vec<String> = calls.iter().map(|(_, d)| one_line(d, max)).collect();
        named.extend(clipped.iter().map(String::as_str));
        let description = one_line(&fill("sub_agents_description", &[("descriptions", &named.join("; "))]), max);
        let branches: Vec<(&str, Option<&str>)> =
            clipped.iter().zip(calls).map(|(d, (id, _))| (d.as_str(), Some(*id))).collect();
        self.open_exploration(&description, &branches, Exploration { parent: None, joining }, None)
    }

    /// Finish the branch the sub-agent call `call_id` started, with its result as the summary
    /// (at most `max_summary_chars`), and merge its exploration once every branch finished.
    /// `None` when no open branch was started by that call.
    pub fn finish_sub_agent(&mut self, call_id: &str, result: &str) -> Option<Result<Option<Merged>, ToolError>> {
        let branch = self.branches().iter().find(|b| b.call_id.as_deref() == Some(call_id));
        let branch = branch.filter(|b| b.status == BranchStatus::Exploring)?;
        let (id, start) = (branch.id.clone(), branch.explore_start_id.clone());
        let summary = Some(result.trim()).filter(|r| !r.is_empty()).unwrap_or(text("sub_agent_no_result"));
        Some(self.finish_branch(&id, summary).and_then(|()| {
            let open =
                self.branches().iter().any(|b| b.explore_start_id == start && b.status == BranchStatus::Exploring);
            if open { Ok(None) } else { self.merge(None).map(Some) }
        }))
    }

    /// Branches, one per (description, call id), ids `A`, `B` … continuing across
    /// explorations: of a new `explore_start` goal described `description`, in progress, under
    /// `at.parent` (top level when none); or joining the running exploration `at.joining`,
    /// whose goal then takes `description`; each branch starts from `background` too, when
    /// given. Zero branches, more than `max_branches` in one exploration, or another
    /// exploration still running are errors.
    fn open_exploration(
        &mut self,
        description: &str,
        branches: &[(&str, Option<&str>)],
        at: Exploration,
        background: Option<&str>,
    ) -> Result<Vec<BranchId>, ToolError> {
        let Exploration { parent, joining } = at;
        let max = self.config().max_branches;
        if branches.is_empty() {
            return Err(ToolError::new("explore: no branches; give at least one description"));
        }
        let joined =
            joining.as_ref().map_or(0, |start| self.branches().iter().filter(|b| b.explore_start_id == *start).count());
        if joined + branches.len() > max {
            return Err(ToolError::new(format!(
                "explore: {} branches; at most {max}; keep the most promising ones",
                joined + branches.len()
            )));
        }
        let descriptions: Vec<&str> = branches.iter().map(|(d, _)| *d).collect();
        let descriptions = self.check_descriptions("explore", &descriptions)?;
        if let Some(running) = self.running_explore().filter(|running| joining.as_ref() != Some(running)) {
            let open: Vec<&str> = self
                .branches()
                .iter()
                .filter(|b| b.explore_start_id == running && b.status == BranchStatus::Exploring)
                .map(|b| b.id.as_str())
                .collect();
            let listed = if open.is_empty() { "none".to_owned() } else { open.join(", ") };
            return Err(ToolError::new(format!(
                "explore: an exploration is still running (open branches: {listed}); merge it first"
            )));
        }
        if joining.is_none() && self.goals().len() >= self.config().max_goals {
            return Err(ToolError::new(format!("explore: the tree already holds {} goals", self.goals().len())));
        }
        self.transact(|tree| {
            let ids: Vec<BranchId> = descriptions.iter().map(|_| tree.new_branch_id()).collect();
            let start_id = match joining {
                Some(start) => {
                    let index =
                        tree.index_of(&start).ok_or_else(|| ToolError::new("explore: the exploration is gone"))?;
                    let goal = &mut tree.goals_mut()[index];
                    goal.branch_ids.extend(ids.iter().cloned());
                    goal.description = description.to_owned();
                    start
                }
                None => {
                    let mut goal = tree.new_goal(parent, GoalType::ExploreStart, description);
                    goal.status = GoalStatus::InProgress;
                    goal.branch_ids = ids.clone();
                    let start_id = goal.id.clone();
                    tree.goals_mut().push(goal);
                    tree.emit_added(tree.goals().len() - 1);
                    start_id
                }
            };
            for ((id, description), (_, call_id)) in ids.iter().zip(&descriptions).zip(branches) {
                let branch = Branch {
                    id: id.clone(),
                    explore_start_id: start_id.clone(),
                    description: (*description).to_owned(),
                    status: BranchStatus::Exploring,
                    summary: None,
                    call_id: call_id.map(str::to_owned),
                    background: background.map(str::to_owned),
                };
                tree.branches_mut().push(branch.clone());
                tree.push_event(EventKind::BranchStarted { explore_start_id: start_id.clone(), branch });
            }
            Ok(ids)
        })
    }

    /// Record that a branch finished, with its summary (clipped to `max_summary_chars`).
    pub fn finish_branch(&mut self, branch: &BranchId, summary: &str) -> Result<(), ToolError> {
        let summary = summary.trim();
        let Some(found) = self.branch(branch) else {
            let known: Vec<&str> = self.branches().iter().map(|b| b.id.as_str()).collect();
            let known = if known.is_empty() {
                "there are none".to_owned()
            } else {
                format!("branches are {}", known.join(", "))
            };
            return Err(ToolError::new(format!("finish_branch: no branch {branch}; {known}")));
        };
        if found.status == BranchStatus::Completed {
            return Err(ToolError::new(format!("finish_branch: branch {branch} has already finished")));
        }
        if summary.is_empty() {
            return Err(ToolError::new(format!("finish_branch: the summary of branch {branch} is empty")));
        }
        let summary = &clip(summary, self.config().max_summary_chars);
        self.transact(|tree| {
            if let Some(b) = tree.branches_mut().iter_mut().find(|b| b.id == *branch) {
                b.status = BranchStatus::Completed;
                b.summary = Some(summary.to_owned());
            }
            tree.push_event(EventKind::BranchCompleted { branch_id: branch.clone(), summary: summary.to_owned() });
            Ok(())
        })
    }

    /// Merge the running exploration once every branch has finished: an `explore_merge` goal,
    /// completed, right after the `explore_start` goal, with the merge summary and the selected
    /// branch (which must be one of the exploration's); the `explore_start` goal completes.
    pub fn merge(&mut self, selected: Option<&BranchId>) -> Result<Merged, ToolError> {
        let Some(start_id) = self.running_explore() else {
            return Err(ToolError::new("merge: no exploration is running"));
        };
        let branches: Vec<Branch> =
            self.branches().iter().filter(|b| b.explore_start_id == start_id).cloned().collect();
        let open: Vec<&str> =
            branches.iter().filter(|b| b.status == BranchStatus::Exploring).map(|b| b.id.as_str()).collect();
        if !open.is_empty() {
            return Err(ToolError::new(format!("merge: branches {} have not finished", open.join(", "))));
        }
        if let Some(selected) = selected
            && !branches.iter().any(|b| b.id == *selected)
        {
            let ids: Vec<&str> = branches.iter().map(|b| b.id.as_str()).collect();
            return Err(ToolError::new(format!(
                "merge: branch {selected} is not part of this exploration; its branches are {}",
                ids.join(", ")
            )));
        }
        self.transact(|tree| {
            let merge_summary = merge_summary(&branches, selected);
            let start = tree.index_of(&start_id).ok_or_else(|| ToolError::new("merge: the exploration is gone"))?;
            let parent = tree.goals()[start].parent_id.clone();
            let description = match selected {
                Some(id) => fill("merge_description", &[("selected", id.as_str())]),
                None => text("merge_description_none").to_owned(),
            };
            let mut goal = tree.new_goal(parent, GoalType::ExploreMerge, &description);
            goal.status = GoalStatus::Completed;
            goal.explore_start_id = Some(start_id.clone());
            goal.merge_summary = Some(merge_summary.clone());
            goal.selected_branch = selected.cloned();
            goal.summary = Some(digest(&branches));
            let merge_id = goal.id.clone();
            tree.goals_mut().insert(start + 1, goal);
            tree.emit_added(start + 1);
            let start_goal = &mut tree.goals_mut()[start];
            start_goal.status = GoalStatus::Completed;
            start_goal.summary = Some(digest(&branches));
            tree.emit_updated(&start_id, std::slice::from_ref(&start_id));
            tree.push_event(EventKind::ExploreCompleted {
                explore_start_id: start_id.clone(),
                merge_goal_id: merge_id.clone(),
                merge_summary: merge_summary.clone(),
                selected_branch: selected.cloned(),
            });
            Ok(Merged { goal_id: merge_id, merge_summary })
        })
    }

    /// The `explore_start` goal still in progress, if any.
    pub fn running_explore(&self) -> Option<GoalId> {
        self.goals()
            .iter()
            .find(|g| g.goal_type == GoalType::ExploreStart && g.status == GoalStatus::InProgress)
            .map(|g| g.id.clone())
    }
}

/// Where [`GoalTree::open_exploration`] puts its branches.
struct Exploration {
    /// The goal a new exploration goes under (top level when none).
    parent: Option<GoalId>,
    /// The running exploration the branches join instead.
    joining: Option<GoalId>,
}

/// The `explore` tool's result: one section per branch, then which was selected (seed 002).
fn merge_summary(branches: &[Branch], selected: Option<&BranchId>) -> String {
    let mut parts = vec![text("merge_header").to_owned()];
    for branch in branches {
        parts.push(fill(
            "merge_branch",
            &[
                ("branch", branch.id.as_str()),
                ("description", &branch.description),
                ("summary", branch.summary.as_deref().unwrap_or("")),
            ],
        ));
    }
    parts.push(match selected {
        Some(id) => fill("merge_selected", &[("selected", id.as_str())]),
        None => text("merge_choose").to_owned(),
    });
    parts.join("\n\n")
}

/// One line for the plan: `A: first line of its summary; B: …`.
fn digest(branches: &[Branch]) -> String {
    let parts: Vec<String> = branches
        .iter()
        .map(|b| format!("{}: {}", b.id, super::text::one_line(b.summary.as_deref().unwrap_or(""), 80)))
        .collect();
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goals::GoalConfig;
    use crate::goals::fixtures::test_support::{id, statuses, tree_after};

    #[test]
    fn an_agents_sub_agents_are_branches_finished_by_their_calls_results() {
        let mut tree = GoalTree::new("m");
        let ids = tree.start_sub_agents(&[("toolu_1", "Find the bug"), ("toolu_2", "Count warnings")]).unwrap();
        assert_eq!(ids, vec![BranchId::from("A"), BranchId::from("B")]);
        let start = tree.goal(&id(1)).unwrap();
        assert_eq!(start.description, "sub-agents: Find the bug; Count warnings");
        assert_eq!(tree.branch(&"B".into()).unwrap().call_id.as_deref(), Some("toolu_2"));
        assert!(tree.finish_sub_agent("toolu_9", "x").is_none(), "no branch of that call");
        assert_eq!(tree.finish_sub_agent("toolu_1", "in parse()").unwrap().unwrap(), None, "B still runs");
        let long = "x".repeat(5_000);
        let merged = tree.finish_sub_agent("toolu_2", &long).unwrap().unwrap().unwrap();
        assert_eq!(merged.goal_id, id(2));
        let summary = tree.branch(&"B".into()).unwrap().summary.clone().unwrap();
        assert_eq!(summary.chars().count(), GoalConfig::default().max_summary_chars);
        assert!(tree.finish_sub_agent("toolu_2", "again").is_none(), "a finished branch is left as it is");

        // Sub-agents started while others run (in the background) join their exploration.
        tree.start_sub_agents(&[("toolu_3", "Read the log")]).unwrap();
        tree.start_sub_agents(&[("toolu_4", "Fix it")]).unwrap();
        assert_eq!(tree.goal(&id(3)).unwrap().description, "sub-agents: Read the log; Fix it");
        assert_eq!(tree.goal(&id(3)).unwrap().branch_ids, vec![BranchId::from("C"), BranchId::from("D")]);
        tree.finish_sub_agent("toolu_4", "fixed").unwrap().unwrap();
        assert_eq!(statuses(&tree), vec!["1:completed", "2:completed", "3:in_progress"]);
        assert!(tree.finish_sub_agent("toolu_3", "").unwrap().unwrap().is_some(), "the last one merges");
        assert_eq!(tree.branch(&"C".into()).unwrap().summary.as_deref(), Some(text("sub_agent_no_result")));
        // A description longer than a goal's may be is clipped, not refused.
        let long = "Read every file under src and report ".repeat(40);
        tree.start_sub_agents(&[("toolu_5", &long)]).unwrap();
        let clipped = &tree.branch(&"E".into()).unwrap().description;
        assert!(
            clipped.starts_with("Read every file")
                && clipped.chars().count() <= GoalConfig::default().max_description_chars
        );
        tree.finish_sub_agent("toolu_5", "done").unwrap().unwrap();
        // One exploration holds at most `max_branches`.
        let nine: Vec<(String, String)> = (0..9).map(|n| (format!("c{n}"), format!("job {n}"))).collect();
        let nine: Vec<(&str, &str)> = nine.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert!(tree.start_sub_agents(&nine).is_err());
        tree.validate().unwrap();
    }

    #[test]
    fn an_exploration_starts_finishes_and_merges() {
        let mut tree = tree_after(&[r#"{"add": "analyse, build"}"#, r#"{"focus": "2"}"#]);
        let ids = tree.start_explore(&["JWT", " sessions "], None).unwrap();
        assert_eq!(ids, vec![BranchId::from("A"), BranchId::from("B")]);
        let start = tree.goal(&id(3)).unwrap();
        assert_eq!(
            (start.goal_type, start.status, start.parent_id.clone()),
            (GoalType::ExploreStart, GoalStatus::InProgress, Some(id(2)))
        );
        assert_eq!(start.branch_ids, ids);
        assert_eq!(tree.branch(&"B".into()).unwrap().description, "sessions");
        assert_eq!(tree.running_explore(), Some(id(3)));

        tree.finish_branch(&"A".into(), "stateless").unwrap();
        assert_eq!(
            tree.finish_branch(&"A".into(), "again").unwrap_err().message,
            "finish_branch: branch A has already finished"
        );
        assert_eq!(
            tree.finish_branch(&"B".into(), " ").unwrap_err().message,
            "finish_branch: the summary of branch B is empty"
        );
        tree.finish_branch(&"B".into(), "needs Redis\nand more").unwrap();
        let merged = tree.merge(None).unwrap();
        assert_eq!(merged.goal_id, id(4));
        assert!(merged.merge_summary.ends_with("---\nEvery branch has finished; choose one to continue."));
        let merge = tree.goal(&id(4)).unwrap();
        assert_eq!(merge.summary.as_deref(), Some("A: stateless; B: needs Redis…"));
        assert_eq!((merge.parent_id.clone(), merge.explore_start_id.clone()), (Some(id(2)), Some(id(3))));
        assert_eq!(statuses(&tree), vec!["1:pending", "2:in_progress", "3:completed", "4:completed"]);
        assert_eq!(tree.running_explore(), None);
        assert_eq!(tree.merge(None).unwrap_err().message, "merge: no exploration is running");
        tree.validate().unwrap();

        // The next exploration numbers its branches on.
        assert_eq!(tree.start_explore(&["x"], None).unwrap(), vec![BranchId::from("C")]);
        tree.validate().unwrap();
    }

    #[test]
    fn branch_ids_run_past_z() {
        let mut tree = GoalTree::new("m");
        let ids: Vec<String> = (0..30).map(|_| tree.new_branch_id().0).collect();
        assert_eq!(&ids[..3], ["A", "B", "C"]);
        assert_eq!(&ids[25..], ["Z", "AA", "AB", "AC", "AD"]);
        tree.next_branch_for_test(26 * 27);
        assert_eq!(tree.new_branch_id().0, "AAA");
    }

    #[test]
    fn branch_counts_are_bounded() {
        let mut tree = GoalTree::new("m").with_config(GoalConfig { max_branches: 2, ..GoalConfig::default() });
        assert_eq!(
            tree.start_explore(&["a", "b", "c"], None).unwrap_err().message,
            "explore: 3 branches; at most 2; keep the most promising ones"
        );
        assert_eq!(
            tree.start_explore(&[], None).unwrap_err().message,
            "explore: no branches; give at least one description"
        );
        assert!(tree.goals().is_empty() && tree.events().events().is_empty());
    }
}
