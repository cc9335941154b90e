//! Tool-output compression for history (R3): every tool family's output becomes a short,
//! faithful entry that says what it dropped and where the original is.
//!
//! The model reasons on the full observation within its round (R3.1); what history keeps is
//! [`compress_tool_output`]'s form. Compressors are pure, deterministic and never fail: binary
//! junk, invalid input, ANSI codes, `\r` progress bars and megabyte lines all give a bounded,
//! valid entry with a note.

mod clean;
mod draft;
mod envelope;
mod family;
pub(crate) mod focus;
mod limits;
pub mod logs;
mod rules;

use serde::Serialize;
use serde_json::Value;

pub use family::{Family, family_of};
pub use limits::CompressConfig;
pub use rules::is_error_message;

use crate::model::{ToolCall, ToolResult, ToolStatus};
use crate::tokens::TokenCounter;

/// One tool result to compress, as recorded.
#[derive(Debug, Clone, Copy)]
pub struct ToolOutput<'a> {
    pub tool: &'a str,
    /// The call's arguments as the model wrote them (usually JSON; anything is accepted).
    pub arguments: &'a str,
    pub output: &'a str,
    pub stderr: Option<&'a str>,
    pub exit_code: Option<i32>,
    pub is_error: bool,
    /// The raw trace message that keeps the original, cited as `raw#<id>`; empty when there
    /// is none (the trailer then names no original).
    pub raw_id: &'a str,
    /// Where a file reader finds the original as plain text (the trace store's `raw/<id>.txt`,
    /// workspace-relative), when the host keeps one.
    pub original: Option<&'a str>,
    /// For a read: the file's lines the agent was pointed to before it (`focus.rs`), whose
    /// surroundings the history form keeps first.
    pub focus: &'a [u32],
}

impl<'a> ToolOutput<'a> {
    /// A recorded result, with the call that asked for it when known (its name and arguments
    /// choose the family), kept in the raw trace as message `raw_id`.
    pub fn of(result: &'a ToolResult, call: Option<&'a ToolCall>, raw_id: &'a str) -> Self {
        ToolOutput {
            tool: call.map_or(result.name.as_str(), |c| c.name.as_str()),
            arguments: call.map_or("", |c| c.arguments.as_str()),
            output: &result.output,
            stderr: result.stderr.as_deref(),
            exit_code: result.exit_code,
            is_error: result.status == ToolStatus::Error,
            raw_id,
            original: None,
            focus: &[],
        }
    }
}

/// The history form of a tool output.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Compressed {
    pub family: Family,
    pub text: String,
    pub tokens_in: usize,
    pub tokens_out: usize,
    /// What was removed or changed; empty when the output is kept as it was.
    pub notes: Vec<String>,
    /// For structured `{status, data, error, …}` results: the kept fields (R3.3).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(type = "unknown", optional = nullable))]
    pub structured: Option<Value>,
}

/// What every rule sees.
pub(crate) struct Context<'a> {
    pub family: Family,
    pub args: &'a Value,
    pub exit_code: Option<i32>,
    pub is_error: bool,
    pub config: &'a CompressConfig,
    pub focus: &'a [u32],
}

/// Compress one tool output for history.
pub fn compress_tool_output(input: &ToolOutput<'_>, config: &CompressConfig, counter: &TokenCounter) -> Compressed {
    let args: Value = serde_json::from_str(input.arguments).unwrap_or(Value::Null);
    let family = family_of(input.tool, &args, config);
    let tokens_in = counter.count(input.output) + input.stderr.map_or(0, |s| counter.count(s));
    let budget = config.budget(tokens_in);
    let cx = Context {
        family,
        args: &args,
        exit_code: input.exit_code,
        is_error: input.is_error,
        config,
        focus: input.focus,
    };
    if let Some(envelope) = envelope::parse(input.output) {
        let (text, structured, notes) = envelope::compress(&envelope, &cx, budget, counter);
        return finish(text, notes, Some(structured), family, tokens_in, input, counter);
    }
    let output = clean::clean(input.output, config.max_line_chars);
    let stderr = input.stderr.map(|s| clean::clean(s, config.max_line_chars));
    let mut draft = rules::draft(&cx, &output.text, stderr.as_ref().map(|s| s.text.as_ref()));
    draft.notes.extend(output.notes.iter().cloned());
    draft.notes.extend(stderr.iter().flat_map(|s| &s.notes).map(|n| format!("stderr: {n}")));
    let fitted = draft.fit(budget.saturating_sub(TRAILER_TOKENS), counter);
    let mut notes = draft.notes;
    if fitted.body_kept < fitted.body_total {
        notes.insert(0, format!("kept {} of {} {}", fitted.body_kept, fitted.body_total, draft.unit));
    }
    let shaped = finish(fitted.text, notes, None, family, tokens_in, input, counter);
    // Never inflate: when the family's form is no smaller than the output itself (a short
    // output, say), history keeps the output. TodoWrite always becomes its recap.
    if family == Family::TodoWrite || output.text.len() / 4 > budget {
        return shaped;
    }
    let cleaning: Vec<String> = output.notes.into_iter().chain(stderr.iter().flat_map(|s| s.notes.clone())).collect();
    let plain = verbatim(&cx, &output.text, stderr.as_ref().map(|s| s.text.as_ref()));
    let plain = finish(plain, cleaning, None, family, tokens_in, input, counter);
    if plain.tokens_out <= budget && plain.tokens_out <= shaped.tokens_out { plain } else { shaped }
}

/// The cleaned output as it was, with its exit code and stderr said.
fn verbatim(cx: &Context<'_>, output: &str, stderr: Option<&str>) -> String {
    let mut parts = Vec::new();
    if let (Family::Bash, Some(code)) = (cx.family, cx.exit_code) {
        parts.push(format!("exit code: {code}"));
    }
    if !output.trim().is_empty() {
        parts.push(output.trim_end_matches('\n').to_owned());
    }
    if let Some(stderr) = stderr.filter(|s| !s.trim().is_empty()) {
        parts.push(format!("stderr:\n{}", stderr.trim_end_matches('\n')));
    }
    parts.join("\n")
}

/// Room left for the trailer line.
const TRAILER_TOKENS: usize = 50;

/// Add the trailer that says what was dropped and where the original is.
fn finish(
    body: String,
    notes: Vec<String>,
    structured: Option<Value>,
    family: Family,
    tokens_in: usize,
    input: &ToolOutput<'_>,
    counter: &TokenCounter,
) -> Compressed {
    if notes.is_empty() {
        let tokens_out = counter.count(&body);
        return Compressed { family, text: body, tokens_in, tokens_out, notes, structured };
    }
    let body_tokens = counter.count(&body);
    let dropped = tokens_in.saturating_sub(body_tokens);
    let original = match (input.raw_id.trim(), input.original) {
        ("", None) => String::new(),
        ("", Some(path)) => format!("; full output: {path}"),
        (id, None) => format!("; full output: raw#{id}"),
        (id, Some(path)) => format!("; full output: raw#{id}, or the file {path}"),
    };
    let trailer = format!("[history form: {}; {dropped} of {tokens_in} tokens dropped{original}]", notes.join("; "));
    let text = if body.is_empty() { trailer } else { format!("{body}\n{trailer}") };
    let tokens_out = counter.count(&text);
    Compressed { family, text, tokens_in, tokens_out, notes, structured }
}
