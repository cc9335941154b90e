//! Importers for recorded agent trajectories (the formats of `../shared/traces`), detected from
//! content. Each yields the messages of one agent context and the boundaries of the LLM calls
//! that were recorded over them. Pure: text in, data out.

use crate::error::Result;
use crate::model::Message;

/// The trajectory formats the importers understand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Format {
    /// vorflux JSON: `trajectory[]` of `llm_call`, `tool_call`, `judge_call`.
    Vorflux,
    /// Claude Code session JSONL (`~/.claude/projects/*.jsonl`).
    ClaudeCode,
    /// SWE-agent `.traj`.
    SweAgent,
    /// mini-swe-agent `.traj.json`.
    MiniSweAgent,
    /// OpenHands CodeAct event streams (`output.jsonl` runs or bare event lists).
    OpenHands,
    /// OpenAI chat JSON (`{messages, tools, response}`), as OpenHands SDK LLM logs write it.
    OpenAiChat,
}

/// One agent context read from a trajectory file.
#[derive(Debug, Clone, PartialEq)]
pub struct Trajectory {
    pub format: Format,
    /// File stem, plus `#<n>` or `#<agent id>` when one file holds several contexts.
    pub name: String,
    /// The context's messages in order; ids `m000000…`, trace id = `name`.
    pub messages: Vec<Message>,
    /// One entry per recorded LLM call, in order: how many leading `messages` its prompt held.
    /// Non-decreasing; every entry ≤ `messages.len()`.
    pub calls: Vec<usize>,
    /// What the importer had to repair or skip (synthesised calls, unknown events …).
    pub notes: Vec<String>,
}

/// Detect the format of `text` and import every agent context in it. `file` names the file in
/// errors, which also give the first offending line.
pub fn import(file: &str, text: &str) -> Result<Vec<Trajectory>> {
    let _ = (file, text);
    todo!("importers")
}
