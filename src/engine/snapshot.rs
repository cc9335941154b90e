//! `state.json`, what a resume starts from: the prompt view, the board and the call state the
//! next prompt depends on beyond the messages and the goal tree. Its large parts (the previous
//! prompt's messages and tools, the blocks, the anchors of each file) are stored once each in
//! `parts.jsonl` and named by the hash of their saved text, so a save appends only what is new
//! and `state.json` stays small.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use xxhash_rust::xxh3::xxh3_64;

use super::State;
use super::goals::Probe;
use crate::history::HistoryView;
use crate::host::Usage;
use crate::model::{Span, TraceId};
use crate::prompt::{PromptView, assemble};
use crate::store::Redactor;
use crate::store::records::{Part, STORE_FORMAT_VERSION, part_value as get};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct EngineSnapshot {
    pub(super) version: u32,
    trace_id: TraceId,
    mission: String,
    /// Messages of the trace the state covers.
    pub(super) messages: usize,
    spans: Vec<Span>,
    metadata: BTreeMap<String, Value>,
    /// The view without its blocks, anchors and bounded outputs, which are parts.
    view: HistoryView,
    blocks: Vec<String>,
    anchored: BTreeMap<String, String>,
    #[serde(default)]
    bounded: BTreeMap<usize, String>,
    last_usage: Option<Usage>,
    /// Whether a prompt was prepared before (its canonical form is rebuilt from the parts).
    previous_prompt: bool,
    previous_messages: Vec<String>,
    previous_tools: String,
    previous_tokens: Option<usize>,
    tokens_at_usage: Option<usize>,
    calls: usize,
    last_rewrite_call: Option<usize>,
    probe: Probe,
    delivered_events: u64,
    native_plan: bool,
    #[serde(default)]
    ledger: super::ledger::Ledger,
}

/// The parts already saved, by id, and a memo from unredacted text to id.
#[derive(Debug, Default)]
pub(super) struct SavedParts {
    pub(super) ids: BTreeSet<String>,
    memo: BTreeMap<u64, String>,
}

impl SavedParts {
    pub(super) fn keep(&mut self, parts: Vec<NewPart>) {
        for part in parts {
            self.memo.insert(part.raw, part.id.clone());
            self.ids.insert(part.id);
        }
    }
}

/// A part to append, redacted.
pub(super) struct NewPart {
    raw: u64,
    pub(super) id: String,
    pub(super) line: String,
}

/// Collects the parts of one snapshot.
pub(super) struct Parts<'s> {
    saved: &'s SavedParts,
    redactor: &'s Redactor,
    pub(super) new: Vec<NewPart>,
    pub(super) redactions: usize,
}

impl<'s> Parts<'s> {
    pub(super) fn new(saved: &'s SavedParts, redactor: &'s Redactor) -> Self {
        Parts { saved, redactor, new: Vec::new(), redactions: 0 }
    }

    /// The id of `value`'s saved form, adding it to the new parts when it is not saved yet.
    fn put(&mut self, value: &impl Serialize) -> String {
        // Parts hold strings, numbers and finite floats: they always serialize.
        let text = serde_json::to_string(value).unwrap_or_default();
        let raw = xxh3_64(text.as_bytes());
        if let Some(id) = self.saved.memo.get(&raw) {
            return id.clone();
        }
        let mut value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        self.redactions += self.redactor.redact_value(&mut value);
        let saved = value.to_string();
        let id = format!("{:016x}", xxh3_64(saved.as_bytes()));
        if !self.saved.ids.contains(&id) && !self.new.iter().any(|p| p.id == id) {
            let line = serde_json::to_string(&Part { id: id.clone(), value }).unwrap_or_default();
            self.new.push(NewPart { raw, id: id.clone(), line });
        }
        id
    }
}

impl EngineSnapshot {
    pub(super) fn of(state: &State, parts: &mut Parts) -> Self {
        let view = HistoryView {
            blocks: Vec::new(),
            anchored: Default::default(),
            bounded: Default::default(),
            ..state.view.clone()
        };
        EngineSnapshot {
            version: STORE_FORMAT_VERSION,
            trace_id: state.trace.id.clone(),
            mission: state.trace.mission.clone(),
            messages: state.trace.messages.len(),
            spans: state.trace.spans.clone(),
            metadata: state.trace.metadata.clone(),
            view,
            blocks: state.view.blocks.iter().map(|b| parts.put(b)).collect(),
            anchored: state.view.anchored.iter().map(|(file, lines)| (file.clone(), parts.put(lines))).collect(),
            bounded: state.view.bounded.iter().map(|(i, text)| (*i, parts.put(text))).collect(),
            last_usage: state.last_usage,
            previous_prompt: state.previous_prompt.is_some(),
            previous_messages: state.previous_messages.iter().map(|m| parts.put(m)).collect(),
            previous_tools: parts.put(&state.previous_tools),
            previous_tokens: state.previous_tokens,
            tokens_at_usage: state.tokens_at_usage,
            calls: state.calls,
            last_rewrite_call: state.last_rewrite_call,
            probe: state.probe,
            delivered_events: state.delivered_events,
            native_plan: state.native_plan,
            ledger: state.ledger.clone(),
        }
    }

    /// The parts of the previous prompt's messages and of its tools.
    pub(super) fn prompt_parts(&self) -> (&[String], &str) {
        (&self.previous_messages, &self.previous_tools)
    }

    /// Put the snapshot back into `state`, its parts looked up in `parts`; a missing or
    /// unreadable part is an error naming it, and `state` is then unchanged.
    pub(super) fn restore(self, state: &mut State, parts: &BTreeMap<String, Value>) -> Result<(), String> {
        let blocks = self.blocks.iter().map(|id| get(parts, id)).collect::<Result<Vec<_>, _>>()?;
        let anchored = self
            .anchored
            .iter()
            .map(|(file, id)| Ok((file.clone(), get(parts, id)?)))
            .collect::<Result<_, String>>()?;
        let bounded = self.bounded.iter().map(|(i, id)| Ok((*i, get(parts, id)?))).collect::<Result<_, String>>()?;
        let messages = self.previous_messages.iter().map(|id| get(parts, id)).collect::<Result<Vec<_>, _>>()?;
        let tools = get(parts, &self.previous_tools)?;
        let previous = PromptView { messages, tools };
        state.trace.spans = self.spans;
        state.trace.metadata = self.metadata;
        state.view = HistoryView { blocks, anchored, bounded, ..self.view };
        state.last_usage = self.last_usage;
        state.previous_prompt = self.previous_prompt.then(|| assemble::canonical(&previous));
        state.previous_messages = previous.messages;
        state.previous_tools = previous.tools;
        state.previous_tokens = self.previous_tokens;
        state.tokens_at_usage = self.tokens_at_usage;
        state.calls = self.calls;
        state.last_rewrite_call = self.last_rewrite_call;
        state.probe = self.probe;
        state.delivered_events = self.delivered_events;
        state.native_plan = self.native_plan;
        state.ledger = self.ledger;
        Ok(())
    }
}
