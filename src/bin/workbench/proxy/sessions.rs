//! The proxy's sessions: one actor thread per conversation key owns that key's engines (the
//! engine is not `Send`), so requests of one conversation are handled in order and
//! conversations run in parallel. The registry maps keys to actors, bounded in number: past
//! the limit the least recently used idle key is saved and closed.

use std::collections::{BTreeSet, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

use context_workbench::Config;
use context_workbench::native::{NativeHost, OpenAiCompatibleClient, WorkspaceFs};
use context_workbench::proxy::conversation::{Conversation, fresh_trace_id, open_session, unmanaged};
use context_workbench::proxy::{CallRecord, ClientRequest, Prepared, ProxySession, ReplyOutcome, SessionKey};
use tokio::sync::{Mutex as AsyncMutex, oneshot};

/// What every actor needs to open an engine.
pub struct Opener {
    pub fs: WorkspaceFs,
    pub llm: Option<OpenAiCompatibleClient>,
    pub config: Config,
    /// Trace ids handed out, so no two sessions share one.
    pub used_ids: Mutex<BTreeSet<String>>,
}

impl Opener {
    fn open(&self, key: &SessionKey, request: &ClientRequest) -> Result<ProxySession<NativeHost>, String> {
        let host = NativeHost::new(self.fs.clone(), self.llm.clone());
        pollster::block_on(async {
            let reserve = |id: &str| self.used_ids.lock().unwrap_or_else(|e| e.into_inner()).insert(id.to_owned());
            let id = fresh_trace_id(&host, &self.config.store.root, &key.trace_base(), reserve).await;
            open_session(host, &self.config, self.llm.is_some(), &id, request).await
        })
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
        .spawn(move || Actor { key, opener, conversation: Conversation::default() }.run(rx));
    if let Err(e) = spawned {
        eprintln!("workbench: proxy: could not start a session thread: {e}");
    }
    tx
}

/// The sessions of one key, on their own thread; a panic of the engine is caught here.
struct Actor {
    key: SessionKey,
    opener: Arc<Opener>,
    conversation: Conversation<NativeHost>,
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

    fn prepare(&mut self, request: ClientRequest) -> Prepared {
        let (opener, key) = (&self.opener, &self.key);
        let open = async || opener.open(key, &request);
        match catch_unwind(AssertUnwindSafe(|| pollster::block_on(self.conversation.prepare(&request, open)))) {
            Ok(prepared) => prepared,
            Err(_) => {
                self.conversation.forget_current();
                unmanaged(
                    "the engine panicked on this request; the session is dropped and the request sent unmanaged".into(),
                )
            }
        }
    }

    fn finish(&mut self, status: u16, outcome: ReplyOutcome) -> CallRecord {
        let usage = outcome.usage;
        match catch_unwind(AssertUnwindSafe(|| pollster::block_on(self.conversation.finish(status, outcome)))) {
            Ok(record) => record,
            Err(_) => {
                self.conversation.forget_current();
                CallRecord {
                    status: Some(status),
                    usage,
                    notes: vec!["the engine panicked on the reply".into()],
                    ..CallRecord::default()
                }
            }
        }
    }

    fn close_all(&mut self) {
        let failures = catch_unwind(AssertUnwindSafe(|| pollster::block_on(self.conversation.close_all())))
            .unwrap_or_else(|_| vec!["the engine panicked while saving".into()]);
        for failure in failures {
            eprintln!("workbench: proxy: {failure}");
        }
    }
}
