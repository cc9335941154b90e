//! `workbench dump ROOT [--trace ID] [--json]`: the step tree of one persisted trace in seed
//! 004's debug format, or as JSON (R9.2). Read-only: the trace's files are read through the
//! store's loaders and nothing under ROOT is written. The header's time is the trace's last
//! update (`updated_at` of `meta.json`), so dumping the same trace twice prints the same bytes.

use std::process::ExitCode;

use context_workbench::Config;
use context_workbench::goals::{GoalTree, date_time, dump_tree, dump_tree_json};
use context_workbench::store::TraceStore;
use context_workbench::store::layout::TraceDir;
use context_workbench::store::load::{read_goal_tree, read_messages, read_meta};
use workbench_cli::native::{NativeHost, StoreFs, shown_store};

pub fn run(config: &Config, root: &str, trace: Option<&str>, json: bool) -> ExitCode {
    match pollster::block_on(dump(config, root, trace, json)) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("workbench: dump: {message}");
            ExitCode::from(2)
        }
    }
}

async fn dump(config: &Config, root: &str, trace: Option<&str>, json: bool) -> Result<String, String> {
    let host = NativeHost::new(StoreFs::open_root(root)?, None);
    let trace_id = match trace {
        Some(id) => id.to_owned(),
        None => only_trace(&host, root).await?,
    };
    let dir = TraceDir::new(".", &trace_id).map_err(|e| e.to_string())?;
    let meta = read_meta(&host, &dir, &trace_id).await.map_err(|e| e.to_string())?;
    let tree = read_goal_tree(&host, &dir).await.map_err(|e| e.to_string())?;
    let tree = tree.unwrap_or_else(|| GoalTree::new(meta.mission.clone())).with_config(config.goals.clone());
    let (messages, notes) = read_messages(&host, &dir).await.map_err(|e| e.to_string())?;
    for note in notes {
        eprintln!("workbench: dump: note: {note}");
    }
    Ok(if json {
        let value = dump_tree_json(&trace_id, &tree, &messages, meta.updated_at);
        format!("{}\n", serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?)
    } else {
        dump_tree(&trace_id, &tree, &messages, meta.updated_at)
    })
}

/// The id of the one trace under the root; several need `--trace`, and are listed one a line,
/// oldest first, with what tells them apart: start (UTC), calls and the user's words.
pub(crate) async fn only_trace(host: &NativeHost, root: &str) -> Result<String, String> {
    let store = TraceStore::new(host, ".").map_err(|e| e.to_string())?;
    let list = store.list_traces().await.map_err(|e| e.to_string())?;
    let mut traces = list.traces;
    match traces.len() {
        1 => Ok(traces.remove(0).trace_id),
        0 => {
            let notes = if list.notes.is_empty() { String::new() } else { format!(" ({})", list.notes.join("; ")) };
            Err(format!("no trace under {}{notes}", shown_store(root)))
        }
        n => {
            traces.sort_by(|a, b| a.created_at.cmp(&b.created_at).then_with(|| a.trace_id.cmp(&b.trace_id)));
            let mut out = format!("{n} traces under {}: name one with --trace ID", shown_store(root));
            let width = traces.iter().map(|t| t.trace_id.chars().count()).max().unwrap_or(0);
            for t in &traces {
                let calls = format!("{} call{}", t.calls, if t.calls == 1 { "" } else { "s" });
                let started = date_time(t.created_at);
                let mission = if t.mission.is_empty() { "(no user request yet)" } else { &t.mission };
                out.push_str(&format!(
                    "\n  {:<width$}  started {} UTC  {calls:>9}  {mission}",
                    t.trace_id,
                    &started[..16]
                ));
            }
            Err(out)
        }
    }
}
