//! The native host for the CLI: std::fs rooted at a workspace directory (the trace store there
//! or in PostgreSQL) and an OpenAI-compatible LLM client. Not part of the wasm build.

mod fs;
mod llm;
pub mod postgres;
mod store;

pub use fs::WorkspaceFs;
pub use llm::{LlmEndpoint, OpenAiCompatibleClient};
pub use postgres::PgStore;
pub use store::{StoreFs, shown_store};

use context_workbench::host::{
    Completion, CompletionRequest, DirEntry, FileContent, FileStat, Host, HostError, HostErrorKind,
};

/// The CLI's host: files under one root (the trace store's there or in PostgreSQL), an
/// optional LLM, the system clock.
#[derive(Debug, Clone)]
pub struct NativeHost {
    pub fs: StoreFs,
    pub llm: Option<OpenAiCompatibleClient>,
}

impl NativeHost {
    pub fn new(fs: impl Into<StoreFs>, llm: Option<OpenAiCompatibleClient>) -> Self {
        NativeHost { fs: fs.into(), llm }
    }

    /// True when processes on other machines share the store (PostgreSQL).
    pub fn is_shared(&self) -> bool {
        self.fs.is_shared()
    }
}

impl Host for NativeHost {
    async fn complete(&self, request: CompletionRequest) -> Result<Completion, HostError> {
        match &self.llm {
            Some(client) => client.complete(&request),
            None => Err(HostError::new(
                HostErrorKind::LlmNotConfigured,
                "no LLM configured: set WORKBENCH_LLM_URL and WORKBENCH_LLM_MODEL (or --llm-url and --llm-model), \
                 and WORKBENCH_LLM_API_KEY if the endpoint needs a key",
            )),
        }
    }

    async fn read_file(&self, path: &str) -> Result<FileContent, HostError> {
        self.fs.read_file(path)
    }

    async fn stat(&self, path: &str) -> Result<Option<FileStat>, HostError> {
        self.fs.stat(path)
    }

    async fn write_file(&self, path: &str, data: &str) -> Result<(), HostError> {
        self.fs.write_file(path, data)
    }

    async fn append_file(&self, path: &str, data: &str) -> Result<(), HostError> {
        self.fs.append_file(path, data)
    }

    async fn rename(&self, from: &str, to: &str) -> Result<(), HostError> {
        self.fs.rename(from, to)
    }

    async fn remove(&self, path: &str) -> Result<(), HostError> {
        self.fs.remove(path)
    }

    async fn list_dir(&self, path: &str) -> Result<Vec<DirEntry>, HostError> {
        self.fs.list_dir(path)
    }

    async fn read_files(&self, path: &str, suffix: &str) -> Result<Vec<(String, FileContent)>, HostError> {
        match self.fs.read_files(path, suffix) {
            Some(files) => files,
            None => context_workbench::host::read_each(self, path, suffix).await,
        }
    }

    async fn try_lock(&self, path: &str) -> Result<bool, HostError> {
        self.fs.try_lock(path)
    }

    /// Polls the lease (a database's) every 100 ms; a folder's OS lock is answered at once.
    async fn wait_lock(&self, path: &str, timeout_ms: u64) -> Result<bool, HostError> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(timeout_ms);
        loop {
            if self.fs.try_lock(path)? {
                return Ok(true);
            }
            if !self.fs.is_shared() || std::time::Instant::now() >= deadline {
                return Ok(false);
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    fn store_is_shared(&self) -> bool {
        self.fs.is_shared()
    }

    /// A database's write is one statement: whole or not at all.
    fn writes_whole(&self) -> bool {
        self.fs.is_shared()
    }

    async fn unlock(&self, path: &str) -> Result<(), HostError> {
        self.fs.unlock(path)
    }

    fn now_ms(&self) -> u64 {
        let since_epoch = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        since_epoch.map_or(0, |d| d.as_millis() as u64)
    }
}
