//! Structured results (R3.3): `{status, data, error, text, stats, context}` envelopes keep
//! `status`, a compressed `data` (with its `truncated`/`applied`/`fallback` markers), and on
//! error `error.code` and `error.message` in full; `text`, `stats` and `context` are dropped.

use serde_json::{Map, Value, json};

use super::draft::Draft;
use super::{Context, Family, clean, rules};
use crate::tokens::TokenCounter;

const ENVELOPE_KEYS: [&str; 5] = ["data", "error", "text", "stats", "context"];
const DROPPED_KEYS: [&str; 3] = ["text", "stats", "context"];

/// The envelope, when `output` is one: a JSON object with a string `status` and at least one
/// of the envelope's other keys.
pub fn parse(output: &str) -> Option<Map<String, Value>> {
    let trimmed = output.trim();
    if !trimmed.starts_with('{') {
        return None;
    }
    let map: Map<String, Value> = serde_json::from_str(trimmed).ok()?;
    let is_envelope =
        map.get("status").is_some_and(Value::is_string) && ENVELOPE_KEYS.iter().any(|k| map.contains_key(*k));
    is_envelope.then_some(map)
}

/// The kept fields as compact JSON, the same as a value, and notes on what was dropped.
pub fn compress(
    envelope: &Map<String, Value>,
    cx: &Context<'_>,
    budget: usize,
    counter: &TokenCounter,
) -> (String, Value, Vec<String>) {
    let mut kept = Map::new();
    let mut notes = Vec::new();
    let status = envelope.get("status").cloned().unwrap_or(Value::Null);
    kept.insert("status".into(), status.clone());
    if let Some(data) = envelope.get("data") {
        kept.insert("data".into(), compress_data(data, cx, budget, counter, &mut notes));
    }
    if let Some(error) = envelope.get("error") {
        let failed = status.as_str().is_some_and(|s| s != "ok" && s != "success");
        kept.insert(
            "error".into(),
            if failed { error_in_full(error) } else { json!("present (status is not an error)") },
        );
    }
    let dropped: Vec<&str> = DROPPED_KEYS.iter().copied().filter(|k| envelope.contains_key(*k)).collect();
    if !dropped.is_empty() {
        notes.push(format!("dropped fields: {}", dropped.join(", ")));
    }
    let value = Value::Object(kept);
    (value.to_string(), value, notes)
}

/// `error.code` and `error.message` exactly as given (a plain string error stays whole).
fn error_in_full(error: &Value) -> Value {
    match error {
        Value::Object(map) => {
            let mut kept = Map::new();
            for key in ["code", "message"] {
                if let Some(v) = map.get(key) {
                    kept.insert(key.into(), v.clone());
                }
            }
            if kept.is_empty() { error.clone() } else { Value::Object(kept) }
        }
        other => other.clone(),
    }
}

fn compress_data(
    data: &Value,
    cx: &Context<'_>,
    budget: usize,
    counter: &TokenCounter,
    notes: &mut Vec<String>,
) -> Value {
    match data {
        Value::String(text) => {
            let cleaned = clean::clean(text, cx.config.max_line_chars);
            let draft: Draft<'_> = rules::draft(cx, &cleaned.text, None);
            let fitted = draft.fit(budget, counter);
            if fitted.body_kept < fitted.body_total {
                notes.push(format!("data: kept {} of {} {}", fitted.body_kept, fitted.body_total, draft.unit));
            }
            Value::String(fitted.text)
        }
        Value::Array(items) => {
            let limit = list_limit(cx);
            if items.len() > limit {
                notes.push(format!("data: truncated to {limit} of {} items", items.len()));
            }
            Value::Array(items.iter().take(limit).map(|v| shrink(v, cx.config.max_line_chars, 2)).collect())
        }
        Value::Object(map) => {
            let mut kept = Map::new();
            for (key, value) in map {
                let value = match value {
                    Value::Array(_) | Value::String(_) => compress_data(value, cx, budget / 2, counter, notes),
                    other => shrink(other, cx.config.max_line_chars, 2),
                };
                kept.insert(key.clone(), value);
            }
            Value::Object(kept)
        }
        scalar => scalar.clone(),
    }
}

/// How many items of a list the family keeps.
fn list_limit(cx: &Context<'_>) -> usize {
    match cx.family {
        Family::Ls => cx.config.ls_entries,
        Family::Glob => cx.config.glob_hits,
        Family::Grep => cx.config.grep_matches,
        _ => 10,
    }
}

/// Bound a value: long strings cut, deep structures summarised. Booleans (the `truncated`,
/// `applied`, `fallback` markers), numbers and null pass unchanged.
fn shrink(value: &Value, max_chars: usize, depth: usize) -> Value {
    match value {
        Value::String(s) if s.chars().count() > max_chars => Value::String(clean::cut_line(s, max_chars)),
        Value::Array(items) if depth == 0 => json!(format!("[{} items]", items.len())),
        Value::Object(map) if depth == 0 => json!(format!("{{{} fields}}", map.len())),
        Value::Array(items) => Value::Array(items.iter().take(10).map(|v| shrink(v, max_chars, depth - 1)).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), shrink(v, max_chars, depth - 1))).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_envelopes_parse() {
        assert!(parse(r#"{"status": "ok", "data": [1]}"#).is_some());
        assert!(parse(r#"{"status": "ok"}"#).is_none());
        assert!(parse(r#"{"status": 200, "data": 1}"#).is_none());
        assert!(parse("status: ok").is_none());
    }
}
