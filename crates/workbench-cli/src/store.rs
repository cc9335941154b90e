//! `workbench replay --store ROOT`: the workbench strategy's session of each trajectory saved
//! as `ROOT/<trace id>/`, the layout `Engine::open` resumes and `workbench serve` reads; and
//! `workbench store import FOLDER URL` / `export URL FOLDER`: a folder store copied into a
//! PostgreSQL store, and back.

use std::path::Path;
use std::process::ExitCode;

use context_workbench::error::Error;
use context_workbench::host::block_on;
use context_workbench::import::Trajectory;
use context_workbench::proxy::args::is_database_store;
use context_workbench::replay::{Strategy, TokenMemo, Workbench, replay_config_from};
use context_workbench::store::layout;
use context_workbench::{Config, Engine};
use workbench_cli::native::{NativeHost, StoreFs, WorkspaceFs, shown_store};

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

/// Which way `workbench store` copies.
#[derive(Clone, Copy)]
pub enum Copy {
    /// `import FOLDER URL`: a folder store into a database.
    Import,
    /// `export URL FOLDER`: a database into a folder store (made when missing).
    Export,
}

/// `workbench store import FOLDER URL` or `export URL FOLDER`.
pub fn copy(way: Copy, from: &str, to: &str) -> ExitCode {
    let (command, copied) = match way {
        Copy::Import => {
            ("import", open_folder(from, false).and_then(|f| copy_store(&f, &open_database(to)?, "imported")))
        }
        Copy::Export => {
            ("export", open_database(from).and_then(|db| copy_store(&db, &open_folder(to, true)?, "exported")))
        }
    };
    match copied {
        Ok(words) => {
            println!("{words}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("workbench: store {command}: {message}");
            ExitCode::from(2)
        }
    }
}

fn open_database(url: &str) -> Result<StoreFs, String> {
    if !is_database_store(url) {
        return Err(format!("`{}` is not a postgres:// URL", shown_store(url)));
    }
    StoreFs::open_root(url)
}

/// The folder store `folder` (`made`: created when missing).
fn open_folder(folder: &str, made: bool) -> Result<StoreFs, String> {
    if made {
        std::fs::create_dir_all(folder).map_err(|e| format!("the folder store {folder}: {e}"))?;
    }
    let fs = WorkspaceFs::new(folder).map_err(|e| format!("the folder store {folder}: {e}"))?;
    Ok(StoreFs::Folder(fs))
}

/// Copy every file of the store `from` into the store `to`, trace by trace, each trace's
/// `meta.json` last: a trace whose `meta.json` is in `to` already is left as it is, so running
/// the copy again copies only what is missing (a trace cut short included). Locks are not
/// copied: a folder's are the OS's, a database's are leases. `from` is only read.
fn copy_store(from: &StoreFs, to: &StoreFs, done: &str) -> Result<String, String> {
    let (mut copied, mut kept, mut files) = (0, Vec::new(), 0);
    for entry in from.list_dir("").map_err(|e| e.to_string())? {
        if !entry.is_dir {
            if !is_lock(&entry.name) && to.stat(&entry.name).map_err(|e| e.to_string())?.is_none() {
                copy_file(from, to, &entry.name)?;
                files += 1;
            }
            continue;
        }
        let meta = format!("{}/{}", entry.name, layout::META);
        if to.stat(&meta).map_err(|e| e.to_string())?.is_some() {
            kept.push(entry.name);
            continue;
        }
        let mut paths = Vec::new();
        walk(from, &entry.name, &mut paths)?;
        let (last, rest): (Vec<String>, Vec<String>) = paths.into_iter().partition(|p| *p == meta);
        for path in rest.iter().chain(&last) {
            copy_file(from, to, path)?;
        }
        files += rest.len() + last.len();
        copied += 1;
    }
    let mut words = format!(
        "{done} {copied} session{} ({files} files) from {} into {}",
        if copied == 1 { "" } else { "s" },
        from.shown(),
        to.shown()
    );
    if !kept.is_empty() {
        words.push_str(&format!("; {} already there, left as they were: {}", kept.len(), kept.join(", ")));
    }
    Ok(words)
}

/// A lock file of the store's: the proxy's, a trace's owner's.
fn is_lock(name: &str) -> bool {
    name == layout::OWNER || name == layout::PROXY_LOCK
}

/// Every file under `dir`, locks left out.
fn walk(fs: &StoreFs, dir: &str, out: &mut Vec<String>) -> Result<(), String> {
    for entry in fs.list_dir(dir).map_err(|e| e.to_string())? {
        let path = format!("{dir}/{}", entry.name);
        if entry.is_dir {
            walk(fs, &path, out)?;
        } else if !is_lock(&entry.name) {
            out.push(path);
        }
    }
    Ok(())
}

fn copy_file(from: &StoreFs, to: &StoreFs, path: &str) -> Result<(), String> {
    let content = from.read_file(path).map_err(|e| e.to_string())?;
    to.write_file(path, &content.text).map_err(|e| e.to_string())
}
