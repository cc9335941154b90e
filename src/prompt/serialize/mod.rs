//! The serializations of one prompt view (R2.3): OpenAI chat completions ([`to_openai_chat`]),
//! OpenAI Responses ([`to_openai_responses`]), Anthropic messages ([`to_anthropic`]), Gemini
//! ([`to_gemini`]) and seed 001 E1's ReAct text ([`to_react`]).
//!
//! All of them are faithful: they send what the view holds, in its order, and never repair it
//! (that is the history's job, before assembly). They never panic, whatever the view holds, and
//! the same view always gives the same bytes.
//!
//! Rules shared by the formats:
//! - a tool result is sent as the text of [`tool_result_text`];
//! - blank text parts (empty or only whitespace) are never sent; a message left with nothing to
//!   send is left out;
//! - archived summaries (R4.1) and other system messages are sent as system messages where the
//!   format allows it (see each format for the ones in the middle of the conversation);
//! - tool calls and results stay paired: each format puts a call's result right after the
//!   assistant turn that made it, as long as the view does ([`check_pairing`]);
//! - content parts are read by their kind, not trusted to match their message's role: a tool
//!   result is always sent as a tool result and a tool call always as a call. In a message that
//!   is not the assistant's, its results come first, then its text, then its calls (as an
//!   assistant turn); in an assistant message, the assistant turn comes first, then any
//!   results. A valid view never needs this; it only keeps a malformed one from losing a call
//!   or a result.

mod anthropic;
mod gemini;
mod openai;
mod react;
mod responses;

pub use anthropic::{AnthropicOptions, CONTINUED, to_anthropic, to_anthropic_with, tool_input};
pub use gemini::{UNNAMED_CALL, to_gemini};
pub use openai::to_openai_chat;
pub(crate) use openai::{push_message, tool_values};
pub use react::to_react;
pub use responses::{ResponsesOptions, to_openai_responses};

use serde_json::Value;

use super::PromptView;
use crate::model::{ContentPart, OpaquePart, Role, ToolCall, ToolCallId, ToolResult};

/// The label line of a system or summary message sent in a user turn (where a format has no
/// system message in the middle of a conversation): `[system]` or `[summary]`.
pub(crate) fn in_place_label(role: Role) -> &'static str {
    if role == Role::Summary { "[summary]" } else { "[system]" }
}

/// The prefix that marks an exit code in a tool result's text.
const EXIT_CODE_PREFIX: &str = "exit code: ";

/// A tool result as the text every format sends: a first line `exit code: N` when there is
/// an exit code and the output does not already start with `exit code: `; then the output; then,
/// when stderr is not empty, `stderr:` and the stderr on the lines after. The parts are joined
/// by one newline each; a part that is empty is left out with its newline.
pub fn tool_result_text(result: &ToolResult) -> String {
    let mut text = String::new();
    if let Some(code) = result.exit_code
        && !result.output.starts_with(EXIT_CODE_PREFIX)
    {
        text.push_str(EXIT_CODE_PREFIX);
        text.push_str(&code.to_string());
    }
    if !result.output.is_empty() {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&result.output);
    }
    if let Some(stderr) = result.stderr.as_deref().filter(|s| !s.is_empty()) {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str("stderr:\n");
        text.push_str(stderr);
    }
    text
}

/// Checks the pairing invariant of [`PromptView`]: every tool call (in an assistant message) is
/// answered by exactly one tool result in the `Tool` messages that immediately follow its
/// assistant message, every such result answers a call of that assistant message, call ids are
/// unique within a message, and no call or result sits in a message of another role. The error
/// names the first violation and the index of its message.
pub fn check_pairing(view: &PromptView) -> Result<(), String> {
    // The calls of the last assistant message, each with how many results answered it, while
    // the `Tool` messages after it are read; `None` when no assistant message precedes them.
    let mut open: Option<(usize, Vec<(&ToolCallId, usize)>)> = None;
    for (index, message) in view.messages.iter().enumerate() {
        if message.role == Role::Tool {
            for part in &message.content {
                match part {
                    ContentPart::ToolResult(result) => {
                        let Some((assistant, calls)) = open.as_mut() else {
                            return Err(format!(
                                "message {index}: result for call `{}` follows no assistant message",
                                result.call_id
                            ));
                        };
                        let Some((_, answers)) = calls.iter_mut().find(|(id, _)| **id == result.call_id) else {
                            return Err(format!(
                                "message {index}: result for call `{}` answers no call of message {assistant}",
                                result.call_id
                            ));
                        };
                        *answers += 1;
                        if *answers > 1 {
                            return Err(format!("message {index}: second result for call `{}`", result.call_id));
                        }
                    }
                    ContentPart::ToolCall(call) => {
                        return Err(format!("message {index}: tool call `{}` in a tool message", call.id));
                    }
                    ContentPart::Text { .. } | ContentPart::Reasoning { .. } | ContentPart::Opaque(_) => {}
                }
            }
            continue;
        }
        close(open.take())?;
        for part in &message.content {
            match part {
                ContentPart::ToolResult(result) => {
                    return Err(format!(
                        "message {index}: result for call `{}` in a {} message",
                        result.call_id,
                        message.role.as_str()
                    ));
                }
                ContentPart::ToolCall(call) if message.role != Role::Assistant => {
                    return Err(format!(
                        "message {index}: tool call `{}` in a {} message",
                        call.id,
                        message.role.as_str()
                    ));
                }
                _ => {}
            }
        }
        if message.role == Role::Assistant {
            let mut calls: Vec<(&ToolCallId, usize)> = Vec::new();
            for call in tool_calls(&message.content) {
                if calls.iter().any(|(id, _)| **id == call.id) {
                    return Err(format!("message {index}: call id `{}` used twice", call.id));
                }
                calls.push((&call.id, 0));
            }
            open = Some((index, calls));
        }
    }
    close(open)
}

/// Every call of a closed assistant message must have been answered.
fn close(open: Option<(usize, Vec<(&ToolCallId, usize)>)>) -> Result<(), String> {
    if let Some((assistant, calls)) = open
        && let Some((id, _)) = calls.iter().find(|(_, answers)| *answers == 0)
    {
        return Err(format!("message {assistant}: call `{id}` has no result in the tool messages after it"));
    }
    Ok(())
}

/// A text worth sending: not empty and not only whitespace (Anthropic rejects blank text blocks).
fn is_sendable(text: &str) -> bool {
    !text.trim().is_empty()
}

/// The sendable text parts of a message, joined by newlines (empty when there are none).
fn joined_text(content: &[ContentPart]) -> String {
    let texts: Vec<&str> = content
        .iter()
        .filter_map(|part| match part {
            ContentPart::Text { text } if is_sendable(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    texts.join("\n")
}

fn tool_calls(content: &[ContentPart]) -> impl Iterator<Item = &ToolCall> {
    content.iter().filter_map(|part| match part {
        ContentPart::ToolCall(call) => Some(call),
        _ => None,
    })
}

fn tool_results(content: &[ContentPart]) -> impl Iterator<Item = &ToolResult> {
    content.iter().filter_map(|part| match part {
        ContentPart::ToolResult(result) => Some(result),
        _ => None,
    })
}

/// The calls of `content` alone, as parts: what a message of another role than the assistant's
/// sends as an assistant turn after its own text.
fn calls_only(content: &[ContentPart]) -> Vec<ContentPart> {
    tool_calls(content).cloned().map(ContentPart::ToolCall).collect()
}

fn opaque_parts(content: &[ContentPart]) -> impl Iterator<Item = &OpaquePart> {
    content.iter().filter_map(|part| match part {
        ContentPart::Opaque(part) => Some(part),
        _ => None,
    })
}

/// The JSON an opaque part carries, or `fallback`'s part when it is not JSON: each format has
/// its own shape of text part for the placeholder.
fn opaque(part: &OpaquePart, fallback: impl FnOnce(&OpaquePart) -> Value) -> Value {
    serde_json::from_str(&part.json).unwrap_or_else(|_| fallback(part))
}
