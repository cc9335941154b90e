//! The tools with which agents start sub-agents of their own (Claude Code's `Agent`, `Task`
//! before 2.1; OpenCode's `task`): a table of tool name → the argument holding the sub-agent's
//! prompt, so other agents slot in. The engine makes each such call a branch of the caller's
//! plan; the proxy links the conversation the sub-agent opens to the call.

use serde_json::Value;

use crate::model::ToolCall;

/// The tools that start a sub-agent, by name, and the argument that holds its prompt.
const SPAWNING_TOOLS: [(&str, &str); 3] = [("Agent", "prompt"), ("Task", "prompt"), ("task", "prompt")];

/// What a call that starts a sub-agent asks of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubAgentCall {
    /// The prompt: the sub-agent's first user message.
    pub prompt: String,
    /// Its short `description`, or the prompt's first line.
    pub description: String,
}

/// The sub-agent `call` starts, if it is a call of a spawning tool with a prompt.
pub fn sub_agent_call(call: &ToolCall) -> Option<SubAgentCall> {
    let (_, field) = SPAWNING_TOOLS.iter().find(|(name, _)| *name == call.name)?;
    let arguments: Value = serde_json::from_str(&call.arguments).ok()?;
    let prompt = arguments.get(field)?.as_str()?.to_owned();
    let described = arguments.get("description").and_then(Value::as_str).map(str::trim).filter(|d| !d.is_empty());
    let description = described.unwrap_or_else(|| prompt.trim().lines().next().unwrap_or("")).to_owned();
    (!description.is_empty()).then_some(SubAgentCall { prompt, description })
}

/// How Claude Code's result of a sub-agent it runs in the background begins: the agent's
/// answer comes later, in a notice ([`finished_sub_agents`]).
const LAUNCHED: &str = "Async agent launched";

/// Whether a spawning call's result only says the sub-agent was started in the background.
pub fn is_launch_notice(output: &str) -> bool {
    output.trim_start().starts_with(LAUNCHED)
}

/// The sub-agents a user message's `text` says stopped: Claude Code's `<task-notification>`
/// blocks, each naming the call (`<tool-use-id>`), its `<status>` and its `<result>` (else its
/// `<summary>`). Each as (call id, its answer; `failed: …` when it did not complete).
pub fn finished_sub_agents(text: &str) -> Vec<(String, String)> {
    let tag = |block: &str, name: &str| {
        let (open, close) = (format!("<{name}>"), format!("</{name}>"));
        let start = block.find(&open)? + open.len();
        let end = block[start..].find(&close)? + start;
        Some(block[start..end].trim().to_owned())
    };
    text.split("<task-notification>")
        .skip(1)
        .filter_map(|rest| {
            let block = rest.split("</task-notification>").next()?;
            let call_id = tag(block, "tool-use-id")?;
            let answer = tag(block, "result").or_else(|| tag(block, "summary")).unwrap_or_default();
            let answer = match tag(block, "status").as_deref() {
                Some("completed") | None => answer,
                Some(status) => format!("failed ({status}): {answer}"),
            };
            Some((call_id, answer))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, arguments: &str) -> ToolCall {
        ToolCall { id: "c".into(), name: name.into(), arguments: arguments.into() }
    }

    #[test]
    fn spawning_calls_give_their_prompt_and_a_description() {
        let agent = call("Agent", r#"{"description": " Find it ", "prompt": "Find where\nthe parser fails"}"#);
        let found = sub_agent_call(&agent).unwrap();
        assert_eq!((found.prompt.as_str(), found.description.as_str()), ("Find where\nthe parser fails", "Find it"));
        let task = call("task", r#"{"prompt": "  Count the warnings\nin build.log"}"#);
        assert_eq!(sub_agent_call(&task).unwrap().description, "Count the warnings");
        for other in
            [call("Read", r#"{"prompt": "x"}"#), call("Agent", "not json"), call("Agent", r#"{"prompt": " "}"#)]
        {
            assert_eq!(sub_agent_call(&other), None, "{other:?}");
        }
    }

    #[test]
    fn claude_codes_background_sub_agents_are_launched_then_notified() {
        assert!(is_launch_notice("Async agent launched successfully. (…)\nagentId: a0a8"));
        assert!(!is_launch_notice("The parser fails at line 12."));
        let notice = "<system-reminder>\n[SYSTEM NOTIFICATION]\n<task-notification>\n<task-id>a0a8</task-id>\n\
            <tool-use-id>toolu_1</tool-use-id>\n<status>completed</status>\n<summary>Agent \"Find\" finished</summary>\n\
            <result>The parser fails at line 12.</result>\n</task-notification>\n<task-notification>\
            <tool-use-id>toolu_2</tool-use-id><status>killed</status><summary>Agent \"Count\" was stopped</summary>\
            </task-notification>\n<task-notification><status>completed</status></task-notification></system-reminder>";
        assert_eq!(
            finished_sub_agents(notice),
            [
                ("toolu_1".to_owned(), "The parser fails at line 12.".to_owned()),
                ("toolu_2".to_owned(), "failed (killed): Agent \"Count\" was stopped".to_owned()),
            ]
        );
        assert!(finished_sub_agents("no notices here").is_empty());
    }
}
