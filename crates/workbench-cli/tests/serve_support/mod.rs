//! Shared by tests/serve.rs and benches/serve.rs: the real `workbench serve` binary on a port
//! of its choosing, a plain HTTP/1.1 GET, a WebSocket watcher, and an engine that appends to a
//! trace under the same root from this process (the "other process" a viewer watches).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use context_workbench::{Config, Engine};
use serde_json::Value;
use tungstenite::Message;
use workbench_cli::native::{NativeHost, WorkspaceFs};

/// Generous: a loaded 2-core machine may be slow, and nothing here waits on a timer to pass.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// `workbench serve ROOT --port 0`, stopped when dropped.
pub struct Server {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub address: String,
}

impl Server {
    pub fn start(root: &Path) -> Server {
        Server::start_with(&[], root)
    }

    /// `workbench GLOBAL… serve ROOT --port 0`: with the global flags `global` (`--config`).
    pub fn start_with(global: &[&str], root: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_workbench"))
            .args(global)
            .arg("serve")
            .arg(root)
            .args(["--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start workbench serve");
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = sender.send(line);
        });
        let line = receiver.recv_timeout(PATIENCE).expect("workbench serve printed its address");
        let address = line.trim_end().strip_prefix("http://").unwrap_or_else(|| panic!("printed {line:?}")).to_owned();
        let port: u16 = address.strip_prefix("127.0.0.1:").and_then(|p| p.parse().ok()).expect("127.0.0.1:PORT");
        assert_ne!(port, 0, "the printed port is the one chosen");
        Server { child, address }
    }

    /// `GET path` (sent as is, not normalised): the status and the JSON body.
    pub fn get(&self, path: &str) -> (u16, Value) {
        let mut stream = TcpStream::connect(&self.address).expect("connect");
        stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
        write!(stream, "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", self.address).expect("send");
        let mut response = Vec::new();
        stream.read_to_end(&mut response).expect("read the response");
        let text = String::from_utf8(response).expect("UTF-8 response");
        let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
        let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status");
        assert!(head.to_ascii_lowercase().contains("content-type: application/json"), "{path}: {head}");
        let body = serde_json::from_str(body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"));
        (status, body)
    }

    /// A WebSocket on `/api/traces/{trace_id}/watch?since_event_id={since}`.
    pub fn watch(&self, trace_id: &str, since: u64) -> Watcher {
        self.try_watch(trace_id, since).unwrap_or_else(|e| panic!("watch {trace_id} since {since}: {e}"))
    }

    /// The same; a refused upgrade is `Err` with its HTTP status.
    pub fn try_watch(&self, trace_id: &str, since: u64) -> Result<Watcher, tungstenite::Error> {
        let stream = TcpStream::connect(&self.address).expect("connect");
        stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
        let url = format!("ws://{}/api/traces/{trace_id}/watch?since_event_id={since}", self.address);
        match tungstenite::client(url.as_str(), stream) {
            Ok((socket, _)) => Ok(Watcher { socket }),
            Err(tungstenite::HandshakeError::Failure(e)) => Err(e),
            Err(tungstenite::HandshakeError::Interrupted(_)) => panic!("a blocking handshake does not pause"),
        }
    }
}

impl Server {
    /// SIGTERM, as a service manager stops it; its exit status and what it printed to stderr
    /// is not captured (inherited).
    pub fn stop(&mut self) -> std::process::ExitStatus {
        let pid = libc::pid_t::try_from(self.child.id()).expect("a pid");
        // SAFETY: kill(2) on the child this struct owns and has not yet waited for.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0, "signal the server");
        let started = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the server") {
                return status;
            }
            assert!(started.elapsed() < PATIENCE, "the server did not stop after SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One WebSocket client.
pub struct Watcher {
    pub socket: tungstenite::WebSocket<TcpStream>,
}

impl Watcher {
    /// The next text frame as JSON; pings and pongs are skipped.
    pub fn next(&mut self) -> Value {
        loop {
            match self.socket.read() {
                Ok(Message::Text(text)) => return serde_json::from_str(text.as_str()).expect("a JSON frame"),
                Ok(Message::Ping(_) | Message::Pong(_)) => continue,
                Ok(other) => panic!("expected a text frame, got {other:?}"),
                Err(e) => panic!("reading the watch socket: {e}"),
            }
        }
    }

    /// The next frame that is an event (notes are skipped), with its id.
    pub fn next_event(&mut self) -> (u64, Value) {
        loop {
            let frame = self.next();
            if frame["event"] != "note" {
                let id = frame["id"].as_u64().unwrap_or_else(|| panic!("an event id in {frame}"));
                return (id, frame);
            }
        }
    }

    /// Close politely.
    pub fn close(mut self) {
        let _ = self.socket.close(None);
        let _ = self.socket.flush();
    }
}

/// An engine on trace `trace_id` under `root` (store root `.`): resumed when it exists.
pub fn open_trace(root: &Path, trace_id: &str) -> Engine<NativeHost> {
    let mut config = Config::default();
    config.store.root = ".".into();
    config.goals.max_goals = 100_000;
    let host = NativeHost::new(WorkspaceFs::new(root).expect("the trace root"), None);
    let (engine, _notes) = pollster::block_on(Engine::open(host, config, Some(trace_id))).expect("open the trace");
    engine
}

/// Save what the engine recorded; the id of its newest event.
pub fn persist(engine: &Engine<NativeHost>) -> u64 {
    pollster::block_on(engine.persist()).expect("persist");
    engine.events_since(0).last().map_or(0, |e| e.id)
}

/// A fresh directory for one test or run.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cw-serve-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the scratch directory");
    dir
}

/// Every file under `dir` with its bytes, to compare before and after.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.insert(path.clone(), std::fs::read(&path).expect("read"));
            }
        }
    }
    files
}
