//! One conversation of an agent, managed by one engine: each request records only the messages
//! that are new since the last one, then the engine's `prepare_call` prompt goes upstream; the
//! reply's usage goes back to the engine, and the reply itself is recorded when the agent sends
//! its copy back with the next request (or when the session closes), so a reply that never
//! completed is never recorded. A request that sends the recorded history again changed and goes
//! on past it revises the session ([`Extension::Revises`]); one that does not extend the recorded
//! history otherwise belongs to another session: the caller opens one ([`Extension::Departs`]).

use super::dollars::price_call;
use super::providers::api;
use super::record::{CALLS_FILE, CallRecord};
use super::reply::ReplyOutcome;
use super::request::{ClientMessage, ClientRequest, draft};
use super::route::Format;
use crate::engine::{Engine, MessageDraft};
use crate::error::Result;
use crate::host::Host;
use crate::model::{ContentPart, Message, MessageId, Role};
use crate::prompt::CallInput;
use crate::prompt::serialize::UNNAMED_CALL;
use crate::store::load::read_optional;
use crate::store::{FALLBACKS_KEY, Fallback, Redactor, SessionEnd};

/// How a request relates to what a session recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extension {
    /// It repeats the recorded history, then adds messages from index `from` on.
    Extends { from: usize },
    /// It is the recorded history exactly (a client's retry): nothing new to record.
    Repeats,
    /// It sends the recorded history again changed from message `at` on, and goes on past it:
    /// the agent renders part of its history anew at each call (aider: the files it shows, its
    /// format reminder). The messages from `at` on are withdrawn and its version recorded.
    Revises { at: usize },
    /// It departs from the recorded history at message `at` and does not go on past it: the agent
    /// compacted or rewound its own history, or the user edited a message. Another session's.
    Departs { at: usize },
}

/// Compare a request's message fingerprints with the recorded ones.
pub fn extension(recorded: &[u64], request: &[u64]) -> Extension {
    let common = recorded.iter().zip(request).take_while(|(a, b)| a == b).count();
    if common < recorded.len() && common > 0 && request.len() > recorded.len() {
        Extension::Revises { at: common }
    } else if common < recorded.len() {
        Extension::Departs { at: common }
    } else if request.len() == recorded.len() {
        Extension::Repeats
    } else {
        Extension::Extends { from: common }
    }
}

/// A call ready to go upstream.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The body for the upstream; `None` when the engine failed and the agent's own request
    /// must go through unmanaged (the record's notes say why).
    pub body: Option<String>,
    pub record: CallRecord,
}

/// One managed conversation.
pub struct ProxySession<H: Host> {
    engine: Engine<H>,
    format: Format,
    /// Fingerprints of the agent's messages recorded so far.
    recorded: Vec<u64>,
    /// The engine's id of the first message each of them was recorded as (`None`: none was).
    starts: Vec<Option<MessageId>>,
    /// The last reply that completed, until the agent's copy of it arrives.
    pending: Option<Vec<ContentPart>>,
    /// The last recorded message is that reply as the upstream sent it, recorded when the
    /// session closed: the agent's copy may differ a little (defaults filled in a call's input).
    reply_recorded: bool,
    calls: u64,
    open: Option<CallRecord>,
    /// A call was prepared and the trace not saved since (see [`ProxySession::save`]).
    unsaved: bool,
    /// Lines of `calls.jsonl` the store did not take (it was away): written before the next.
    unsaved_calls: String,
    redactor: Redactor,
    /// The engine's main-line messages the fingerprints account for (saved with them).
    accounted: usize,
    /// Messages the engine restored past the saved state (a save cut short by a crash wrote
    /// them, not the state): the next request says which of them the agent holds.
    restored: Vec<Message>,
    /// The call in flight when the state was last saved, whose reply was never recorded (the
    /// proxy was killed, or failed on it), until it is recorded (see
    /// [`ProxySession::record_cut_call`]).
    cut_call: Option<CallRecord>,
}

/// The key of [`Engine::metadata`] under which a session keeps what it needs to be resumed.
const RESUME_KEY: &str = "proxy";
/// The key under which the record of the call in flight is saved with the state: a proxy that
/// stops before the reply is recorded (killed) leaves it there, for the session resumed to record.
const OPEN_CALL_KEY: &str = "proxy_open_call";

impl<H: Host> ProxySession<H> {
    /// A session over `engine` (opened on its trace store) for requests of `format`.
    pub fn new(engine: Engine<H>, format: Format) -> Result<Self> {
        let store = &engine.config().store;
        let redactor = Redactor::new(store.redact, &store.redact_patterns)?;
        let session = ProxySession {
            engine,
            format,
            recorded: Vec::new(),
            starts: Vec::new(),
            pending: None,
            reply_recorded: false,
            calls: 0,
            open: None,
            unsaved: false,
            unsaved_calls: String::new(),
            redactor,
            accounted: 0,
            restored: Vec::new(),
            cut_call: None,
        };
        let mut session = session;
        session.accounted = session.message_count();
        session.keep_resume_state();
        Ok(session)
    }

    /// The engine's main-line messages.
    fn message_count(&self) -> usize {
        self.engine.last_message().map_or(0, |m| m.sequence as usize + 1)
    }

    /// The session a restored `engine` held (a proxy restarted, a conversation that made room
    /// for others), as it was when it was last saved; `None` when the trace is no proxy
    /// session's. Messages the engine restored past that save (a crash cut the save after they
    /// were written) wait for the next request, which claims those it holds (see
    /// [`ProxySession::prepare`]): recorded once, whatever point the crash came at.
    pub fn resume(engine: Engine<H>) -> Option<Result<Self>> {
        let saved = engine.metadata(RESUME_KEY)?;
        let format = Format::from_name(saved.get("format")?.as_str()?)?;
        let hex: Vec<String> = serde_json::from_value(saved.get("fingerprints")?.clone()).ok()?;
        let recorded = hex.iter().map(|f| u64::from_str_radix(f, 16).ok()).collect::<Option<Vec<u64>>>()?;
        let reply_recorded = saved.get("reply_recorded").and_then(serde_json::Value::as_bool).unwrap_or(false);
        // A reply handed over to another proxy before the agent sent its copy back.
        let pending = saved.get("pending").and_then(|p| serde_json::from_value(p.clone()).ok());
        // Saved by a build that did not keep them: that history cannot be revised, only extended.
        let starts: Vec<Option<MessageId>> = saved
            .get("starts")
            .and_then(|s| serde_json::from_value(s.clone()).ok())
            .unwrap_or_else(|| vec![None; recorded.len()]);
        let calls = engine.metadata("proxy_calls").and_then(|c| c.as_u64()).unwrap_or(0);
        // Saved by a build that did not count them: every restored message counts as accounted.
        let accounted = saved.get("messages").and_then(serde_json::Value::as_u64).map(|n| n as usize);
        Some(ProxySession::new(engine, format).map(|mut session| {
            session.recorded = recorded;
            session.starts = starts;
            session.reply_recorded = reply_recorded;
            session.pending = pending;
            session.calls = calls;
            session.cut_call = session.engine.metadata(OPEN_CALL_KEY).and_then(|r| serde_json::from_value(r).ok());
            if let Some(accounted) = accounted.filter(|&n| n < session.accounted) {
                session.restored = session.engine.trace().messages.split_off(accounted);
                session.accounted = accounted;
            }
            session.keep_resume_state();
            session
        }))
    }

    /// The session of a stored trace of the proxy's that `request` may continue: the one it
    /// held ([`ProxySession::resume`]), or, when the trace has no session's state (a crash cut
    /// its first save before the state was written), one of `request`'s format whose every
    /// message waits to be claimed.
    pub fn reopen(engine: Engine<H>, request: &ClientRequest) -> Option<Result<Self>> {
        if engine.metadata(RESUME_KEY).is_some() {
            return ProxySession::resume(engine);
        }
        Some(ProxySession::new(engine, request.format).map(|mut session| {
            session.restored = session.engine.trace().messages;
            session.accounted = 0;
            session.keep_resume_state();
            session
        }))
    }

    /// What a resume needs, kept with the engine's state (saved with it, atomically). The
    /// fingerprints are hex text: the trace's metadata crosses to JavaScript, whose numbers
    /// stop being exact at 2^53.
    fn keep_resume_state(&self) {
        let fingerprints: Vec<String> = self.recorded.iter().map(|f| format!("{f:016x}")).collect();
        let state = serde_json::json!({
            "format": self.format.name(),
            "fingerprints": fingerprints,
            "starts": self.starts,
            "reply_recorded": self.reply_recorded,
            "messages": self.accounted,
            "pending": self.pending,
        });
        self.engine.set_metadata(RESUME_KEY, state);
        self.engine.set_metadata("proxy_calls", self.calls.into());
    }

    pub fn engine(&self) -> &Engine<H> {
        &self.engine
    }

    pub fn format(&self) -> Format {
        self.format
    }

    pub fn calls(&self) -> u64 {
        self.calls
    }

    /// How `request` relates to this session's history. A reply recorded at close stands for
    /// the agent's copy of it, whatever small differences the copy has.
    pub fn extension(&self, request: &ClientRequest) -> Extension {
        if request.format != self.format {
            return Extension::Departs { at: 0 };
        }
        let found = extension(&self.recorded, &request.fingerprints());
        match found {
            Extension::Departs { at } | Extension::Revises { at }
                if self.reply_recorded
                    && at + 1 == self.recorded.len()
                    && request.messages.get(at).is_some_and(ClientMessage::is_assistant) =>
            {
                if request.messages.len() == self.recorded.len() {
                    Extension::Repeats
                } else {
                    Extension::Extends { from: self.recorded.len() }
                }
            }
            // Only the conversation that got this session's last reply revises it (not a sibling
            // that starts alike), and only from a message whose id it noted (not one an older
            // build recorded).
            Extension::Revises { at } if self.start(at).is_none() || self.reply_copy(request, at).is_none() => {
                Extension::Departs { at }
            }
            other => other,
        }
    }

    /// How well `request` fits this session, to pick among sessions (the greater, the better): a
    /// session it extends before one it revises, each by how many recorded messages it keeps;
    /// `None` when it departs.
    pub fn fit(&self, request: &ClientRequest) -> Option<(bool, usize)> {
        match self.extension(request) {
            Extension::Extends { from } => Some((true, from)),
            Extension::Repeats => Some((true, request.messages.len())),
            Extension::Revises { at } => Some((false, at)),
            Extension::Departs { .. } => None,
        }
    }

    /// The engine's id of the first message recorded for the agent's message `at`.
    fn start(&self, at: usize) -> Option<&MessageId> {
        self.starts.get(at)?.as_ref()
    }

    /// Where `request` carries this session's last reply (the one waiting for the agent's copy,
    /// or the one recorded at close), from message `at` on.
    fn reply_copy(&self, request: &ClientRequest, at: usize) -> Option<usize> {
        let recorded;
        let reply = match &self.pending {
            Some(parts) => parts,
            None => {
                recorded = self.engine.last_message().filter(|m| self.reply_recorded && m.role == Role::Assistant)?;
                &recorded.content
            }
        };
        let carries = |m: &ClientMessage| m.is_assistant() && same_reply(&m.content(), reply);
        request.messages.iter().skip(at).position(carries).map(|k| at + k)
    }

    /// Record what `request` adds and prepare the engine's call, unsaved: the caller sends it,
    /// then saves ([`ProxySession::save`]) while it is on its way. Never fails: when the engine
    /// cannot prepare the call, the body is `None` and the agent's request goes through as it
    /// came (the messages stay recorded, so the session stays consistent).
    pub async fn prepare(&mut self, request: &ClientRequest) -> Prepared {
        let cut = self.record_cut_call().await;
        self.calls += 1;
        let counter = self.engine.counter();
        let mut record = CallRecord {
            trace_id: self.engine.trace_id().0,
            call: self.calls,
            at_ms: self.engine.host().now_ms(),
            model: request.model.clone(),
            agent: request.agent.clone(),
            stream: request.stream,
            messages: request.messages.len(),
            client_tokens: request.tokens(&counter),
            ..CallRecord::default()
        };
        record.notes.extend(
            cut.map(|call| format!("call {call} is recorded without its reply (the proxy stopped before it ended)")),
        );
        let extension = self.extension(request);
        if self.reply_recorded && !matches!(extension, Extension::Departs { .. }) {
            // The agent's copy of the reply recorded at close takes its place in the history.
            let at = self.recorded.len() - 1;
            self.recorded[at] = request.messages[at].fingerprint;
            self.reply_recorded = false;
        }
        match extension {
            Extension::Extends { from } => {
                let from = from + self.claim_restored(request, from, &mut record.notes);
                record.new_messages = request.messages.len() - from;
                self.record_messages(request, from, from, &mut record.notes);
            }
            Extension::Revises { at } => {
                record.new_messages = request.messages.len() - at;
                self.revise(request, at, &mut record.notes);
            }
            Extension::Repeats => {
                self.claim_restored(request, request.messages.len(), &mut record.notes);
                record.notes.push("a repeat of the previous request: nothing new recorded".into());
            }
            Extension::Departs { at } => {
                record.notes.push(format!("the request departs from this session's history at message {at}"));
                self.open = Some(record.clone());
                return Prepared { body: None, record };
            }
        }
        self.keep_resume_state();
        self.unsaved = true;
        let api = api(self.format);
        let input = CallInput {
            system_prompt: request.system_text.clone(),
            tools: request.tools.clone(),
            call: Some(self.calls),
            cache_ttl: (api.agent_cache_ttl)(request),
            choose_cache_ttl: api.chooses_cache_ttl,
            ..CallInput::default()
        };
        let body = match self.engine.prepare_call_unsaved(&input).await {
            Ok(assembly) => {
                record.managed = true;
                record.prompt_tokens = assembly.tokens;
                record.expected_cached_tokens = assembly.expected_cached_tokens;
                record.first_changed_byte = assembly.first_changed_byte;
                record.cost = Some(assembly.cost);
                record.rewrites =
                    assembly.rewrites.iter().map(|r| format!("{} {}..{}", r.mechanism, r.start, r.end)).collect();
                record.notes.extend(assembly.notes.iter().map(|n| format!("engine: {n}")));
                Some((api.upstream_body)(request, &assembly.view, assembly.cost.cache_ttl))
            }
            Err(e) => {
                record.prompt_tokens = record.client_tokens;
                record.notes.push(format!("the engine could not prepare the call ({}): {e}; sent unmanaged", e.code()));
                None
            }
        };
        self.open = Some(record.clone());
        self.engine.set_metadata(OPEN_CALL_KEY, serde_json::to_value(&record).unwrap_or_default());
        Prepared { body, record }
    }

    /// Record the call whose reply was never recorded ([`OPEN_CALL_KEY`]), once: its usage is
    /// unknown. Its line may be in `calls.jsonl` already (the proxy was killed after the reply,
    /// or after an earlier resume recorded it): then nothing is written; nor while `calls.jsonl`
    /// cannot be read (the next call tries again). Returns the call's number when it is
    /// recorded now.
    pub async fn record_cut_call(&mut self) -> Option<u64> {
        let mut record = self.cut_call.take()?;
        let (path, _) = self.line_of(&record)?;
        let Ok(written) = read_optional(self.engine.host(), &path).await else {
            self.cut_call = Some(record);
            return None;
        };
        self.engine.remove_metadata(OPEN_CALL_KEY);
        let written = written.unwrap_or_default();
        let same =
            |line: &str| serde_json::from_str::<CallRecord>(line).is_ok_and(|r| r.call == record.call && !r.side_call);
        if written.lines().any(same) {
            return None;
        }
        record.trace_id = self.engine.trace_id().0;
        record.notes.push("the reply was never recorded (the proxy stopped before it ended): no usage is known".into());
        self.save_record(&mut record).await;
        Some(record.call)
    }

    /// Save the trace as the call last prepared left it (a failure is a note on its record);
    /// nothing when it is saved.
    pub async fn save(&mut self) {
        if std::mem::take(&mut self.unsaved)
            && let Some(note) = self.engine.save_if_stored().await
        {
            self.note(format!("engine: {note}"));
        }
    }

    /// Save the whole session as it stands (the reply's usage included), for another process
    /// to take it over from the store: what a proxy on a shared store does after each call.
    /// The last completed reply waits for the agent's copy as it does here: a reply that calls
    /// tools is saved with the session's state (the copy the agent sends back with their results
    /// is what gets recorded, its call ids included), while the agent's answer, which no request
    /// may ever bring back, is recorded now, as at [`ProxySession::close`]. Not ended.
    pub async fn hand_over(&mut self) -> Option<String> {
        let answer =
            self.pending.as_ref().is_some_and(|parts| !parts.iter().any(|p| matches!(p, ContentPart::ToolCall(_))));
        if answer && let Err(e) = self.record_pending() {
            return Some(e.to_string());
        }
        self.keep_resume_state();
        self.engine.save_if_stored().await
    }

    /// Add a note to the record of the call in flight (what its caller decided about it).
    pub fn note(&mut self, note: String) {
        if let Some(record) = self.open.as_mut() {
            record.notes.push(note);
        }
    }

    /// The reply of the call last prepared: the trace is saved first if nothing saved it since
    /// the prepare, its usage goes to the engine (R10), a completed reply waits for the agent's
    /// copy, and the call's record is appended to the trace's `calls.jsonl`. Returns the record.
    pub async fn finish(&mut self, status: u16, outcome: ReplyOutcome) -> CallRecord {
        self.save().await;
        let mut record = self.open.take().unwrap_or_default();
        self.engine.remove_metadata(OPEN_CALL_KEY);
        record.status = Some(status);
        record.completed = outcome.completed;
        record.usage = outcome.usage;
        if let Some(error) = outcome.error {
            record.notes.push(error);
        }
        if let Some(note) = outcome.fallback {
            self.fell_back(&mut record, note).await;
        }
        let calls_tool = outcome.parts.iter().any(|p| matches!(p, ContentPart::ToolCall(_)));
        if outcome.completed && !calls_tool {
            record.turn_ended_at = Some(self.engine.host().now_ms());
        }
        if outcome.completed && !outcome.parts.is_empty() {
            self.pending = Some(outcome.parts);
        }
        if let (Some(usage), true) = (outcome.usage, record.managed) {
            self.engine.report_usage(usage.to_engine());
        }
        self.save_record(&mut record).await;
        record
    }

    /// The call went upstream as the agent sent it, since the upstream refused the engine's
    /// request as invalid: its record says so, and the trace keeps the refusals (`meta.json`'s
    /// `fallbacks`), so their cause can be found.
    async fn fell_back(&mut self, record: &mut CallRecord, note: String) {
        record.managed = false;
        record.prompt_tokens = record.client_tokens;
        record.expected_cached_tokens = 0;
        record.first_changed_byte = None;
        record.rewrites.clear();
        record.cost = None;
        let saved = self.engine.metadata(FALLBACKS_KEY).and_then(|v| serde_json::from_value(v).ok());
        let mut fallbacks: Vec<Fallback> = saved.unwrap_or_default();
        fallbacks.push(Fallback { call: record.call, why: note.clone() });
        self.engine.set_metadata(FALLBACKS_KEY, serde_json::to_value(fallbacks).unwrap_or_default());
        record.notes.push(note);
        if let Some(note) = self.engine.save_if_stored().await {
            record.notes.push(format!("engine: {note}"));
        }
    }

    /// Count the one-shot the session's conversation opened with ([`ClientRequest::opening`])
    /// as its first call: passed through as it came, before the conversation went on.
    pub async fn count_opening(&mut self, mut record: CallRecord) {
        self.calls += 1;
        record.trace_id = self.engine.trace_id().0;
        record.call = self.calls;
        record.at_ms = self.engine.host().now_ms();
        // Its reply passed unread; a reply with a success status came back whole: the
        // conversation went on with it.
        record.completed = record.answered();
        record.notes.push(
            "the conversation's first call: a one-shot when it came (no tools, no assistant turn), passed through; \
             counted once the conversation went on"
                .into(),
        );
        self.keep_resume_state();
        self.save_record(&mut record).await;
    }

    /// A side call of this session's agent ([`CallRecord::side_call`]), numbered after the
    /// session's latest call, with the `calls.jsonl` line that counts it (see [`Self::line_of`]).
    pub fn side_call(&self, mut record: CallRecord) -> (CallRecord, Option<(String, String)>) {
        record.trace_id = self.engine.trace_id().0;
        record.call = self.calls;
        record.at_ms = self.engine.host().now_ms();
        record.side_call = true;
        self.price(&mut record);
        let line = self.line_of(&record);
        (record, line)
    }

    /// Where `record` goes (the trace's `calls.jsonl`) and its line, redacted; `None` for a
    /// session without a store.
    fn line_of(&self, record: &CallRecord) -> Option<(String, String)> {
        let dir = self.engine.trace_dir()?;
        let (line, _) = self.redactor.redact_text(&serde_json::to_string(record).unwrap_or_default());
        Some((format!("{dir}/{CALLS_FILE}"), format!("{line}\n")))
    }

    /// Price `record` in dollars; a model without a price is a note on it.
    fn price(&self, record: &mut CallRecord) {
        match price_call(record, &self.engine.config().model_prices) {
            Ok(dollars) => record.dollars = Some(dollars),
            Err(why) => record.notes.push(why),
        }
    }

    /// Price `record` and append it to the trace's `calls.jsonl`; a failure is a note on it.
    /// A line the store does not take is kept and written before the next call's, in order.
    async fn save_record(&mut self, record: &mut CallRecord) {
        self.price(record);
        let Some((path, line)) = self.line_of(record) else { return };
        let lines = std::mem::take(&mut self.unsaved_calls) + &line;
        if let Err(e) = self.engine.host().append_file(&path, &lines).await {
            record.notes.push(format!("the call was not saved to {CALLS_FILE} yet (it is with the next): {e}"));
            self.unsaved_calls = lines;
        }
    }

    /// End the session: the last completed reply is recorded (the agent never sent it back)
    /// and the trace is saved, `finished` when the conversation ended with the agent's answer
    /// (a reply that calls no tool), else `stopped`.
    pub async fn close(&mut self) -> Result<()> {
        self.record_pending()?;
        let last = self.engine.last_message();
        let answered = last.is_some_and(|m| m.role == Role::Assistant && m.tool_calls().next().is_none());
        self.engine.end_session(if answered { SessionEnd::Finished } else { SessionEnd::Stopped });
        if self.engine.trace_dir().is_some() {
            self.engine.persist().await?;
        }
        Ok(())
    }

    /// Record the last completed reply, which waits for the agent's copy of it: the session is
    /// let go before that comes.
    fn record_pending(&mut self) -> Result<()> {
        if let Some(parts) = self.pending.take() {
            let id = self.engine.record(draft(Role::Assistant, parts.clone()))?;
            self.accounted += 1;
            self.recorded.push(ClientMessage::new(vec![draft(Role::Assistant, parts)]).fingerprint);
            self.starts.push(Some(id));
            self.reply_recorded = true;
            self.keep_resume_state();
        }
        Ok(())
    }

    /// Claim the messages restored past the saved state ([`ProxySession::resume`]) that
    /// `request` holds from its message `from` on, in order: they are recorded already, so only
    /// their fingerprints are taken. Those it does not hold (the agent never got the reply they
    /// led to, and sent something else) are withdrawn from the prompt. Returns how many of the
    /// request's messages were claimed.
    fn claim_restored(&mut self, request: &ClientRequest, from: usize, notes: &mut Vec<String>) -> usize {
        let restored = std::mem::take(&mut self.restored);
        let (mut taken, mut claimed) = (0, 0);
        for (i, message) in request.messages.iter().enumerate().skip(from) {
            let on_disk = &restored[taken..(taken + message.drafts.len()).min(restored.len())];
            if taken == restored.len() || !message.drafts.iter().zip(on_disk).all(|(d, saved)| self.saved_as(d, saved))
            {
                break;
            }
            // The save was cut inside this message: the rest of it is recorded now.
            self.record_drafts(i, &message.drafts[on_disk.len()..], notes);
            self.recorded.push(message.fingerprint);
            self.starts.push(on_disk.first().map(|m| m.id.clone()));
            (taken, claimed) = (taken + on_disk.len(), claimed + 1);
        }
        if claimed > 0 {
            notes.push(format!("{claimed} message(s) saved before a crash were on disk already: not recorded again"));
        }
        if let Some(first) = restored.get(taken) {
            let left = restored.len() - taken;
            match self.engine.withdraw_from(&first.id) {
                Ok(_) => notes.push(format!(
                    "{left} message(s) saved before a crash are not in the agent's history: withdrawn from the prompt"
                )),
                Err(e) => notes.push(format!("{left} message(s) saved before a crash could not be withdrawn: {e}")),
            }
        }
        self.accounted += restored.len();
        claimed
    }

    /// Whether `saved`, restored from disk, is what recording `draft` wrote: the same role (a user
    /// message may have been recorded as an observation) and content as redacted for the disk,
    /// or, for a reply recorded at close, the agent's copy of it ([`same_reply`]).
    fn saved_as(&self, draft: &MessageDraft, saved: &Message) -> bool {
        let role =
            draft.role == Some(saved.role) || (draft.role == Some(Role::User) && saved.role == Role::Observation);
        let mut content = serde_json::to_value(&draft.content).unwrap_or_default();
        self.redactor.redact_value(&mut content);
        let reply = saved.role == Role::Assistant && same_reply(&draft.content, &saved.content);
        role && (reply || serde_json::to_value(&saved.content).is_ok_and(|c| c == content))
    }

    /// Withdraw what was recorded from the agent's message `at` on ([`Engine::withdraw_from`])
    /// and record the request's version from there (messages restored past the saved state are
    /// withdrawn with them).
    fn revise(&mut self, request: &ClientRequest, at: usize, notes: &mut Vec<String>) {
        self.accounted += std::mem::take(&mut self.restored).len();
        let reply_at = self.reply_copy(request, at).unwrap_or(self.recorded.len());
        if let Some(from) = self.start(at).cloned() {
            match self.engine.withdraw_from(&from) {
                Ok(n) => notes.push(format!(
                    "the agent sent its history again changed from message {at} on: {n} recorded message(s) withdrawn, \
                     its version recorded"
                )),
                Err(e) => notes.push(format!("the recorded messages from {at} on could not be withdrawn: {e}")),
            }
        }
        self.recorded.truncate(at);
        self.starts.truncate(at);
        self.record_messages(request, at, reply_at, notes);
    }

    /// Record the request's messages from `from` on; the one at `reply_at` is normally the agent's
    /// copy of the last reply: that copy is what is recorded.
    fn record_messages(&mut self, request: &ClientRequest, from: usize, reply_at: usize, notes: &mut Vec<String>) {
        let pending = self.pending.take();
        for (i, message) in request.messages.iter().enumerate().skip(from) {
            if i == reply_at
                && let Some(reply) = &pending
            {
                if !message.is_assistant() {
                    notes.push("the agent did not keep the previous reply; it is not recorded".into());
                } else if !same_reply(&message.content(), reply) {
                    notes.push(
                        "the agent's copy of the previous reply differs from the upstream's; its copy is recorded"
                            .into(),
                    );
                }
            }
            let start = self.record_drafts(i, &message.drafts, notes);
            self.recorded.push(message.fingerprint);
            self.starts.push(start);
        }
    }

    /// Record the drafts of the agent's message `i`; returns the id of the first recorded.
    fn record_drafts(&mut self, i: usize, drafts: &[MessageDraft], notes: &mut Vec<String>) -> Option<MessageId> {
        let mut start = None;
        for draft in drafts {
            match self.engine.record(draft.clone()) {
                Ok(id) => {
                    self.accounted += 1;
                    start = start.or(Some(id));
                }
                Err(e) => notes.push(format!("message {i} was not recorded ({}): {e}", e.code())),
            }
        }
        start
    }
}

/// Whether the agent's copy of a reply is the reply: the same texts, and calls of the same names
/// and ids (agents may fill in defaults in a call's input, as Claude Code does for `Edit`; a
/// call the model made without an id may have one in the copy, as Gemini CLI gives them).
fn same_reply(copy: &[ContentPart], reply: &[ContentPart]) -> bool {
    let (copy, reply) = (outline(copy), outline(reply));
    copy.len() == reply.len()
        && copy.iter().zip(&reply).all(|((text, id), (reply_text, reply_id))| {
            text == reply_text && (id == reply_id || reply_id.as_deref().is_some_and(|r| r.starts_with(UNNAMED_CALL)))
        })
}

/// A reply's texts and calls: (text or name, call id).
fn outline(parts: &[ContentPart]) -> Vec<(&str, Option<&str>)> {
    parts
        .iter()
        .filter_map(|part| match part {
            ContentPart::Text { text } if !text.trim().is_empty() => Some((text.as_str(), None)),
            ContentPart::ToolCall(call) => Some((call.name.as_str(), Some(call.id.as_str()))),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_of_fingerprints() {
        assert_eq!(extension(&[], &[1]), Extension::Extends { from: 0 });
        assert_eq!(extension(&[1, 2], &[1, 2, 3, 4]), Extension::Extends { from: 2 });
        assert_eq!(extension(&[1, 2], &[1, 2]), Extension::Repeats);
        assert_eq!(extension(&[1, 2], &[1, 3, 4]), Extension::Revises { at: 1 });
        assert_eq!(extension(&[1, 2, 3], &[1, 3, 4]), Extension::Departs { at: 1 });
        assert_eq!(extension(&[1, 2, 3], &[1, 2]), Extension::Departs { at: 2 });
        assert_eq!(extension(&[1, 2], &[3, 4, 5]), Extension::Departs { at: 0 });
    }
}
