//! Agents that act through text: a reply carries its command in a fenced block (mini-swe-agent's
//! ```` ```mswea_bash_command ````, SWE-agent-style ```` ```bash ````) instead of a tool call, and
//! the next user message is what the command printed. A reply with exactly one such block is an
//! action; the importers read it as a call of `bash`, the proxy records its answer as an
//! [`super::Role::Observation`]. An agent may also run a command itself and report it in a user
//! message (aider's test and lint runs: `I ran this command: …`): that is an observation too.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::{Message, ToolCall, ToolResult};

static COMMAND: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?s)```(?:bash|mswea_bash_command)\s*\n(.*?)\n```").ok());

static REPORTED: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?s)\AI ran this command:\n\n(.*?)\n\nAnd got this output:\n").ok());

/// The command of a user message in which the agent reports a command it ran and what it printed
/// (aider's form), if it is one.
pub fn reported_run(text: &str) -> Option<&str> {
    Some(REPORTED.as_ref()?.captures(text)?.get(1)?.as_str())
}

/// A fenced command block in a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextAction<'a> {
    /// The whole block, fences included, as a byte range of the reply.
    pub block: Range<usize>,
    pub command: &'a str,
}

/// The fenced command blocks of a reply's text; an action when there is exactly one.
pub fn text_actions(text: &str) -> Vec<TextAction<'_>> {
    let Some(re) = COMMAND.as_ref() else { return Vec::new() };
    re.captures_iter(text)
        .filter_map(|c| Some(TextAction { block: c.get(0)?.range(), command: c.get(1)?.as_str() }))
        .collect()
}

/// What an observation answered, as the compressors read a tool's output: the command it reports
/// running, else the command of the reply before it, as a call of `bash`, and the observation's
/// text as that call's output.
pub fn as_tool_output(reply: Option<&Message>, observation: &Message) -> Option<(ToolCall, ToolResult)> {
    let command = match observation.texts().find_map(reported_run) {
        Some(command) => command,
        None => reply?.text_action()?,
    };
    let output = observation.texts().collect::<Vec<_>>().join("\n");
    let id = format!("text-action-{}", observation.id);
    let arguments = serde_json::json!({ "command": command }).to_string();
    let call = ToolCall { id: id.clone().into(), name: "bash".into(), arguments };
    let result = ToolResult::ok(id, "bash", output);
    Some((call, result))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_acts_through_the_fenced_command_blocks_it_carries() {
        let reply = "I look first.\n\n```mswea_bash_command\nls -la\n```\n";
        let actions = text_actions(reply);
        assert_eq!(actions.len(), 1);
        assert_eq!(
            (actions[0].command, &reply[actions[0].block.clone()]),
            ("ls -la", "```mswea_bash_command\nls -la\n```")
        );
        assert_eq!(text_actions("```bash\na\n```\nthen\n```bash\nb\n```").len(), 2);
        assert!(text_actions("```python\nprint(1)\n```").is_empty(), "code shown, not run");
    }

    #[test]
    fn a_command_the_agent_ran_itself_is_read_from_its_report() {
        let report = "I ran this command:\n\npytest -q\n\nAnd got this output:\n\nFAILED test_calc.py::test_add\n";
        assert_eq!(reported_run(report), Some("pytest -q"));
        assert_eq!(reported_run("Why did I ran this command:\n\nls\n\nAnd got this output:\n"), None);
        assert_eq!(reported_run("I ran this command:\n\nls"), None);
    }
}
