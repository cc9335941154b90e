//! `workbench prompt ROOT [--trace ID] [--call N] [--json]`: one call's prompt as the model
//! received it (the newest call's by default), for a terminal: its figures, then each message with
//! its role, layer and the original it renders. Read-only, through the store's query API.

use std::fmt::Write as _;
use std::process::ExitCode;

use context_workbench::prompt::Assembly;
use context_workbench::store::TraceStore;
use context_workbench::workbench::recall::content_text;
use workbench_cli::native::{NativeHost, StoreFs};

use crate::dump::only_trace;

pub fn run(root: &str, trace: Option<&str>, call: Option<u64>, json: bool) -> ExitCode {
    match pollster::block_on(prompt(root, trace, call, json)) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("workbench: prompt: {message}");
            ExitCode::from(2)
        }
    }
}

async fn prompt(root: &str, trace: Option<&str>, call: Option<u64>, json: bool) -> Result<String, String> {
    let host = NativeHost::new(StoreFs::open_root(root)?, None);
    let trace_id = match trace {
        Some(id) => id.to_owned(),
        None => only_trace(&host, root).await?,
    };
    let store = TraceStore::new(&host, ".").map_err(|e| e.to_string())?;
    let page = store.prompt(&trace_id, call).await.map_err(|e| e.to_string())?;
    let Some(prompt) = &page.prompt else {
        return Err(page
            .notes
            .first()
            .cloned()
            .unwrap_or_else(|| format!("trace `{trace_id}` has no prompt saved yet")));
    };
    for note in &page.notes {
        eprintln!("workbench: prompt: note: {note}");
    }
    if json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(&page).map_err(|e| e.to_string())?));
    }
    Ok(text(&trace_id, prompt))
}

/// The prompt for a reader: a head line with its figures, then each message under a rule.
fn text(trace_id: &str, prompt: &Assembly) -> String {
    let mut out = String::new();
    let call = if prompt.call > 0 { format!("call {}", prompt.call) } else { "the newest call".to_owned() };
    let _ = write!(
        out,
        "{call} of {trace_id}: {} tokens in {} messages and {} tools; {} expected from the provider's cache",
        prompt.tokens,
        prompt.view.messages.len(),
        prompt.view.tools.len(),
        prompt.expected_cached_tokens
    );
    for rewrite in &prompt.rewrites {
        let _ =
            write!(out, "; rewrote earlier prompt: {} of raw {}..{}", rewrite.mechanism, rewrite.start, rewrite.end);
    }
    out.push('\n');
    for note in &prompt.notes {
        let _ = writeln!(out, "note: {note}");
    }
    for (i, message) in prompt.view.messages.iter().enumerate() {
        let layer =
            serde_json::to_value(message.layer).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
        let source = message.source.as_ref().map(|s| format!(" · raw#{s}")).unwrap_or_default();
        let _ = writeln!(out, "\n── {} {} · {layer}{source} ──", i + 1, message.role.as_str());
        let _ = writeln!(out, "{}", content_text(&message.content).trim_end());
    }
    out
}
