//! The forms only the wasm face (`src/wasm/`, built for wasm32) reads from or hands to
//! JavaScript, besides the engine's own types: a message to record, a tool output to compress,
//! a prompt format and the prepared call in it, the plan. They live here, outside `src/wasm/`,
//! so the native tests generate and check their TypeScript declarations with the rest
//! (`src/ts_types.rs`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::engine::MessageDraft;
use crate::goals::{GoalTree, Phase};
use crate::model::{BranchId, ContentPart, GoalId, Role, SpanId, ToolCallId};
use crate::prompt::Assembly;
use crate::prompt::serialize::{to_anthropic, to_openai_chat, to_react};

/// A message to record: `content` is a string (one text part) or content parts.
#[derive(Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(deny_unknown_fields)]
pub struct MessageInput {
    role: Role,
    #[cfg_attr(test, ts(type = "string | Array<ContentPart>"))]
    content: Content,
    #[serde(default)]
    goal_id: Option<GoalId>,
    #[serde(default)]
    span_id: Option<SpanId>,
    #[serde(default)]
    tool_call_id: Option<ToolCallId>,
}

/// A string or content parts, read so that a wrong part is named with its index and field
/// (`at 'content[0]': missing field `id``), not as an untagged enum that matched nothing.
enum Content {
    Text(String),
    Parts(Vec<ContentPart>),
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Content;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a string, or an array of content parts: {type: 'text', text}, {type: 'tool_call', id, name, \
                     arguments}, {type: 'tool_result', call_id, name, status, output}, {type: 'reasoning', text}",
                )
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Content, E> {
                Ok(Content::Text(text.to_owned()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
                let mut parts = Vec::new();
                while let Some(part) = seq.next_element::<ContentPart>()? {
                    parts.push(part);
                }
                Ok(Content::Parts(parts))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl MessageInput {
    pub fn into_draft(self, branch: Option<&str>) -> MessageDraft {
        let content = match self.content {
            Content::Text(text) => vec![ContentPart::Text { text }],
            Content::Parts(parts) => parts,
        };
        MessageDraft {
            role: Some(self.role),
            content,
            branch_id: branch.map(BranchId::from),
            goal_id: self.goal_id,
            span_id: self.span_id,
            tool_call_id: self.tool_call_id,
        }
    }
}

/// A tool output to compress (R3).
#[derive(Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(deny_unknown_fields)]
pub struct ToolOutputInput {
    pub tool: String,
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    pub arguments: String,
    pub output: String,
    #[serde(default)]
    pub stderr: Option<String>,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    pub is_error: bool,
    /// The raw trace message that keeps the original, cited as `raw#<id>`.
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    pub raw_id: String,
}

/// The wire format a prepared call is serialized to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum PromptFormat {
    Openai,
    Anthropic,
    React,
}

/// An assembly with its request in the chosen format. Its declaration (`PreparedCall`) is
/// written by hand, as one case per format, and checked against this.
#[derive(Serialize)]
pub struct PreparedCall<'a> {
    #[serde(flatten)]
    pub assembly: &'a Assembly,
    pub format: &'static str,
    pub request: serde_json::Value,
}

impl<'a> PreparedCall<'a> {
    pub fn new(assembly: &'a Assembly, format: PromptFormat) -> Self {
        let (format, request) = match format {
            PromptFormat::Openai => ("openai", to_openai_chat(&assembly.view)),
            PromptFormat::Anthropic => ("anthropic", to_anthropic(&assembly.view)),
            PromptFormat::React => ("react", serde_json::Value::String(to_react(&assembly.view))),
        };
        PreparedCall { assembly, format, request }
    }
}

/// The plan as the model and a viewer see it.
#[derive(Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct GoalPlan {
    /// The plan block of the prompt's tail (R2.2).
    prompt: String,
    /// The brief todo list (R6.7).
    todo: String,
    /// Every goal's number (abandoned ones included), by goal id.
    numbers: BTreeMap<String, String>,
    /// The numbers the model sees: abandoned goals and what is under them left out.
    display_numbers: BTreeMap<String, String>,
    /// The phase of the work (R6.8).
    phase: Phase,
    /// How many steps the plan has (the `n` of "step k of n").
    steps: usize,
}

impl GoalPlan {
    pub fn of(tree: &GoalTree) -> Self {
        let map = |pairs: Vec<(GoalId, String)>| pairs.into_iter().map(|(id, n)| (id.0, n)).collect();
        GoalPlan {
            prompt: tree.to_prompt(),
            todo: tree.to_todo_string(),
            numbers: map(tree.data_numbers()),
            display_numbers: map(tree.display_numbers()),
            phase: tree.phase(),
            steps: tree.plan_steps().count(),
        }
    }
}
