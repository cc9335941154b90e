//! The goal tree (R6.1): goals in a flat list linked by `parent_id`, the focused goal, the
//! branches of explorations, per-goal statistics (R1.5), and the persisted `goal.json` form.
//!
//! Order: a goal's children are ordered as they stand in the list, and every goal stands after
//! its parent. Every change goes through [`GoalTree::transact`], so a failed change leaves the
//! tree (and its event log) exactly as it was.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::events::{AffectedGoal, EventKind, EventLog};
use super::{GoalStats, ToolError};
use crate::error::{Error, Result};
use crate::model::{BranchId, GoalId, Message, MessageId};

/// The version of `goal.json` this build writes and the newest it reads.
pub const GOAL_TREE_FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum GoalType {
    Normal,
    /// Where an exploration started (R6.5); `branch_ids` names its branches.
    ExploreStart,
    /// Where an exploration's branches were merged; `merge_summary` holds their results.
    ExploreMerge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum GoalStatus {
    Pending,
    InProgress,
    Completed,
    /// Given up after it ran (R6.4): kept in the data, hidden from the prompt and numbering.
    Abandoned,
}

/// One goal (R6.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct Goal {
    /// A plain counter from 1, whatever the level, branch or status.
    pub id: GoalId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<GoalId>,
    /// The branch whose tree this goal belongs to; `None` on the main line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_id: Option<BranchId>,
    #[serde(rename = "type")]
    pub goal_type: GoalType,
    pub description: String,
    #[serde(default)]
    pub reason: String,
    pub status: GoalStatus,
    /// The summary given on completion, or the reason given on abandon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, ts(optional = nullable))]
    pub branch_ids: Vec<BranchId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explore_start_id: Option<GoalId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected_branch: Option<BranchId>,
    #[serde(default)]
    pub self_stats: GoalStats,
    #[serde(default)]
    pub cumulative_stats: GoalStats,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum BranchStatus {
    Exploring,
    Completed,
}

/// A branch of an exploration, as the main line knows it (seed 002's `BranchContext` without
/// its own goal tree and messages, which the branch's own [`GoalTree`] holds).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct Branch {
    pub id: BranchId,
    pub explore_start_id: GoalId,
    pub description: String,
    pub status: BranchStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The agent's tool call that started it, when it is one of the agent's own sub-agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// What the branch starts from beside its description (the `explore` call's `background`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<String>,
}

/// A revision of the agent's plan (R6.9): the list it wrote differs from the previous one
/// before that one's end, with items added or open ones dropped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct PlanRevision {
    /// The first item (from 1) that differs from the previous plan.
    pub from_item: usize,
    /// The goals of the items before it, kept as they were.
    pub kept: Vec<GoalId>,
    /// The goals of the items from it on: revised.
    pub revised: Vec<GoalId>,
    /// The open goals the new plan no longer holds, by description: abandoned, or removed when
    /// they never ran.
    pub dropped: Vec<String>,
}

/// Limits on what the tools accept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(default, deny_unknown_fields)]
pub struct GoalConfig {
    /// Branches one `explore` call may start.
    pub max_branches: usize,
    /// Characters of one goal or branch description.
    pub max_description_chars: usize,
    /// Characters of a summary, an abandon reason or an add reason.
    pub max_summary_chars: usize,
    /// Goals the tree holds, abandoned ones included.
    pub max_goals: usize,
    /// Levels of nesting (`1.2.3` is level 3).
    pub max_depth: usize,
}

impl Default for GoalConfig {
    fn default() -> Self {
        GoalConfig {
            max_branches: 8,
            max_description_chars: 500,
            max_summary_chars: 2_000,
            max_goals: 500,
            max_depth: 6,
        }
    }
}

/// The goal tree of the main line or of one branch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct GoalTree {
    /// Format version of `goal.json` (see [`GOAL_TREE_FORMAT_VERSION`]).
    version: u32,
    mission: String,
    /// Set on a branch's own tree: its goals carry this branch id and its events are `branch_*`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    branch_id: Option<BranchId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    current_id: Option<GoalId>,
    goals: Vec<Goal>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, ts(optional = nullable))]
    branches: Vec<Branch>,
    /// The revisions of the agent's plan, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, ts(optional = nullable))]
    revisions: Vec<PlanRevision>,
    /// The next goal id.
    next_id: u64,
    /// How many branch ids were handed out (`A`, `B`, … `Z`, `AA` …).
    #[serde(default)]
    next_branch: u64,
    #[serde(default)]
    completed: bool,
    #[serde(skip)]
    config: GoalConfig,
    #[serde(skip)]
    events: EventLog,
}

impl GoalTree {
    /// An empty main-line tree.
    pub fn new(mission: impl Into<String>) -> Self {
        GoalTree {
            version: GOAL_TREE_FORMAT_VERSION,
            mission: mission.into(),
            branch_id: None,
            current_id: None,
            goals: Vec::new(),
            branches: Vec::new(),
            revisions: Vec::new(),
            next_id: 1,
            next_branch: 0,
            completed: false,
            config: GoalConfig::default(),
            events: EventLog::default(),
        }
    }

    /// The empty tree of one branch: numbered from 1 on its own, events `branch_*`.
    pub fn for_branch(branch: BranchId, mission: impl Into<String>) -> Self {
        GoalTree { branch_id: Some(branch), ..GoalTree::new(mission) }
    }

    pub fn with_config(mut self, config: GoalConfig) -> Self {
        self.config = config;
        self
    }

    pub fn config(&self) -> &GoalConfig {
        &self.config
    }

    pub fn mission(&self) -> &str {
        &self.mission
    }

    pub fn branch_id(&self) -> Option<&BranchId> {
        self.branch_id.as_ref()
    }

    pub fn current_id(&self) -> Option<&GoalId> {
        self.current_id.as_ref()
    }

    /// The focused goal.
    pub fn current(&self) -> Option<&Goal> {
        self.current_id.as_ref().and_then(|id| self.goal(id))
    }

    /// Every goal, abandoned ones included, parents before children.
    pub fn goals(&self) -> &[Goal] {
        &self.goals
    }

    pub fn goal(&self, id: &GoalId) -> Option<&Goal> {
        self.goals.iter().find(|g| g.id == *id)
    }

    /// The direct children of `parent` (`None`: the top level), in order.
    pub fn children<'a>(&'a self, parent: Option<&'a GoalId>) -> impl Iterator<Item = &'a Goal> + 'a {
        self.goals.iter().filter(move |g| g.parent_id.as_ref() == parent)
    }

    pub fn branches(&self) -> &[Branch] {
        &self.branches
    }

    /// The revisions of the agent's plan, oldest first.
    pub fn revisions(&self) -> &[PlanRevision] {
        &self.revisions
    }

    pub fn branch(&self, id: &BranchId) -> Option<&Branch> {
        self.branches.iter().find(|b| b.id == *id)
    }

    /// Whether [`GoalTree::complete_trace`] was called.
    pub fn is_completed(&self) -> bool {
        self.completed
    }

    /// The events of every change so far (the engine persists them to `events.jsonl`).
    pub fn events(&self) -> &EventLog {
        &self.events
    }

    /// The log, to restore it after loading `goal.json` or to move a branch's events into it.
    pub fn events_mut(&mut self) -> &mut EventLog {
        &mut self.events
    }

    /// After a resume where the event log is newer than the tree (a save cut between the two):
    /// no goal id the log has handed out is handed out again. The ids added in the log but
    /// missing from the tree are returned, for a note.
    pub fn reserve_logged_ids(&mut self) -> Vec<GoalId> {
        let mut missing: Vec<GoalId> = Vec::new();
        for event in self.events.since(0) {
            match &event.kind {
                EventKind::GoalAdded { goal, .. } => {
                    if let Ok(n) = goal.id.as_str().parse::<u64>() {
                        self.next_id = self.next_id.max(n.saturating_add(1));
                    }
                    missing.push(goal.id.clone());
                }
                EventKind::GoalRemoved { branch_id: None, goal_id, removed, .. } => {
                    missing.retain(|id| id != goal_id && !removed.contains(id));
                }
                _ => {}
            }
        }
        missing.retain(|id| self.goal(id).is_none());
        missing
    }

    /// The ancestors of `id`, nearest first (at most as many as there are goals).
    pub fn ancestors(&self, id: &GoalId) -> Vec<GoalId> {
        let mut out = Vec::new();
        let mut next = self.goal(id).and_then(|g| g.parent_id.clone());
        while let Some(parent) = next {
            if out.len() >= self.goals.len() || out.contains(&parent) {
                break;
            }
            next = self.goal(&parent).and_then(|g| g.parent_id.clone());
            out.push(parent);
        }
        out
    }

    /// Count one message of `goal` (R1.5): its self stats, and the cumulative stats of the goal
    /// and every ancestor. Returns the affected goals, the goal first, then ancestors nearest
    /// first. Any existing goal may be given, whatever its status (a tool result can arrive
    /// after its goal is done).
    pub fn record_message(
        &mut self,
        goal: &GoalId,
        tokens: u64,
        cost: f64,
        tool_names: &[&str],
    ) -> Result<Vec<GoalId>, ToolError> {
        self.count_message(None, goal, tokens, cost, tool_names)
    }

    /// [`GoalTree::record_message`] for a recorded message: its goal, tokens, cost and the tools
    /// it calls; the event carries its id.
    pub fn record(&mut self, message: &Message) -> Result<Vec<GoalId>, ToolError> {
        let Some(goal) = message.goal_id.as_ref() else {
            return Err(ToolError::new(format!("message {} belongs to no goal", message.id)));
        };
        self.count_recorded(Some(&message.id), goal, message)
    }

    /// Count `message` on `goal` of this tree, whose line it is not on (a branch's message on
    /// its exploration's goal); the event names no message.
    pub fn record_on(&mut self, goal: &GoalId, message: &Message) -> Result<Vec<GoalId>, ToolError> {
        self.count_recorded(None, goal, message)
    }

    fn count_recorded(
        &mut self,
        message_id: Option<&MessageId>,
        goal: &GoalId,
        message: &Message,
    ) -> Result<Vec<GoalId>, ToolError> {
        let names: Vec<&str> = message.tool_calls().map(|c| c.name.as_str()).collect();
        let tokens = message.tokens.map_or(0, u64::from);
        self.count_message(message_id, goal, tokens, message.cost.unwrap_or(0.0), &names)
    }

    fn count_message(
        &mut self,
        message_id: Option<&MessageId>,
        goal: &GoalId,
        tokens: u64,
        cost: f64,
        tool_names: &[&str],
    ) -> Result<Vec<GoalId>, ToolError> {
        self.transact(|tree| {
            let index = tree.index_of(goal).ok_or_else(|| ToolError::new(format!("no goal with id {goal}")))?;
            let mut affected = vec![goal.clone()];
            affected.extend(tree.ancestors(goal));
            tree.goals[index].self_stats.add_message(tokens, cost, tool_names);
            for id in &affected {
                if let Some(i) = tree.index_of(id) {
                    tree.goals[i].cumulative_stats.add_message(tokens, cost, tool_names);
                }
            }
            let mut report = tree.affected(&affected, false);
            if let Some(first) = report.first_mut() {
                first.self_stats = Some(tree.goals[index].self_stats.clone());
            }
            let message_id = message_id.cloned();
            let kind = match tree.branch_id.clone() {
                None => EventKind::MessageAdded { message_id, goal_id: goal.clone(), affected_goals: report },
                Some(branch_id) => EventKind::BranchMessageAdded {
                    branch_id,
                    message_id,
                    goal_id: goal.clone(),
                    affected_goals: report,
                },
            };
            tree.events.push(kind);
            Ok(affected)
        })
    }

    /// The sum of the top-level goals' cumulative stats.
    pub fn totals(&self) -> GoalStats {
        let mut total = GoalStats::default();
        for goal in self.children(None) {
            let s = &goal.cumulative_stats;
            total.message_count = total.message_count.saturating_add(s.message_count);
            total.total_tokens = total.total_tokens.saturating_add(s.total_tokens);
            total.total_cost = super::stats::add_costs(total.total_cost, s.total_cost);
        }
        total
    }

    /// Mark the trace finished: a `trace_completed` event with the totals. Once per task: see
    /// [`GoalTree::reopen`].
    pub fn complete_trace(&mut self) -> Result<(), ToolError> {
        if self.completed {
            return Err(ToolError::new("the trace is already completed"));
        }
        self.completed = true;
        let stats = self.totals();
        self.events.push(EventKind::TraceCompleted { stats });
        Ok(())
    }

    /// A new task arrived in a completed trace (the user's next input): it runs again, and its
    /// next completion is a new `trace_completed`.
    pub fn reopen(&mut self) {
        self.completed = false;
    }

    /// The persisted `goal.json` form (the event log is not part of it).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Read `goal.json`: refuses newer versions, names the failing field, and checks every
    /// invariant of [`GoalTree::validate`]. The config is the default; the event log is empty.
    pub fn from_json(text: &str) -> Result<GoalTree> {
        #[derive(Deserialize)]
        struct VersionOnly {
            version: u32,
        }
        let head: VersionOnly = serde_json::from_str(text)
            .map_err(|e| Error::InvalidInput(format!("goal tree is not a versioned JSON object: {e}")))?;
        if head.version > GOAL_TREE_FORMAT_VERSION {
            return Err(Error::UnsupportedVersion { found: head.version, supported: GOAL_TREE_FORMAT_VERSION });
        }
        let mut de = serde_json::Deserializer::from_str(text);
        let tree: GoalTree = serde_path_to_error::deserialize(&mut de)
            .map_err(|e| Error::InvalidInput(format!("goal tree at `{}`: {}", e.path(), e.inner())))?;
        tree.validate().map_err(|e| Error::InvalidInput(format!("goal tree: {e}")))?;
        Ok(tree)
    }

    /// Run a change on a copy and keep it only when it succeeds: on error the tree and its
    /// event log are untouched.
    pub(crate) fn transact<T>(
        &mut self,
        change: impl FnOnce(&mut GoalTree) -> Result<T, ToolError>,
    ) -> Result<T, ToolError> {
        let mut log = std::mem::take(&mut self.events);
        let mut draft = self.clone();
        draft.events = log.continuation();
        match change(&mut draft) {
            Ok(value) => {
                log.absorb(std::mem::take(&mut draft.events));
                draft.events = log;
                *self = draft;
                Ok(value)
            }
            Err(error) => {
                self.events = log;
                Err(error)
            }
        }
    }

    pub(crate) fn next_goal_id(&self) -> u64 {
        self.next_id
    }

    pub(crate) fn index_of(&self, id: &GoalId) -> Option<usize> {
        self.goals.iter().position(|g| g.id == *id)
    }

    pub(crate) fn goals_mut(&mut self) -> &mut Vec<Goal> {
        &mut self.goals
    }

    pub(crate) fn branches_mut(&mut self) -> &mut Vec<Branch> {
        &mut self.branches
    }

    pub(crate) fn set_current(&mut self, id: Option<GoalId>) {
        self.current_id = id;
    }

    /// A new goal with the next id, not yet in the list.
    pub(crate) fn new_goal(&mut self, parent: Option<GoalId>, goal_type: GoalType, description: &str) -> Goal {
        let id = GoalId(self.next_id.to_string());
        self.next_id = self.next_id.saturating_add(1);
        Goal {
            id,
            parent_id: parent,
            branch_id: self.branch_id.clone(),
            goal_type,
            description: description.to_owned(),
            reason: String::new(),
            status: GoalStatus::Pending,
            summary: None,
            branch_ids: Vec::new(),
            explore_start_id: None,
            merge_summary: None,
            selected_branch: None,
            self_stats: GoalStats::default(),
            cumulative_stats: GoalStats::default(),
        }
    }

    /// The next branch id: `A` … `Z`, then `AA`, `AB` … (bijective base 26).
    pub(crate) fn new_branch_id(&mut self) -> BranchId {
        let mut n = self.next_branch;
        self.next_branch = self.next_branch.saturating_add(1);
        let mut letters = Vec::new();
        loop {
            letters.push(b'A' + (n % 26) as u8);
            if n < 26 {
                break;
            }
            n = n / 26 - 1;
        }
        letters.reverse();
        BranchId(String::from_utf8_lossy(&letters).into_owned())
    }

    #[cfg(test)]
    pub(crate) fn next_branch_for_test(&mut self, n: u64) {
        self.next_branch = n;
    }

    /// Emit `goal_added` (or `branch_goal_added` in a branch's tree) for the goal at `index`.
    pub(crate) fn emit_added(&mut self, index: usize) {
        let Some(goal) = self.goals.get(index).cloned() else { return };
        let kind = match self.branch_id.clone() {
            None => EventKind::GoalAdded { parent_id: goal.parent_id.clone(), goal },
            Some(branch_id) => EventKind::BranchGoalAdded { branch_id, goal },
        };
        self.events.push(kind);
    }

    /// Record a revision of the agent's plan, and its event.
    pub(crate) fn push_revision(&mut self, revision: PlanRevision) {
        self.revisions.push(revision.clone());
        self.events.push(EventKind::PlanRevised { revision });
    }

    pub(crate) fn push_event(&mut self, kind: EventKind) {
        self.events.push(kind);
    }

    /// The goals `ids` as an event reports them: cumulative stats, and with `state` their status
    /// and summary.
    pub(crate) fn affected(&self, ids: &[GoalId], state: bool) -> Vec<AffectedGoal> {
        ids.iter()
            .filter_map(|id| self.goal(id))
            .map(|g| AffectedGoal {
                goal_id: g.id.clone(),
                status: state.then_some(g.status),
                summary: if state { g.summary.clone() } else { None },
                self_stats: None,
                cumulative_stats: g.cumulative_stats.clone(),
            })
            .collect()
    }

    /// The indices of the descendants of the goal at `index` (children stand after parents).
    pub(crate) fn descendants(&self, index: usize) -> Vec<usize> {
        let Some(root) = self.goals.get(index) else { return Vec::new() };
        let mut inside: BTreeSet<&GoalId> = BTreeSet::from([&root.id]);
        let mut out = Vec::new();
        for (i, goal) in self.goals.iter().enumerate().skip(index + 1) {
            if goal.parent_id.as_ref().is_some_and(|p| inside.contains(p)) {
                inside.insert(&goal.id);
                out.push(i);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goals::fixtures::test_support::{id, run, tree_after};
    use crate::model::{ContentPart, Role, ToolCall};

    fn message(goal: Option<u32>, tools: &[&str]) -> Message {
        let content: Vec<ContentPart> = tools
            .iter()
            .enumerate()
            .map(|(i, name)| {
                ContentPart::ToolCall(ToolCall {
                    id: format!("c{i}").into(),
                    name: (*name).into(),
                    arguments: "{}".into(),
                })
            })
            .collect();
        Message {
            goal_id: goal.map(id),
            tokens: Some(40),
            cost: Some(0.5),
            ..Message::new("t".into(), 7, Role::Assistant, content)
        }
    }

    #[test]
    fn recording_a_message_counts_it_and_names_it_in_the_event() {
        let mut tree = tree_after(&[r#"{"add": "a"}"#, r#"{"focus": "1"}"#]);
        assert_eq!(tree.record(&message(Some(1), &["Read", "Bash"])).unwrap(), vec![id(1)]);
        let goal = tree.goal(&id(1)).unwrap();
        assert_eq!((goal.self_stats.total_tokens, goal.self_stats.total_cost), (40, 0.5));
        assert_eq!(goal.self_stats.preview.text().as_deref(), Some("read → bash"));
        let Some(EventKind::MessageAdded { message_id, .. }) = tree.events().events().last().map(|e| &e.kind) else {
            panic!("no message_added");
        };
        assert_eq!(message_id.as_ref().map(MessageId::as_str), Some("m000007"));
        assert_eq!(tree.record(&message(None, &[])).unwrap_err().message, "message m000007 belongs to no goal");
    }

    #[test]
    fn a_branch_tree_numbers_on_its_own_and_says_so_in_its_events() {
        let mut branch = GoalTree::for_branch("A".into(), "try JWT");
        run(&mut branch, r#"{"add": "design, build", "focus": "1"}"#);
        branch.record_message(&id(1), 3, 0.0, &[]).unwrap();
        assert_eq!(branch.goal(&id(2)).unwrap().branch_id, Some("A".into()));
        let names: Vec<&str> = branch.events().events().iter().map(|e| e.kind.name()).collect();
        assert_eq!(names, vec!["branch_goal_added", "branch_goal_added", "goal_updated", "branch_message_added"]);
        let json = branch.to_json();
        assert!(json.contains("\"branch_id\": \"A\""));
        assert_eq!(GoalTree::from_json(&json).unwrap().branch_id(), Some(&"A".into()));
    }

    #[test]
    fn a_failed_change_keeps_the_tree_and_its_log() {
        let mut tree = tree_after(&[r#"{"add": "a"}"#]);
        let before = tree.clone();
        let result: Result<(), ToolError> = tree.transact(|t| {
            t.add_goals(&["b"], "", crate::goals::Placement::TopLevel)?;
            Err(ToolError::new("no"))
        });
        assert_eq!(result.unwrap_err().message, "no");
        assert_eq!(tree, before);
        // Ids handed out by the dropped draft are handed out again.
        assert_eq!(tree.add_goals(&["b"], "", crate::goals::Placement::TopLevel).unwrap(), vec![id(2)]);
        assert_eq!(tree.events().last_id(), 2);
    }

    #[test]
    fn the_trace_completes_once_with_its_totals() {
        let mut tree = tree_after(&[r#"{"add": "a, b"}"#, r#"{"focus": "1"}"#]);
        tree.record_message(&id(1), 10, 0.25, &[]).unwrap();
        tree.complete_trace().unwrap();
        assert!(tree.is_completed());
        let Some(EventKind::TraceCompleted { stats }) = tree.events().events().last().map(|e| &e.kind) else {
            panic!("no trace_completed");
        };
        assert_eq!((stats.message_count, stats.total_tokens, stats.total_cost), (1, 10, 0.25));
        assert_eq!(tree.complete_trace().unwrap_err().message, "the trace is already completed");
    }

    #[test]
    fn ancestors_stop_on_cycles() {
        let mut tree = tree_after(&[r#"{"add": "a"}"#, r#"{"focus": "1"}"#, r#"{"add": "b"}"#]);
        tree.goals_mut()[0].parent_id = Some(id(2));
        assert_eq!(tree.ancestors(&id(2)), vec![id(1), id(2)]);
        assert!(tree.validate().unwrap_err().contains("parent cycle"));
        // Nothing loops or panics on a broken tree.
        let _ = (tree.to_prompt(), tree.display_numbers(), tree.to_history_string(&[]));
    }
}
