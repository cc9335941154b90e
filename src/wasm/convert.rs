//! Values across the boundary: engine data to plain JS objects and back, with errors that name
//! what was wrong, and the message a JS caller records.

use serde::Serialize;
use serde::de::DeserializeOwned;
use wasm_bindgen::JsValue;

use super::error::to_js_error;
use crate::engine::MessageDraft;
use crate::error::Error;
use crate::model::{BranchId, ContentPart, GoalId, Role, SpanId, ToolCallId, ToolResult};

/// `value` as a plain JS object (never a `Map`, never a BigInt: u64 fields are numbers).
pub fn to_js_value<T: Serialize>(value: &T) -> Result<JsValue, JsValue> {
    super::host::to_js(value).map_err(|e| to_js_error(e.into()))
}

/// A JS value read as `T`; `what` names it in the error (`invalid_input`), with the path of the
/// offending field. Read through JSON so `deny_unknown_fields` holds (serde-wasm-bindgen reads
/// only the fields it expects and would let a misspelt one pass silently).
pub fn from_js<T: DeserializeOwned>(value: JsValue, what: &str) -> Result<T, JsValue> {
    let invalid = |message: String| to_js_error(Error::InvalidInput(format!("{what}: {message}")));
    let json: serde_json::Value = serde_wasm_bindgen::from_value(value).map_err(|e| invalid(e.to_string()))?;
    serde_path_to_error::deserialize(json).map_err(|e| match e.path().to_string().as_str() {
        "." => invalid(e.inner().to_string()),
        path => invalid(format!("at '{path}': {}", e.inner())),
    })
}

/// An engine result as a JS result.
pub fn js<T>(result: crate::error::Result<T>) -> Result<T, JsValue> {
    result.map_err(to_js_error)
}

/// A message as JS records it: `content` is a string (one text part) or content parts.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageInput {
    role: Role,
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

impl<'de> serde::Deserialize<'de> for Content {
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

/// A tool result to record as its own `tool` message.
pub fn tool_result_draft(result: ToolResult) -> MessageDraft {
    let call_id = result.call_id.clone();
    MessageDraft { tool_call_id: Some(call_id), ..MessageDraft::new(Role::Tool, vec![ContentPart::ToolResult(result)]) }
}
