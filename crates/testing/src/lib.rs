//! What the Context Workbench tests share (a dev-dependency, never in the engine's public API):
//! the in-memory host (scripted LLM replies, a map of files, a fixed clock), a one-shot HTTP
//! endpoint, the shared trajectories' location and directory snapshots.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};

use context_workbench::goals::Event;
pub use context_workbench::host::block_on;
use context_workbench::host::{
    ChatMessage, Completion, CompletionRequest, DirEntry, FileContent, FileStat, Host, HostError, HostErrorKind,
    Progress, Usage,
};
use context_workbench::tokens::{Encoding, TokenCounter};

/// 2026-01-01T00:00:00Z, the clock every test host starts at.
pub const TEST_EPOCH_MS: u64 = 1_767_225_600_000;

/// A host that lives in memory. Replies are consumed in order; when they run out the LLM
/// answers with an `llm` error naming the request's purpose.
#[derive(Debug)]
pub struct TestHost {
    files: RefCell<BTreeMap<String, (String, u64)>>,
    replies: RefCell<VecDeque<Result<String, HostError>>>,
    requests: RefCell<Vec<CompletionRequest>>,
    progress: RefCell<Vec<Progress>>,
    events: RefCell<Vec<Event>>,
    now_ms: Cell<u64>,
    /// Locks another live process holds ([`TestHost::held_by_another`]).
    held: RefCell<Vec<String>>,
}

impl Default for TestHost {
    fn default() -> Self {
        TestHost {
            files: RefCell::default(),
            replies: RefCell::default(),
            requests: RefCell::default(),
            progress: RefCell::default(),
            events: RefCell::default(),
            now_ms: Cell::new(TEST_EPOCH_MS),
            held: RefCell::default(),
        }
    }
}

impl TestHost {
    /// Script the next LLM reply.
    pub fn with_reply(self, text: impl Into<String>) -> Self {
        self.replies.borrow_mut().push_back(Ok(text.into()));
        self
    }

    /// Script the next LLM call to fail.
    pub fn with_error(self, kind: HostErrorKind, message: impl Into<String>) -> Self {
        self.replies.borrow_mut().push_back(Err(HostError::new(kind, message)));
        self
    }

    pub fn with_file(self, path: &str, text: &str) -> Self {
        self.files.borrow_mut().insert(path.to_owned(), (text.to_owned(), self.now_ms.get()));
        self
    }

    /// Every progress update received so far.
    pub fn progress_updates(&self) -> Vec<Progress> {
        self.progress.borrow().clone()
    }

    /// Every goal event delivered so far.
    pub fn events(&self) -> Vec<Event> {
        self.events.borrow().clone()
    }

    /// Every completion request received so far.
    pub fn requests(&self) -> Vec<CompletionRequest> {
        self.requests.borrow().clone()
    }

    /// Another live process holds the lock at `path`: [`Host::try_lock`] on it says no.
    pub fn held_by_another(self, path: &str) -> Self {
        self.held.borrow_mut().push(path.to_owned());
        self
    }

    pub fn advance_clock(&self, ms: u64) {
        self.now_ms.set(self.now_ms.get() + ms);
    }

    fn not_found(path: &str) -> HostError {
        HostError::new(HostErrorKind::NotFound, format!("no such file: {path}"))
    }
}

impl Host for TestHost {
    async fn complete(&self, request: CompletionRequest) -> Result<Completion, HostError> {
        let purpose = request.purpose.clone();
        let prompt: String = request.messages.iter().map(|m: &ChatMessage| m.content.as_str()).collect();
        self.requests.borrow_mut().push(request);
        let reply = self.replies.borrow_mut().pop_front().unwrap_or_else(|| {
            Err(HostError::new(HostErrorKind::Llm, format!("no scripted reply left for `{purpose}`")))
        })?;
        let counter = TokenCounter::new(Encoding::O200kBase);
        let usage = Usage {
            prompt_tokens: counter.count(&prompt) as u64,
            completion_tokens: counter.count(&reply) as u64,
            cached_tokens: 0,
        };
        Ok(Completion { text: reply, usage: Some(usage) })
    }

    async fn read_file(&self, path: &str) -> Result<FileContent, HostError> {
        let files = self.files.borrow();
        let (text, mtime_ms) = files.get(path).ok_or_else(|| Self::not_found(path))?;
        Ok(FileContent { text: text.clone(), mtime_ms: *mtime_ms })
    }

    async fn stat(&self, path: &str) -> Result<Option<FileStat>, HostError> {
        let files = self.files.borrow();
        if let Some((text, mtime_ms)) = files.get(path) {
            return Ok(Some(FileStat { is_dir: false, size: text.len() as u64, mtime_ms: *mtime_ms }));
        }
        let prefix = format!("{}/", path.trim_end_matches('/'));
        let is_dir = path.is_empty() || files.keys().any(|k| k.starts_with(&prefix));
        Ok(is_dir.then_some(FileStat { is_dir: true, size: 0, mtime_ms: self.now_ms.get() }))
    }

    async fn write_file(&self, path: &str, data: &str) -> Result<(), HostError> {
        self.files.borrow_mut().insert(path.to_owned(), (data.to_owned(), self.now_ms.get()));
        Ok(())
    }

    async fn append_file(&self, path: &str, data: &str) -> Result<(), HostError> {
        let now = self.now_ms.get();
        let mut files = self.files.borrow_mut();
        let entry = files.entry(path.to_owned()).or_insert_with(|| (String::new(), now));
        entry.0.push_str(data);
        entry.1 = now;
        Ok(())
    }

    async fn rename(&self, from: &str, to: &str) -> Result<(), HostError> {
        let mut files = self.files.borrow_mut();
        let file = files.remove(from).ok_or_else(|| Self::not_found(from))?;
        files.insert(to.to_owned(), file);
        Ok(())
    }

    async fn remove(&self, path: &str) -> Result<(), HostError> {
        self.files.borrow_mut().remove(path);
        Ok(())
    }

    async fn list_dir(&self, path: &str) -> Result<Vec<DirEntry>, HostError> {
        let prefix = if path.is_empty() { String::new() } else { format!("{}/", path.trim_end_matches('/')) };
        let files = self.files.borrow();
        let mut entries: Vec<DirEntry> = files
            .keys()
            .filter_map(|k| k.strip_prefix(&prefix))
            .map(|rest| match rest.split_once('/') {
                Some((dir, _)) => DirEntry { name: dir.to_owned(), is_dir: true },
                None => DirEntry { name: rest.to_owned(), is_dir: false },
            })
            .collect();
        entries.dedup();
        if entries.is_empty() && !path.is_empty() {
            return Err(Self::not_found(path));
        }
        Ok(entries)
    }

    fn now_ms(&self) -> u64 {
        self.now_ms.get()
    }

    async fn try_lock(&self, path: &str) -> Result<bool, HostError> {
        Ok(!self.held.borrow().iter().any(|held| held == path))
    }

    fn progress(&self, update: &Progress) {
        self.progress.borrow_mut().push(update.clone());
    }

    fn event(&self, event: &Event) {
        self.events.borrow_mut().push(event.clone());
    }
}

/// One tool call and its result (`output`, with `status`), recorded as an agent's session
/// records them: the assistant's call, then the tool's message.
pub fn record_tool_round<H: Host>(
    engine: &context_workbench::Engine<H>,
    (id, name, arguments): (&str, &str, &str),
    output: &str,
    status: context_workbench::model::ToolStatus,
) {
    use context_workbench::MessageDraft;
    use context_workbench::model::{ContentPart, Role, ToolCall, ToolResult};
    let call = ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() };
    engine.record(MessageDraft::new(Role::Assistant, vec![ContentPart::ToolCall(call)])).expect("the call recorded");
    let result = ToolResult { status, ..ToolResult::ok(id, name, output) };
    let mut draft = MessageDraft::new(Role::Tool, vec![ContentPart::ToolResult(result)]);
    draft.tool_call_id = Some(id.into());
    engine.record(draft).expect("the result recorded");
}

/// Serve one scripted HTTP response on 127.0.0.1 (a stand-in LLM endpoint); the handle
/// yields the request as received, head and body.
#[cfg(not(target_arch = "wasm32"))]
pub fn serve_once(status: &str, body: &str) -> (String, std::thread::JoinHandle<String>) {
    use std::io::{BufRead, BufReader, Read, Write};

    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let url = format!("http://{}", listener.local_addr().expect("local address"));
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let handle = std::thread::spawn(move || {
        let (stream, _) = listener.accept().expect("a client");
        let mut reader = BufReader::new(stream);
        let mut received = String::new();
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).expect("request head");
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().expect("content length");
            }
            received.push_str(&line);
            if line == "\r\n" || line.is_empty() {
                break;
            }
        }
        let mut request_body = vec![0; length];
        reader.read_exact(&mut request_body).expect("request body");
        reader.get_mut().write_all(reply.as_bytes()).expect("reply");
        received + &String::from_utf8_lossy(&request_body)
    });
    (url, handle)
}

/// Every file under `dir` with its bytes, by absolute path, to compare before and after.
#[cfg(not(target_arch = "wasm32"))]
pub fn snapshot(dir: &std::path::Path) -> BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_and_directories() {
        let host = TestHost::default().with_file("src/a.rs", "fn a() {}").with_file("src/b/c.rs", "");
        let names: Vec<String> = block_on(host.list_dir("src")).unwrap().into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["a.rs", "b"]);
        assert!(block_on(host.stat("src/b")).unwrap().unwrap().is_dir);
        assert_eq!(block_on(host.stat("nope")).unwrap(), None);
        block_on(host.append_file("log", "a")).unwrap();
        block_on(host.append_file("log", "b")).unwrap();
        block_on(host.rename("log", "log.1")).unwrap();
        assert_eq!(block_on(host.read_file("log.1")).unwrap().text, "ab");
        assert_eq!(block_on(host.read_file("log")).unwrap_err().kind, HostErrorKind::NotFound);
    }
}
