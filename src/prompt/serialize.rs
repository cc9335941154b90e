//! The serializations of one prompt view (R2.3): OpenAI chat completions, Anthropic messages
//! and seed 001's ReAct text.

use serde_json::Value;

use super::PromptView;

/// OpenAI chat completions: `{"messages": [...], "tools": [...]}`.
pub fn to_openai_chat(view: &PromptView) -> Value {
    let _ = view;
    Value::Null
}

/// Anthropic messages: `{"system": [...], "messages": [...], "tools": [...]}`.
pub fn to_anthropic(view: &PromptView) -> Value {
    let _ = view;
    Value::Null
}

/// Seed 001 E1's ReAct text.
pub fn to_react(view: &PromptView) -> String {
    let _ = view;
    String::new()
}
