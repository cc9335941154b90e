//! `workbench replay --store ROOT`: the workbench strategy's session of each trajectory saved
//! as `ROOT/<trace id>/`, the layout `Engine::open` resumes and `workbench serve` reads.

use std::path::Path;

use context_workbench::error::Error;
use context_workbench::host::block_on;
use context_workbench::import::Trajectory;
use context_workbench::replay::{Strategy, TokenMemo, Workbench, replay_config_from};
use context_workbench::{Config, Engine};
use workbench_cli::native::{NativeHost, WorkspaceFs};

/// Replay `trajectory` through the workbench strategy and save the engine's session under
/// `root`; returns the trace id, or why it was not stored. A trace id already under `root` is
/// left alone: storing never overwrites or appends to a saved trace.
pub fn store_session(trajectory: &Trajectory, root: &Path, config: &Config, window: usize) -> Result<String, String> {
    let id = trace_id(&trajectory.name);
    if root.join(&id).exists() {
        return Err(format!("{} already holds `{id}` (remove it to store the session again)", root.display()));
    }
    let mut workbench = Workbench::with_config(replay_config_from(config, window));
    let mut memo = TokenMemo::default();
    for &end in &trajectory.calls {
        workbench.prompt(&trajectory.messages[..end], &mut memo).map_err(plain)?;
    }
    let fs = WorkspaceFs::new(root).map_err(|e| e.to_string())?;
    let engine: Engine<NativeHost> = workbench.into_engine().rehost(NativeHost::new(fs, None));
    engine.set_trace_id(&id).map_err(plain)?;
    engine.attach_store(".").map_err(plain)?;
    block_on(engine.persist()).map_err(plain)?;
    Ok(id)
}

/// A trajectory's name as a trace id: characters other than letters, digits, `-`, `_` and `.`
/// become `-` (`<session>#sidechain-1` → `<session>-sidechain-1`).
fn trace_id(name: &str) -> String {
    let stem = name.rsplit('/').next().unwrap_or(name);
    let id: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '-' })
        .take(128)
        .collect();
    if id.chars().all(|c| c == '.') { format!("trace-{}", id.len()) } else { id }
}

fn plain(e: Error) -> String {
    e.to_string()
}
