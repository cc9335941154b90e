//! The prompt view: what one LLM call is sent, before any provider's wire format.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::{ContentPart, MessageId, Role};

/// The layers of R2.1, in the order they are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// L1: the system prompt and tool prompts (fixed, stable).
    System,
    /// L2: the project rules (`CODE_LAW.md`), injected on every build, never in history.
    Rules,
    /// L3: history, archived summaries included.
    History,
    /// The current user input.
    Input,
    /// The small dynamic tail: plan/todo recap, state board, reminders (R2.4).
    Tail,
}

/// One message of an assembled prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct PromptMessage {
    /// `System`, `User`, `Assistant` or `Tool`; archived summaries are sent as `System` (R4.1).
    pub role: Role,
    pub content: Vec<ContentPart>,
    pub layer: Layer,
    /// The history message this renders, when it renders one (its original is `raw#<id>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<MessageId>,
    /// For a compaction block: the history messages it stands for, as `recall` names them
    /// (`m000022..m000025`). Never sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<String>,
}

impl PromptMessage {
    /// A message of one text part that renders no history message.
    pub fn text(role: Role, layer: Layer, text: String) -> Self {
        PromptMessage { role, content: vec![ContentPart::Text { text }], layer, source: None, replaces: None }
    }

    /// Whether no provider is sent anything for it: every part an empty text (the system
    /// message of an agent that sent no system prompt). It costs no tokens.
    pub fn sends_nothing(&self) -> bool {
        self.content.iter().all(|p| matches!(p, ContentPart::Text { text } if text.is_empty()))
    }
}

/// A tool the model may call, as a JSON-schema function.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON schema of the arguments object.
    #[cfg_attr(test, ts(type = "Record<string, unknown>"))]
    pub parameters: Value,
}

/// Everything one call sends. Invariant (checked by assembly): every tool call is answered by
/// exactly one tool result in the messages that immediately follow its assistant message, and
/// every tool result answers a call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct PromptView {
    pub messages: Vec<PromptMessage>,
    pub tools: Vec<ToolSpec>,
}
