//! Reference recall: could the model still see the code references (paths, function, test and
//! variable names) it went on to use? Definitions in the [module docs](super). Every distinct
//! message text is scanned once per trajectory, for every reference at once (Aho-Corasick), so
//! the metric costs about one pass over what the strategies send.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use aho_corasick::AhoCorasick;
use serde::Serialize;

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
    /// The references, by id.
    patterns: Vec<String>,
    /// Every message of the trajectory flattened, and the reference ids it holds.
    messages: Vec<(WireMessage, Arc<[u32]>)>,
    /// The trajectory's calls: how many messages each one's history held.
    calls: Vec<usize>,
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
    let mut book = ReferenceBook {
        counted: vec![Vec::new(); actions.len()],
        calls: trajectory.calls.clone(),
        ..ReferenceBook::default()
    };
    // Every message is flattened even when nothing is counted: a lost edit is placed with them.
    book.automaton = (!patterns.is_empty()).then(|| AhoCorasick::new(&patterns).ok()).flatten();
    book.patterns = patterns;
    // Where each reference is first seen in a message that is not system or user, and whether a
    // system or user message holds it.
    let mut first_seen = vec![usize::MAX; book.patterns.len()];
    let mut in_requirements = vec![false; book.patterns.len()];
    for (i, message) in messages.iter().enumerate() {
        let flat = flatten(message.role, &message.content);
        let found = book.found_in(&flat.content);
        book.messages.push((flat, Arc::clone(&found)));
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

    /// How many of the call's counted references occur in `prompt`, and those that do not, each
    /// with what became of it. `history` is how many messages the call's history held.
    pub(crate) fn check(&mut self, call: usize, history: usize, prompt: &[WireMessage]) -> (usize, Vec<LostReference>) {
        let Some(wanted) = self.counted.get(call).filter(|w| !w.is_empty()).cloned() else { return (0, Vec::new()) };
        let found: Vec<Arc<[u32]>> = prompt.iter().map(|m| self.found_in(&m.content)).collect();
        let missing: Vec<u32> =
            wanted.iter().copied().filter(|id| !found.iter().any(|f| f.binary_search(id).is_ok())).collect();
        if missing.is_empty() {
            return (wanted.len(), Vec::new());
        }
        let history = &self.messages[..history.min(self.messages.len())];
        let placed = line_up(history, prompt);
        let lost = missing
            .iter()
            .filter_map(|&id| {
                // A counted reference was seen before the call in a message that is not system or user.
                let message = history
                    .iter()
                    .rposition(|(m, refs)| !matches!(m.role, "system" | "user") && refs.binary_search(&id).is_ok())?;
                let cause = cause(history, &placed, message, prompt);
                let seen_at = self.calls.partition_point(|&c| c <= message);
                Some(LostReference { call, reference: self.patterns[id as usize].clone(), message, seen_at, cause })
            })
            .collect();
        (wanted.len() - missing.len(), lost)
    }

    /// What became of history message `message` in `prompt`, the call's history holding
    /// `history` messages (see [`LossCause`]).
    pub(crate) fn cause_of(&self, history: usize, message: usize, prompt: &[WireMessage]) -> LossCause {
        let history = &self.messages[..history.min(self.messages.len())];
        match message < history.len() {
            true => cause(history, &line_up(history, prompt), message, prompt),
            false => LossCause::Dropped,
        }
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

/// Why a counted reference is not in a strategy's prompt: what became of the last message before
/// the call that held it, found by lining the prompt up with the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LossCause {
    /// Folded into a message that stands for several: a compaction block or a summary.
    Compacted,
    /// In its place in another form: a compressed, masked or cleared output.
    Rewritten,
    /// Left out with nothing in its place (pruned).
    Dropped,
}

impl LossCause {
    pub const ALL: [LossCause; 3] = [LossCause::Compacted, LossCause::Rewritten, LossCause::Dropped];

    /// The cause in words, for listings.
    pub fn describe(self) -> &'static str {
        match self {
            LossCause::Compacted => "in a compaction block or summary",
            LossCause::Rewritten => "rewritten in place (compressed, masked or cleared)",
            LossCause::Dropped => "dropped",
        }
    }
}

/// A counted reference a strategy's prompt did not hold at a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LostReference {
    pub call: usize,
    pub reference: String,
    /// The last message before the call that held it: its index in the trajectory.
    pub message: usize,
    /// The first call whose history held that message.
    pub seen_at: usize,
    pub cause: LossCause,
}

/// A counted edit whose old text a strategy's prompt did not show at the call that made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LostEdit {
    pub call: usize,
    /// The first line of the old text, cut to 80 characters.
    pub excerpt: String,
    /// The last message before the call that showed it: its index in the trajectory.
    pub message: usize,
    pub cause: LossCause,
}

impl LostEdit {
    pub(crate) fn new(call: usize, text: &str, message: usize, cause: LossCause) -> Self {
        let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default();
        let mut excerpt: String = line.chars().take(80).collect();
        if excerpt.len() < line.len() {
            excerpt.push('…');
        }
        LostEdit { call, excerpt, message, cause }
    }
}

/// Where each history message stands unchanged in the prompt: the two lined up by a diff (the
/// longest run of messages both hold in order).
fn line_up(history: &[(WireMessage, Arc<[u32]>)], prompt: &[WireMessage]) -> Vec<Option<usize>> {
    let old: Vec<(&str, &str)> = history.iter().map(|(m, _)| (m.role, &*m.content)).collect();
    let new: Vec<(&str, &str)> = prompt.iter().map(|m| (m.role, &*m.content)).collect();
    let mut placed = vec![None; history.len()];
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &old, &new) {
        if let similar::DiffOp::Equal { old_index, new_index, len } = op {
            for k in 0..len {
                placed[old_index + k] = Some(new_index + k);
            }
        }
    }
    placed
}

/// What the prompt holds where history message `source` was: between the prompt messages of the
/// nearest placed history messages around it. As many messages, role for role, as the history
/// had there: rewritten in place; else a system message (a block or a summary): compacted; else
/// a message of the source's role: rewritten; else dropped.
fn cause(
    history: &[(WireMessage, Arc<[u32]>)],
    placed: &[Option<usize>],
    source: usize,
    prompt: &[WireMessage],
) -> LossCause {
    let before = placed[..source].iter().rposition(Option::is_some);
    let after = (source + 1..placed.len()).find(|&i| placed[i].is_some());
    let from = before.and_then(|i| placed[i]).map_or(0, |j| j + 1);
    let to = after.and_then(|i| placed[i]).unwrap_or(prompt.len()).max(from);
    let gap = &prompt[from..to];
    let replaced = &history[before.map_or(0, |i| i + 1)..after.unwrap_or(history.len())];
    let role = history[source].0.role;
    if gap.len() == replaced.len() && gap.iter().zip(replaced).all(|(p, (h, _))| p.role == h.role) {
        LossCause::Rewritten
    } else if gap.iter().any(|m| m.role == "system") {
        LossCause::Compacted
    } else if gap.iter().any(|m| m.role == role) {
        LossCause::Rewritten
    } else {
        LossCause::Dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire(messages: &[(&'static str, &str)]) -> Vec<WireMessage> {
        messages.iter().map(|&(role, text)| WireMessage::new(role, text)).collect()
    }

    /// A lost reference's cause is what the prompt holds where its message was.
    #[test]
    fn a_loss_is_named_by_what_took_the_message_place() {
        let history = wire(&[
            ("system", "rules"),
            ("user", "fix it"),
            ("assistant", "grep(parse_line)"),
            ("tool", "src/lex.py:12: def parse_line"),
            ("assistant", "read(src/lex.py)"),
            ("tool", "12 def parse_line"),
        ]);
        let history: Vec<(WireMessage, Arc<[u32]>)> = history.into_iter().map(|m| (m, Arc::from([]))).collect();
        let cause_in = |prompt: &[(&'static str, &str)]| {
            let prompt = wire(prompt);
            cause(&history, &line_up(&history, &prompt), 3, &prompt)
        };
        let [sys, user, grep, _, read, out] = [0, 1, 2, 3, 4, 5].map(|i| (history[i].0.role, &*history[i].0.content));
        assert_eq!(cause_in(&[sys, user, grep, ("tool", "[cleared]"), read, out]), LossCause::Rewritten);
        assert_eq!(cause_in(&[sys, user, ("system", "<summary>"), read, out]), LossCause::Compacted);
        assert_eq!(cause_in(&[sys, user, ("system", "<summary>"), out]), LossCause::Compacted);
        assert_eq!(cause_in(&[sys, user, grep, read, out]), LossCause::Dropped);
        // The same output again later does not pull the line-up past what lies between.
        let again = [sys, user, grep, ("tool", "[cleared]"), read, out, ("tool", "src/lex.py:12: def parse_line")];
        assert_eq!(cause_in(&again), LossCause::Rewritten);
    }
}
