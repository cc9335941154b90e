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

mod check;
mod ids;
mod normalize;
mod pair;
mod route;

use std::collections::{BTreeMap, BTreeSet};

use crate::error::Error;
use crate::model::{Message, MessageId, ToolCallId};

pub use check::check_pairing;

/// A repaired history and what was done to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Repaired {
    pub messages: Vec<Message>,
    pub notes: Vec<RepairNote>,
}

/// One repair: the message it is about (its id in the repaired history) and what was done.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
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
