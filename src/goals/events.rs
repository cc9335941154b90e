//! Events (R8.2): every change of a goal tree as a numbered event, for `events.jsonl` and for a
//! consumer (the DAG view) that resumes after the last id it saw.

use serde::{Deserialize, Serialize};

use super::{Branch, Goal, GoalStats, GoalStatus, PlanRevision};
use crate::error::{Error, Result};
use crate::model::{BranchId, GoalId, MessageId};

/// One event: an id, increasing by one from 1 within a log, and what happened.
/// Serialized flat: `{"id": 3, "type": "goal_added", "goal": {…}, …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "EngineEvent"))]
pub struct Event {
    pub id: u64,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened, with seed 002's payloads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    /// A goal of the main line was added, with its full data.
    GoalAdded {
        goal: Goal,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_id: Option<GoalId>,
    },
    /// A goal's status or summary changed; `affected_goals` lists every goal that changed with
    /// it (cascaded completions, focus moves), the goal itself first.
    GoalUpdated {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        branch_id: Option<BranchId>,
        goal_id: GoalId,
        updates: GoalUpdates,
        affected_goals: Vec<AffectedGoal>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        current_id: Option<GoalId>,
    },
    /// Goals that never ran were deleted by `abandon` (R6.4): the goal and its descendants.
    GoalRemoved {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        branch_id: Option<BranchId>,
        goal_id: GoalId,
        removed: Vec<GoalId>,
        affected_goals: Vec<AffectedGoal>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        current_id: Option<GoalId>,
    },
    /// A message of the main line was counted: its goal (self and cumulative stats), then every
    /// ancestor (cumulative stats), nearest first.
    MessageAdded {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_id: Option<MessageId>,
        goal_id: GoalId,
        affected_goals: Vec<AffectedGoal>,
    },
    TraceCompleted {
        stats: GoalStats,
    },
    BranchStarted {
        explore_start_id: GoalId,
        branch: Branch,
    },
    BranchGoalAdded {
        branch_id: BranchId,
        goal: Goal,
    },
    BranchMessageAdded {
        branch_id: BranchId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_id: Option<MessageId>,
        goal_id: GoalId,
        affected_goals: Vec<AffectedGoal>,
    },
    BranchCompleted {
        branch_id: BranchId,
        summary: String,
    },
    ExploreCompleted {
        explore_start_id: GoalId,
        merge_goal_id: GoalId,
        merge_summary: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        selected_branch: Option<BranchId>,
    },
    /// The agent revised its plan (R6.9).
    PlanRevised {
        revision: PlanRevision,
    },
}

impl EventKind {
    /// The `type` of the serialized event.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::GoalAdded { .. } => "goal_added",
            EventKind::GoalUpdated { .. } => "goal_updated",
            EventKind::GoalRemoved { .. } => "goal_removed",
            EventKind::MessageAdded { .. } => "message_added",
            EventKind::TraceCompleted { .. } => "trace_completed",
            EventKind::BranchStarted { .. } => "branch_started",
            EventKind::BranchGoalAdded { .. } => "branch_goal_added",
            EventKind::BranchMessageAdded { .. } => "branch_message_added",
            EventKind::BranchCompleted { .. } => "branch_completed",
            EventKind::ExploreCompleted { .. } => "explore_completed",
            EventKind::PlanRevised { .. } => "plan_revised",
        }
    }
}

/// The new state of the goal an update is about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct GoalUpdates {
    pub status: GoalStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// A goal touched by an event: its cumulative stats always, the rest when the event changed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct AffectedGoal {
    pub goal_id: GoalId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<GoalStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_stats: Option<GoalStats>,
    pub cumulative_stats: GoalStats,
}

/// The events of one trace, ids increasing by one.
#[derive(Debug, Clone, PartialEq)]
pub struct EventLog {
    next_id: u64,
    events: Vec<Event>,
}

impl Default for EventLog {
    fn default() -> Self {
        EventLog { next_id: 1, events: Vec::new() }
    }
}

impl EventLog {
    /// Append an event and return its id.
    pub fn push(&mut self, kind: EventKind) -> u64 {
        let id = self.next_id;
        self.next_id = self.next_id.saturating_add(1);
        self.events.push(Event { id, kind });
        id
    }

    /// Every event, oldest first.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The events after `since_event_id`, for a consumer resuming from it (0: all of them).
    pub fn since(&self, since_event_id: u64) -> &[Event] {
        let start = self.events.partition_point(|e| e.id <= since_event_id);
        &self.events[start..]
    }

    /// The id of the newest event; 0 when there is none.
    pub fn last_id(&self) -> u64 {
        self.next_id - 1
    }

    /// Move the events of `other` (a branch's tree, say) to the end of this log, renumbered.
    pub fn append_from(&mut self, other: &mut EventLog) {
        for event in other.events.drain(..) {
            self.push(event.kind);
        }
    }

    /// An empty log that numbers on from this one (for a draft that may be dropped).
    pub(crate) fn continuation(&self) -> EventLog {
        EventLog { next_id: self.next_id, events: Vec::new() }
    }

    /// Keep the events of a continuation made from this log.
    pub(crate) fn absorb(&mut self, continuation: EventLog) {
        self.events.extend(continuation.events);
        self.next_id = self.next_id.max(continuation.next_id);
    }

    /// `events.jsonl`: one event per line, each line ending with a newline.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for event in &self.events {
            // An event holds only strings, numbers and finite floats: it always serializes.
            if let Ok(line) = serde_json::to_string(event) {
                out.push_str(&line);
                out.push('\n');
            }
        }
        out
    }

    /// Read `events.jsonl` back; ids must increase. Blank lines are skipped.
    pub fn from_jsonl(text: &str) -> Result<EventLog> {
        let mut log = EventLog::default();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let event: Event = serde_json::from_str(line)
                .map_err(|e| Error::InvalidInput(format!("events.jsonl line {}: {e}", n + 1)))?;
            if event.id < log.next_id {
                return Err(Error::InvalidInput(format!(
                    "events.jsonl line {}: event id {} does not increase (previous {})",
                    n + 1,
                    event.id,
                    log.last_id()
                )));
            }
            log.next_id = event.id.saturating_add(1);
            log.events.push(event);
        }
        Ok(log)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completed(branch: &str) -> EventKind {
        EventKind::BranchCompleted { branch_id: branch.into(), summary: format!("{branch} works") }
    }

    #[test]
    fn ids_increase_and_consumers_resume() {
        let mut log = EventLog::default();
        assert_eq!(log.last_id(), 0);
        assert_eq!(log.push(completed("A")), 1);
        assert_eq!(log.push(completed("B")), 2);
        assert_eq!(log.since(0).len(), 2);
        assert_eq!(log.since(1)[0].id, 2);
        assert!(log.since(2).is_empty());
        assert!(log.since(99).is_empty());

        let mut branch = EventLog::default();
        branch.push(completed("C"));
        log.append_from(&mut branch);
        assert!(branch.events().is_empty());
        assert_eq!(log.events().iter().map(|e| e.id).collect::<Vec<_>>(), vec![1, 2, 3]);
    }

    #[test]
    fn the_jsonl_form_is_flat_and_reads_back() {
        let mut log = EventLog::default();
        log.push(completed("A"));
        log.push(EventKind::TraceCompleted { stats: GoalStats::default() });
        let text = log.to_jsonl();
        assert_eq!(
            text,
            "{\"id\":1,\"type\":\"branch_completed\",\"branch_id\":\"A\",\"summary\":\"A works\"}\n\
             {\"id\":2,\"type\":\"trace_completed\",\"stats\":{\"message_count\":0,\"total_tokens\":0,\"total_cost\":0.0}}\n"
        );
        assert_eq!(EventLog::from_jsonl(&text).unwrap(), log);
        let swapped: String = text.lines().rev().map(|l| format!("{l}\n")).collect();
        assert!(EventLog::from_jsonl(&swapped).unwrap_err().to_string().contains("does not increase"));
        assert!(EventLog::from_jsonl("{\"id\":1}").unwrap_err().to_string().contains("line 1"));
    }
}
