//! The records the store writes besides messages and goal trees: trace metadata, the execution
//! log, agent-state snapshots, each call's prompt, and branch metadata.

use serde::{Deserialize, Serialize};

use crate::goals::{Branch, GoalStats};
use crate::history::view::RewriteRecord;
use crate::model::{GoalId, MessageId, ToolStatus};
use crate::prompt::{Assembly, PromptView};
use crate::workbench::StateBoard;
use crate::workbench::cost::CallCost;

/// The version of the store's layout this build writes and the newest it reads.
pub const STORE_FORMAT_VERSION: u32 = 1;

/// `meta.json`: what the list of traces shows without reading anything else.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TraceMeta {
    pub version: u32,
    pub trace_id: String,
    pub mission: String,
    /// Milliseconds since the Unix epoch, from the host clock.
    pub created_at: u64,
    pub updated_at: u64,
    pub message_count: u64,
    /// `running` (a host has it open), `completed` (its task was answered), `finished` (its
    /// conversation ended with the agent's answer), `stopped` (closed mid-task: the proxy
    /// stopped, say) or `interrupted` (its host was killed; found at the next start).
    pub status: String,
    #[serde(default)]
    pub branch_count: u64,
    #[serde(default)]
    pub event_count: u64,
    /// The prompt calls prepared so far.
    #[serde(default)]
    pub calls: u64,
    /// The trace this one goes on from: the agent compacted its own history (Claude Code's
    /// `/compact`), and its session went on here with the summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continues: Option<String>,
    /// The call of another trace that started this one: a sub-agent (Claude Code's `Agent`
    /// tool) runs as a branch of its caller's session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_of: Option<BranchOf>,
    /// Calls the upstream refused as invalid in the engine's form, which the proxy's safety net
    /// sent again as the agent's own: their cause is to be found.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallbacks: Vec<Fallback>,
    /// The team member whose session it is (team mode: the proxy's signed-in person).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub person: Option<String>,
}

/// A call sent as the agent's own after the upstream refused the engine's form of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Fallback {
    pub call: u64,
    /// The refusal, as the call's note says it.
    pub why: String,
}

/// The key of `Trace::metadata` that holds `meta.json`'s `fallbacks`.
pub const FALLBACKS_KEY: &str = "fallbacks";

/// The key of `Trace::metadata` that names the trace a session goes on from (`meta.json`'s
/// `continues`).
pub const CONTINUES_KEY: &str = "continues";

/// The key of `Trace::metadata` that names the team member whose session it is (`meta.json`'s
/// `person`).
pub const PERSON_KEY: &str = "person";

/// The key of `Trace::metadata` that holds `meta.json`'s `branch_of`.
pub const BRANCH_OF_KEY: &str = "branch_of";

/// A sub-agent's caller: its trace and the tool call that started the sub-agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct BranchOf {
    pub trace_id: String,
    pub call_id: String,
}

/// How a session ended, as `meta.json`'s `status` says it (until the session records more).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionEnd {
    /// The conversation ended with the agent's answer.
    Finished,
    /// It was closed in the middle of a task.
    Stopped,
}

impl SessionEnd {
    pub fn status(self) -> &'static str {
        match self {
            SessionEnd::Finished => "finished",
            SessionEnd::Stopped => "stopped",
        }
    }
}

/// The status of a trace a host still had open when it was killed.
pub const INTERRUPTED: &str = "interrupted";

/// One line of `log.jsonl`: a tool's input and output as they happened (R8.3), never rewritten.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    pub message_id: MessageId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_id: Option<String>,
    pub call_id: String,
    pub tool: String,
    /// The call's arguments as the model wrote them; empty when the call was not recorded.
    pub arguments: String,
    pub status: ToolStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub output: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    pub at: u64,
}

/// One line of `snapshots.jsonl`: the agent's state when its step changed (R8.3). Appended,
/// never replaced; the latest line wins when `state.json` cannot be read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentSnapshot {
    /// When it was taken: the time of the newest message then.
    pub at: u64,
    /// Messages recorded when it was taken.
    pub messages: u64,
    pub calls: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_goal: Option<GoalId>,
    /// The current goal's description, for a reader of the log.
    #[serde(default)]
    pub step: String,
    pub last_event_id: u64,
    pub board: StateBoard,
}

/// One line of `prompts.jsonl`: a call's prompt as the model received it, with its figures (those
/// of [`crate::prompt::Assembly`]). Its messages and tools are the ids of their parts in
/// `parts.jsonl`, the same parts `state.json` names, each saved once however many calls sent it:
/// a line costs a few dozen bytes per message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallPrompt {
    pub call: u64,
    pub tokens: usize,
    pub tail_rewrite_tokens: usize,
    pub first_changed_byte: Option<usize>,
    pub expected_cached_tokens: usize,
    pub rewrites: Vec<RewriteRecord>,
    pub notes: Vec<String>,
    #[serde(default)]
    pub cost: CallCost,
    pub messages: Vec<String>,
    pub tools: String,
    /// The plan as this call saw it (the main line's goal tree as the API shows it, without
    /// its stats), when it changed since the call saved before: a call's plan is the newest
    /// at or before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<serde_json::Value>,
}

impl CallPrompt {
    /// The ids of the parts it names: its messages', then its tools'.
    pub fn part_ids(&self) -> impl Iterator<Item = &str> {
        self.messages.iter().chain([&self.tools]).map(String::as_str)
    }

    /// The prompt as the call returned it, its parts looked up in `parts`; a missing or
    /// unreadable part is an error naming it.
    pub fn put_back(self, parts: &std::collections::BTreeMap<String, serde_json::Value>) -> Result<Assembly, String> {
        let messages = self.messages.iter().map(|id| part_value(parts, id)).collect::<Result<Vec<_>, _>>()?;
        Ok(Assembly {
            call: self.call,
            view: PromptView { messages, tools: part_value(parts, &self.tools)? },
            tokens: self.tokens,
            tail_rewrite_tokens: self.tail_rewrite_tokens,
            first_changed_byte: self.first_changed_byte,
            expected_cached_tokens: self.expected_cached_tokens,
            rewrites: self.rewrites,
            notes: self.notes,
            cost: self.cost,
        })
    }
}

/// One line of `parts.jsonl`: a large part of `state.json` or of a call's prompt, named by the
/// hash of its saved text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    pub id: String,
    pub value: serde_json::Value,
}

/// The part `id` of `parts`, read as a `T`; missing or unreadable, an error naming it.
pub fn part_value<T: serde::de::DeserializeOwned>(
    parts: &std::collections::BTreeMap<String, serde_json::Value>,
    id: &str,
) -> Result<T, String> {
    let value = parts.get(id).ok_or_else(|| format!("part {id} is missing from parts.jsonl"))?;
    T::deserialize(value).map_err(|e| format!("part {id} is unreadable: {e}"))
}

/// A branch's `meta.json`: the main line's record of it and its totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct BranchMeta {
    #[serde(flatten)]
    pub branch: Branch,
    pub cumulative_stats: GoalStats,
    pub goal_count: u64,
    pub message_count: u64,
}
