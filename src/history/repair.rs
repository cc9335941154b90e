//! Repairing or rejecting a malformed history (issue 4, "Bad input").
//!
//! Agents hand the engine their message history as it is; the engine must never send a provider a
//! history the provider rejects. [`repair_history`] turns any history into one that keeps tool
//! calls and results paired (R4.2), or fails with [`Error::InvalidInput`] naming the message. It
//! never panics and never drops a message silently: every input message's content is still in the
//! output (maybe moved, split or turned into text), and every change is reported as a
//! [`RepairNote`] naming the message (by its id in the output) the change is about.
//!
//! # The repaired history
//!
//! 1. Every tool call of an assistant message is answered by exactly one tool result, in the tool
//!    messages that immediately follow that assistant message (before any message of another role).
//! 2. Every tool result answers a call of the nearest preceding assistant message.
//! 3. Message ids are unique; tool call ids are unique and non-empty.
//! 4. `sequence` equals the index.
//! 5. Tool calls live only in assistant messages, tool results only in tool messages, and every
//!    tool message carries at least one result; a tool message's `tool_call_id`, when set, names
//!    one of its results.
//!
//! A well-formed history comes back unchanged, without notes.
//!
//! # Decisions, case by case
//!
//! Misplaced parts (checked first, message by message):
//! - A tool message without any tool result is turned into a user message (an empty one too).
//! - A tool result inside a non-tool message is split out into its own tool message, and a tool
//!   call inside a non-assistant message into its own assistant message. The message is cut into
//!   runs of consecutive parts in the order they came: `user[text, result, text]` becomes
//!   `user[text]`, `tool[result]`, `user[text]`. The first run keeps the message's id; the others
//!   get fresh ids. A message whose parts all belong elsewhere just changes role (an
//!   Anthropic-style user message carrying only tool results becomes a tool message).
//! - Text and reasoning next to tool results in a tool message stay with them; a run of them that
//!   a tool call cuts off from every result becomes a user message.
//! - A system message after the first non-system message is kept in place as it is (the OpenAI
//!   form accepts it; serializers that need one system block gather them). Summaries likewise.
//! - A message without content is kept, with a note; the serializers decide how to send it.
//!
//! Pairing (walking the messages in order):
//! - A result whose call is waiting in an earlier assistant message, but that arrives after other
//!   messages, is moved right after the results of its call (note). When several calls with the
//!   same id wait, the nearest preceding one is answered.
//! - A result that arrives before its call (the call is in a later assistant message) is moved
//!   right after that call (note).
//! - A result with no call anywhere gets a synthesised call (the result's id and tool name,
//!   arguments `{}`), in the nearest preceding assistant message when the result is in the run of
//!   tool messages right after it; otherwise in a new assistant message inserted right before the
//!   result, so the result keeps its place in time (note).
//! - A call without a result gets a placeholder result ([`MISSING_RESULT`], status `Error`) in a
//!   new tool message at the end of the results of its assistant message (note).
//! - A call reusing the id of an earlier call (or with an empty id) gets a fresh id
//!   (`<id>_r<k>`, unused anywhere in the input; `call_r<k>` for an empty id), and the results
//!   after it that use the old id follow the rename (notes).
//! - A second result for a call that already has one is kept as a user text message,
//!   `[duplicate tool result for <id>]\n<output>` (and `\n[stderr]\n<stderr>` when there is one),
//!   right after the results of that call (the latest call with that id) (note).
//! - A tool message whose results go to different places is split; the first part keeps its id.
//! - A tool message whose `tool_call_id` names none of its results gets its first result's id
//!   (note); a message that stops being a tool message loses it.
//!
//! Ids and numbering:
//! - A message reusing the id of an earlier message (or without an id) keeps its place and gets a
//!   fresh id `<id>-<k>` (`m-<k>` for an empty id), unused anywhere in the input (note). New
//!   messages get fresh ids the same way, from the id of the message they come from.
//! - `sequence` is renumbered to the index; one note flags input whose numbering was off.
//! - Messages whose content or role changed get a fresh [`Message::describe`] and lose their
//!   `tokens` (to be counted again); new messages copy trace, branch, goal, span and time from the
//!   message they come from.
//!
//! Rejected, because a repair would have to invent meaning:
//! - a tool call without a tool name (a name would have to be made up to send the call);
//! - a tool result with no call anywhere and without a tool name (the call synthesised for it
//!   would need a made-up name).

use std::collections::{BTreeMap, BTreeSet};

use crate::error::Error;
use crate::import::MISSING_RESULT;
use crate::model::{ContentPart, Message, MessageId, Role, ToolCall, ToolCallId, ToolResult, ToolStatus};

/// A repaired history and what was done to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Repaired {
    pub messages: Vec<Message>,
    pub notes: Vec<RepairNote>,
}

/// One repair: the message it is about (its id in the repaired history) and what was done.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RepairNote {
    pub message: MessageId,
    pub what: String,
}

/// Repairs `messages` so tool calls and results are paired (see the module documentation for
/// every case), or fails with [`Error::InvalidInput`] naming the message that cannot be repaired
/// without inventing meaning.
pub fn repair_history(messages: Vec<Message>) -> Result<Repaired, Error> {
    if messages.is_empty() {
        return Ok(Repaired { messages: Vec::new(), notes: Vec::new() });
    }
    let mut repairer = Repairer::new(&messages);
    let pieces = repairer.normalize(messages)?;
    repairer.pair(&pieces)?;
    Ok(repairer.finish())
}

/// Checks invariants 1, 2, 3 (tool call ids) and 5 of the module documentation; the error names
/// the first offending message found.
pub fn check_pairing(messages: &[Message]) -> Result<(), String> {
    let mut seen: BTreeSet<&ToolCallId> = BTreeSet::new();
    // The nearest preceding assistant message, its calls and whether each is answered.
    let mut open: Option<(&MessageId, Vec<(&ToolCallId, bool)>)> = None;
    // Whether only tool messages came since that assistant message.
    let mut in_block = false;
    for message in messages {
        let id = &message.id;
        match message.role {
            Role::Assistant => {
                close(open.take())?;
                if message.tool_results().next().is_some() {
                    return Err(format!("message {id}: an assistant message carries a tool result"));
                }
                let mut calls = Vec::new();
                for call in message.tool_calls() {
                    if call.id.0.is_empty() {
                        return Err(format!("message {id}: a tool call has an empty id"));
                    }
                    if !seen.insert(&call.id) {
                        return Err(format!("message {id}: tool call id `{}` is used by an earlier call", call.id));
                    }
                    calls.push((&call.id, false));
                }
                open = Some((id, calls));
                in_block = true;
            }
            Role::Tool => {
                if message.tool_calls().next().is_some() {
                    return Err(format!("message {id}: a tool message carries a tool call"));
                }
                if message.tool_results().next().is_none() {
                    return Err(format!("message {id}: a tool message carries no tool result"));
                }
                for result in message.tool_results() {
                    let Some((assistant, calls)) = open.as_mut().filter(|_| in_block) else {
                        return Err(format!(
                            "message {id}: tool result `{}` does not directly follow an assistant message",
                            result.call_id
                        ));
                    };
                    let Some(call) = calls.iter_mut().find(|(call, _)| **call == result.call_id) else {
                        return Err(format!(
                            "message {id}: tool result `{}` answers no call of assistant message {assistant}",
                            result.call_id
                        ));
                    };
                    if call.1 {
                        return Err(format!("message {id}: tool call `{}` already has a result", result.call_id));
                    }
                    call.1 = true;
                }
                if let Some(named) = &message.tool_call_id
                    && !message.tool_results().any(|r| r.call_id == *named)
                {
                    return Err(format!("message {id}: tool_call_id `{named}` names none of its results"));
                }
            }
            Role::User | Role::System | Role::Summary => {
                if message.tool_calls().next().is_some() {
                    return Err(format!("message {id}: a {} message carries a tool call", message.role.as_str()));
                }
                if message.tool_results().next().is_some() {
                    return Err(format!("message {id}: a {} message carries a tool result", message.role.as_str()));
                }
                close(open.take())?;
                in_block = false;
            }
        }
    }
    close(open)
}

/// Fails when a call of the assistant message leaving scope has no result.
fn close(open: Option<(&MessageId, Vec<(&ToolCallId, bool)>)>) -> Result<(), String> {
    let Some((assistant, calls)) = open else { return Ok(()) };
    match calls.iter().find(|(_, answered)| !answered) {
        Some((call, _)) => {
            Err(format!("message {assistant}: tool call `{call}` has no result in the tool messages that follow"))
        }
        None => Ok(()),
    }
}

/// A message being repaired; `changed` when its content or role changed (or it is new).
struct Item {
    message: Message,
    changed: bool,
}

/// A tool call met while walking the history.
struct Call {
    /// The id it has in the output.
    id: ToolCallId,
    /// The id it had in the input, which results refer to.
    original: ToolCallId,
    name: String,
    turn: usize,
    answered: bool,
}

/// An assistant message, the tool messages answering it and the duplicates kept after them.
struct Turn {
    assistant: usize,
    block: Vec<usize>,
    extras: Vec<usize>,
}

/// The output, in order: a message of another role, or a turn.
enum Unit {
    Plain(usize),
    Turn(usize),
}

/// Where a tool result goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dest {
    /// Into the results of this turn.
    Block(usize),
    /// A second result for a call of this turn: kept as text after its results.
    Duplicate(usize),
    /// Its call comes later: held until that call's assistant message.
    Later,
}

struct Repairer {
    items: Vec<Item>,
    notes: Vec<(usize, String)>,
    /// Every message id of the input and every id given since.
    used_ids: BTreeSet<MessageId>,
    /// Every tool call id of the input (calls and results) and every id given since.
    taken_calls: BTreeSet<ToolCallId>,
    /// The next suffix to try for a fresh id, by prefix (`<base>-`, `<base>_r`).
    next_suffix: BTreeMap<String, usize>,
    /// The call ids in the output so far.
    seen_calls: BTreeSet<ToolCallId>,
    calls: Vec<Call>,
    /// Input call id → the calls that had it, in order.
    by_original: BTreeMap<ToolCallId, Vec<usize>>,
    turns: Vec<Turn>,
    units: Vec<Unit>,
    /// The turn of the nearest preceding assistant message.
    current: Option<usize>,
    /// Whether only tool messages came since that assistant message.
    in_block: bool,
    /// Results waiting for a later call, by call id: items of one result each.
    pending: BTreeMap<ToolCallId, Vec<usize>>,
}

impl Repairer {
    fn new(messages: &[Message]) -> Self {
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

    fn note(&mut self, item: usize, what: String) {
        self.notes.push((item, what));
    }

    fn id_of(&self, item: usize) -> MessageId {
        self.items.get(item).map(|i| i.message.id.clone()).unwrap_or_else(empty_id)
    }

    /// `<base>-<k>` for the smallest `k` unused (counting on from the last one given for `base`).
    fn fresh_message_id(&mut self, base: &MessageId) -> MessageId {
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
    fn fresh_call_id(&mut self, base: &ToolCallId) -> ToolCallId {
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
    fn derive(&mut self, source: usize, role: Role, content: Vec<ContentPart>) -> usize {
        let base = self.id_of(source);
        let id = self.fresh_message_id(&base);
        let template = self.items.get(source).map(|i| &i.message);
        let message = Message {
            id,
            trace_id: template.map(|m| m.trace_id.clone()).unwrap_or_else(|| "".into()),
            branch_id: template.and_then(|m| m.branch_id.clone()),
            role,
            sequence: 0,
            goal_id: template.and_then(|m| m.goal_id.clone()),
            span_id: template.and_then(|m| m.span_id.clone()),
            tool_call_id: None,
            content,
            description: String::new(),
            tokens: None,
            cost: None,
            created_at_ms: template.map_or(0, |m| m.created_at_ms),
        };
        self.items.push(Item { message, changed: true });
        self.items.len() - 1
    }

    /// Rejects nameless calls, renames repeated message ids and cuts messages so that calls are
    /// only in assistant messages and results only in tool messages. Returns the items in order.
    fn normalize(&mut self, messages: Vec<Message>) -> Result<Vec<usize>, Error> {
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

    /// Walks the items in order, pairing calls and results.
    fn pair(&mut self, pieces: &[usize]) -> Result<(), Error> {
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
    fn open_turn(&mut self, item: usize) -> usize {
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
    fn attach_pending(&mut self, turn: usize) {
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
    fn rename_results(&mut self, item: usize, from: &ToolCallId, to: &ToolCallId) {
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
    fn turn_into_text(&mut self, item: usize, header: &str) {
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

    /// Routes each result of tool item `item` (at `position` among the pieces), splitting the
    /// item when its results go to different places.
    fn place_results(
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
    fn route(
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
    fn candidate(&self, id: &ToolCallId) -> (Option<usize>, Option<usize>) {
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

    /// Gives every call still without a result a placeholder result.
    fn add_placeholders(&mut self) {
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
    fn finish(self) -> Repaired {
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

/// `<header>\n<output>`, with the stderr when there is one.
fn result_text(header: &str, result: &ToolResult) -> String {
    let mut text = format!("{header}\n{}", result.output);
    if let Some(stderr) = &result.stderr {
        text.push_str("\n[stderr]\n");
        text.push_str(stderr);
    }
    text
}

/// A message id for an error: the id, or its index when it has none.
fn display_id(id: &MessageId, index: usize) -> String {
    if id.0.is_empty() { format!("#{index} (no id)") } else { id.0.clone() }
}

fn empty_id() -> MessageId {
    MessageId(String::new())
}
