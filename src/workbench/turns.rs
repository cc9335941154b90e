//! Turns and the triggers that nominate a tail compaction (R5.4, R5.5).
//!
//! A turn is one step of the agent: an assistant message with the tool results (or, acting
//! through text, the observation) that answer it,
//! or a user or system message on its own. Windows are whole turns, so a tool call is never
//! separated from its result (R4.2).

use std::collections::BTreeSet;
use std::ops::Range;

use crate::compress::{CompressConfig, Family, family_of, logs};
use crate::config::WorkbenchConfig;
use crate::model::{Message, Role};

/// The turns of `messages[from..]` as raw message ranges.
pub fn turns(messages: &[Message], from: usize) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for (i, message) in messages.iter().enumerate().skip(from) {
        match out.last_mut() {
            Some(turn) if matches!(message.role, Role::Tool | Role::Observation) => turn.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

/// Why a compaction was nominated (R5.5); the cost model still decides.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// This many tool calls since the last compaction.
    ToolCalls(usize),
    /// Raw tool output is this share (percent) of the uncompacted tail.
    RawOutputShare(u32),
    /// The same file read, or the same command run, twice.
    Repeat(String),
    /// A test or build run finished (a logical breakpoint).
    TestRound,
    /// A round ended: a new user message follows finished work.
    RoundEnd,
    /// An orchestrator-marked span ended.
    SpanEnd(String),
    /// The next prompt would pass the compaction threshold.
    Window,
}

impl Trigger {
    pub fn describe(&self) -> String {
        match self {
            Trigger::ToolCalls(n) => format!("{n} tool calls since the last compaction"),
            Trigger::RawOutputShare(p) => format!("raw tool output is {p}% of the uncompacted tail"),
            Trigger::Repeat(what) => format!("repeated: {what}"),
            Trigger::TestRound => "a test or build run finished".to_owned(),
            Trigger::RoundEnd => "a round ended".to_owned(),
            Trigger::SpanEnd(id) => format!("span {id} ended"),
            Trigger::Window => "the prompt reached the compaction threshold".to_owned(),
        }
    }
}

/// The triggers that fire over the uncompacted tail `messages[hot..]`. `tokens_of` gives the
/// prompt tokens of a message, `output_tokens_of` those of its tool outputs.
pub fn triggers(
    messages: &[Message],
    hot: usize,
    config: &WorkbenchConfig,
    compress: &CompressConfig,
    tokens_of: impl Fn(usize) -> usize,
    output_tokens_of: impl Fn(usize) -> usize,
) -> Vec<Trigger> {
    let mut fired = Vec::new();
    let tail = messages.get(hot..).unwrap_or_default();
    // A reply acting through text made one call: the observation that answers it (recorded as
    // one only after such a reply) counts it without reading the reply again.
    let observations = tail.iter().filter(|m| m.role == Role::Observation).count();
    let calls = tail.iter().flat_map(Message::tool_calls).count() + observations;
    if calls >= config.trigger_tool_calls as usize {
        fired.push(Trigger::ToolCalls(calls));
    }
    let total: usize = (hot..messages.len()).map(&tokens_of).sum();
    let outputs: usize = (hot..messages.len()).map(&output_tokens_of).sum();
    let share = if total == 0 { 0.0 } else { outputs as f64 / total as f64 };
    // A share needs a tail worth compacting behind it: at least a few thousand tokens.
    if total >= 4 * config.block_tokens as usize && share > config.raw_output_share {
        fired.push(Trigger::RawOutputShare((share * 100.0).round() as u32));
    }
    if let Some(what) = first_repeat(tail, compress) {
        fired.push(Trigger::Repeat(what));
    }
    let newest_turn = turns(messages, hot).pop().unwrap_or(messages.len()..messages.len());
    let newest = messages.get(newest_turn).unwrap_or_default();
    let observed = newest.iter().filter(|m| m.role == Role::Observation).flat_map(Message::texts);
    let outputs = newest.iter().flat_map(Message::tool_results).map(|r| r.output.as_str()).chain(observed);
    if outputs.into_iter().any(|output| logs::recognise(output).is_some()) {
        fired.push(Trigger::TestRound);
    }
    if tail.iter().skip(1).any(|m| m.role == Role::User) {
        fired.push(Trigger::RoundEnd);
    }
    fired
}

/// The first file read twice or command run twice in `tail`, named.
fn first_repeat(tail: &[Message], compress: &CompressConfig) -> Option<String> {
    let mut seen = BTreeSet::new();
    for message in tail {
        let by_text = message.text_action().map(|command| format!("ran `{}`", command.trim()));
        let by_tools = message.tool_calls().map(|call| {
            let args: serde_json::Value = serde_json::from_str(&call.arguments).unwrap_or_default();
            match family_of(&call.name, &args, compress) {
                Family::Read => args_path(&args).map(|p| format!("read {p}")),
                Family::Bash => args.get("command").and_then(|c| c.as_str()).map(|c| format!("ran `{}`", c.trim())),
                _ => None,
            }
        });
        for key in by_tools.chain([by_text]).flatten() {
            if !seen.insert(key.clone()) {
                return Some(key);
            }
        }
    }
    None
}

/// The file a call's arguments name, under the keys agents use.
pub fn args_path(args: &serde_json::Value) -> Option<&str> {
    ["file_path", "filePath", "path"].iter().find_map(|k| args.get(*k).and_then(|v| v.as_str()))
}
