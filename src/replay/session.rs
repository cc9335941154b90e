//! A replay to watch, call by call: the `workbench` strategy's engine over one trajectory,
//! keeping what each prompt showed (every compressed block and summary with the raw messages it
//! replaced), the state board and the goal tree (for Claude Code sessions, the agent's TodoWrite
//! list synced into it). The playground runs it in a Web Worker.
//!
//! Prompt texts are interned: a message that stays in the prompt from one call to the next is
//! handed out once, so a 700-call replay costs about the size of its trajectory, not of every
//! prompt it sent.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde::Serialize;

use super::metrics::Totals;
use super::strategies::{EngineFeed, strategies_by_name};
use super::{flatten, replay, wire_role};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::goals::GoalTree;
use crate::history::view::RewriteRecord;
use crate::import::{Format, Trajectory, import};
use crate::model::Message;
use crate::prompt::{Assembly, Layer};
use crate::tokens::{Encoding, MESSAGE_OVERHEAD, TokenCounter};
use crate::workbench::StateBoard;

/// The largest trajectory text a session imports (the playground refuses bigger files before
/// reading them; `workbench replay` has no such limit).
pub const MAX_TRAJECTORY_BYTES: usize = 64 * 1024 * 1024;

/// One agent context of the imported file.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TrajectoryInfo {
    pub name: String,
    pub format: &'static str,
    pub messages: usize,
    pub calls: usize,
    pub notes: Vec<String>,
}

/// What a prompt message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ViewKind {
    /// The system prompt (L1).
    System,
    /// The project rules (L2).
    Rules,
    /// A recorded message, as it is or in its history form.
    Message,
    /// A COMPRESSED_TURNS block in place of raw messages.
    Block,
    /// The STATE_DELTA written with a block.
    Delta,
    /// The archived summary (or the notice of a truncation) in place of raw messages.
    Summary,
    /// The dynamic tail: plan, board, reminders.
    Tail,
}

/// One message of a call's prompt.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct ViewMessage {
    #[cfg_attr(test, ts(type = "\"system\" | \"user\" | \"assistant\" | \"tool\""))]
    pub role: &'static str,
    pub kind: ViewKind,
    /// The id of its text among the session's texts.
    pub text: u32,
    /// Tokens of the text plus the per-message overhead.
    pub tokens: usize,
    /// The index of the raw message it renders.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<usize>,
    /// A recorded message shown otherwise than as recorded (a pruned output, say).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(test, ts(optional = nullable))]
    pub altered: bool,
    /// For a block or a summary: the raw messages `[start, end)` it stands for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaces: Option<[usize; 2]>,
}

/// One replayed call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct CallView {
    /// The recorded call's number, from 0.
    pub call: usize,
    /// How many of the trajectory's messages the recorded call's prompt held.
    pub history: usize,
    /// Prompt tokens the engine counted (the unmanaged history's when it fell back).
    pub tokens: usize,
    /// Tokens of the recorded history's messages at this call: what the unmanaged prompt holds
    /// (the chart's baseline).
    pub raw_tokens: usize,
    pub expected_cached_tokens: usize,
    pub messages: Vec<ViewMessage>,
    pub rewrites: Vec<RewriteRecord>,
    pub notes: Vec<String>,
    /// The engine could not prepare this call: the unmanaged history stands in, and this says why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// The board's version after the call (its content: [`ReplaySession::board`]).
    pub board_version: u32,
}

/// What [`ReplaySession::step`] hands out: the call, and the texts first seen on it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ReplayStep"))]
pub struct CallStep {
    pub call: CallView,
    /// The id of the first new text; the others follow in order.
    pub texts_from: u32,
    pub texts: Vec<String>,
}

/// The replay's totals of the unmanaged prompt (`raw`) and of the `workbench` strategy.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ReplaySummary {
    pub raw: Totals,
    pub workbench: Totals,
}

/// A replay in progress over one trajectory of an imported file.
pub struct ReplaySession {
    trajectories: Vec<Trajectory>,
    selected: usize,
    window: usize,
    feed: EngineFeed,
    next_call: usize,
    texts: Interner,
    counter: TokenCounter,
    /// The recorded messages counted for `raw_tokens` so far, and their tokens.
    raw_counted: (usize, usize),
}

impl ReplaySession {
    /// Import `text` (any format `import` detects; `file` names it) and select its first
    /// trajectory. Fails on text over [`MAX_TRAJECTORY_BYTES`], on a file that is no
    /// trajectory, and on one without recorded calls.
    pub fn import(file: &str, text: &str, window: usize) -> Result<Self> {
        if text.len() > MAX_TRAJECTORY_BYTES {
            return Err(Error::InvalidInput(format!(
                "{file} is {:.1} MB; a replay session takes trajectories up to {} MB",
                text.len() as f64 / 1e6,
                MAX_TRAJECTORY_BYTES >> 20
            )));
        }
        let counter = TokenCounter::try_new(Encoding::O200kBase)?;
        let trajectories = import(file, text)?;
        if trajectories.iter().all(|t| t.calls.is_empty()) {
            return Err(Error::Trajectory {
                file: file.to_owned(),
                line: 1,
                message: "holds no recorded LLM call to replay".into(),
            });
        }
        let selected = trajectories.iter().position(|t| !t.calls.is_empty()).unwrap_or(0);
        Ok(ReplaySession {
            trajectories,
            selected,
            window,
            feed: EngineFeed::new(window),
            next_call: 0,
            texts: Interner::default(),
            counter,
            raw_counted: (0, 0),
        })
    }

    /// The agent contexts of the file, in the importer's order (a Claude Code session first,
    /// then its sub-agents).
    pub fn trajectories(&self) -> Vec<TrajectoryInfo> {
        self.trajectories
            .iter()
            .map(|t| TrajectoryInfo {
                name: t.name.clone(),
                format: format_name(t.format),
                messages: t.messages.len(),
                calls: t.calls.len(),
                notes: t.notes.clone(),
            })
            .collect()
    }

    pub fn selected(&self) -> usize {
        self.selected
    }

    /// Start over on trajectory `index`: a fresh engine and no texts handed out.
    pub fn select(&mut self, index: usize) -> Result<()> {
        if index >= self.trajectories.len() {
            return Err(Error::InvalidInput(format!(
                "no trajectory {index}: the file holds {}",
                self.trajectories.len()
            )));
        }
        self.selected = index;
        self.feed = EngineFeed::new(self.window);
        self.next_call = 0;
        self.texts = Interner::default();
        self.raw_counted = (0, 0);
        Ok(())
    }

    fn trajectory(&self) -> &Trajectory {
        &self.trajectories[self.selected]
    }

    /// The raw messages of the selected trajectory, as recorded.
    pub fn raw_messages(&self) -> &[Message] {
        &self.trajectory().messages
    }

    /// The number of recorded calls of the selected trajectory.
    pub fn calls(&self) -> usize {
        self.trajectory().calls.len()
    }

    /// Replay the next recorded call; `None` when every call was replayed.
    pub fn step(&mut self) -> Option<CallStep> {
        let call = self.next_call;
        let history = *self.trajectory().calls.get(call)?;
        self.next_call += 1;
        let texts_from = self.texts.len();
        let messages = &self.trajectories[self.selected].messages[..history];
        let (counted, tokens) = self.raw_counted;
        let new: usize = messages
            .get(counted..)
            .unwrap_or_default()
            .iter()
            .map(|m| self.counter.count_message_content(&m.content))
            .sum();
        self.raw_counted = (history.max(counted), tokens + new);
        let mut notes = self.feed.record_new(messages);
        let mut view = match self.feed.prepare(&mut notes) {
            Ok(assembly) => {
                notes.extend(assembly.notes.iter().map(|n| format!("engine: {n}")));
                self.view_of(call, history, assembly, notes)
            }
            Err(e) => self.fallback(call, history, &e, notes),
        };
        view.raw_tokens = self.raw_counted.1;
        Some(CallStep { call: view, texts_from, texts: self.texts.since(texts_from) })
    }

    fn view_of(&mut self, call: usize, history: usize, assembly: Assembly, notes: Vec<String>) -> CallView {
        let engine = &self.feed.engine;
        let view = engine.history_view();
        let raw = &self.trajectories[self.selected].messages;
        let sources = &self.feed.sources;
        // The raw message behind an engine message id (`m000042` is the 43rd message recorded).
        let raw_index = |id: &crate::model::MessageId| {
            let sequence: usize = id.as_str().strip_prefix('m')?.parse().ok()?;
            sources.get(sequence).copied()
        };
        // A block's or summary's range of engine messages as raw indices.
        let raw_range = |start: usize, end: usize| {
            let first = sources.get(start).copied().unwrap_or(raw.len());
            let last = end.checked_sub(1).and_then(|e| sources.get(e)).map_or(first, |&l| l + 1);
            [first, last]
        };
        let mut messages = Vec::with_capacity(assembly.view.messages.len());
        for m in assembly.view.messages.iter().filter(|m| !m.sends_nothing()) {
            let flat = flatten(m.role, &m.content);
            let source = m.source.as_ref().and_then(raw_index);
            let mut kind = match m.layer {
                Layer::System => ViewKind::System,
                Layer::Rules => ViewKind::Rules,
                Layer::Tail => ViewKind::Tail,
                Layer::History | Layer::Input => ViewKind::Message,
            };
            let mut replaces = None;
            if source.is_none() && kind == ViewKind::Message {
                let text = text_of(&m.content);
                if let Some(b) = view.blocks.iter().find(|b| b.text == text) {
                    (kind, replaces) = (ViewKind::Block, Some(raw_range(b.start, b.end)));
                } else if view.blocks.iter().any(|b| b.delta_text == text) {
                    kind = ViewKind::Delta;
                } else if let Some(s) = view.summary.as_ref().filter(|s| s.text == text) {
                    (kind, replaces) = (ViewKind::Summary, Some(raw_range(s.start, s.end)));
                }
            }
            let altered = source.is_some_and(|i| raw[i].content != m.content);
            let (text, tokens) = self.texts.intern(&flat.content, &self.counter);
            messages.push(ViewMessage { role: flat.role, kind, text, tokens, source, altered, replaces });
        }
        CallView {
            call,
            history,
            tokens: assembly.tokens,
            raw_tokens: 0,
            expected_cached_tokens: assembly.expected_cached_tokens,
            messages,
            rewrites: assembly.rewrites,
            notes,
            fallback: None,
            board_version: view.board.version,
        }
    }

    fn fallback(&mut self, call: usize, history: usize, error: &Error, notes: Vec<String>) -> CallView {
        let raw = &self.trajectories[self.selected].messages[..history];
        let mut messages = Vec::with_capacity(raw.len());
        for (i, m) in raw.iter().enumerate() {
            let (text, tokens) = self.texts.intern(&flatten(m.role, &m.content).content, &self.counter);
            messages.push(ViewMessage {
                role: wire_role(m.role),
                kind: ViewKind::Message,
                text,
                tokens,
                source: Some(i),
                altered: false,
                replaces: None,
            });
        }
        CallView {
            call,
            history,
            tokens: messages.iter().map(|m| m.tokens).sum(),
            raw_tokens: 0,
            expected_cached_tokens: 0,
            messages,
            rewrites: Vec::new(),
            notes,
            fallback: Some(format!("the engine could not prepare the call: {error}")),
            board_version: self.feed.engine.state_board().version,
        }
    }

    /// The state board now.
    pub fn board(&self) -> StateBoard {
        self.feed.engine.state_board()
    }

    /// The goal tree now (for a Claude Code session, its TodoWrite items as goals).
    pub fn goal_tree(&self) -> GoalTree {
        self.feed.engine.goal_tree()
    }

    /// The replay's figures for the selected trajectory, as `workbench replay` measures them:
    /// the `raw` strategy's totals and the `workbench` strategy's (cost, cached share, rewrites,
    /// edit and reference recall). Replays the whole trajectory once more, apart from the steps.
    pub fn summary(&self) -> Result<ReplaySummary> {
        let trajectory = &self.trajectories[self.selected];
        let mut strategies = strategies_by_name("raw,workbench", self.window)?;
        let runs = replay(trajectory, &mut strategies, &Config::default().prices, self.window)?;
        let mut totals = runs.into_iter().map(|run| run.totals);
        match (totals.next(), totals.next()) {
            (Some(raw), Some(workbench)) => Ok(ReplaySummary { raw, workbench }),
            _ => Err(Error::InvalidInput("the replay measured no strategy".into())),
        }
    }

    /// The text of interned text `id`.
    pub fn text(&self, id: u32) -> Option<&str> {
        self.texts.texts.get(id as usize).map(String::as_str)
    }
}

/// The text parts of a message joined as the history renders blocks (one text part each).
fn text_of(content: &[crate::model::ContentPart]) -> String {
    content
        .iter()
        .filter_map(|p| match p {
            crate::model::ContentPart::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn format_name(format: Format) -> &'static str {
    match format {
        Format::Vorflux => "vorflux",
        Format::ClaudeCode => "claude_code",
        Format::SweAgent => "swe_agent",
        Format::MiniSweAgent => "mini_swe_agent",
        Format::OpenHands => "openhands",
        Format::OpenAiChat => "openai_chat",
    }
}

/// Texts by id, each stored once, with its token count (plus the message overhead).
#[derive(Default)]
struct Interner {
    texts: Vec<String>,
    tokens: Vec<usize>,
    by_hash: HashMap<u64, Vec<u32>>,
}

impl Interner {
    fn len(&self) -> u32 {
        self.texts.len() as u32
    }

    fn intern(&mut self, text: &str, counter: &TokenCounter) -> (u32, usize) {
        let mut hasher = DefaultHasher::new();
        text.hash(&mut hasher);
        let ids = self.by_hash.entry(hasher.finish()).or_default();
        if let Some(&id) = ids.iter().find(|&&id| self.texts[id as usize] == text) {
            return (id, self.tokens[id as usize]);
        }
        let id = self.texts.len() as u32;
        let tokens = counter.count(text) + MESSAGE_OVERHEAD;
        ids.push(id);
        self.texts.push(text.to_owned());
        self.tokens.push(tokens);
        (id, tokens)
    }

    fn since(&self, from: u32) -> Vec<String> {
        self.texts[from as usize..].to_vec()
    }
}
