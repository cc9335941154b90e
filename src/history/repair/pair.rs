//! Pairing: the walk over the messages, turns opened by assistant messages, results held for
//! later calls, and results kept as text.

use std::collections::{BTreeMap, BTreeSet};

use super::{Call, Repairer, Turn, Unit};
use crate::error::Error;
use crate::model::{ContentPart, Role, ToolCallId, ToolResult};

impl Repairer {
    /// Walks the items in order, pairing calls and results.
    pub(super) fn pair(&mut self, pieces: &[usize]) -> Result<(), Error> {
        let mut first_call: BTreeMap<ToolCallId, usize> = BTreeMap::new();
        for (position, &item) in pieces.iter().enumerate() {
            let Some(item) = self.items.get(item) else { continue };
            if item.message.role == Role::Assistant {
                for call in item.message.tool_calls().filter(|c| !c.id.0.is_empty()) {
                    first_call.entry(call.id.clone()).or_insert(position);
                }
            }
        }
        for (position, &item) in pieces.iter().enumerate() {
            match self.items.get(item).map(|i| i.message.role) {
                Some(Role::Assistant) => {
                    let turn = self.open_turn(item);
                    self.attach_pending(turn);
                }
                Some(Role::Tool) => self.place_results(item, position, &first_call)?,
                _ => {
                    self.units.push(Unit::Plain(item));
                    self.in_block = false;
                }
            }
        }
        // Unreachable: every held result's call comes later. Kept as text rather than lost.
        let pending = std::mem::take(&mut self.pending);
        for (id, items) in pending {
            for item in items {
                self.turn_into_text(item, &format!("[tool result for {id}, whose call never came]"));
                self.note(item, format!("tool result `{id}` waited for a call that never came; kept as text"));
                self.units.push(Unit::Plain(item));
            }
        }
        self.add_placeholders();
        Ok(())
    }

    /// Opens the turn of assistant item `item`, renaming repeated or empty call ids.
    pub(super) fn open_turn(&mut self, item: usize) -> usize {
        let turn = self.turns.len();
        self.turns.push(Turn { assistant: item, block: Vec::new(), extras: Vec::new() });
        self.units.push(Unit::Turn(turn));
        self.current = Some(turn);
        self.in_block = true;
        let calls: Vec<(ToolCallId, String)> = self
            .items
            .get(item)
            .map(|i| i.message.tool_calls().map(|c| (c.id.clone(), c.name.clone())).collect())
            .unwrap_or_default();
        let mut ids = Vec::with_capacity(calls.len());
        for (original, name) in calls {
            let id = if original.0.is_empty() || self.seen_calls.contains(&original) {
                let fresh = self.fresh_call_id(&original);
                let what = if original.0.is_empty() {
                    format!("tool call with an empty id given the id `{fresh}`")
                } else {
                    format!("tool call id `{original}` is already used by an earlier call; renamed to `{fresh}`")
                };
                self.note(item, what);
                fresh
            } else {
                original.clone()
            };
            self.seen_calls.insert(id.clone());
            self.by_original.entry(original.clone()).or_default().push(self.calls.len());
            self.calls.push(Call { id: id.clone(), original, name, turn, answered: false });
            ids.push(id);
        }
        if let Some(assistant) = self.items.get_mut(item) {
            let mut ids = ids.into_iter();
            for part in &mut assistant.message.content {
                if let ContentPart::ToolCall(call) = part
                    && let Some(id) = ids.next()
                    && call.id != id
                {
                    call.id = id;
                    assistant.changed = true;
                }
            }
        }
        turn
    }

    /// Gives the results held for calls of `turn` their place.
    pub(super) fn attach_pending(&mut self, turn: usize) {
        if self.pending.is_empty() {
            return;
        }
        let originals: BTreeSet<ToolCallId> =
            self.calls.iter().filter(|c| c.turn == turn).map(|c| c.original.clone()).collect();
        let assistant = self.turns.get(turn).map(|t| t.assistant).unwrap_or(usize::MAX);
        let assistant_id = self.id_of(assistant);
        for original in originals {
            let Some(items) = self.pending.remove(&original) else { continue };
            for item in items {
                let waiting = self.by_original.get(&original).and_then(|calls| {
                    calls.iter().copied().find(|&k| self.calls.get(k).is_some_and(|c| c.turn == turn && !c.answered))
                });
                match waiting {
                    Some(k) => {
                        let id = match self.calls.get_mut(k) {
                            Some(call) => {
                                call.answered = true;
                                call.id.clone()
                            }
                            None => original.clone(),
                        };
                        self.rename_results(item, &original, &id);
                        if let Some(turn) = self.turns.get_mut(turn) {
                            turn.block.push(item);
                        }
                        self.note(
                            item,
                            format!(
                                "tool result `{original}` came before its call; moved right after assistant message \
                                 {assistant_id}"
                            ),
                        );
                    }
                    None => {
                        self.turn_into_text(item, &format!("[duplicate tool result for {original}]"));
                        if let Some(turn) = self.turns.get_mut(turn) {
                            turn.extras.push(item);
                        }
                        self.note(
                            item,
                            format!(
                                "second tool result for call `{original}`, which already has one; kept as a user \
                                 text message after the results of assistant message {assistant_id}"
                            ),
                        );
                    }
                }
            }
        }
    }

    /// Sets the call id of the results of `item` that use `from` to `to`.
    pub(super) fn rename_results(&mut self, item: usize, from: &ToolCallId, to: &ToolCallId) {
        if from == to {
            return;
        }
        if let Some(item) = self.items.get_mut(item) {
            for part in &mut item.message.content {
                if let ContentPart::ToolResult(result) = part
                    && result.call_id == *from
                {
                    result.call_id = to.clone();
                    item.changed = true;
                }
            }
        }
    }

    /// Turns tool item `item` into a user message: each result becomes `<header>\n<output>` text;
    /// its other parts stay.
    pub(super) fn turn_into_text(&mut self, item: usize, header: &str) {
        let Some(item) = self.items.get_mut(item) else { return };
        let content = std::mem::take(&mut item.message.content);
        item.message.content = content
            .into_iter()
            .map(|part| match part {
                ContentPart::ToolResult(result) => ContentPart::Text { text: result_text(header, &result) },
                other => other,
            })
            .collect();
        item.message.role = Role::User;
        item.message.tool_call_id = None;
        item.changed = true;
    }
}

/// `<header>\n<output>`, with the stderr when there is one.
fn result_text(header: &str, result: &ToolResult) -> String {
    let mut text = format!("{header}\n{}", result.output);
    if let Some(stderr) = &result.stderr {
        text.push_str("\n[stderr]\n");
        text.push_str(stderr);
    }
    text
}
