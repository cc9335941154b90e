//! A plan tool's output (`TodoWrite`, `update_plan`, `write_todos`, …): a recap of the list, never the list itself.

use serde_json::Value;

use super::{Context, Draft};

pub fn todo_write<'a>(cx: &Context<'_>, output: &'a str) -> Draft<'a> {
    let items = cx.args.get("todos").or_else(|| cx.args.get("plan")).and_then(Value::as_array);
    let Some(items) = items else { return super::bash::fallback(cx, output) };
    let status = |item: &Value| item.get("status").and_then(Value::as_str).unwrap_or("pending").to_owned();
    let title = |item: &Value| {
        let keys = ["content", "step", "description", "title", "activeForm"];
        keys.iter().find_map(|k| item.get(*k).and_then(Value::as_str)).unwrap_or("").to_owned()
    };
    let count = |s: &str| items.iter().filter(|i| status(i) == s).count();
    let mut recap = format!("todos: {}/{} done", count("completed"), items.len());
    if let Some(current) = items.iter().find(|i| status(i) == "in_progress") {
        recap.push_str(&format!("; now: {}", title(current)));
    }
    let mut draft = Draft::new("lines");
    draft.head.push(recap);
    draft.notes.push("list in the call".to_owned());
    draft
}
