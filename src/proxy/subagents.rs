//! An agent's sub-agents ([`crate::goals::sub_agent_call`]): the call that starts
//! one is noted when the caller's reply is read; the conversation that then opens with the
//! call's prompt as its user's words is recorded as a branch of the caller's trace, linked to
//! the call (`meta.json`'s `branch_of`), instead of as a session of its own.

use std::collections::VecDeque;
use std::sync::Mutex;

use xxhash_rust::xxh3::xxh3_64;

use crate::goals::sub_agent_call;
use crate::model::ContentPart;
use crate::store::BranchOf;

/// Calls noted and not yet claimed, at most (a sub-agent the agent never ran is forgotten).
const PENDING: usize = 64;

/// The calls of `parts` (an assistant's reply) that start a sub-agent: each call's id, by its
/// prompt's fingerprint.
pub fn spawning_calls(parts: &[ContentPart]) -> Vec<(u64, String)> {
    parts
        .iter()
        .filter_map(|part| match part {
            ContentPart::ToolCall(call) => Some((fingerprint(&sub_agent_call(call)?.prompt), call.id.to_string())),
            _ => None,
        })
        .collect()
}

/// The sub-agent calls of every session of one proxy, waiting for their conversation to open.
#[derive(Debug, Default)]
pub struct Spawns(Mutex<VecDeque<(u64, BranchOf)>>);

impl Spawns {
    /// Note `calls` ([`spawning_calls`]) of trace `trace_id`.
    pub fn note(&self, trace_id: &str, calls: Vec<(u64, String)>) {
        let mut pending = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for (print, call_id) in calls {
            if pending.len() == PENDING {
                pending.pop_front();
            }
            pending.push_back((print, BranchOf { trace_id: trace_id.to_owned(), call_id }));
        }
    }

    /// The call whose prompt `opening` (a new conversation's first user words) is, taken.
    pub fn claim(&self, opening: &str) -> Option<BranchOf> {
        let wanted = fingerprint(opening);
        let mut pending = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let index = pending.iter().position(|(print, _)| *print == wanted)?;
        pending.remove(index).map(|(_, spawn)| spawn)
    }
}

fn fingerprint(prompt: &str) -> u64 {
    xxh3_64(prompt.trim().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;

    fn call(id: &str, name: &str, arguments: &str) -> ContentPart {
        ContentPart::ToolCall(ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() })
    }

    #[test]
    fn a_conversation_opening_with_a_sub_agent_calls_prompt_is_that_calls_branch_once() {
        let spawns = Spawns::default();
        let parts = [
            ContentPart::Text { text: "Asking a sub-agent.".into() },
            call("toolu_1", "Agent", r#"{"description": "Find it", "prompt": "Find where the parser fails"}"#),
            call("toolu_2", "Read", r#"{"prompt": "not a sub-agent"}"#),
            call("toolu_3", "Agent", "not json"),
        ];
        spawns.note("s", spawning_calls(&parts));
        assert_eq!(spawns.claim("not a sub-agent"), None, "only the tools that start one");
        let claimed = spawns.claim("  Find where the parser fails\n");
        assert_eq!(claimed, Some(BranchOf { trace_id: "s".into(), call_id: "toolu_1".into() }));
        assert_eq!(spawns.claim("Find where the parser fails"), None, "a call starts one branch");
    }

    #[test]
    fn calls_never_claimed_are_forgotten_past_a_bound() {
        let spawns = Spawns::default();
        for n in 0..=PENDING {
            let parts = [call(&format!("c{n}"), "Task", &format!(r#"{{"prompt": "job {n}"}}"#))];
            spawns.note("s", spawning_calls(&parts));
        }
        assert_eq!(spawns.claim("job 0"), None);
        assert_eq!(spawns.claim(&format!("job {PENDING}")).map(|b| b.call_id), Some(format!("c{PENDING}")));
    }
}
