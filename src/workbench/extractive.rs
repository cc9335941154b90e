//! The embedded compactor that needs no LLM: a COMPRESSED_TURNS block and a STATE_DELTA built
//! from what happened in the window and before it, never after (no look-ahead).
//!
//! - anchors: the code the agent read or edited in the window, as it is now (reads with the
//!   later edits applied), newest first, within `anchor_tokens`; a region already shown by an
//!   earlier block with the same content is not repeated;
//! - exec assertions: each command or search with its exit code and the assertion of its output
//!   (R3.4 for test and build logs), pointing at its raw message;
//! - what we learned: the agent's conclusions (the sentences that name a cause, a decision, a
//!   result or the code they concern, [`super::conclusions`]) and the files it edited; when the
//!   block is over its budget the least salient give way first;
//! - the delta: the goal, the newest test status, edits and test results as facts with evidence.

use std::collections::BTreeMap;
use std::ops::{Range, RangeInclusive};

use serde_json::Value;

use super::block::{CompressedTurns, Learned, Replaces};
use super::board::{Anchor, Fact, StateBoard, StateDelta};
use super::conclusions::conclusions;
use super::files::{FileModel, Touch};
use crate::compress::{Family, family_of, is_error_message, logs};
use crate::config::Config;
use crate::model::{ContentPart, Message, Role, ToolResult, ToolStatus, tool_calls_by_id};
use crate::tokens::TokenCounter;

/// Lines already shown as anchors, per path: line number → content.
pub type Anchored = BTreeMap<String, BTreeMap<u32, String>>;

/// A block and a delta for `messages[window]`, and notes on what did not fit.
pub struct Extracted {
    pub block: CompressedTurns,
    pub delta: StateDelta,
    pub notes: Vec<String>,
}

/// What a compaction is asked to replace, and what it knows besides.
pub struct Window<'a> {
    /// The whole history; only messages before `range.end` are read.
    pub messages: &'a [Message],
    pub range: Range<usize>,
    pub replaces: Replaces,
    pub goal: &'a str,
    pub board: &'a StateBoard,
}

/// The block and delta for `input.range`; `anchored` learns the lines the new anchors show.
pub fn compact(input: Window<'_>, anchored: &mut Anchored, config: &Config, counter: &TokenCounter) -> Extracted {
    let Window { messages, range: window, replaces, goal, board } = input;
    let seen = messages.get(..window.end).unwrap_or(messages);
    let (model, touches) = FileModel::build(seen, &config.compress);
    let in_window: Vec<&Touch> = touches.iter().filter(|t| window.contains(&t.message)).collect();
    let mut notes = Vec::new();
    let anchors = anchors(&model, &in_window, anchored, config.workbench.anchor_tokens as usize, counter, &mut notes);
    let commands = commands(seen, window.clone(), config);
    // Least salient first, so that fitting drops those; then back in the window's order.
    let mut learned: Vec<(u32, usize, Learned)> = statements(seen, window.clone());
    learned.extend(edits(&in_window).into_iter().map(|l| (u32::MAX, window.end, l)));
    learned.sort_by_key(|(salience, at, _)| (*salience, *at));
    let mut block = CompressedTurns {
        version: 0,
        replaces,
        goal: goal.to_owned(),
        what_we_learned: learned.iter().map(|(_, _, l)| l.clone()).collect(),
        anchors: Vec::new(),
        exec_assertions: commands.iter().map(|c| c.assertion.clone()).collect(),
        open_questions: Vec::new(),
        next_actions: Vec::new(),
        files: Vec::new(),
        names: Vec::new(),
        originals: None,
    };
    // The oldest assertions and the least salient conclusions give way first (fitting drops the
    // head of each list); the raw trace keeps them all.
    block.fit(config.workbench.block_tokens as usize, counter);
    let kept = learned.len() - block.what_we_learned.len();
    learned.drain(..kept);
    learned.sort_by_key(|(_, at, _)| *at);
    block.what_we_learned = learned.into_iter().map(|(_, _, l)| l).collect();
    block.anchors = anchors;
    let delta = delta(goal, board, &commands, &in_window);
    Extracted { block, delta, notes }
}

/// Anchors for the touched regions, newest first, merged per path, within `budget` tokens.
fn anchors(
    model: &FileModel,
    touches: &[&Touch],
    anchored: &mut Anchored,
    budget: usize,
    counter: &TokenCounter,
    notes: &mut Vec<String>,
) -> Vec<Anchor> {
    let mut regions: Vec<(String, RangeInclusive<u32>)> = Vec::new();
    for touch in touches.iter().rev() {
        let overlapping = regions.iter_mut().find(|(p, r)| {
            *p == touch.path && *r.start() <= touch.lines.end() + 1 && *touch.lines.start() <= r.end() + 1
        });
        match overlapping {
            Some((_, r)) => *r = (*r.start()).min(*touch.lines.start())..=(*r.end()).max(*touch.lines.end()),
            None => regions.push((touch.path.clone(), touch.lines.clone())),
        }
    }
    // Newest first within a tier: files edited, then files touched more than once, then the
    // project's files, then library code the agent only looked up.
    let tier = |path: &str| {
        let touched = touches.iter().filter(|t| t.path == path);
        if touched.clone().any(|t| t.edited) {
            0
        } else if touched.count() > 1 {
            1
        } else if is_library(path) {
            3
        } else {
            2
        }
    };
    regions.sort_by_key(|(path, _)| tier(path));
    let mut out = Vec::new();
    let mut used = 0;
    let mut left_out = 0;
    for (path, range) in regions {
        for run in contiguous(model.lines(&path, &range)) {
            let shown = anchored.entry(path.clone()).or_default();
            if run.iter().all(|(n, l)| shown.get(n).is_some_and(|s| s == l)) {
                continue;
            }
            let mut anchor = to_anchor(&path, &run);
            let mut tokens = counter.count(&anchor.snippet) + 12;
            if used + tokens > budget {
                // Keep the head of a region too big for what is left, when a useful part fits.
                let room = budget.saturating_sub(used + 12);
                let lines = run.len() * room / tokens.max(1);
                if lines < 8 {
                    left_out += 1;
                    continue;
                }
                anchor = to_anchor(&path, &run[..lines]);
                tokens = counter.count(&anchor.snippet) + 12;
                left_out += 1;
            }
            used += tokens;
            let shown = anchored.entry(path.clone()).or_default();
            for (n, l) in run.iter().take_while(|(n, _)| *n <= anchor.end_line) {
                shown.insert(*n, (*l).to_owned());
            }
            out.push(anchor);
        }
    }
    if left_out > 0 {
        notes.push(format!("{left_out} anchor regions cut or left out: over the anchor budget of {budget} tokens"));
    }
    out
}

/// Installed or vendored code, which agents read for reference far more than they edit.
fn is_library(path: &str) -> bool {
    const PLACES: [&str; 7] = [
        "/site-packages/",
        "/dist-packages/",
        "node_modules/",
        "/usr/lib/",
        "/.cargo/registry/",
        "/vendor/",
        "/.venv/",
    ];
    PLACES.iter().any(|p| path.contains(p))
}

fn to_anchor(path: &str, run: &[(u32, &str)]) -> Anchor {
    Anchor {
        path: path.to_owned(),
        start_line: run.first().map_or(0, |(n, _)| *n),
        end_line: run.last().map_or(0, |(n, _)| *n),
        snippet: run.iter().map(|(_, l)| *l).collect::<Vec<_>>().join("\n"),
    }
}

/// Split numbered lines into runs of consecutive numbers.
fn contiguous(lines: Vec<(u32, &str)>) -> Vec<Vec<(u32, &str)>> {
    let mut runs: Vec<Vec<(u32, &str)>> = Vec::new();
    for line in lines {
        match runs.last_mut() {
            Some(run) if run.last().is_some_and(|(n, _)| n + 1 == line.0) => run.push(line),
            _ => runs.push(vec![line]),
        }
    }
    runs
}

/// A command, search or other tool run in the window, as an assertion with its pointer.
struct Command {
    message: usize,
    assertion: String,
    test: Option<logs::LogFacts>,
}

fn commands(messages: &[Message], window: Range<usize>, config: &Config) -> Vec<Command> {
    let calls = tool_calls_by_id(messages);
    let mut out = Vec::new();
    for i in window {
        let Some(message) = messages.get(i) else { break };
        for result in message.tool_results() {
            let call = calls.get(result.call_id.as_str()).copied();
            let args: Value = call.map(|c| serde_json::from_str(&c.arguments).unwrap_or_default()).unwrap_or_default();
            let name = call.map_or(result.name.as_str(), |c| c.name.as_str());
            let family = family_of(name, &args, &config.compress);
            if matches!(family, Family::Read | Family::Edit | Family::Write) {
                continue;
            }
            let what = args.get("command").and_then(Value::as_str).map_or_else(
                || format!("{name} {}", one_line(call.map_or("", |c| c.arguments.as_str()), 100)),
                |c| format!("$ {}", one_line(c, 100)),
            );
            let test = logs::recognise(&result.output);
            let outcome = match &test {
                Some(facts) => one_line(&facts.render(), 240),
                None => outcome(result),
            };
            let pointer = match (&test, result.exit_code) {
                (Some(_), _) => format!("test#{i}"),
                (None, Some(code)) => format!("cmd#{i} exit={code}"),
                (None, None) => format!("msg#{i}"),
            };
            out.push(Command { message: i, assertion: format!("{what} → {outcome} [{pointer}]"), test });
        }
    }
    out
}

/// The agent's conclusions in the window, each with its salience and message index.
fn statements(messages: &[Message], window: Range<usize>) -> Vec<(u32, usize, Learned)> {
    let mut out = Vec::new();
    for i in window {
        let Some(message) = messages.get(i).filter(|m| m.role == Role::Assistant) else { continue };
        for part in &message.content {
            let ContentPart::Text { text } = part else { continue };
            for c in conclusions(text) {
                out.push((c.salience, i, Learned { conclusion: c.text, evidence: vec![format!("msg#{i}")] }));
            }
        }
    }
    out
}

fn edits(touches: &[&Touch]) -> Vec<Learned> {
    let mut out: Vec<Learned> = Vec::new();
    for touch in touches.iter().filter(|t| t.edited) {
        let pointer = format!("file:{}:L{}-L{}", touch.path, touch.lines.start(), touch.lines.end());
        match out.iter_mut().find(|l| l.conclusion == format!("edited {}", touch.path)) {
            Some(learned) => learned.evidence.push(pointer),
            None => out.push(Learned { conclusion: format!("edited {}", touch.path), evidence: vec![pointer] }),
        }
    }
    out
}

fn delta(goal: &str, board: &StateBoard, commands: &[Command], touches: &[&Touch]) -> StateDelta {
    let mut delta = StateDelta::default();
    if board.current_goal != goal {
        delta.current_goal = Some(goal.to_owned());
    }
    if let Some(test) = commands.iter().rev().find(|c| c.test.is_some()) {
        let facts = test.test.as_ref().map(|f| one_line(&f.render(), 160)).unwrap_or_default();
        delta.status = Some(format!("{facts} [test#{}]", test.message));
        delta.confirmed_facts.push(Fact { text: facts, evidence: vec![format!("test#{}", test.message)] });
    }
    for touch in touches.iter().filter(|t| t.edited).rev().take(3) {
        delta.confirmed_facts.push(Fact {
            text: format!("{} edited", touch.path),
            evidence: vec![format!("file:{}:L{}-L{}", touch.path, touch.lines.start(), touch.lines.end())],
        });
    }
    delta
}

/// What a command's output says in one line: its first error line when it failed, else its
/// last line, with the size of what it printed. One pass, no copy of the output.
fn outcome(result: &ToolResult) -> String {
    let stderr = result.stderr.as_deref().filter(|s| !s.trim().is_empty()).unwrap_or("");
    let lines = result.output.lines().chain(stderr.lines()).filter(|l| !l.trim().is_empty());
    let failed = result.status == ToolStatus::Error || result.exit_code.is_some_and(|c| c != 0);
    let (mut count, mut error, mut last) = (0, None, "");
    for line in lines {
        count += 1;
        if failed && error.is_none() && is_error_message(line) {
            error = Some(line);
        }
        last = line;
    }
    let size = match count {
        0 => return "no output".to_owned(),
        1 => String::new(),
        n => format!("{n} lines, "),
    };
    match error {
        Some(line) => format!("{size}error: {}", one_line(line, 200)),
        None => format!("{size}last: {}", one_line(last, 200)),
    }
}

/// `text` on one line (every run of whitespace one space), cut to `max` characters with `…`.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max { flat } else { flat.chars().take(max).collect::<String>() + "…" }
}
