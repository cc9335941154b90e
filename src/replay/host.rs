//! The host of the `workbench` strategy: no LLM, no files, a fixed clock, so a replay is pure
//! and deterministic. It counts what the engine asked of the LLM.

use std::cell::Cell;

use crate::host::{Completion, CompletionRequest, DirEntry, FileContent, FileStat, Host, HostError, HostErrorKind};

/// The replay's clock: 2026-01-01T00:00:00Z, always.
pub const REPLAY_EPOCH_MS: u64 = 1_767_225_600_000;

/// A host with nothing behind it: every completion fails with `host_llm_not_configured`, reads
/// and writes fail with `host_not_found`, `stat` finds nothing, directories are empty.
#[derive(Debug, Default)]
pub struct ReplayHost {
    llm_requests: Cell<usize>,
}

impl ReplayHost {
    /// How many completions the engine asked for so far (all of them failed).
    pub fn llm_requests(&self) -> usize {
        self.llm_requests.get()
    }

    fn not_found(path: &str) -> HostError {
        HostError::new(HostErrorKind::NotFound, format!("no file system in replay: {path}"))
    }
}

impl Host for ReplayHost {
    async fn complete(&self, _request: CompletionRequest) -> Result<Completion, HostError> {
        self.llm_requests.set(self.llm_requests.get() + 1);
        Err(HostError::new(HostErrorKind::LlmNotConfigured, "no LLM in replay"))
    }

    async fn read_file(&self, path: &str) -> Result<FileContent, HostError> {
        Err(Self::not_found(path))
    }

    async fn stat(&self, _path: &str) -> Result<Option<FileStat>, HostError> {
        Ok(None)
    }

    async fn write_file(&self, path: &str, _data: &str) -> Result<(), HostError> {
        Err(Self::not_found(path))
    }

    async fn append_file(&self, path: &str, _data: &str) -> Result<(), HostError> {
        Err(Self::not_found(path))
    }

    async fn rename(&self, from: &str, _to: &str) -> Result<(), HostError> {
        Err(Self::not_found(from))
    }

    async fn remove(&self, _path: &str) -> Result<(), HostError> {
        Ok(())
    }

    async fn list_dir(&self, _path: &str) -> Result<Vec<DirEntry>, HostError> {
        Ok(Vec::new())
    }

    fn now_ms(&self) -> u64 {
        REPLAY_EPOCH_MS
    }
}
