//! The sessions' threads: one actor thread per conversation key runs that key's engines in a
//! library `Worker` (the engine is not `Send`), so requests of one conversation are handled in
//! order and conversations run in parallel. The keys are the library's `SessionTable`: past
//! `proxy.max_sessions` the least recently used idle key is saved and closed.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

use context_workbench::Config;
use context_workbench::proxy::args::Shell;
use context_workbench::proxy::{
    CallRecord, ClientRequest, Prepared, ReplyOutcome, SessionKey, SessionTable, Shared, ThreadTrouble, Worker,
};
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard, oneshot};
use workbench_cli::native::{NativeHost, OpenAiCompatibleClient, StoreFs};

use super::log::Log;

/// What every actor needs to make its worker, and the log of what befalls it outside a request.
pub struct WorkerSetup {
    fs: StoreFs,
    llm: Option<OpenAiCompatibleClient>,
    config: Config,
    shared: Arc<Shared>,
    log: Arc<Log>,
}

impl WorkerSetup {
    pub fn new(fs: StoreFs, llm: Option<OpenAiCompatibleClient>, config: Config, log: Arc<Log>) -> WorkerSetup {
        WorkerSetup { fs, llm, config, shared: Arc::default(), log }
    }

    /// The store taken for this proxy (an error when another proxy records into it), and what a
    /// killed proxy left in it marked (the log line, if any).
    pub fn recover(&self) -> Result<Option<String>, String> {
        pollster::block_on(self.worker().recover(Shell::Native.proxy()))
    }

    fn worker(&self) -> Worker<NativeHost> {
        let host = NativeHost::new(self.fs.clone(), self.llm.clone());
        Worker::new(host, self.config.clone(), self.llm.is_some(), Arc::clone(&self.shared))
    }
}

enum Command {
    Prepare(Box<(SessionKey, ClientRequest, Vec<String>)>, oneshot::Sender<Prepared>),
    Finish(u16, Box<ReplyOutcome>, oneshot::Sender<CallRecord>),
    SideCall(String, Box<CallRecord>),
    Close(oneshot::Sender<Vec<String>>),
}

/// A key's actor, as the table holds it.
struct Actor {
    commands: Sender<Command>,
    /// Held for the whole of a request, reply included: one request of a conversation at a time.
    turn: Arc<AsyncMutex<()>>,
}

/// A handle on a key's actor for one request.
pub struct Turn {
    commands: Sender<Command>,
    _guard: OwnedMutexGuard<()>,
}

impl Turn {
    /// Record the request and prepare its call on the actor's thread; `notes` go on its record.
    pub async fn prepare(&self, key: SessionKey, request: ClientRequest, notes: Vec<String>) -> Option<Prepared> {
        let (tx, rx) = oneshot::channel();
        self.commands.send(Command::Prepare(Box::new((key, request, notes)), tx)).ok()?;
        rx.await.ok()
    }

    /// Hand the reply to the session without waiting: the call's record arrives on the receiver
    /// (which fails when the session's thread has stopped).
    pub fn begin_finish(&self, status: u16, outcome: ReplyOutcome) -> oneshot::Receiver<CallRecord> {
        let (tx, rx) = oneshot::channel();
        let _ = self.commands.send(Command::Finish(status, Box::new(outcome), tx));
        rx
    }
}

/// Every key's actor.
pub struct Registry {
    setup: Arc<WorkerSetup>,
    keys: Mutex<Keys>,
}

struct Keys {
    table: SessionTable<Actor>,
    /// The turns of the keys closed to make room, held until their actor has saved them: a key
    /// opened again meanwhile takes its turn after that (its traces are the closing actor's
    /// until then), by key name.
    closing: HashMap<String, Arc<AsyncMutex<()>>>,
}

impl Registry {
    pub fn new(setup: WorkerSetup, max_keys: usize) -> Registry {
        let keys = Keys { table: SessionTable::new(max_keys), closing: HashMap::new() };
        Registry { setup: Arc::new(setup), keys: Mutex::new(keys) }
    }

    /// The key's actor (started when new) with its turn taken, waiting while another request
    /// of the conversation is in flight; and what a key closed to make room could not save.
    pub async fn turn(&self, key: &SessionKey) -> (Turn, Vec<String>) {
        let (commands, turn, taken, evicted) = {
            let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
            let Keys { table, closing } = &mut *keys;
            let turn = closing.get(&key.name()).cloned().unwrap_or_default();
            let open = || Actor { commands: spawn(key, Arc::clone(&self.setup)), turn };
            // Busy while a request holds its turn or is on its way to it (each keeps a handle).
            let busy = |_: &SessionKey, actor: &Actor| Arc::strong_count(&actor.turn) > 1;
            let (actor, evicted) = table.touch(key, open, busy);
            // Taken here when free, so the key is busy from now on (never closed to make room).
            let taken = Arc::clone(&actor.turn).try_lock_owned().ok();
            let (commands, turn) = (actor.commands.clone(), Arc::clone(&actor.turn));
            let evicted = evicted.map(|(key, actor)| {
                closing.insert(key.name(), Arc::clone(&actor.turn));
                (key.name(), Arc::clone(&actor.turn).try_lock_owned().ok(), actor)
            });
            (commands, turn, taken, evicted)
        };
        let mut unsaved = Vec::new();
        if let Some((name, held, actor)) = evicted {
            unsaved = close(&actor.commands).await;
            let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
            if keys.closing.get(&name).is_some_and(|turn| Arc::ptr_eq(turn, &actor.turn)) {
                keys.closing.remove(&name);
            }
            drop(held);
        }
        let guard = match taken {
            Some(guard) => guard,
            None => turn.lock_owned().await,
        };
        (Turn { commands, _guard: guard }, unsaved)
    }

    /// Count an answered side call in the agent session's latest conversation, without waiting
    /// for it (nor for the conversation's turn: a side call runs beside it).
    pub fn record_side_call(&self, agent_session: &str, record: CallRecord) {
        let keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((key, actor)) = keys.table.latest_of(agent_session) {
            let _ = actor.commands.send(Command::SideCall(key.name(), Box::new(record)));
        }
    }

    /// Save and close every session (at shutdown, after the requests in flight); returns what
    /// could not be saved.
    pub async fn close_all(&self) -> Vec<String> {
        let actors = self.keys.lock().unwrap_or_else(|e| e.into_inner()).table.drain();
        let mut failures = Vec::new();
        for (_, actor) in actors {
            failures.extend(close(&actor.commands).await);
        }
        failures
    }
}

async fn close(actor: &Sender<Command>) -> Vec<String> {
    let (tx, rx) = oneshot::channel();
    if actor.send(Command::Close(tx)).is_err() {
        return Vec::new();
    }
    rx.await.unwrap_or_default()
}

fn spawn(key: &SessionKey, setup: Arc<WorkerSetup>) -> Sender<Command> {
    let (tx, rx) = channel();
    let name = key.name();
    let log = Arc::clone(&setup.log);
    let spawned = std::thread::Builder::new()
        .name(format!("proxy-{}", key.trace_base()))
        .spawn(move || run(&setup.worker(), &setup.log, &name, rx));
    if let Err(e) = spawned {
        log.trouble(&ThreadTrouble::CannotStart(e.to_string()));
    }
    tx
}

/// An actor's loop: its key's commands in order. A panic of the engine is caught here and
/// answered as the worker says (the session it hit is dropped).
fn run(worker: &Worker<NativeHost>, log: &Log, name: &str, commands: Receiver<Command>) {
    while let Ok(command) = commands.recv() {
        match command {
            Command::Prepare(call, reply) => {
                let (key, request, notes) = *call;
                let prepared = caught(worker.prepare(&key, &request, notes));
                let _ = reply.send(prepared.unwrap_or_else(|| worker.prepare_panicked(name)));
                // The body is on its way: the session is saved while the upstream has the call.
                if caught(worker.save_behind()).is_none() {
                    log.unsaved(&worker.save_panicked(Some(name)));
                }
            }
            Command::Finish(status, outcome, reply) => {
                let usage = outcome.usage;
                let record = caught(worker.finish(name, status, *outcome));
                let _ = reply.send(record.unwrap_or_else(|| worker.finish_panicked(name, status, usage)));
            }
            Command::SideCall(name, record) => {
                if caught(worker.record_side_call(&name, *record)).is_none() {
                    log.trouble(&ThreadTrouble::SideCallPanicked);
                }
            }
            Command::Close(done) => {
                let _ = done.send(close_worker(worker));
                return;
            }
        }
    }
    log.unsaved(&close_worker(worker));
}

fn close_worker(worker: &Worker<NativeHost>) -> Vec<String> {
    caught(worker.close_all()).unwrap_or_else(|| worker.save_panicked(None))
}

/// The engine's `work`, run to its end (a native host's futures complete at once); `None` when
/// it panicked.
fn caught<T>(work: impl Future<Output = T>) -> Option<T> {
    catch_unwind(AssertUnwindSafe(|| pollster::block_on(work))).ok()
}
