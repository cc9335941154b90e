//! The host boundary (R11): the only way the engine reaches the outside world.
//!
//! The engine never does I/O or reads a clock itself. An embedder (the CLI, a test, Node, a
//! browser, VS Code) implements [`Host`]; everything else in the crate is pure.

use std::future::Future;

use serde::{Deserialize, Serialize};

/// What the engine may ask of its embedder.
///
/// Paths are workspace-relative and use `/`. No `Send` bound: JS handles are not `Send`.
pub trait Host {
    /// One chat completion from the host's LLM.
    fn complete(&self, request: CompletionRequest) -> impl Future<Output = Result<Completion, HostError>>;
    /// The text of a file and its modification time.
    fn read_file(&self, path: &str) -> impl Future<Output = Result<FileContent, HostError>>;
    /// `None` when nothing exists at `path`.
    fn stat(&self, path: &str) -> impl Future<Output = Result<Option<FileStat>, HostError>>;
    /// Create or replace a file, creating parent directories.
    fn write_file(&self, path: &str, data: &str) -> impl Future<Output = Result<(), HostError>>;
    /// Append to a file, creating it (and parent directories) when missing.
    fn append_file(&self, path: &str, data: &str) -> impl Future<Output = Result<(), HostError>>;
    /// Atomically move `from` to `to`, replacing `to`.
    fn rename(&self, from: &str, to: &str) -> impl Future<Output = Result<(), HostError>>;
    /// Remove a file; removing a missing file is not an error.
    fn remove(&self, path: &str) -> impl Future<Output = Result<(), HostError>>;
    /// The entries of a directory, sorted by name.
    fn list_dir(&self, path: &str) -> impl Future<Output = Result<Vec<DirEntry>, HostError>>;
    /// The files directly in the directory `path` whose names end with `suffix`, each with its
    /// name and text, sorted by name. A host that can read them at once (a database: one query)
    /// overrides it; by default, [`read_each`].
    fn read_files(
        &self,
        path: &str,
        suffix: &str,
    ) -> impl Future<Output = Result<Vec<(String, FileContent)>, HostError>> {
        read_each(self, path, suffix)
    }
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;
    /// Take the lock at `path` (a file, made with its directories when missing) for this
    /// process until [`Host::unlock`] or the process ends: `Ok(true)` when this process holds it
    /// now (or held it already), `Ok(false)` while another process that is alive holds it. What
    /// tells the store's processes apart (a proxy's sessions from another's). Optional: a host
    /// whose store no other process shares takes every lock.
    fn try_lock(&self, _path: &str) -> impl Future<Output = Result<bool, HostError>> {
        async { Ok(true) }
    }
    /// [`Host::try_lock`], waiting up to `timeout_ms` for another process to let go of the lock
    /// (or for its hold to expire: a lease of a process that died). Hosts that cannot wait answer
    /// at once.
    fn wait_lock(&self, path: &str, _timeout_ms: u64) -> impl Future<Output = Result<bool, HostError>> {
        self.try_lock(path)
    }
    /// Whether [`Host::write_file`] leaves the file whole or as it was, never part-written (a
    /// database's transaction): the store then replaces a file in place, rather than write it
    /// under a temporary name and rename that over it (a round trip or more of a database's each).
    fn writes_whole(&self) -> bool {
        false
    }
    /// Whether other live processes share this host's store and may continue the same
    /// conversations (several proxies on one database behind a balancer): a proxy then holds a
    /// session only for the length of a call, so that any of them can take the next one.
    fn store_is_shared(&self) -> bool {
        false
    }
    /// Let go of a lock [`Host::try_lock`] took; nothing when this process does not hold it.
    fn unlock(&self, _path: &str) -> impl Future<Output = Result<(), HostError>> {
        async { Ok(()) }
    }
    /// Progress of a long engine operation (a compaction), for the host to show. Optional.
    fn progress(&self, _update: &Progress) {}
    /// A goal event (R8.2), delivered as it happens, in id order. Optional: a host that
    /// subscribes late reads the rest with `Engine::events_since`.
    fn event(&self, _event: &crate::goals::Event) {}
}

/// [`Host::read_files`] by [`Host::list_dir`] and a read of each file.
pub async fn read_each<H: Host + ?Sized>(
    host: &H,
    path: &str,
    suffix: &str,
) -> Result<Vec<(String, FileContent)>, HostError> {
    let mut files = Vec::new();
    for entry in host.list_dir(path).await?.into_iter().filter(|e| !e.is_dir && e.name.ends_with(suffix)) {
        let content = host.read_file(&format!("{path}/{}", entry.name)).await?;
        files.push((entry.name, content));
    }
    Ok(files)
}

/// A step of a long operation, or a notice the user should see (R4.5, R4.6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    /// `compaction`, …
    pub operation: String,
    pub message: String,
    /// The operation has ended (successfully or not).
    pub done: bool,
}

/// A request to the host's LLM. The host picks the model; the engine says what it needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct CompletionRequest {
    pub messages: Vec<ChatMessage>,
    /// Upper bound on the reply's tokens, when the engine needs one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// How long the engine will wait; hosts should give up after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Why the engine asks (`summary`, `state_update`, …), for the host's logs and routing.
    #[serde(default)]
    pub purpose: String,
}

/// One message of a [`CompletionRequest`], in the plain role/content shape every provider accepts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

/// The LLM's reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// Token usage as the provider reported it (R10.1: preferred over the engine's own count).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    pub cached_tokens: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FileContent {
    pub text: String,
    pub mtime_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FileStat {
    pub is_dir: bool,
    pub size: u64,
    pub mtime_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DirEntry {
    pub name: String,
    pub is_dir: bool,
}

/// A failure reported by the host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HostError {
    pub kind: HostErrorKind,
    pub message: String,
}

/// What kind of host failure it was; each kind has a stable code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostErrorKind {
    NotFound,
    OutsideWorkspace,
    LlmNotConfigured,
    Llm,
    Timeout,
    Io,
    /// The host failed in a way it did not classify (a JS host that rejected, say).
    Failed,
}

impl HostErrorKind {
    pub fn code(self) -> &'static str {
        match self {
            HostErrorKind::NotFound => "host_not_found",
            HostErrorKind::OutsideWorkspace => "host_outside_workspace",
            HostErrorKind::LlmNotConfigured => "host_llm_not_configured",
            HostErrorKind::Llm => "host_llm",
            HostErrorKind::Timeout => "host_timeout",
            HostErrorKind::Io => "host_io",
            HostErrorKind::Failed => "host_failed",
        }
    }

    /// The inverse of [`code`](Self::code), also accepting the bare kind (`not_found`) and
    /// Node's `ENOENT`, so JS hosts can classify their rejections.
    pub fn from_code(code: &str) -> Option<Self> {
        let all = [
            HostErrorKind::NotFound,
            HostErrorKind::OutsideWorkspace,
            HostErrorKind::LlmNotConfigured,
            HostErrorKind::Llm,
            HostErrorKind::Timeout,
            HostErrorKind::Io,
            HostErrorKind::Failed,
        ];
        if code == "ENOENT" {
            return Some(HostErrorKind::NotFound);
        }
        all.into_iter().find(|k| k.code() == code || k.code().strip_prefix("host_") == Some(code))
    }
}

impl HostError {
    pub fn new(kind: HostErrorKind, message: impl Into<String>) -> Self {
        HostError { kind, message: message.into() }
    }
}

/// Run to completion a future that never pends: the engine's work over a host whose methods
/// answer at once (the replay's, the native file system's, a test's).
///
/// # Panics
/// If the future pends: it waits on something this single-threaded driver cannot run, and
/// needs a real executor.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut context) {
        std::task::Poll::Ready(out) => out,
        std::task::Poll::Pending => panic!("block_on: the future pended; use a real executor for hosts that wait"),
    }
}
