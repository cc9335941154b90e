//! The sessions of one conversation key, as a [`super::Worker`] holds them: a request goes to
//! the session whose history it extends, else to a new one; a key keeps a few at once (a
//! session's sub-agents that start alike, a history the agent rewound), the least recently
//! used one saved and closed past that.

use super::record::CallRecord;
use super::reply::ReplyOutcome;
use super::request::ClientRequest;
use super::session::{Prepared, ProxySession};
use crate::host::Host;

/// Sessions one key holds at once.
pub const SESSIONS_PER_KEY: usize = 4;

/// One key's sessions and the one whose call is in flight.
pub struct Conversation<H: Host> {
    /// The most recently used last.
    sessions: Vec<ProxySession<H>>,
    current: Option<usize>,
}

impl<H: Host> Default for Conversation<H> {
    fn default() -> Self {
        Conversation { sessions: Vec::new(), current: None }
    }
}

impl<H: Host> Conversation<H> {
    /// The traces of its sessions.
    pub fn trace_ids(&self) -> Vec<String> {
        self.sessions.iter().map(|s| s.engine().trace_id().0).collect()
    }

    /// A call is prepared and its reply not finished yet.
    pub fn in_flight(&self) -> bool {
        self.current.is_some()
    }

    /// Record `request` in the session it continues or revises (the one that recorded most of it)
    /// or in one `open` opens, and prepare its call; `notes` go on the call's record. Never fails:
    /// without a session, the request goes upstream unmanaged and the record says why.
    pub async fn prepare(
        &mut self,
        request: &ClientRequest,
        open: impl AsyncFnOnce() -> Result<ProxySession<H>, String>,
        mut notes: Vec<String>,
    ) -> Prepared {
        self.current = None;
        let fits = self.sessions.iter().enumerate().filter_map(|(i, s)| Some((i, s.fit(request)?)));
        match fits.max_by_key(|&(_, fit)| fit) {
            Some((index, _)) => {
                let session = self.sessions.remove(index);
                self.sessions.push(session);
            }
            None => {
                if let Some(departed) = self.sessions.last().map(|s| s.engine().trace_id()) {
                    notes.push(format!("a new session: the request does not extend {departed}'s history"));
                }
                let session = match open().await {
                    Ok(session) => session,
                    Err(why) => {
                        notes.push(format!("no session could be opened ({why}); sent unmanaged"));
                        return unmanaged(notes);
                    }
                };
                if self.sessions.len() >= SESSIONS_PER_KEY {
                    let mut oldest = self.sessions.remove(0);
                    if let Err(e) = oldest.close().await {
                        notes.push(format!("session {} was not saved: {e}", oldest.engine().trace_id()));
                    }
                }
                self.sessions.push(session);
            }
        }
        // Either branch left the request's session last.
        let index = self.sessions.len() - 1;
        self.current = Some(index);
        let session = &mut self.sessions[index];
        let mut prepared = session.prepare(request).await;
        for note in notes {
            session.note(note.clone());
            prepared.record.notes.push(note);
        }
        prepared
    }

    /// Save the session of the call in flight as its prepare left it ([`ProxySession::save`]).
    pub async fn save(&mut self) {
        if let Some(session) = self.current.and_then(|i| self.sessions.get_mut(i)) {
            session.save().await;
        }
    }

    /// The reply of the call in flight goes to its session; returns the call's record.
    pub async fn finish(&mut self, status: u16, outcome: ReplyOutcome) -> CallRecord {
        match self.current.take().and_then(|i| self.sessions.get_mut(i)) {
            Some(session) => session.finish(status, outcome).await,
            None => CallRecord {
                status: Some(status),
                completed: outcome.completed,
                usage: outcome.usage,
                ..CallRecord::default()
            },
        }
    }

    /// A side call of the agent, counted in the session it used last, and the line that
    /// counts it ([`ProxySession::side_call`]); `None` without a session.
    pub fn side_call(&self, record: CallRecord) -> Option<(CallRecord, Option<(String, String)>)> {
        Some(self.sessions.last()?.side_call(record))
    }

    /// Drop the session of the call in flight unsaved (its engine panicked).
    pub fn forget_current(&mut self) {
        if let Some(index) = self.current.take() {
            self.sessions.remove(index);
        }
    }

    /// Save every session as it stands and let go of those saved, without ending them
    /// ([`ProxySession::hand_over`]): another process on a shared store may continue them. One
    /// that could not be saved stays (the next call here saves it). Returns the traces let go
    /// and what could not be saved.
    pub async fn hand_over_all(&mut self) -> (Vec<String>, Vec<String>) {
        let (mut handed, mut failures, mut kept) = (Vec::new(), Vec::new(), Vec::new());
        for mut session in self.sessions.drain(..) {
            let id = session.engine().trace_id().0;
            match session.hand_over().await {
                None => handed.push(id),
                Some(note) => {
                    failures.push(format!("session {id} was not saved, and stays in this proxy: {note}"));
                    kept.push(session);
                }
            }
        }
        self.sessions = kept;
        self.current = None;
        (handed, failures)
    }

    /// Save and close every session; returns what could not be saved.
    pub async fn close_all(&mut self) -> Vec<String> {
        let mut failures = Vec::new();
        for mut session in self.sessions.drain(..) {
            if let Err(e) = session.close().await {
                failures.push(format!("session {} was not saved: {e}", session.engine().trace_id()));
            }
        }
        self.current = None;
        failures
    }
}

/// A call the engine does not manage: the agent's own request goes through, `notes` say why.
pub fn unmanaged(notes: Vec<String>) -> Prepared {
    Prepared { body: None, record: CallRecord { notes, ..CallRecord::default() } }
}
