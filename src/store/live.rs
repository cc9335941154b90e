//! What a viewer following sessions as they are written reads of a trace root (the VS Code
//! extension's live views): the trace directories, one trace's summary (its `meta.json`, whether
//! a proxy wrote it and for which agent), one trace's state (plan, the proxy's call records, the
//! newest prompt), and single messages. Each summary and state carries a stamp made from the size
//! and time of the files it was read from: asked again with that stamp, an unchanged trace costs
//! a `stat` per file and is not read or parsed. Reading never writes; a file being written (a
//! `calls.jsonl` line without its newline yet) is left for the next read.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::jsonl;
use super::layout::{self, TraceDir, check_root};
use super::load::{parse_json, read_goal_tree, read_message, read_meta_shown, read_optional};
use super::records::TraceMeta;
use super::status::IDLE_MS;
use crate::error::Result;
use crate::goals::GoalTree;
use crate::host::{Host, HostError, HostErrorKind};
use crate::model::{Message, MessageId};
use crate::prompt::Assembly;

/// One trace as a list of sessions shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionSummary {
    pub meta: TraceMeta,
    /// A proxy wrote it: the trace has the proxy's `calls.jsonl`.
    pub proxied: bool,
    /// The agent of its calls (the first call that names one, as `Claude Code 2.1.328`; older
    /// stores have the User-Agent product, `claude-cli/2.1.3`), or empty.
    pub agent: String,
    /// Changes whenever `meta.json` or `calls.jsonl` changed.
    pub stamp: String,
}

/// One trace as the views following it show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionState {
    pub meta: TraceMeta,
    /// The main line's plan (`goal.json`), when the trace has one that can be read.
    pub goal_tree: Option<GoalTree>,
    /// The proxy's record of each call, in order (empty for a trace no proxy wrote).
    pub calls: Vec<Value>,
    /// The newest call's prompt as the engine assembled it, when saved and readable.
    pub prompt: Option<Assembly>,
    /// What could not be read (a damaged file or line); the rest is still there.
    pub notes: Vec<String>,
    /// Changes whenever a file this state was read from changed.
    pub stamp: String,
}

/// Read access for a viewer to the traces under one root.
pub struct LiveTraces<'h, H: Host> {
    host: &'h H,
    root: String,
}

impl<'h, H: Host> LiveTraces<'h, H> {
    pub fn new(host: &'h H, root: &str) -> Result<Self> {
        check_root(root)?;
        Ok(LiveTraces { host, root: root.to_owned() })
    }

    /// The ids of the directories under the root that may hold a trace, sorted; none when the
    /// root does not exist yet. A directory may not have its `meta.json` yet.
    pub async fn trace_ids(&self) -> Result<Vec<String>> {
        let entries = match self.host.list_dir(&self.root).await {
            Ok(entries) => entries,
            Err(e) if e.kind == HostErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        let mut ids: Vec<String> = entries
            .into_iter()
            .filter(|e| e.is_dir && layout::check_id("trace id", &e.name).is_ok())
            .map(|e| e.name)
            .collect();
        ids.sort();
        Ok(ids)
    }

    /// The summary of `trace_id`; `None` when its stamp is still `since`. A directory without
    /// `meta.json` is `host_not_found`, a newer format `unsupported_version`, damage `invalid_input`.
    pub async fn summary(&self, trace_id: &str, since: Option<&str>) -> Result<Option<SessionSummary>> {
        let dir = TraceDir::new(&self.root, trace_id)?;
        let stamp = self.stamp(&dir, &[layout::META, layout::CALLS]).await?;
        if since == Some(stamp.as_str()) {
            return Ok(None);
        }
        let meta = read_meta_shown(self.host, &dir, trace_id).await?;
        let calls = read_optional(self.host, &dir.file(layout::CALLS)).await?;
        let agent = calls.as_deref().map(first_agent).unwrap_or_default();
        Ok(Some(SessionSummary { meta, proxied: calls.is_some(), agent, stamp }))
    }

    /// The state of `trace_id`; `None` when its stamp is still `since`. Its `meta.json` must be
    /// readable (as for [`LiveTraces::summary`]); damage elsewhere is a note.
    pub async fn state(&self, trace_id: &str, since: Option<&str>) -> Result<Option<SessionState>> {
        let dir = TraceDir::new(&self.root, trace_id)?;
        let stamp = self.stamp(&dir, &[layout::META, layout::GOAL, layout::CALLS, layout::PROMPT]).await?;
        if since == Some(stamp.as_str()) {
            return Ok(None);
        }
        let meta = read_meta_shown(self.host, &dir, trace_id).await?;
        let mut notes = Vec::new();
        let goal_tree = read_goal_tree(self.host, &dir).await.unwrap_or_else(|e| {
            notes.push(e.to_string());
            None
        });
        let calls = self.calls(&dir, &mut notes).await?;
        let prompt_path = dir.file(layout::PROMPT);
        let prompt = match read_optional(self.host, &prompt_path).await? {
            None => None,
            Some(text) => parse_json::<Assembly>(&prompt_path, &text).map_err(|e| notes.push(e.to_string())).ok(),
        };
        Ok(Some(SessionState { meta, goal_tree, calls, prompt, notes, stamp }))
    }

    /// One message of the main line by its id (`m000012`), `None` when the trace has no such
    /// message; a damaged file is `invalid_input`. Messages are written once.
    pub async fn message(&self, trace_id: &str, message_id: &str) -> Result<Option<Message>> {
        read_message(self.host, &TraceDir::new(&self.root, trace_id)?, message_id).await
    }

    /// The first message the trace recorded (what an agent's session opened with).
    pub async fn first_message(&self, trace_id: &str) -> Result<Option<Message>> {
        self.message(trace_id, MessageId::for_sequence(0).as_str()).await
    }

    /// The whole lines of `calls.jsonl` that are call records; a line still being written waits
    /// for the next read, any other line is a note.
    async fn calls(&self, dir: &TraceDir, notes: &mut Vec<String>) -> Result<Vec<Value>> {
        let path = dir.file(layout::CALLS);
        let text = read_optional(self.host, &path).await?.unwrap_or_default();
        let whole = &text[..text.rfind('\n').map_or(0, |end| end + 1)];
        let lines = jsonl::parse::<CallLine>(&path, whole);
        notes.extend(lines.notes);
        Ok(lines.records.into_iter().map(|line| line.0).collect())
    }

    /// `size:mtime` of each of `files` in `dir` (`-` for one that does not exist), then `idle`
    /// once [`IDLE_MS`] passed since the newest changed. Without `meta.json` the directory is
    /// not a trace yet: `host_not_found`.
    async fn stamp(&self, dir: &TraceDir, files: &[&str]) -> Result<String> {
        let mut parts = Vec::with_capacity(files.len());
        let mut newest = 0;
        for name in files {
            let path = dir.file(name);
            let part = match self.host.stat(&path).await? {
                Some(stat) => {
                    newest = newest.max(stat.mtime_ms);
                    format!("{}:{}", stat.size, stat.mtime_ms)
                }
                None if *name == layout::META => {
                    return Err(
                        HostError::new(HostErrorKind::NotFound, format!("no trace here yet (no {path})")).into()
                    );
                }
                None => "-".to_owned(),
            };
            parts.push(part);
        }
        // A session idle past the span may show another status with no file changed.
        if self.host.now_ms() >= newest.saturating_add(IDLE_MS) {
            parts.push("idle".to_owned());
        }
        Ok(parts.join("|"))
    }
}

/// The agent named by the first call record that names one.
fn first_agent(calls: &str) -> String {
    #[derive(Deserialize)]
    struct AgentOnly {
        #[serde(default)]
        agent: String,
    }
    calls
        .lines()
        .filter_map(|line| serde_json::from_str::<AgentOnly>(line).ok())
        .map(|a| a.agent)
        .find(|agent| !agent.is_empty())
        .unwrap_or_default()
}

/// One line of `calls.jsonl` as the proxy writes it (`crate::proxy::CallRecord`), kept whole: an
/// object whose `call`, `client_tokens` and `prompt_tokens` are counts.
struct CallLine(Value);

impl<'de> Deserialize<'de> for CallLine {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let counted = |key: &str| value.get(key).is_some_and(Value::is_u64);
        if ["call", "client_tokens", "prompt_tokens"].into_iter().all(counted) {
            Ok(CallLine(value))
        } else {
            Err(serde::de::Error::custom(
                "not a call record (it needs the counts call, client_tokens and prompt_tokens)",
            ))
        }
    }
}
