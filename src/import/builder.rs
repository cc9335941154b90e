//! The builder every importer fills: messages as drafts, call boundaries and notes; `finish`
//! repairs the pairing of tool calls and results and numbers the messages.

use std::collections::{HashMap, HashSet, VecDeque};

use super::{Format, Trajectory};
use crate::model::{ContentPart, Message, Role, ToolCall, ToolCallId, ToolResult, TraceId};

/// The output of a placeholder result, given to a tool call whose result was never recorded.
pub const MISSING_RESULT: &str = "[no result recorded]";

/// A message before numbering.
pub(crate) struct Draft {
    pub role: Role,
    pub content: Vec<ContentPart>,
    pub at_ms: u64,
}

/// A trajectory under construction.
pub(crate) struct Builder {
    format: Format,
    name: String,
    drafts: Vec<Draft>,
    calls: Vec<usize>,
    notes: Vec<String>,
    /// Repeated notes, counted: (what, how many), in first-seen order.
    tallies: Vec<(String, usize)>,
    generated_ids: usize,
}

impl Builder {
    pub fn new(format: Format, name: impl Into<String>) -> Self {
        Builder {
            format,
            name: name.into(),
            drafts: Vec::new(),
            calls: Vec::new(),
            notes: Vec::new(),
            tallies: Vec::new(),
            generated_ids: 0,
        }
    }

    /// Appends a message; returns its index.
    pub fn push(&mut self, role: Role, content: Vec<ContentPart>, at_ms: u64) -> usize {
        self.drafts.push(Draft { role, content, at_ms });
        self.drafts.len() - 1
    }

    /// Appends a message of one text part.
    pub fn text(&mut self, role: Role, text: impl Into<String>, at_ms: u64) -> usize {
        self.push(role, vec![ContentPart::Text { text: text.into() }], at_ms)
    }

    /// Appends a tool message carrying `result`. An empty `result.name` is filled from the call.
    pub fn result(&mut self, result: ToolResult, at_ms: u64) -> usize {
        self.push(Role::Tool, vec![ContentPart::ToolResult(result)], at_ms)
    }

    /// Inserts a tool message answering a call of the assistant message at `assistant`, after
    /// the tool messages already following it. Call boundaries at or after the insertion move
    /// with the messages, so the next call's prompt holds the result. Returns its index.
    pub fn insert_result(&mut self, assistant: usize, result: ToolResult, at_ms: u64) -> usize {
        let len = self.drafts.len();
        let position = (assistant.saturating_add(1)..len).find(|&k| self.drafts[k].role != Role::Tool).unwrap_or(len);
        let content = vec![ContentPart::ToolResult(result)];
        self.drafts.insert(position, Draft { role: Role::Tool, content, at_ms });
        for boundary in &mut self.calls {
            if *boundary >= position {
                *boundary += 1;
            }
        }
        position
    }

    /// Marks an LLM call whose prompt is every message so far.
    pub fn call(&mut self) {
        self.calls.push(self.drafts.len());
    }

    pub fn draft_mut(&mut self, index: usize) -> Option<&mut Draft> {
        self.drafts.get_mut(index)
    }

    pub fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    /// A note that may recur, reported once with its count.
    pub fn tally(&mut self, what: impl Into<String>) {
        let what = what.into();
        match self.tallies.iter_mut().find(|(w, _)| *w == what) {
            Some((_, count)) => *count += 1,
            None => self.tallies.push((what, 1)),
        }
    }

    /// A new call id, `call_<n>`, for calls the trajectory did not name.
    pub fn fresh_id(&mut self) -> ToolCallId {
        next_id(&mut self.generated_ids)
    }

    pub fn finish(mut self) -> Trajectory {
        let inserts = self.repair_pairing();
        let (drafts, calls) = splice(std::mem::take(&mut self.drafts), inserts, &self.calls);
        let trace = TraceId(self.name.clone());
        let messages = drafts
            .into_iter()
            .enumerate()
            .map(|(i, d)| {
                let tool_call_id = match d.role {
                    Role::Tool => d.content.iter().find_map(|p| match p {
                        ContentPart::ToolResult(r) => Some(r.call_id.clone()),
                        _ => None,
                    }),
                    _ => None,
                };
                Message {
                    tool_call_id,
                    created_at_ms: d.at_ms,
                    ..Message::new(trace.clone(), i as u64, d.role, d.content)
                }
            })
            .collect();
        let mut notes = self.notes;
        notes.extend(self.tallies.into_iter().map(|(what, n)| format!("{what}: {n}")));
        Trajectory { format: self.format, name: self.name, messages, calls, notes }
    }

    /// Makes every tool call have exactly one later result and every result one earlier call
    /// (see [`Pairing`]): a result without a call gets one in the nearest earlier assistant
    /// message, a call without a result gets a placeholder after the tool messages that follow
    /// it. Returns the drafts to insert, by position.
    fn repair_pairing(&mut self) -> Vec<(usize, Draft)> {
        let mut pairing = Pairing::default();
        let mut inserts: Vec<(usize, Draft)> = Vec::new();
        let mut last_assistant: Option<usize> = None;
        for i in 0..self.drafts.len() {
            let Some(draft) = self.drafts.get_mut(i) else { continue };
            let mut synthesised = Vec::new();
            for part in &mut draft.content {
                match (part, draft.role) {
                    (ContentPart::ToolCall(call), Role::Assistant) => pairing.call(call, i, &mut self.generated_ids),
                    (ContentPart::ToolResult(result), Role::Tool) => {
                        synthesised.extend(pairing.result(result, &mut self.generated_ids));
                    }
                    _ => {}
                }
            }
            if draft.role == Role::Assistant {
                last_assistant = Some(i);
            }
            if synthesised.is_empty() {
                continue;
            }
            let at_ms = draft.at_ms;
            let calls = synthesised.into_iter().map(ContentPart::ToolCall);
            match last_assistant.and_then(|j| self.drafts.get_mut(j)) {
                Some(assistant) => assistant.content.extend(calls),
                None => inserts.push((i, Draft { role: Role::Assistant, content: calls.collect(), at_ms })),
            }
        }
        let mut missing = 0usize;
        for call in pairing.open.iter().filter(|o| !o.answered) {
            missing += 1;
            let after = (call.assistant + 1..self.drafts.len()).find(|&k| self.drafts[k].role != Role::Tool);
            let at_ms = self.drafts.get(call.assistant).map_or(0, |d| d.at_ms);
            let placeholder = ToolResult::ok(call.id.clone(), call.name.clone(), MISSING_RESULT);
            let draft = Draft { role: Role::Tool, content: vec![ContentPart::ToolResult(placeholder)], at_ms };
            inserts.push((after.unwrap_or(self.drafts.len()), draft));
        }
        for (count, what) in [
            (pairing.renamed, "tool calls with a repeated or empty id renamed"),
            (pairing.orphans, "tool results without an earlier call, given a synthesised call"),
            (missing, "tool calls without a recorded result, given a placeholder result"),
        ] {
            if count > 0 {
                self.note(format!("{what}: {count}"));
            }
        }
        inserts.sort_by_key(|(position, _)| *position);
        inserts
    }
}

/// A new call id, `call_<n>`, from a trajectory's counter.
fn next_id(counter: &mut usize) -> ToolCallId {
    *counter += 1;
    ToolCallId(format!("call_{counter}"))
}

/// The calls met so far while walking a trajectory, and which of them have their result.
#[derive(Default)]
struct Pairing {
    open: Vec<OpenCall>,
    by_id: HashMap<ToolCallId, usize>,
    /// A repeated id → the ids its later calls were renamed to, in order.
    aliases: HashMap<ToolCallId, VecDeque<ToolCallId>>,
    seen: HashSet<ToolCallId>,
    renamed: usize,
    orphans: usize,
}

struct OpenCall {
    id: ToolCallId,
    name: String,
    /// The index of the assistant draft making the call.
    assistant: usize,
    answered: bool,
}

impl Pairing {
    /// Registers a call of the assistant draft `assistant`; a repeated or empty id is renamed.
    fn call(&mut self, call: &mut ToolCall, assistant: usize, ids: &mut usize) {
        if self.seen.contains(&call.id) || call.id.0.is_empty() {
            let fresh = next_id(ids);
            self.aliases.entry(std::mem::replace(&mut call.id, fresh.clone())).or_default().push_back(fresh);
            self.renamed += 1;
        }
        self.seen.insert(call.id.clone());
        self.by_id.insert(call.id.clone(), self.open.len());
        self.open.push(OpenCall { id: call.id.clone(), name: call.name.clone(), assistant, answered: false });
    }

    /// Pairs `result` with the call waiting for it: the call of its id, else the next call that
    /// id was renamed to. An empty result name is taken from the call. Without such a call, the
    /// result gets a unique id and the call to synthesise for it is returned.
    fn result(&mut self, result: &mut ToolResult, ids: &mut usize) -> Option<ToolCall> {
        let waiting = self.waiting(&result.call_id).or_else(|| {
            let renames: Vec<ToolCallId> = self.aliases.get(&result.call_id)?.iter().cloned().collect();
            renames.iter().find_map(|id| self.waiting(id))
        });
        if let Some(call) = waiting.and_then(|k| self.open.get_mut(k)) {
            call.answered = true;
            result.call_id = call.id.clone();
            if result.name.is_empty() {
                result.name = call.name.clone();
            }
            return None;
        }
        self.orphans += 1;
        if self.seen.contains(&result.call_id) || result.call_id.0.is_empty() {
            result.call_id = next_id(ids);
        }
        self.seen.insert(result.call_id.clone());
        Some(ToolCall { id: result.call_id.clone(), name: result.name.clone(), arguments: "{}".to_owned() })
    }

    /// The index of call `id` if it still waits for its result.
    fn waiting(&self, id: &ToolCallId) -> Option<usize> {
        self.by_id.get(id).copied().filter(|&k| self.open.get(k).is_some_and(|o| !o.answered))
    }
}

/// Inserts `inserts` (sorted by position: before that old index) into `drafts` and maps the
/// call boundaries: a boundary at old index `b` covers what was inserted before `b`.
fn splice(drafts: Vec<Draft>, inserts: Vec<(usize, Draft)>, calls: &[usize]) -> (Vec<Draft>, Vec<usize>) {
    let len = drafts.len();
    let mut out = Vec::with_capacity(len + inserts.len());
    let mut new_index = Vec::with_capacity(len + 1);
    let mut inserts = inserts.into_iter().peekable();
    let mut drafts = drafts.into_iter();
    for i in 0..=len {
        while let Some((_, draft)) = inserts.next_if(|(position, _)| *position <= i) {
            out.push(draft);
        }
        new_index.push(out.len());
        if let Some(draft) = drafts.next() {
            out.push(draft);
        }
    }
    out.extend(inserts.map(|(_, d)| d));
    let calls = calls.iter().map(|&b| new_index.get(b.min(len)).copied().unwrap_or(out.len())).collect();
    (out, calls)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, name: &str) -> ContentPart {
        ContentPart::ToolCall(ToolCall { id: id.into(), name: name.into(), arguments: "{}".into() })
    }

    fn result(id: &str, name: &str) -> ToolResult {
        ToolResult::ok(id, name, "out")
    }

    #[test]
    fn unanswered_calls_get_placeholders_inside_the_next_prompt() {
        let mut b = Builder::new(Format::Vorflux, "t");
        b.text(Role::User, "task", 0);
        b.call();
        b.push(Role::Assistant, vec![call("a", "bash"), call("b", "read")], 0);
        b.result(result("a", ""), 0);
        b.call();
        b.text(Role::Assistant, "done", 0);
        let t = b.finish();
        let roles: Vec<Role> = t.messages.iter().map(|m| m.role).collect();
        assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::Tool, Role::Assistant]);
        assert_eq!(t.calls, [1, 4]);
        let results: Vec<&ToolResult> = t.messages.iter().flat_map(|m| m.tool_results()).collect();
        assert_eq!(results[0].name, "bash", "an empty result name is filled from the call");
        assert_eq!((results[1].call_id.as_str(), results[1].output.as_str()), ("b", MISSING_RESULT));
        assert_eq!(t.messages[3].tool_call_id, Some("b".into()));
        assert_eq!(t.messages[4].id.as_str(), "m000004");
        assert_eq!(t.notes.len(), 1);
    }

    #[test]
    fn an_id_reused_by_a_later_call_follows_its_rename() {
        let mut b = Builder::new(Format::SweAgent, "t");
        for _ in 0..2 {
            b.call();
            b.push(Role::Assistant, vec![call("x", "bash")], 0);
            b.result(result("x", ""), 0);
        }
        let t = b.finish();
        assert_eq!(t.messages.len(), 4);
        assert_eq!(t.messages[2].tool_calls().next().map(|c| c.id.as_str()), Some("call_1"));
        assert_eq!(t.messages[3].tool_call_id, Some("call_1".into()));
        assert_eq!(t.notes, ["tool calls with a repeated or empty id renamed: 1"]);
    }

    #[test]
    fn orphan_results_and_repeated_ids_are_repaired() {
        let mut b = Builder::new(Format::ClaudeCode, "t");
        b.result(result("x", "grep"), 0);
        b.push(Role::Assistant, vec![call("a", "bash"), call("a", "bash")], 0);
        b.result(result("a", ""), 0);
        b.result(result("a", ""), 0);
        b.result(result("zzz", "ls"), 0);
        let t = b.finish();
        assert_eq!(t.messages[0].role, Role::Assistant, "a synthetic assistant precedes the first orphan");
        let calls: Vec<&ToolCall> = t.messages.iter().flat_map(|m| m.tool_calls()).collect();
        let results: Vec<&ToolResult> = t.messages.iter().flat_map(|m| m.tool_results()).collect();
        assert_eq!(calls.len(), results.len());
        let mut call_ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        let mut result_ids: Vec<&str> = results.iter().map(|r| r.call_id.as_str()).collect();
        call_ids.sort_unstable();
        result_ids.sort_unstable();
        assert_eq!(call_ids, result_ids);
        call_ids.dedup();
        assert_eq!(call_ids.len(), calls.len());
    }
}
