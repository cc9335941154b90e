//! Seed 001 E1's ReAct text.

use std::iter::Peekable;

use super::{is_sendable, joined_text, tool_calls, tool_result_text, tool_results};
use crate::model::{ContentPart, Role, ToolCall, ToolResult};
use crate::prompt::{PromptMessage, PromptView};

/// Seed 001 E1's ReAct text: one block per message, blocks separated by a blank line, no
/// trailing newline.
///
/// - `System` messages: `[system] <text>`; `Summary` messages: `[summary] <text>`; `User`
///   messages: `[user] <text>` (text parts joined by newlines);
/// - `Assistant` messages: `[assistant] Thought: <text>`, then one line `Action:
///   <name>[<arguments>]` per call, arguments byte-exact. The reasoning is the thought only
///   when there is no text; with neither, the first `Action:` follows `[assistant] ` directly,
///   and an assistant message with nothing to show is left out;
/// - each tool result: `[tool] <text>`, the text of
///   [`tool_result_text`](super::tool_result_text) (`[tool]` alone when it is empty).
///
/// The format has no call ids, so calls and results pair by position: the results in the
/// `Tool` messages right after an assistant message are written in the order of its calls
/// (the k-th `[tool]` block after it answers its k-th `Action:`), whatever their order in the
/// view; results that answer none of its calls follow, in the view's order. Text in a `Tool`
/// message (which a valid view does not have) is its own `[tool]` block after the results.
pub fn to_react(view: &PromptView) -> String {
    let mut blocks: Vec<String> = Vec::new();
    let mut messages = view.messages.iter().peekable();
    while let Some(message) = messages.next() {
        if message.role == Role::Assistant {
            render_assistant(&mut blocks, message, &mut messages);
        } else {
            render_other(&mut blocks, message, true);
        }
    }
    blocks.join("\n\n")
}

/// An assistant message and the `Tool` messages right after it, results in call order.
fn render_assistant<'a>(
    blocks: &mut Vec<String>,
    message: &'a PromptMessage,
    rest: &mut Peekable<impl Iterator<Item = &'a PromptMessage>>,
) {
    let content = &message.content;
    let calls: Vec<&ToolCall> = tool_calls(content).collect();
    let mut thought = joined_text(content);
    if thought.is_empty() {
        let reasoning: Vec<&str> = content
            .iter()
            .filter_map(|part| match part {
                ContentPart::Reasoning { text, .. } if is_sendable(text) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        thought = reasoning.join("\n");
    }
    let mut lines: Vec<String> = Vec::new();
    if !thought.is_empty() {
        lines.push(format!("Thought: {thought}"));
    }
    lines.extend(calls.iter().map(|call| action(call)));
    if !lines.is_empty() {
        blocks.push(format!("[assistant] {}", lines.join("\n")));
    }

    let mut results: Vec<Option<&ToolResult>> = tool_results(content).map(Some).collect();
    let mut answers: Vec<&PromptMessage> = Vec::new();
    while let Some(next) = rest.next_if(|m| m.role == Role::Tool) {
        results.extend(tool_results(&next.content).map(Some));
        answers.push(next);
    }
    for call in &calls {
        if let Some(slot) = results.iter_mut().find(|slot| slot.is_some_and(|r| r.call_id == call.id))
            && let Some(result) = slot.take()
        {
            blocks.push(tool_block(result));
        }
    }
    blocks.extend(results.into_iter().flatten().map(tool_block));
    for answer in answers {
        render_other(blocks, answer, false);
    }
}

/// A message that is not the assistant's: its results (when `with_results`), its text, then
/// any calls it holds as an assistant block.
fn render_other(blocks: &mut Vec<String>, message: &PromptMessage, with_results: bool) {
    if with_results {
        blocks.extend(tool_results(&message.content).map(tool_block));
    }
    let text = joined_text(&message.content);
    if !text.is_empty() {
        let label = match message.role {
            Role::System => "[system]",
            Role::Summary => "[summary]",
            Role::User => "[user]",
            Role::Observation => "[observation]",
            Role::Tool => "[tool]",
            Role::Assistant => "[assistant]",
        };
        blocks.push(format!("{label} {text}"));
    }
    let actions: Vec<String> = tool_calls(&message.content).map(action).collect();
    if !actions.is_empty() {
        blocks.push(format!("[assistant] {}", actions.join("\n")));
    }
}

fn action(call: &ToolCall) -> String {
    format!("Action: {}[{}]", call.name, call.arguments)
}

fn tool_block(result: &ToolResult) -> String {
    let text = tool_result_text(result);
    if text.is_empty() { "[tool]".to_owned() } else { format!("[tool] {text}") }
}
