//! Values across the boundary: engine data to plain JS objects and back, with errors that name
//! what was wrong, and a tool result as the message it is recorded as.

use serde::Serialize;
use serde::de::DeserializeOwned;
use wasm_bindgen::JsValue;

use super::error::to_js_error;
use crate::engine::MessageDraft;
use crate::error::Error;
use crate::model::{ContentPart, Role, ToolResult};

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

/// A tool result to record as its own `tool` message.
pub fn tool_result_draft(result: ToolResult) -> MessageDraft {
    let call_id = result.call_id.clone();
    MessageDraft { tool_call_id: Some(call_id), ..MessageDraft::new(Role::Tool, vec![ContentPart::ToolResult(result)]) }
}
