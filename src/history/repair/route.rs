//! Where each tool result goes: into its call's results, after them as a duplicate, or held
//! for a call that comes later; a call synthesised for a result without one.

use std::collections::BTreeMap;

use super::{Call, Dest, Repairer, Turn, Unit};
use crate::error::Error;
use crate::model::{ContentPart, Role, ToolCall, ToolCallId, ToolResult};

impl Repairer {
    /// Routes each result of tool item `item` (at `position` among the pieces), splitting the
    /// item when its results go to different places.
    pub(super) fn place_results(
        &mut self,
        item: usize,
        position: usize,
        first_call: &BTreeMap<ToolCallId, usize>,
    ) -> Result<(), Error> {
        let mut content = match self.items.get_mut(item) {
            Some(i) => std::mem::take(&mut i.message.content),
            None => return Ok(()),
        };
        if !content.iter().any(|p| matches!(p, ContentPart::ToolResult(_))) {
            // Unreachable: `segments` leaves no tool message without a result. Kept as a user
            // message rather than lost.
            if let Some(i) = self.items.get_mut(item) {
                i.message.content = content;
                i.message.role = Role::User;
                i.message.tool_call_id = None;
                i.changed = true;
            }
            self.units.push(Unit::Plain(item));
            self.in_block = false;
            return Ok(());
        }
        let mut renamed = false;
        let mut dests: Vec<Option<Dest>> = Vec::with_capacity(content.len());
        for part in &mut content {
            if let ContentPart::ToolResult(result) = part {
                let before = result.call_id.clone();
                let dest = self.route(result, item, position, first_call)?;
                renamed |= result.call_id != before;
                dests.push(Some(dest));
            } else {
                dests.push(None);
            }
        }
        // Results grouped by where they go, in order of first appearance; one group per
        // duplicate or held result.
        let mut groups: Vec<(Dest, Vec<usize>)> = Vec::new();
        for (index, dest) in dests.iter().enumerate() {
            let Some(dest) = *dest else { continue };
            match groups.iter_mut().find(|(d, _)| matches!(d, Dest::Block(_)) && *d == dest) {
                Some((_, members)) => members.push(index),
                None => groups.push((dest, vec![index])),
            }
        }
        let mut slots: Vec<Option<ContentPart>> = content.into_iter().map(Some).collect();
        let mut placed = Vec::with_capacity(groups.len());
        for (g, (dest, members)) in groups.iter().enumerate() {
            // The first group keeps the item, with the parts that are not results.
            let parts: Vec<ContentPart> = if g == 0 {
                (0..slots.len())
                    .filter(|i| members.contains(i) || dests.get(*i).is_some_and(|d| d.is_none()))
                    .filter_map(|i| slots.get_mut(i).and_then(Option::take))
                    .collect()
            } else {
                members.iter().filter_map(|&i| slots.get_mut(i).and_then(Option::take)).collect()
            };
            let target = if g == 0 {
                if let Some(i) = self.items.get_mut(item) {
                    i.message.content = parts;
                    i.changed |= renamed || groups.len() > 1;
                }
                item
            } else {
                self.derive(item, Role::Tool, parts)
            };
            placed.push((target, *dest));
        }
        if placed.len() > 1 {
            let ids: Vec<String> = placed.iter().map(|(i, _)| self.id_of(*i).0).collect();
            self.note(
                item,
                format!("tool message split into {} because its results go to different places", ids.join(", ")),
            );
        }
        for (target, dest) in placed {
            match dest {
                Dest::Block(turn) => {
                    if let Some(turn) = self.turns.get_mut(turn) {
                        turn.block.push(target);
                    }
                }
                Dest::Duplicate(turn) => {
                    let id = self
                        .items
                        .get(target)
                        .and_then(|i| i.message.tool_results().next().map(|r| r.call_id.clone()))
                        .unwrap_or_else(|| ToolCallId(String::new()));
                    self.turn_into_text(target, &format!("[duplicate tool result for {id}]"));
                    if let Some(turn) = self.turns.get_mut(turn) {
                        turn.extras.push(target);
                    }
                }
                Dest::Later => {
                    let id = self
                        .items
                        .get(target)
                        .and_then(|i| i.message.tool_results().next().map(|r| r.call_id.clone()))
                        .unwrap_or_else(|| ToolCallId(String::new()));
                    self.pending.entry(id).or_default().push(target);
                }
            }
        }
        Ok(())
    }

    /// Decides where `result` (of tool item `item`, at `position`) goes, answering or
    /// synthesising its call and renaming it to follow its call.
    pub(super) fn route(
        &mut self,
        result: &mut ToolResult,
        item: usize,
        position: usize,
        first_call: &BTreeMap<ToolCallId, usize>,
    ) -> Result<Dest, Error> {
        let (waiting, answered) = self.candidate(&result.call_id);
        if let Some(k) = waiting
            && let Some(call) = self.calls.get_mut(k)
        {
            call.answered = true;
            let (turn, id) = (call.turn, call.id.clone());
            if result.call_id != id {
                self.note(item, format!("tool result `{}` follows its call, renamed to `{id}`", result.call_id));
                result.call_id = id.clone();
            }
            if !(self.in_block && self.current == Some(turn)) {
                let assistant = self.turns.get(turn).map_or(usize::MAX, |t| t.assistant);
                let assistant = self.id_of(assistant);
                self.note(
                    item,
                    format!(
                        "tool result `{id}` came after other messages; moved right after the results of its call \
                         in assistant message {assistant}"
                    ),
                );
            }
            return Ok(Dest::Block(turn));
        }
        // An answered call: this is a second result.
        if let Some(turn) = answered {
            let assistant = self.turns.get(turn).map_or(usize::MAX, |t| t.assistant);
            let assistant = self.id_of(assistant);
            self.note(
                item,
                format!(
                    "second tool result for call `{}`, which already has one; kept as a user text message after the \
                     results of assistant message {assistant}",
                    result.call_id
                ),
            );
            return Ok(Dest::Duplicate(turn));
        }
        // Its call comes later.
        if !result.call_id.0.is_empty() && first_call.get(&result.call_id).is_some_and(|&p| p > position) {
            return Ok(Dest::Later);
        }
        // No call anywhere: synthesise one.
        if result.name.trim().is_empty() {
            return Err(Error::InvalidInput(format!(
                "message {}: tool result `{}` answers no tool call and names no tool, so no call can be made for it",
                self.id_of(item),
                result.call_id
            )));
        }
        let id = if result.call_id.0.is_empty() || self.seen_calls.contains(&result.call_id) {
            let fresh = self.fresh_call_id(&result.call_id);
            self.note(item, format!("tool result `{}` given the call id `{fresh}`", result.call_id));
            result.call_id = fresh.clone();
            fresh
        } else {
            result.call_id.clone()
        };
        let call = ToolCall { id: id.clone(), name: result.name.clone(), arguments: "{}".to_owned() };
        let turn = match self.current {
            Some(turn) if self.in_block => {
                let assistant = self.turns.get(turn).map_or(usize::MAX, |t| t.assistant);
                if let Some(a) = self.items.get_mut(assistant) {
                    a.message.content.push(ContentPart::ToolCall(call));
                    a.changed = true;
                }
                let assistant = self.id_of(assistant);
                self.note(
                    item,
                    format!(
                        "tool result `{id}` answers no call; a call was synthesised in assistant message {assistant}"
                    ),
                );
                turn
            }
            _ => {
                let assistant = self.derive(item, Role::Assistant, vec![ContentPart::ToolCall(call)]);
                let turn = self.turns.len();
                self.turns.push(Turn { assistant, block: Vec::new(), extras: Vec::new() });
                self.units.push(Unit::Turn(turn));
                self.current = Some(turn);
                self.in_block = true;
                let assistant = self.id_of(assistant);
                self.note(
                    item,
                    format!(
                        "tool result `{id}` answers no call; a call was synthesised in a new assistant message \
                         {assistant} inserted before it"
                    ),
                );
                turn
            }
        };
        self.seen_calls.insert(id.clone());
        self.by_original.entry(id.clone()).or_default().push(self.calls.len());
        self.calls.push(Call { id: id.clone(), original: id, name: result.name.clone(), turn, answered: true });
        Ok(Dest::Block(turn))
    }

    /// The call a result with input call id `id` answers: the first waiting call of the latest
    /// turn with one; else the latest turn with a call of that id (a second result).
    pub(super) fn candidate(&self, id: &ToolCallId) -> (Option<usize>, Option<usize>) {
        let Some(calls) = self.by_original.get(id) else { return (None, None) };
        let mut waiting: Option<(usize, usize)> = None;
        // Latest first, so the usual case (the call of the current turn) stops at once.
        for &k in calls.iter().rev() {
            let Some(call) = self.calls.get(k) else { continue };
            match waiting {
                Some((turn, _)) if call.turn != turn => break,
                _ if !call.answered => waiting = Some((call.turn, k)),
                _ => {}
            }
        }
        let latest = calls.last().and_then(|&k| self.calls.get(k)).map(|c| c.turn);
        (waiting.map(|(_, k)| k), latest)
    }
}
