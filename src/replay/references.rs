//! Reference recall: could the model still see the code references (paths, function, test and
//! variable names) it went on to use? Definitions in the [module docs](super). Every distinct
//! message text is scanned once per trajectory, for every reference at once (Aho-Corasick), so
//! the metric costs about one pass over what the strategies send.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use aho_corasick::AhoCorasick;

use super::{WireMessage, flatten};
use crate::import::Trajectory;
use crate::model::{ContentPart, Message, Role, argument_texts, references_in};

/// The references of one action (the assistant messages an agent produced for one call): those
/// in the values of its tool calls' arguments (JSON strings, decoded, so `\n` separates; keys
/// are not references), or, when it made no tool call, those in its text.
pub fn action_references(action: &[Message]) -> BTreeSet<String> {
    let assistant = action.iter().filter(|m| m.role == Role::Assistant);
    let calls: Vec<_> = assistant.clone().flat_map(|m| m.tool_calls()).collect();
    let mut out = BTreeSet::new();
    if calls.is_empty() {
        for message in assistant {
            for part in &message.content {
                if let ContentPart::Text { text } = part {
                    out.extend(references_in(text));
                }
            }
        }
        return out;
    }
    for call in calls {
        for value in argument_texts(&call.arguments) {
            out.extend(references_in(&value));
        }
    }
    out
}

/// The counted references of every call of one trajectory, and the memo that finds them in
/// prompts.
#[derive(Debug, Default)]
pub(crate) struct ReferenceBook {
    /// Per call: the ids of its counted references.
    counted: Vec<Vec<u32>>,
    automaton: Option<AhoCorasick>,
    /// The reference ids each distinct message text contains, sorted.
    memo: HashMap<Arc<str>, Arc<[u32]>>,
}

/// Find every call's references and keep those the agent learned from the history (see the
/// module docs): seen before the call in a message that is not system or user, and in no system
/// or user message of the trajectory.
pub(crate) fn counted_references(trajectory: &Trajectory) -> ReferenceBook {
    let messages = &trajectory.messages;
    let mut patterns: Vec<String> = Vec::new();
    let mut ids: HashMap<String, u32> = HashMap::new();
    let mut actions: Vec<Vec<u32>> = Vec::with_capacity(trajectory.calls.len());
    for (k, &start) in trajectory.calls.iter().enumerate() {
        let start = start.min(messages.len());
        let end = trajectory.calls.get(k + 1).copied().unwrap_or(messages.len()).clamp(start, messages.len());
        let refs = action_references(&messages[start..end]);
        actions.push(
            refs.into_iter()
                .map(|r| {
                    *ids.entry(r.clone()).or_insert_with(|| {
                        patterns.push(r);
                        patterns.len() as u32 - 1
                    })
                })
                .collect(),
        );
    }
    let mut book = ReferenceBook { counted: vec![Vec::new(); actions.len()], ..ReferenceBook::default() };
    if patterns.is_empty() {
        return book;
    }
    book.automaton = AhoCorasick::new(&patterns).ok();
    // Where each reference is first seen in a message that is not system or user, and whether a
    // system or user message holds it.
    let mut first_seen = vec![usize::MAX; patterns.len()];
    let mut in_requirements = vec![false; patterns.len()];
    for (i, message) in messages.iter().enumerate() {
        let found = book.found_in(&flatten(message.role, &message.content).content);
        for &id in found.iter() {
            if matches!(message.role, Role::System | Role::User) {
                in_requirements[id as usize] = true;
            } else {
                first_seen[id as usize] = first_seen[id as usize].min(i);
            }
        }
    }
    book.memo.clear();
    for (k, refs) in actions.into_iter().enumerate() {
        let before = trajectory.calls[k];
        book.counted[k] =
            refs.into_iter().filter(|&id| !in_requirements[id as usize] && first_seen[id as usize] < before).collect();
    }
    book
}

impl ReferenceBook {
    pub(crate) fn counted(&self, call: usize) -> usize {
        self.counted.get(call).map_or(0, Vec::len)
    }

    /// How many of the call's counted references occur in `prompt`.
    pub(crate) fn kept_in(&mut self, call: usize, prompt: &[WireMessage]) -> usize {
        let Some(wanted) = self.counted.get(call).filter(|w| !w.is_empty()).cloned() else { return 0 };
        let found: Vec<Arc<[u32]>> = prompt.iter().map(|m| self.found_in(&m.content)).collect();
        wanted.iter().filter(|id| found.iter().any(|f| f.binary_search(id).is_ok())).count()
    }

    /// The reference ids `text` contains (overlapping matches included), memoized by content.
    fn found_in(&mut self, text: &Arc<str>) -> Arc<[u32]> {
        if let Some(found) = self.memo.get(text) {
            return Arc::clone(found);
        }
        let Some(automaton) = &self.automaton else { return Arc::from([]) };
        let ids: BTreeSet<u32> = automaton.find_overlapping_iter(&**text).map(|m| m.pattern().as_u32()).collect();
        let found: Arc<[u32]> = ids.into_iter().collect();
        self.memo.insert(Arc::clone(text), Arc::clone(&found));
        found
    }
}
