//! The repairer's bookkeeping: fresh ids, derived messages, placeholders and the final layout.

use std::collections::{BTreeMap, BTreeSet};

use super::{Item, RepairNote, Repaired, Repairer, Unit};
use crate::import::MISSING_RESULT;
use crate::model::{ContentPart, Message, MessageId, Role, ToolCallId, ToolResult, ToolStatus};

impl Repairer {
    pub(super) fn new(messages: &[Message]) -> Self {
        let used_ids = messages.iter().map(|m| m.id.clone()).collect();
        let mut taken_calls = BTreeSet::new();
        for message in messages {
            taken_calls.extend(message.tool_calls().map(|c| c.id.clone()));
            taken_calls.extend(message.tool_results().map(|r| r.call_id.clone()));
        }
        Repairer {
            items: Vec::new(),
            notes: Vec::new(),
            used_ids,
            taken_calls,
            next_suffix: BTreeMap::new(),
            seen_calls: BTreeSet::new(),
            calls: Vec::new(),
            by_original: BTreeMap::new(),
            turns: Vec::new(),
            units: Vec::new(),
            current: None,
            in_block: false,
            pending: BTreeMap::new(),
        }
    }

    pub(super) fn note(&mut self, item: usize, what: String) {
        self.notes.push((item, what));
    }

    pub(super) fn id_of(&self, item: usize) -> MessageId {
        self.items.get(item).map(|i| i.message.id.clone()).unwrap_or_else(empty_id)
    }

    /// `<base>-<k>` for the smallest `k` unused (counting on from the last one given for `base`).
    pub(super) fn fresh_message_id(&mut self, base: &MessageId) -> MessageId {
        let base = if base.0.is_empty() { "m" } else { base.as_str() };
        let k = self.next_suffix.entry(format!("{base}-")).or_insert(1);
        loop {
            let id = MessageId(format!("{base}-{k}"));
            *k += 1;
            if self.used_ids.insert(id.clone()) {
                return id;
            }
        }
    }

    /// `<base>_r<k>` for the smallest `k` unused (counting on from the last one given for `base`).
    pub(super) fn fresh_call_id(&mut self, base: &ToolCallId) -> ToolCallId {
        let base = if base.0.is_empty() { "call" } else { base.as_str() };
        let k = self.next_suffix.entry(format!("{base}_r")).or_insert(1);
        loop {
            let id = ToolCallId(format!("{base}_r{k}"));
            *k += 1;
            if self.taken_calls.insert(id.clone()) {
                return id;
            }
        }
    }

    /// A new item of `role` and `content`, with the metadata of item `source` and a fresh id.
    pub(super) fn derive(&mut self, source: usize, role: Role, content: Vec<ContentPart>) -> usize {
        let base = self.id_of(source);
        let id = self.fresh_message_id(&base);
        let template = self.items.get(source).map(|i| &i.message);
        let trace_id = template.map(|m| m.trace_id.clone()).unwrap_or_else(|| "".into());
        let message = Message {
            id,
            branch_id: template.and_then(|m| m.branch_id.clone()),
            goal_id: template.and_then(|m| m.goal_id.clone()),
            span_id: template.and_then(|m| m.span_id.clone()),
            created_at_ms: template.map_or(0, |m| m.created_at_ms),
            ..Message::new(trace_id, 0, role, content)
        };
        self.items.push(Item { message, changed: true });
        self.items.len() - 1
    }

    /// Gives every call still without a result a placeholder result.
    pub(super) fn add_placeholders(&mut self) {
        let missing: Vec<(usize, ToolCallId, String)> =
            self.calls.iter().filter(|c| !c.answered).map(|c| (c.turn, c.id.clone(), c.name.clone())).collect();
        for (turn, id, name) in missing {
            let Some(assistant) = self.turns.get(turn).map(|t| t.assistant) else { continue };
            let placeholder = ToolResult {
                call_id: id.clone(),
                name: name.clone(),
                status: ToolStatus::Error,
                output: MISSING_RESULT.to_owned(),
                stderr: None,
                exit_code: None,
            };
            let new = self.derive(assistant, Role::Tool, vec![ContentPart::ToolResult(placeholder)]);
            if let Some(turn) = self.turns.get_mut(turn) {
                turn.block.push(new);
            }
            let new_id = self.id_of(new);
            self.note(
                assistant,
                format!(
                    "tool call `{id}` ({name}) has no result; a placeholder result was inserted as message {new_id}"
                ),
            );
        }
    }

    /// Lays the items out in order, numbers them and settles descriptions and `tool_call_id`.
    pub(super) fn finish(self) -> Repaired {
        let Repairer { items, notes, units, turns, .. } = self;
        let mut order = Vec::with_capacity(items.len());
        for unit in units {
            match unit {
                Unit::Plain(item) => order.push(item),
                Unit::Turn(turn) => {
                    if let Some(turn) = turns.get(turn) {
                        order.push(turn.assistant);
                        order.extend(turn.block.iter().copied());
                        order.extend(turn.extras.iter().copied());
                    }
                }
            }
        }
        let ids: Vec<MessageId> = items.iter().map(|i| i.message.id.clone()).collect();
        let mut notes: Vec<RepairNote> = notes
            .into_iter()
            .map(|(item, what)| RepairNote { message: ids.get(item).cloned().unwrap_or_else(empty_id), what })
            .collect();
        let mut slots: Vec<Option<Item>> = items.into_iter().map(Some).collect();
        let mut placed: Vec<Item> = order.iter().filter_map(|&i| slots.get_mut(i).and_then(Option::take)).collect();
        // Unreachable: every item has its place. Kept at the end rather than lost.
        placed.extend(slots.into_iter().flatten());
        let mut messages = Vec::with_capacity(placed.len());
        for (index, Item { mut message, changed }) in placed.into_iter().enumerate() {
            if changed {
                message.description = Message::describe(message.role, &message.content);
                message.tokens = None;
            }
            if message.role == Role::Tool {
                let first = message.tool_results().next().map(|r| r.call_id.clone());
                let named_ok = message
                    .tool_call_id
                    .as_ref()
                    .is_some_and(|named| message.tool_results().any(|r| r.call_id == *named));
                if !named_ok && (changed || message.tool_call_id.is_some()) {
                    if !changed && let (Some(named), Some(first)) = (&message.tool_call_id, &first) {
                        notes.push(RepairNote {
                            message: message.id.clone(),
                            what: format!("tool_call_id `{named}` names none of its results; set to `{first}`"),
                        });
                    }
                    message.tool_call_id = first;
                }
            }
            message.sequence = index as u64;
            messages.push(message);
        }
        Repaired { messages, notes }
    }
}

fn empty_id() -> MessageId {
    MessageId(String::new())
}
