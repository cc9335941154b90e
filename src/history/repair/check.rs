//! The invariants of a repaired history, checked on their own (for hosts and tests).

use std::collections::BTreeSet;

use crate::model::{Message, MessageId, Role, ToolCallId};

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
            Role::User | Role::System | Role::Summary | Role::Observation => {
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
