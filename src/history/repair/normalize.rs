//! Misplaced parts: calls only in assistant messages, results only in tool messages, unique
//! message ids; nameless calls rejected.

use std::collections::BTreeSet;

use super::{Item, Repairer};
use crate::error::Error;
use crate::model::{ContentPart, Message, MessageId, Role};

impl Repairer {
    /// Rejects nameless calls, renames repeated message ids and cuts messages so that calls are
    /// only in assistant messages and results only in tool messages. Returns the items in order.
    pub(super) fn normalize(&mut self, messages: Vec<Message>) -> Result<Vec<usize>, Error> {
        let mut kept_ids: BTreeSet<MessageId> = BTreeSet::new();
        let mut misnumbered = false;
        let mut pieces = Vec::with_capacity(messages.len());
        for (index, mut message) in messages.into_iter().enumerate() {
            if let Some(call) = message.tool_calls().find(|c| c.name.trim().is_empty()) {
                return Err(Error::InvalidInput(format!(
                    "message {}: tool call `{}` names no tool",
                    display_id(&message.id, index),
                    call.id
                )));
            }
            let original_id = message.id.clone();
            let renamed = original_id.0.is_empty() || !kept_ids.insert(original_id.clone());
            if renamed {
                message.id = self.fresh_message_id(&original_id);
            }
            let sequence = message.sequence;
            let role = message.role;
            let content = std::mem::take(&mut message.content);
            let was_empty = content.is_empty();
            let segments = segments(role, content);
            let item = self.items.len();
            self.items.push(Item { message, changed: false });
            if renamed {
                let what = if original_id.0.is_empty() {
                    format!("the message had no id; given `{}`", self.id_of(item))
                } else {
                    format!("message id `{original_id}` is already used by an earlier message; renamed")
                };
                self.note(item, what);
            }
            if !misnumbered && sequence != index as u64 {
                misnumbered = true;
                self.note(item, format!("sequence {sequence} at index {index}: the history is renumbered"));
            }
            if was_empty {
                self.note(item, format!("{} message without content, kept", role.as_str()));
            }
            let mut new_items = Vec::new();
            for (k, (segment_role, parts)) in segments.into_iter().enumerate() {
                if k == 0 {
                    if let Some(first) = self.items.get_mut(item) {
                        first.message.content = parts;
                        if segment_role != role {
                            first.message.role = segment_role;
                            first.changed = true;
                            if role == Role::Tool {
                                first.message.tool_call_id = None;
                            }
                        }
                    }
                    pieces.push(item);
                } else {
                    let new = self.derive(item, segment_role, parts);
                    if let Some(first) = self.items.get_mut(item) {
                        first.changed = true;
                    }
                    new_items.push(new);
                    pieces.push(new);
                }
            }
            let now = self.items.get(item).map_or(role, |i| i.message.role);
            if new_items.is_empty() && now != role {
                let why = match now {
                    Role::Tool => "it carries only tool results",
                    Role::Assistant => "it carries only tool calls",
                    _ => "it carries no tool result",
                };
                self.note(item, format!("{} message turned into a {} message: {why}", role.as_str(), now.as_str()));
            } else if !new_items.is_empty() {
                let parts: Vec<String> = std::iter::once(item)
                    .chain(new_items.iter().copied())
                    .filter_map(|i| self.items.get(i))
                    .map(|i| format!("{} {}", i.message.role.as_str(), i.message.id))
                    .collect();
                self.note(
                    item,
                    format!(
                        "{} message split into {} so that tool calls are in assistant messages and tool results \
                         in tool messages",
                        role.as_str(),
                        parts.join(", ")
                    ),
                );
            }
        }
        Ok(pieces)
    }
}

/// Cuts `content` of a message of `role` into runs of consecutive parts of the same home role:
/// calls → assistant, results → tool, anything else → `role`; a run of a tool message that ends
/// up without a result (text before a call, say) → user. An empty message is one empty run.
fn segments(role: Role, content: Vec<ContentPart>) -> Vec<(Role, Vec<ContentPart>)> {
    let own = if role == Role::Tool && content.is_empty() { Role::User } else { role };
    if content.is_empty() {
        return vec![(own, Vec::new())];
    }
    let mut runs: Vec<(Role, Vec<ContentPart>)> = Vec::new();
    for part in content {
        let home = match part {
            ContentPart::ToolCall(_) => Role::Assistant,
            ContentPart::ToolResult(_) => Role::Tool,
            _ => own,
        };
        match runs.last_mut() {
            Some((run_role, parts)) if *run_role == home => parts.push(part),
            _ => runs.push((home, vec![part])),
        }
    }
    for (run_role, parts) in &mut runs {
        if *run_role == Role::Tool && !parts.iter().any(|p| matches!(p, ContentPart::ToolResult(_))) {
            *run_role = Role::User;
        }
    }
    // Neighbouring runs that both became user runs are one.
    let mut merged: Vec<(Role, Vec<ContentPart>)> = Vec::with_capacity(runs.len());
    for (run_role, parts) in runs {
        match merged.last_mut() {
            Some((last, last_parts)) if *last == run_role => last_parts.extend(parts),
            _ => merged.push((run_role, parts)),
        }
    }
    merged
}

/// A message id for an error: the id, or its index when it has none.
fn display_id(id: &MessageId, index: usize) -> String {
    if id.0.is_empty() { format!("#{index} (no id)") } else { id.0.clone() }
}
