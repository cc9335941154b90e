//! Where the proxy's engines live: a worker holds the conversations of the keys it is given
//! (one key per thread natively, every key in the npm package's proxy), opens their sessions
//! over its host, saves them behind each call (see [`Worker::save_behind`]), and closes them when
//! a key makes room or the proxy stops. On a store other proxies share (a database behind a
//! balancer: [`crate::host::Host::store_is_shared`]) it holds a session only for a call: saved
//! and let go at the reply, reopened from the store by whichever proxy gets the next call. The
//! engine is not `Send`: a worker stays on the thread that made it.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use super::conversation::{Conversation, unmanaged};
use super::record::{CALLS_FILE, CallRecord};
use super::reply::{ProviderUsage, ReplyOutcome};
use super::request::{ClientRequest, SessionKey};
use super::session::{Prepared, ProxySession};
use super::session_config;
use super::subagents::{Spawns, spawning_calls};
use crate::config::Config;
use crate::engine::Engine;
use crate::host::Host;
use crate::store::layout::{self, PROXY_LOCK};
use crate::store::load::read_optional;
use crate::store::recover::mark_interrupted;
use crate::store::{BRANCH_OF_KEY, CONTINUES_KEY, PERSON_KEY};

/// What the workers of one proxy share (on several threads natively).
#[derive(Debug, Default)]
pub struct Shared {
    pub ids: TraceIds,
    pub spawns: Spawns,
}

/// The trace ids handed out in one proxy process, so no two sessions share one (workers on
/// several threads share it).
#[derive(Debug, Default)]
pub struct TraceIds(Mutex<BTreeSet<String>>);

impl TraceIds {
    /// Take `id`; false when another session has it.
    pub fn reserve(&self, id: &str) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(id.to_owned())
    }

    /// Give `id` back (its session closed: a later request may resume it).
    pub fn release(&self, id: &str) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
    }
}

/// The engines of some conversations. Its methods take `&self` and hold no borrow across a
/// host's await, so on one thread the calls of different keys interleave; a key's own calls
/// come one at a time (the shells order them), and one that comes anyway is told it is busy.
pub struct Worker<H: Host + Clone> {
    host: H,
    config: Config,
    shared: Arc<Shared>,
    /// Each key's conversation by the key's name.
    conversations: RefCell<HashMap<String, Slot<H>>>,
    /// The key whose call was prepared last and its session not saved since (see
    /// [`Worker::save_behind`]).
    unsaved: Cell<Option<String>>,
}

/// A key's conversation; `None` while a call of the key has it.
struct Slot<H: Host> {
    trace_base: String,
    conversation: Option<Conversation<H>>,
}

impl<H: Host + Clone> Worker<H> {
    /// Sessions saved through `host` under `config.store.root`, their engines configured by
    /// `config` (with the LLM compactor only when `host_has_llm`: otherwise the embedded one
    /// writes the blocks, as in the replay).
    pub fn new(host: H, config: Config, host_has_llm: bool, shared: Arc<Shared>) -> Worker<H> {
        let config = session_config(config, host_has_llm);
        Worker { host, config, shared, conversations: RefCell::default(), unsaved: Cell::default() }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// At start, before any session: the store is taken for this proxy ([`PROXY_LOCK`]; an
    /// error, what to exit with, when another live proxy records into it), and the traces a
    /// killed proxy left `running` are marked `interrupted`. Returns the log line saying so
    /// (after `who: `), if there were any. A shared store (a database several proxies use) is
    /// not taken, and nothing in it is marked: a session between calls is held by no one, and
    /// one a dead proxy had in flight is taken over by its next call ([`Worker::stored_session`]).
    pub async fn recover(&self, who: &str) -> Result<Option<String>, String> {
        if self.host.store_is_shared() {
            return Ok(None);
        }
        let root = &self.config.store.root;
        let lock = format!("{root}/{PROXY_LOCK}");
        if !self.host.try_lock(&lock).await.unwrap_or(true) {
            let holder = read_optional(&self.host, &lock).await.ok().flatten().unwrap_or_default();
            let holder = match holder.trim() {
                "" => "another process".to_owned(),
                pid => format!("the process {pid}"),
            };
            return Err(format!(
                "the store {root} is in use by another proxy ({holder}); stop it, or start this one on another store (--store)"
            ));
        }
        // Out of `git status` from the start, not from the first session's save (a failed
        // save says so then).
        let _ = layout::keep_out_of_git(&self.host, &layout::ignore_file(root)).await;
        let marked = mark_interrupted(&self.host, root).await;
        for id in marked.iter().flatten() {
            self.record_cut_call(id).await;
        }
        Ok(match marked {
            Ok(ids) if ids.is_empty() => None,
            Ok(ids) => Some(format!(
                "{who}: {} session(s) left running by a proxy that was killed, marked interrupted: {}",
                ids.len(),
                ids.join(", ")
            )),
            Err(e) => Some(format!("{who}: the store could not be checked for interrupted sessions: {e}")),
        })
    }

    /// Record the call interrupted trace `id` had in flight, if its state kept one
    /// ([`ProxySession::record_cut_call`]): at start, so that a session its agent never comes
    /// back to has it too. Nothing else of the trace is touched.
    async fn record_cut_call(&self, id: &str) {
        if !self.lock(id).await {
            return;
        }
        if let Ok((engine, _)) = Engine::open(self.host.clone(), self.config.clone(), Some(id)).await
            && let Some(Ok(mut session)) = ProxySession::resume(engine)
        {
            session.record_cut_call().await;
        }
        let _ = self.host.unlock(&self.owner_lock(id)).await;
    }

    /// Record `request` in its conversation (`key`'s) and prepare the call; `notes` go on its
    /// record. Never fails: without a session the request goes upstream unmanaged, and the
    /// record says why. The session is saved by [`Worker::save_behind`], or at the reply.
    pub async fn prepare(&self, key: &SessionKey, request: &ClientRequest, mut notes: Vec<String>) -> Prepared {
        let name = key.name();
        self.conversations
            .borrow_mut()
            .entry(name.clone())
            .or_insert_with(|| Slot { trace_base: key.trace_base(), conversation: Some(Conversation::default()) });
        let Some(mut conversation) = self.take(&name) else {
            notes.push(format!("{BUSY}; sent unmanaged"));
            return unmanaged(notes);
        };
        let open = async || {
            if let Some(session) = self.stored_session(key, request).await? {
                return Ok(session);
            }
            let (host, config, ids) = (&self.host, &self.config, &self.shared.ids);
            let base = key.trace_base();
            let (engine, n) = loop {
                let n = fresh_trace_number(host, &config.store.root, &base, |id| ids.reserve(id)).await;
                let id = numbered(&base, n);
                let (engine, _notes) =
                    Engine::open(host.clone(), config.clone(), Some(&id)).await.map_err(|e| e.to_string())?;
                // Another proxy on the store took the number meanwhile (it stays reserved here: the next).
                if self.lock(&id).await {
                    break (engine, n);
                }
            };
            // The agent compacted its own history: the session goes on from the one before.
            if n > 1 && request.continues_a_compacted_history() {
                engine.set_metadata(CONTINUES_KEY, numbered(&base, n - 1).into());
            }
            if let Some(person) = &key.person {
                engine.set_metadata(PERSON_KEY, person.as_str().into());
            }
            // A sub-agent the agent started: a branch of its caller's session.
            if let Some(caller) = self.shared.spawns.claim(&request.opening_text()) {
                engine.set_metadata(BRANCH_OF_KEY, serde_json::to_value(caller).unwrap_or_default());
            }
            let mut session = ProxySession::new(engine, request.format).map_err(|e| e.to_string())?;
            if let Some(opening) = &request.opening {
                session.count_opening(opening.as_ref().clone()).await;
            }
            Ok(session)
        };
        let prepared = conversation.prepare(request, open, notes).await;
        drop(conversation);
        self.unsaved.set(Some(name));
        prepared
    }

    /// Save the session the last prepare left unsaved. A shell calls it once the prepared body
    /// is on its way, so the save (the trace's files replaced, a good part of a call's engine
    /// time) runs while the upstream has the call, not before it.
    pub async fn save_behind(&self) {
        let Some(name) = self.unsaved.take() else { return };
        if let Some(mut conversation) = self.take(&name) {
            conversation.save().await;
        }
    }

    /// The reply of the call in flight of the key named `name`; returns the call's record.
    pub async fn finish(&self, name: &str, status: u16, outcome: ReplyOutcome) -> CallRecord {
        let Some(mut conversation) = self.take(name) else {
            let notes = vec![format!("{BUSY}; the reply is not recorded")];
            return CallRecord { status: Some(status), usage: outcome.usage, notes, ..CallRecord::default() };
        };
        let spawning = if outcome.completed { spawning_calls(&outcome.parts) } else { Vec::new() };
        let mut record = conversation.finish(status, outcome).await;
        drop(conversation);
        if record.managed && !spawning.is_empty() {
            self.shared.spawns.note(&record.trace_id, spawning);
        }
        if self.host.store_is_shared() {
            record.notes.extend(self.hand_over(name).await);
        }
        record
    }

    /// Save the key's sessions and let them go, so that any proxy on the shared store can take
    /// the conversation's next call; returns what could not be saved (kept here meanwhile).
    async fn hand_over(&self, name: &str) -> Vec<String> {
        let Some(mut conversation) = self.take(name) else { return Vec::new() };
        let (handed, failures) = conversation.hand_over_all().await;
        let emptied = conversation.trace_ids().is_empty();
        drop(conversation);
        if emptied {
            self.conversations.borrow_mut().remove(name);
        }
        for id in handed {
            self.let_go(&id).await;
        }
        failures
    }

    /// Whether the key named `name` has a call in flight.
    pub fn in_flight(&self, name: &str) -> bool {
        match self.conversations.borrow().get(name) {
            Some(slot) => slot.conversation.as_ref().is_none_or(Conversation::in_flight),
            None => false,
        }
    }

    /// Count a side call of the agent ([`CallRecord::side_call`]) in the session the key named
    /// `name` used last. `None` when the key has no session here, or is busy preparing a call
    /// (the side call then goes uncounted, as one without a session id does). The conversation
    /// is only read: a call of the key may be in flight meanwhile.
    pub async fn record_side_call(&self, name: &str, record: CallRecord) -> Option<CallRecord> {
        let (mut record, line) = {
            let conversations = self.conversations.borrow();
            conversations.get(name)?.conversation.as_ref()?.side_call(record)?
        };
        if let Some((path, line)) = line
            && let Err(e) = self.host.append_file(&path, &line).await
        {
            record.notes.push(format!("the side call was not saved to {CALLS_FILE}: {e}"));
        }
        Some(record)
    }

    /// What a prepare of the key named `name` gives when the engine panicked on it (a native
    /// shell catches the panic): the session it hit is dropped unsaved, and the request goes
    /// upstream as it came, its record saying why.
    pub fn prepare_panicked(&self, name: &str) -> Prepared {
        self.forget(name);
        unmanaged(vec![
            "the engine panicked on this request; the session is dropped and the request sent unmanaged".into(),
        ])
    }

    /// The record of a reply of the key named `name` the engine panicked on (its session is
    /// dropped unsaved): the status and the provider's usage, and why nothing else.
    pub fn finish_panicked(&self, name: &str, status: u16, usage: Option<ProviderUsage>) -> CallRecord {
        self.forget(name);
        let notes = vec!["the engine panicked on the reply".into()];
        CallRecord { status: Some(status), usage, notes, ..CallRecord::default() }
    }

    /// What could not be saved when the engine panicked saving the key named `name` (`None`: all
    /// of the worker's keys, as at a stop); the session it hit is dropped.
    pub fn save_panicked(&self, name: Option<&str>) -> Vec<String> {
        if let Some(name) = name {
            self.forget(name);
        }
        vec!["the engine panicked while saving".into()]
    }

    /// Drop the session of the key's call in flight unsaved (its engine panicked).
    fn forget(&self, name: &str) {
        if let Some(conversation) = self.conversations.borrow_mut().get_mut(name).and_then(|s| s.conversation.as_mut())
        {
            conversation.forget_current();
        }
    }

    /// The stored session of `key` that `request` continues (after a restart of the proxy, or
    /// once the conversation had made room for others): of the key's traces not open here, the
    /// one the request fits best ([`ProxySession::fit`]), restored exactly as it was saved (see
    /// [`ProxySession::reopen`]). On a shared store a trace another proxy holds is waited for
    /// (its call ends, or the lease of a proxy that died expires), up to [`SHARED_WAIT_MS`] in
    /// all; the error says the conversation stayed busy elsewhere (the call then goes unmanaged,
    /// rather than record its history a second time in a new session).
    async fn stored_session(
        &self,
        key: &SessionKey,
        request: &ClientRequest,
    ) -> Result<Option<ProxySession<H>>, String> {
        let (root, base) = (&self.config.store.root, key.trace_base());
        let shared = self.host.store_is_shared();
        let deadline = self.host.now_ms().saturating_add(SHARED_WAIT_MS);
        let mut held_elsewhere = Vec::new();
        let mut best: Option<((bool, usize), ProxySession<H>)> = None;
        for n in 1.. {
            let id = numbered(&base, n);
            if !matches!(self.host.stat(&format!("{root}/{id}/meta.json")).await, Ok(Some(_))) {
                break;
            }
            // Open here already, or in another proxy on the store.
            if !self.shared.ids.reserve(&id) {
                continue;
            }
            let locked = match shared {
                true => self.wait_lock(&id, deadline.saturating_sub(self.host.now_ms())).await,
                false => self.lock(&id).await,
            };
            if !locked {
                self.shared.ids.release(&id);
                held_elsewhere.push(id);
                continue;
            }
            let opened = Engine::open(self.host.clone(), self.config.clone(), Some(&id)).await.ok();
            let session = opened.and_then(|(engine, _)| ProxySession::reopen(engine, request)?.ok());
            let fits = session.as_ref().and_then(|s| s.fit(request));
            match (session, fits) {
                (Some(session), Some(fit)) if best.as_ref().is_none_or(|(b, _)| fit > *b) => {
                    if let Some((_, replaced)) = best.replace((fit, session)) {
                        self.let_go(replaced.engine().trace_id().as_str()).await;
                    }
                }
                _ => self.let_go(&id).await,
            }
        }
        match best {
            Some((_, session)) => Ok(Some(session)),
            None if shared && !held_elsewhere.is_empty() => Err(format!(
                "{} stayed busy in another proxy on the shared store for {} s",
                held_elsewhere.join(", "),
                SHARED_WAIT_MS / 1000
            )),
            None => Ok(None),
        }
    }

    /// Save and close the key's sessions; returns what could not be saved.
    pub async fn close(&self, name: &str) -> Vec<String> {
        let taken = self.conversations.borrow_mut().remove(name);
        match taken {
            Some(Slot { conversation: Some(mut conversation), .. }) => {
                let ids = conversation.trace_ids();
                let failures = conversation.close_all().await;
                for id in ids {
                    self.let_go(&id).await;
                }
                failures
            }
            Some(Slot { trace_base, conversation: None }) => {
                vec![format!("the sessions of {trace_base} were busy and not saved")]
            }
            None => Vec::new(),
        }
    }

    /// Take the owner lock of trace `id` ([`crate::store::layout::OWNER`]), which tells the
    /// store's other processes (a second proxy's start) that its session is live; false while
    /// another live process holds it. A host that fails to lock is not in the way.
    async fn lock(&self, id: &str) -> bool {
        let path = self.owner_lock(id);
        self.host.try_lock(&path).await.unwrap_or(true)
    }

    /// [`Worker::lock`], waiting up to `timeout_ms` for another proxy on the shared store to let go.
    async fn wait_lock(&self, id: &str, timeout_ms: u64) -> bool {
        let path = self.owner_lock(id);
        self.host.wait_lock(&path, timeout_ms).await.unwrap_or(true)
    }

    /// The owner lock's path of trace `id`.
    fn owner_lock(&self, id: &str) -> String {
        format!("{}/{id}/{}", self.config.store.root, crate::store::layout::OWNER)
    }

    /// Give trace `id` back: to this process's other sessions, and to the store's other processes.
    async fn let_go(&self, id: &str) {
        self.shared.ids.release(id);
        let path = self.owner_lock(id);
        let _ = self.host.unlock(&path).await;
    }

    /// Let go of the store [`Worker::recover`] took, for the next proxy (a process's OS locks
    /// go with it; a host whose locks outlive their holder's proxy, Node's, needs this).
    pub async fn release_store(&self) {
        if !self.host.store_is_shared() {
            let _ = self.host.unlock(&format!("{}/{PROXY_LOCK}", self.config.store.root)).await;
        }
    }

    /// Save and close every session; returns what could not be saved.
    pub async fn close_all(&self) -> Vec<String> {
        let mut names: Vec<String> = self.conversations.borrow().keys().cloned().collect();
        names.sort();
        let mut failures = Vec::new();
        for name in names {
            failures.extend(self.close(&name).await);
        }
        failures
    }

    /// The key's conversation, out of its slot until the returned guard drops.
    fn take(&self, name: &str) -> Option<Taken<'_, H>> {
        let conversation = self.conversations.borrow_mut().get_mut(name).and_then(|slot| slot.conversation.take())?;
        Some(Taken { worker: self, name: name.to_owned(), conversation })
    }
}

/// A key's conversation taken from its slot while a call works on it. It goes back when the
/// guard drops, a panic's unwinding included, so that [`Worker::forget`] finds the session the
/// panic hit (rather than the key staying busy for good).
struct Taken<'w, H: Host + Clone> {
    worker: &'w Worker<H>,
    name: String,
    conversation: Conversation<H>,
}

impl<H: Host + Clone> std::ops::Deref for Taken<'_, H> {
    type Target = Conversation<H>;
    fn deref(&self) -> &Conversation<H> {
        &self.conversation
    }
}

impl<H: Host + Clone> std::ops::DerefMut for Taken<'_, H> {
    fn deref_mut(&mut self) -> &mut Conversation<H> {
        &mut self.conversation
    }
}

impl<H: Host + Clone> Drop for Taken<'_, H> {
    fn drop(&mut self) {
        if let Some(slot) = self.worker.conversations.borrow_mut().get_mut(&self.name) {
            slot.conversation = Some(std::mem::take(&mut self.conversation));
        }
    }
}

/// How long, in all, a call on a shared store waits for the conversation's traces other proxies
/// hold: a call in flight elsewhere ends, a dead proxy's lease expires (well within this).
pub const SHARED_WAIT_MS: u64 = 30_000;

/// What a call of a key gets while another call of the same key holds its conversation.
const BUSY: &str = "this conversation is busy with another request";

/// The number `n` of a trace id `base`, `base-2`, … ([`numbered`]) that no directory under the
/// trace root `root` (workspace-relative) has, reserved with `reserve` (false: another session
/// has it) before the directory is looked at, so two sessions opening at once never get the same.
async fn fresh_trace_number<H: Host>(host: &H, root: &str, base: &str, reserve: impl Fn(&str) -> bool) -> usize {
    let mut n = 1;
    loop {
        let id = numbered(base, n);
        if reserve(&id) && matches!(host.stat(&format!("{root}/{id}")).await, Ok(None)) {
            return n;
        }
        n += 1;
    }
}

/// The `n`th trace id of `base`: `base`, `base-2`, `base-3`, …
fn numbered(base: &str, n: usize) -> String {
    if n == 1 { base.to_owned() } else { format!("{base}-{n}") }
}
