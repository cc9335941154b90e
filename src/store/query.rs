//! The query API (R8.4), the same for the host, for wasm and over HTTP: the list of traces, a
//! trace with its goal tree and branches, the messages of one goal, one branch in detail, and
//! the events after an id, and the proxy's record of each call. Shapes follow seed 002's REST
//! section. Reading never writes.

use std::collections::BTreeMap;

use serde::Serialize;

use super::jsonl::Lines;
use super::layout::{self, TraceDir, check_root};
use super::load::{
    parse_json, read_events, read_goal_tree, read_lines, read_messages, read_meta, read_meta_shown, read_optional,
};
use super::records::{BranchMeta, TraceMeta};
use crate::error::{Error, Result};
use crate::goals::{Branch, Event, Goal, GoalTree, Phase, PlanRevision};
use crate::host::{Host, HostError, HostErrorKind};
use crate::model::{GoalId, Message};

/// `{"traces": [...]}`, newest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TraceList {
    pub traces: Vec<TraceMeta>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, ts(optional = nullable))]
    pub notes: Vec<String>,
}

/// A trace with its main-line goal tree and its branches' metadata (not their goals).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TraceDetail {
    pub trace: TraceMeta,
    pub goal_tree: GoalTreeView,
    pub branches: BTreeMap<String, BranchSummary>,
    pub last_event_id: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, ts(optional = nullable))]
    pub notes: Vec<String>,
}

/// A goal tree as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct GoalTreeView {
    pub mission: String,
    pub current_id: Option<GoalId>,
    pub goals: Vec<Goal>,
    /// The explorations' branches: the model's `explore` calls, or the agent's own sub-agents.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, ts(optional = nullable))]
    pub branches: Vec<Branch>,
    /// The revisions of the agent's plan, oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, ts(optional = nullable))]
    pub revisions: Vec<PlanRevision>,
    /// The phase of the work (R6.8).
    pub phase: Phase,
    /// How many steps the plan has (the `n` of "step k of n").
    pub steps: usize,
}

impl From<&GoalTree> for GoalTreeView {
    fn from(tree: &GoalTree) -> Self {
        GoalTreeView {
            mission: tree.mission().to_owned(),
            current_id: tree.current_id().cloned(),
            goals: tree.goals().to_vec(),
            branches: tree.branches().to_vec(),
            revisions: tree.revisions().to_vec(),
            phase: tree.phase(),
            steps: tree.plan_steps().count(),
        }
    }
}

/// A branch as the trace shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct BranchSummary {
    #[serde(flatten)]
    pub meta: BranchMeta,
    pub last_message: Option<MessagePreview>,
}

/// The newest message of a branch, for a preview.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct MessagePreview {
    pub message_id: String,
    pub role: crate::model::Role,
    pub content: String,
    pub created_at: u64,
}

/// One branch in detail: its metadata, its own goal tree and its messages.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct BranchDetail {
    #[serde(flatten)]
    pub meta: BranchMeta,
    pub goal_tree: GoalTreeView,
    pub messages: Vec<Message>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, ts(optional = nullable))]
    pub notes: Vec<String>,
}

/// The messages of one goal of the main line (the detail of a DAG edge).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct GoalMessages {
    pub trace_id: String,
    pub goal_id: GoalId,
    pub messages: Vec<Message>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, ts(optional = nullable))]
    pub notes: Vec<String>,
}

/// The events after an id.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct EventsPage {
    pub trace_id: String,
    pub events: Vec<Event>,
    pub last_event_id: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, ts(optional = nullable))]
    pub notes: Vec<String>,
}

/// Read access to the traces under one root.
/// `{"trace_id", "calls", "notes"?}`: one record per call the proxy made for the trace, the
/// engine's prompt and expected cached tokens next to the provider's reported usage (empty
/// for a trace the proxy did not make).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallsPage {
    pub trace_id: String,
    pub calls: Vec<serde_json::Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

pub struct TraceStore<'h, H: Host> {
    pub(super) host: &'h H,
    pub(super) root: String,
    /// Team mode: only this member's traces are seen ([`TraceStore::only_person`]).
    pub(super) person: Option<String>,
}

impl<'h, H: Host> TraceStore<'h, H> {
    pub fn new(host: &'h H, root: &str) -> Result<Self> {
        check_root(root)?;
        Ok(TraceStore { host, root: root.to_owned(), person: None })
    }

    /// The store as team member `person` sees it: their traces only (`meta.json`'s `person`);
    /// another's is not found, as if it did not exist.
    pub fn only_person(mut self, person: &str) -> Self {
        self.person = Some(person.to_owned());
        self
    }

    /// Whether `trace_id` is one this store shows: every trace, or the member's own. Another
    /// member's trace is refused as not found, in the words a missing one is.
    pub async fn check_visible(&self, trace_id: &str) -> Result<()> {
        let Some(person) = &self.person else { return Ok(()) };
        let dir = TraceDir::new(&self.root, trace_id)?;
        let meta = super::load::read_meta(self.host, &dir, trace_id).await?;
        if meta.person.as_deref() == Some(person.as_str()) {
            return Ok(());
        }
        let path = dir.file(layout::META);
        Err(HostError::new(HostErrorKind::NotFound, format!("no trace `{trace_id}` (no {path})")).into())
    }

    /// Every trace under the root, newest first; a directory without a readable `meta.json`
    /// is named in a note.
    pub async fn list_traces(&self) -> Result<TraceList> {
        let entries = match self.host.list_dir(&self.root).await {
            Ok(entries) => entries,
            Err(e) if e.kind == HostErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        let mut list = TraceList { traces: Vec::new(), notes: Vec::new() };
        for entry in entries.iter().filter(|e| e.is_dir) {
            let Ok(dir) = TraceDir::new(&self.root, &entry.name) else { continue };
            match read_meta_shown(self.host, &dir, &entry.name).await {
                Ok(meta) => list.traces.push(meta),
                Err(e) => list.notes.push(format!("{}: {e}", entry.name)),
            }
        }
        if let Some(person) = &self.person {
            // A member sees their own traces, and no note naming another's.
            list.traces.retain(|meta| meta.person.as_deref() == Some(person.as_str()));
            list.notes.clear();
        }
        list.traces.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| a.trace_id.cmp(&b.trace_id)));
        Ok(list)
    }

    /// A trace with its goal tree and branch metadata. A damaged `goal.json` or branch is a note.
    pub async fn trace(&self, trace_id: &str) -> Result<TraceDetail> {
        let dir = TraceDir::new(&self.root, trace_id)?;
        let trace = read_meta_shown(self.host, &dir, trace_id).await?;
        let mut notes = Vec::new();
        let tree = match read_goal_tree(self.host, &dir).await {
            Ok(tree) => tree,
            Err(e) => {
                notes.push(e.to_string());
                None
            }
        };
        // No plan saved yet: the view of an empty tree with the mission.
        let goal_tree = tree
            .as_ref()
            .map_or_else(|| GoalTreeView::from(&GoalTree::new(trace.mission.as_str())), GoalTreeView::from);
        let mut branches = BTreeMap::new();
        for branch in tree.iter().flat_map(|t| t.branches()) {
            match self.branch_summary(&dir, trace_id, branch.id.as_str()).await {
                Ok(summary) => {
                    branches.insert(branch.id.to_string(), summary);
                }
                Err(e) => notes.push(format!("branch {}: {e}", branch.id)),
            }
        }
        let last_event_id = match read_events(self.host, &dir.file(layout::EVENTS)).await {
            Ok(lines) => {
                notes.extend(lines.notes);
                lines.records.last().map_or(0, |e| e.id)
            }
            Err(e) => {
                notes.push(e.to_string());
                0
            }
        };
        Ok(TraceDetail { trace, goal_tree, branches, last_event_id, notes })
    }

    /// The main-line messages attributed to `goal_id` (an internal id, not a display number).
    pub async fn goal_messages(&self, trace_id: &str, goal_id: &str) -> Result<GoalMessages> {
        let dir = TraceDir::new(&self.root, trace_id)?;
        read_meta(self.host, &dir, trace_id).await?;
        let goal = GoalId::from(goal_id);
        let tree = read_goal_tree(self.host, &dir).await?;
        if tree.as_ref().is_none_or(|t| t.goal(&goal).is_none()) {
            return Err(not_found(format!("no goal `{goal_id}` in trace `{trace_id}`")));
        }
        let (messages, notes) = read_messages(self.host, &dir).await?;
        let messages = messages.into_iter().filter(|m| m.goal_id.as_ref() == Some(&goal)).collect();
        Ok(GoalMessages { trace_id: trace_id.to_owned(), goal_id: goal, messages, notes })
    }

    /// One branch in detail.
    pub async fn branch(&self, trace_id: &str, branch_id: &str) -> Result<BranchDetail> {
        let dir = TraceDir::new(&self.root, trace_id)?;
        read_meta(self.host, &dir, trace_id).await?;
        let branch_dir = dir.branch(branch_id)?;
        let meta = self.branch_meta(&branch_dir, trace_id, branch_id).await?;
        let tree = read_goal_tree(self.host, &branch_dir).await?;
        // No plan saved yet: the view of an empty tree with the mission.
        let goal_tree = tree
            .as_ref()
            .map_or_else(|| GoalTreeView::from(&GoalTree::new(meta.branch.description.as_str())), GoalTreeView::from);
        let (messages, notes) = read_messages(self.host, &branch_dir).await?;
        Ok(BranchDetail { meta, goal_tree, messages, notes })
    }

    /// The proxy's records of the trace's calls, in order (`calls.jsonl`; a torn line is a note).
    pub async fn calls(&self, trace_id: &str) -> Result<CallsPage> {
        let dir = TraceDir::new(&self.root, trace_id)?;
        read_meta(self.host, &dir, trace_id).await?;
        let lines = self.call_lines::<serde_json::Value>(trace_id).await?;
        Ok(CallsPage { trace_id: trace_id.to_owned(), calls: lines.records, notes: lines.notes })
    }

    /// The lines of a trace's `calls.jsonl` read as `T` (one that is not is a note); none when
    /// the trace has no such file. Its `meta.json` is not read.
    pub async fn call_lines<T: serde::de::DeserializeOwned>(&self, trace_id: &str) -> Result<Lines<T>> {
        read_lines::<_, T>(self.host, &TraceDir::new(&self.root, trace_id)?.file(layout::CALLS)).await
    }

    /// The events after `since_event_id` (0: all). An id beyond the newest event is an error:
    /// the caller is looking at another trace or a log that was replaced.
    pub async fn events_after(&self, trace_id: &str, since_event_id: u64) -> Result<EventsPage> {
        let dir = TraceDir::new(&self.root, trace_id)?;
        read_meta(self.host, &dir, trace_id).await?;
        let lines = read_events(self.host, &dir.file(layout::EVENTS)).await?;
        let last_event_id = lines.records.last().map_or(0, |e| e.id);
        if since_event_id > last_event_id {
            return Err(Error::InvalidInput(format!(
                "since_event_id {since_event_id} is beyond the newest event ({last_event_id}) of trace `{trace_id}`"
            )));
        }
        let events = lines.records.into_iter().filter(|e| e.id > since_event_id).collect();
        Ok(EventsPage { trace_id: trace_id.to_owned(), events, last_event_id, notes: lines.notes })
    }

    async fn branch_meta(&self, branch_dir: &TraceDir, trace_id: &str, branch_id: &str) -> Result<BranchMeta> {
        let path = branch_dir.file(layout::META);
        let text = read_optional(self.host, &path).await?;
        let text = text.ok_or_else(|| not_found(format!("no branch `{branch_id}` in trace `{trace_id}`")))?;
        parse_json(&path, &text)
    }

    async fn branch_summary(&self, dir: &TraceDir, trace_id: &str, branch_id: &str) -> Result<BranchSummary> {
        let branch_dir = dir.branch(branch_id)?;
        let meta = self.branch_meta(&branch_dir, trace_id, branch_id).await?;
        let (messages, _) = read_messages(self.host, &branch_dir).await?;
        let last_message = messages.last().map(|m| MessagePreview {
            message_id: m.id.to_string(),
            role: m.role,
            content: m.description.clone(),
            created_at: m.created_at_ms,
        });
        Ok(BranchSummary { meta, last_message })
    }
}

pub(super) fn not_found(message: String) -> Error {
    HostError::new(HostErrorKind::NotFound, message).into()
}
