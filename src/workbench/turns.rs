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
    if newest_outputs(messages, hot).any(|output| logs::recognise(output).is_some()) {
        fired.push(Trigger::TestRound);
    }
    if tail.iter().skip(1).any(|m| m.role == Role::User) {
        fired.push(Trigger::RoundEnd);
    }
    fired
}

/// The outputs of the newest turn of `messages[hot..]`.
fn newest_outputs(messages: &[Message], hot: usize) -> impl Iterator<Item = &str> {
    let newest_turn = turns(messages, hot).pop().unwrap_or(messages.len()..messages.len());
    outputs_of(messages.get(newest_turn).unwrap_or_default())
}

/// The outputs in `turn`: tool results and observations.
fn outputs_of(turn: &[Message]) -> impl Iterator<Item = &str> {
    let observed = turn.iter().filter(|m| m.role == Role::Observation).flat_map(Message::texts);
    turn.iter().flat_map(Message::tool_results).map(|r| r.output.as_str()).chain(observed)
}

/// How many of the newest turns [`wrapping_up`] looks at.
const WRAP_UP_TURNS: usize = 3;

/// Whether the agent looks to be wrapping up: one of its newest turns shows a test or build run
/// with nothing failing, or a diff of the workspace. Runs tend to end within a few calls of
/// either, too soon for a rewrite chosen by a trigger to pay back, so it waits (docs/engine.md,
/// "Never worse than none").
pub fn wrapping_up(messages: &[Message], hot: usize) -> bool {
    let newest = turns(messages, hot);
    let from = newest.len().saturating_sub(WRAP_UP_TURNS);
    let outputs = newest[from..].iter().flat_map(|turn| outputs_of(&messages[turn.clone()]));
    outputs.into_iter().any(|output| {
        let passed = logs::recognise(output).is_some_and(|facts| {
            let failures = [facts.failed, facts.errors, facts.error_count].into_iter().flatten().sum::<u64>();
            failures == 0 && facts.failing.is_empty() && facts.first_failure.is_none()
        });
        passed || output.trim_start().starts_with("diff --git ")
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ContentPart, ToolCall, ToolCallId, ToolResult, ToolStatus};

    fn turn(n: usize, output: &str) -> [Message; 2] {
        let id = format!("c{n}");
        let call = ToolCall { id: ToolCallId::from(id.as_str()), name: "bash".into(), arguments: "{}".into() };
        let result = ToolResult {
            call_id: ToolCallId::from(id.as_str()),
            name: "bash".into(),
            status: ToolStatus::Ok,
            output: output.into(),
            stderr: None,
            exit_code: Some(0),
        };
        let trace = crate::model::TraceId::from("t");
        [
            Message::new(trace.clone(), 2 * n as u64, Role::Assistant, vec![ContentPart::ToolCall(call)]),
            Message::new(trace, 2 * n as u64 + 1, Role::Tool, vec![ContentPart::ToolResult(result)]),
        ]
    }

    /// A green test run or a diff of the workspace among the three newest turns: wrapping up.
    #[test]
    fn a_green_test_run_or_a_diff_means_the_agent_is_wrapping_up() {
        let session =
            "============================= test session starts ==============================\ncollected 12 items\n\n";
        let green = &format!("{session}tests/test_a.py ............ [100%]\n\n======= 12 passed in 0.31s =======\n");
        let red = &format!(
            "{session}tests/test_a.py F........... [100%]\n\nFAILED tests/test_a.py::test_x - assert 1 == 2\n\
             ======= 1 failed, 11 passed in 0.40s =======\n"
        );
        let diff = "diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py";
        let run =
            |outputs: &[&str]| -> Vec<Message> { outputs.iter().enumerate().flat_map(|(n, o)| turn(n, o)).collect() };
        assert!(wrapping_up(&run(&["ls", green, "cat a.py"]), 0));
        assert!(wrapping_up(&run(&["ls", "cat a.py", diff]), 0));
        assert!(!wrapping_up(&run(&["ls", red, "cat a.py"]), 0), "a failing run is work still to do");
        assert!(!wrapping_up(&run(&[green, "ls", "cat a.py", "sed -n 1,9p a.py"]), 0), "three turns back at most");
    }
}
