//! Where a trace lives under the trace root (R8.1), and which ids may name a directory.
//!
//! ```text
//! {root}/.gitignore                      `*`: the store stays out of git and of agents' searches
//! {root}/proxy.lock                      locked by the proxy recording into the store (its process id inside)
//! {root}/{trace_id}/meta.json            trace metadata (replaced atomically)
//!                   goal.json            the main line's goal tree (replaced atomically)
//!                   prompt.json          the newest call's prompt as sent, with its figures (replaced atomically)
//!                   prompts.jsonl        every saved call's prompt, its messages and tools as parts, appended
//!                   messages/{id}.json   the raw trace, one file per message, written once
//!                   raw/{id}.txt         each message's original as plain text (a tool's output), for any file reader
//!                   events.jsonl         goal events (R8.2), appended
//!                   log.jsonl            the execution log: tool inputs and outputs (R8.3), appended
//!                   rewrites.jsonl       the prompt view's history: which rewrite replaced what, appended
//!                   snapshots.jsonl      agent-state snapshots at every step change (R8.3), appended
//!                   state.json           the engine's state for an exact resume (replaced atomically)
//!                   parts.jsonl          the large parts of state.json, each saved once by hash, appended
//!                   owner.lock           locked by the process that has the trace open (its process id inside)
//!                   branches/{id}/{meta.json, goal.json, messages/}
//! ```

use crate::error::{Error, Result};

/// The trace root when the config names none: `.trace/` in the workspace.
pub const DEFAULT_ROOT: &str = ".trace";

pub const META: &str = "meta.json";
pub const GOAL: &str = "goal.json";
/// The newest call's [`crate::prompt::Assembly`]: what the model received, for viewers of a live trace.
pub const PROMPT: &str = "prompt.json";
/// Each saved call's prompt (`store::records::CallPrompt`), for viewers of any call.
pub const PROMPTS: &str = "prompts.jsonl";
pub const MESSAGES: &str = "messages";
pub const RAW: &str = "raw";
pub const EVENTS: &str = "events.jsonl";
pub const LOG: &str = "log.jsonl";
pub const REWRITES: &str = "rewrites.jsonl";
pub const SNAPSHOTS: &str = "snapshots.jsonl";
pub const STATE: &str = "state.json";
pub const PARTS: &str = "parts.jsonl";
/// The proxy's record of each call: what it sent, what the provider reported (`crate::proxy`).
pub const CALLS: &str = "calls.jsonl";
pub const BRANCHES: &str = "branches";
/// Locked ([`crate::host::Host::try_lock`]) by the process that has the trace open: what tells a
/// live session from one whose process died (`store::recover`).
pub const OWNER: &str = "owner.lock";
/// Locked by the proxy that records into a folder store, with its process id inside: a second
/// proxy on the same folder is refused, naming it (several proxies share a database store).
pub const PROXY_LOCK: &str = "proxy.lock";

/// The trace root's own `.gitignore`, which keeps every trace out of git and of the searches
/// that honour it (ripgrep, agents' Grep).
pub fn ignore_file(root: &str) -> String {
    join(root, ".gitignore")
}

/// What that `.gitignore` says.
pub const IGNORE_TEXT: &str =
    "# Context Workbench's trace store: sessions and their raw history, kept out of git and searches.\n*\n";

/// Write the `.gitignore` at `path` ([`ignore_file`]) when it is missing.
pub async fn keep_out_of_git<H: crate::host::Host>(host: &H, path: &str) -> Result<()> {
    if host.stat(path).await?.is_none() {
        host.write_file(path, IGNORE_TEXT).await?;
    }
    Ok(())
}

/// Paths of one trace under a root; every id in them has been checked by [`check_id`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceDir {
    dir: String,
}

impl TraceDir {
    /// The directory of `trace_id` under `root`; refuses ids that are not plain names.
    pub fn new(root: &str, trace_id: &str) -> Result<Self> {
        check_id("trace id", trace_id)?;
        Ok(TraceDir { dir: join(root, trace_id) })
    }

    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// A file directly in the trace directory.
    pub fn file(&self, name: &str) -> String {
        join(&self.dir, name)
    }

    /// The file of one message: `{id}.json` for a plain id (see [`check_id`]); any other id (a
    /// host's history may carry `../x` or `a/b`) gets `id-{xxh3 of the id}.json`, never a path.
    /// Readers take the id from the file's content, not its name.
    pub fn message(&self, id: &str) -> String {
        match check_id("message id", id) {
            Ok(()) => format!("{}/{MESSAGES}/{id}.json", self.dir),
            Err(_) => format!("{}/{MESSAGES}/id-{:016x}.json", self.dir, xxhash_rust::xxh3::xxh3_64(id.as_bytes())),
        }
    }

    /// The plain-text original of one message (`raw/{id}.txt`), named like [`TraceDir::message`].
    pub fn raw(&self, id: &str) -> String {
        match check_id("message id", id) {
            Ok(()) => format!("{}/{RAW}/{id}.txt", self.dir),
            Err(_) => format!("{}/{RAW}/id-{:016x}.txt", self.dir, xxhash_rust::xxh3::xxh3_64(id.as_bytes())),
        }
    }

    /// The directory of one branch (its `meta.json`, `goal.json` and `messages/`).
    pub fn branch(&self, branch_id: &str) -> Result<TraceDir> {
        check_id("branch id", branch_id)?;
        Ok(TraceDir { dir: format!("{}/{BRANCHES}/{branch_id}", self.dir) })
    }
}

/// An id may name a directory when it is 1-128 characters of letters, digits, `-`, `_` and
/// `.`, and is not `.` or `..`: no separators, no traversal, nothing a shell or URL mangles.
pub fn check_id(what: &str, id: &str) -> Result<()> {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if id.is_empty() || id.len() > 128 || !id.chars().all(plain) || id.chars().all(|c| c == '.') {
        return Err(Error::InvalidInput(format!(
            "{what} `{}` is not a plain name (letters, digits, `-`, `_`, `.`; at most 128)",
            id.escape_debug()
        )));
    }
    Ok(())
}

/// Check a trace root from the config: workspace-relative, no `..`.
pub fn check_root(root: &str) -> Result<()> {
    let bad = root.is_empty()
        || root.starts_with('/')
        || root.contains('\\')
        || root.split('/').any(|part| part == ".." || part.is_empty() && root != ".");
    if bad {
        return Err(Error::Config(format!("`store.root` `{root}` must be a workspace-relative path without `..`")));
    }
    Ok(())
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() || dir == "." { name.to_owned() } else { format!("{}/{name}", dir.trim_end_matches('/')) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_could_leave_the_root_are_refused() {
        for bad in ["", ".", "..", "../x", "a/b", "a\\b", "/etc", "x\0", "ü", &"a".repeat(129)] {
            let err = TraceDir::new(".trace", bad).unwrap_err();
            assert_eq!(err.code(), "invalid_input", "{bad:?}");
        }
        let dir = TraceDir::new(".trace", "trace-17.a_b").unwrap();
        assert_eq!(dir.file(META), ".trace/trace-17.a_b/meta.json");
        assert_eq!(dir.message("m000003"), ".trace/trace-17.a_b/messages/m000003.json");
        for id in ["../../../escaped", "a/b", "", "..", "msg:1"] {
            let path = dir.message(id);
            let name = path.strip_prefix(".trace/trace-17.a_b/messages/id-").unwrap_or_else(|| panic!("{id}: {path}"));
            assert!(name.len() == 21 && name.ends_with(".json") && !name.contains('/'), "{id}: {path}");
        }
        assert_ne!(dir.message("a/b"), dir.message("a/c"));
        assert_eq!(dir.branch("A").unwrap().file(GOAL), ".trace/trace-17.a_b/branches/A/goal.json");
        assert!(dir.branch("../B").is_err());
        assert_eq!(TraceDir::new(".", "t").unwrap().file(META), "t/meta.json");
    }

    #[test]
    fn roots_stay_in_the_workspace() {
        for good in [".trace", ".", "out/traces"] {
            check_root(good).unwrap();
        }
        for bad in ["", "/tmp", "../x", "a//b", "a/../b", "c:\\x"] {
            assert!(check_root(bad).is_err(), "{bad}");
        }
    }
}
