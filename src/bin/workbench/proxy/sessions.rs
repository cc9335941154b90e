//! The proxy's sessions: one actor thread per conversation key owns that key's engines (the
//! engine is not `Send`), so requests of one conversation are handled in order and
//! conversations run in parallel. The registry maps keys to actors, bounded in number: past
//! the limit the least recently used idle key is saved and closed.

use std::collections::{BTreeSet, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

use context_workbench::Config;
use context_workbench::Engine;
use context_workbench::native::{NativeHost, OpenAiCompatibleClient, WorkspaceFs};
use context_workbench::proxy::{
    CallRecord, ClientRequest, Extension, Prepared, ProxySession, ReplyOutcome, SessionKey, session_config,
};
use tokio::sync::{Mutex as AsyncMutex, oneshot};

/// Conversations one key holds at once (a session's sub-agents that start alike, a history the
/// agent rewound); past it the least recently used one is saved and closed.
const SESSIONS_PER_KEY: usize = 4;

/// What every actor needs to open an engine.
pub struct Opener {
    pub fs: WorkspaceFs,
    pub llm: Option<OpenAiCompatibleClient>,
    pub config: Config,
    /// The trace root's directory on disk, to never reuse an id a trace already has.
    pub store_dir: PathBuf,
    pub used_ids: Mutex<BTreeSet<String>>,
}

impl Opener {
    /// A trace id of `base`, `base-2`, … that no trace under the store has.
    fn fresh_id(&self, base: &str) -> String {
        let mut used = self.used_ids.lock().unwrap_or_else(|e| e.into_inner());
        let mut n = 1;
        loop {
            let id = if n == 1 { base.to_owned() } else { format!("{base}-{n}") };
            if !used.contains(&id) && !self.store_dir.join(&id).exists() {
                used.insert(id.clone());
                return id;
            }
            n += 1;
        }
    }

    fn open(&self, key: &SessionKey, request: &ClientRequest) -> Result<ProxySession<NativeHost>, String> {
        let id = self.fresh_id(&key.trace_base());
        let host = NativeHost::new(self.fs.clone(), self.llm.clone());
        let config = session_config(self.config.clone(), self.llm.is_some());
        let (engine, _notes) = pollster::block_on(Engine::open(host, config, Some(&id))).map_err(|e| e.to_string())?;
        ProxySession::new(engine, request.format).map_err(|e| e.to_string())
    }
}

enum Command {
    Prepare(Box<ClientRequest>, oneshot::Sender<Prepared>),
    Finish(u16, Box<ReplyOutcome>, oneshot::Sender<CallRecord>),
    Close(oneshot::Sender<()>),
}

/// One key's actor, as the registry holds it.
struct Entry {
    commands: Sender<Command>,
    /// Held for the whole of a request, reply included: one request of a conversation at a time.
    turn: Arc<AsyncMutex<()>>,
    last_used: u64,
}

/// A handle on a key's actor for one request.
pub struct Turn {
    commands: Sender<Command>,
    _guard: tokio::sync::OwnedMutexGuard<()>,
}

impl Turn {
    /// Record the request and prepare its call on the actor's thread.
    pub async fn prepare(&self, request: ClientRequest) -> Option<Prepared> {
        let (tx, rx) = oneshot::channel();
        self.commands.send(Command::Prepare(Box::new(request), tx)).ok()?;
        rx.await.ok()
    }

    /// Hand the reply to the session; returns the call's record.
    pub async fn finish(&self, status: u16, outcome: ReplyOutcome) -> Option<CallRecord> {
        let (tx, rx) = oneshot::channel();
        self.commands.send(Command::Finish(status, Box::new(outcome), tx)).ok()?;
        rx.await.ok()
    }
}

/// Every key's actor.
pub struct Registry {
    opener: Arc<Opener>,
    entries: Mutex<HashMap<SessionKey, Entry>>,
    clock: Mutex<u64>,
    max_keys: usize,
}

impl Registry {
    pub fn new(opener: Opener, max_keys: usize) -> Registry {
        Registry { opener: Arc::new(opener), entries: Mutex::new(HashMap::new()), clock: Mutex::new(0), max_keys }
    }

    /// The key's actor (started when new), with its turn taken: waits while another request
    /// of the same conversation is in flight.
    pub async fn turn(&self, key: &SessionKey) -> Turn {
        let (commands, turn, evicted) = {
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            let now = {
                let mut clock = self.clock.lock().unwrap_or_else(|e| e.into_inner());
                *clock += 1;
                *clock
            };
            let evicted = if entries.contains_key(key) { None } else { self.evict(&mut entries) };
            let entry = entries.entry(key.clone()).or_insert_with(|| Entry {
                commands: spawn_actor(key.clone(), Arc::clone(&self.opener)),
                turn: Arc::new(AsyncMutex::new(())),
                last_used: now,
            });
            entry.last_used = now;
            (entry.commands.clone(), Arc::clone(&entry.turn), evicted)
        };
        if let Some(evicted) = evicted {
            close(evicted).await;
        }
        let guard = turn.lock_owned().await;
        Turn { commands, _guard: guard }
    }

    /// Past the limit, take out the least recently used key that has no request in flight.
    fn evict(&self, entries: &mut HashMap<SessionKey, Entry>) -> Option<Sender<Command>> {
        if entries.len() < self.max_keys {
            return None;
        }
        let idle = entries.iter().filter(|(_, e)| e.turn.try_lock().is_ok()).min_by_key(|(_, e)| e.last_used);
        let key = idle.map(|(k, _)| k.clone())?;
        entries.remove(&key).map(|e| e.commands)
    }

    /// Save and close every session (at shutdown, after the requests in flight).
    pub async fn close_all(&self) {
        let actors: Vec<Sender<Command>> = {
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            entries.drain().map(|(_, e)| e.commands).collect()
        };
        for actor in actors {
            close(actor).await;
        }
    }
}

async fn close(actor: Sender<Command>) {
    let (tx, rx) = oneshot::channel();
    if actor.send(Command::Close(tx)).is_ok() {
        let _ = rx.await;
    }
}

fn spawn_actor(key: SessionKey, opener: Arc<Opener>) -> Sender<Command> {
    let (tx, rx) = channel();
    let name = format!("proxy-{}", key.trace_base());
    let spawned = std::thread::Builder::new()
        .name(name)
        .spawn(move || Actor { key, opener, sessions: Vec::new(), current: None }.run(rx));
    if let Err(e) = spawned {
        eprintln!("workbench: proxy: could not start a session thread: {e}");
    }
    tx
}

/// The sessions of one key, on their own thread.
struct Actor {
    key: SessionKey,
    opener: Arc<Opener>,
    sessions: Vec<ProxySession<NativeHost>>,
    /// The session of the call in flight.
    current: Option<usize>,
}

impl Actor {
    fn run(mut self, commands: Receiver<Command>) {
        while let Ok(command) = commands.recv() {
            match command {
                Command::Prepare(request, reply) => {
                    let _ = reply.send(self.prepare(*request));
                }
                Command::Finish(status, outcome, reply) => {
                    let _ = reply.send(self.finish(status, *outcome));
                }
                Command::Close(done) => {
                    self.close_all();
                    let _ = done.send(());
                    return;
                }
            }
        }
        self.close_all();
    }

    /// The session the request continues (the one that recorded most of it), or a new one.
    fn prepare(&mut self, request: ClientRequest) -> Prepared {
        let mut notes = Vec::new();
        let fits = self.sessions.iter().enumerate().filter_map(|(i, s)| match s.extension(&request) {
            Extension::Extends { from } => Some((i, from)),
            Extension::Repeats => Some((i, request.messages.len())),
            Extension::Departs { .. } => None,
        });
        let index = match fits.max_by_key(|&(_, recorded)| recorded) {
            Some((index, _)) => index,
            None => {
                if let Some(departed) = self.sessions.first().map(|s| s.engine().trace_id()) {
                    notes.push(format!("a new session: the request does not extend {departed}'s history"));
                }
                match catch_unwind(AssertUnwindSafe(|| self.opener.open(&self.key, &request))) {
                    Ok(Ok(session)) => {
                        if self.sessions.len() >= SESSIONS_PER_KEY {
                            let mut oldest = self.sessions.remove(0);
                            guarded(|| pollster::block_on(oldest.close()).map_err(|e| e.to_string()));
                        }
                        self.sessions.push(session);
                        self.sessions.len() - 1
                    }
                    outcome => {
                        let why = match outcome {
                            Ok(Err(e)) => e,
                            _ => "the engine panicked while opening".to_owned(),
                        };
                        return unmanaged(format!("no session could be opened ({why}); sent unmanaged"));
                    }
                }
            }
        };
        self.current = Some(index);
        let session = &mut self.sessions[index];
        match catch_unwind(AssertUnwindSafe(|| pollster::block_on(session.prepare(&request)))) {
            Ok(mut prepared) => {
                for note in notes {
                    session.note(note.clone());
                    prepared.record.notes.push(note);
                }
                prepared
            }
            Err(_) => {
                self.sessions.remove(index);
                self.current = None;
                unmanaged(
                    "the engine panicked on this request; the session is dropped and the request sent unmanaged".into(),
                )
            }
        }
    }

    fn finish(&mut self, status: u16, outcome: ReplyOutcome) -> CallRecord {
        let Some(session) = self.current.take().and_then(|i| self.sessions.get_mut(i)) else {
            return CallRecord {
                status: Some(status),
                completed: outcome.completed,
                usage: outcome.usage,
                ..CallRecord::default()
            };
        };
        match catch_unwind(AssertUnwindSafe(|| pollster::block_on(session.finish(status, outcome)))) {
            Ok(record) => record,
            Err(_) => CallRecord {
                status: Some(status),
                notes: vec!["the engine panicked on the reply".into()],
                ..CallRecord::default()
            },
        }
    }

    fn close_all(&mut self) {
        for mut session in self.sessions.drain(..) {
            let trace = session.engine().trace_id();
            if let Some(e) = guarded(|| pollster::block_on(session.close()).map_err(|e| e.to_string())) {
                eprintln!("workbench: proxy: session {trace} was not saved: {e}");
            }
        }
    }
}

/// Run `work`, turning an error or a panic into its message.
fn guarded(work: impl FnOnce() -> Result<(), String>) -> Option<String> {
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e),
        Err(_) => Some("the engine panicked".into()),
    }
}

fn unmanaged(note: String) -> Prepared {
    Prepared { body: None, record: CallRecord { notes: vec![note], ..CallRecord::default() } }
}
