//! One request through the proxy as a sans-IO state machine: the shell feeds it what happened
//! ([`Event`]: the body read, what the gateway read of it, the conversation's turn, the
//! upstream's answer or failure, a piece of the reply, the reply's end, the call recorded) and
//! carries out what it returns ([`Effect`]: read the body, answer, send upstream, prepare, relay,
//! log, end). Every decision, text and order is here, once; `workbench proxy` (tokio) and the npm
//! package's proxy (node:http) interpret the effects.
//!
//! A request goes: [`Exchange::begin`] → `ReadBody` → [`Event::BodyRead`] → `Read` →
//! [`Event::Read`] → an answer, or `Send` (forwarded) or `TakeTurn` → [`Event::TurnTaken`] →
//! `Prepare` → [`Event::Prepared`] → `Send` (managed) → [`Event::Answered`] → `Respond` → each
//! piece through [`Exchange::relay`] (`Give`, and `Finish` once the reply is whole) →
//! [`Event::Ended`] → `AwaitRecord` → [`Event::Recorded`] → `EndReply`, the call's log line, `Done`.
//!
//! The safety net: when the upstream answers the engine's request 400, the exchange reads the
//! refusal (`ReadReply` → [`Event::ReplyRead`]) before the agent sees anything. A refusal as
//! invalid that the agent's own request would not meet too (not one of the prompt's length)
//! sends the agent's own request once instead (`Send`, not prepared), whose reply answers the
//! agent and is recorded with a note saying so; any other refusal is recorded and answered as
//! it came.

use serde::{Deserialize, Serialize};

use super::gateway::{Answer, Gateway, RequestHead, SideCall, Verdict};
use super::pump::{Cause, End, Failure, ReplyPump, no_reply};
use super::record::CallRecord;
use super::reply::ReplyOutcome;
use super::request::SessionKey;
use super::route::Route;
use super::team::Team;

/// A body longer than this is read off the shell's event loop (about a millisecond's parse).
pub const READ_AWAY_BYTES: usize = 64 * 1024;

/// The most of an upstream's refusal the safety net reads; a longer one is no refusal it knows.
pub const REFUSAL_BYTES: usize = 1 << 20;

/// What happened, as the shell tells the exchange.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ExchangeEvent"))]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The body arrived whole, `bytes` long.
    BodyRead { bytes: usize },
    /// The body was over the limit, or the agent cut it short.
    BodyRefused,
    /// The body did not arrive within the timeout.
    BodyTimedOut,
    /// What the gateway read of the body ([`Gateway::read`], as plain data).
    Read {
        #[cfg_attr(test, ts(type = "unknown"))]
        verdict: Verdict,
    },
    /// The body could not be read (the engine failed on it).
    Unreadable { why: String },
    /// The conversation's turn is the request's; `notes`: what a key closed to make room for it
    /// could not save.
    TurnTaken { notes: Vec<String> },
    /// The call is prepared: `rewritten`, the engine's body goes upstream, else the agent's.
    Prepared { rewritten: bool },
    /// The conversation's engine is gone: the request goes as it came.
    SessionGone { why: String },
    /// The upstream answered with these headers.
    Answered { status: u16, content_type: Option<String>, content_length: Option<u64> },
    /// The upstream gave no reply.
    Failed { failure: Failure },
    /// The upstream's reply, read whole for `ReadReply` (as UTF-8, lossily).
    ReplyRead { body: String },
    /// The reply's body ended.
    Ended { end: End },
    /// The session recorded the call, with its trace id (none: no reply was handed to it).
    Recorded {
        #[cfg_attr(test, ts(type = "(ProxyCallRecord & { trace_id: string }) | null"))]
        record: Option<Box<CallRecord>>,
    },
    /// The session was handed the reply but could not record it (`why`: its thread is gone,
    /// or the engine refused the outcome).
    NotRecorded { why: String },
    /// The shell failed unexpectedly (`why`).
    Broke { why: String },
}

/// What the shell is to do, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ExchangeEffect"))]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum Effect {
    /// Read at most `limit` bytes of body within `timeout_ms`; then [`Event::BodyRead`],
    /// [`Event::BodyRefused`] or [`Event::BodyTimedOut`].
    ReadBody { limit: usize, timeout_ms: u64 },
    /// Read the body with [`Gateway::read`] (`away`: off the event loop); then [`Event::Read`]
    /// or [`Event::Unreadable`].
    Read { away: bool },
    /// Write this line to the log.
    Log { line: String },
    /// Answer with this status and JSON body; `close`: the connection is not kept alive, and a
    /// body still unread is first read and dropped for at most `drain_ms` (an agent still
    /// sending it then reads the answer, not a reset). The exchange is over.
    Answer { status: u16, body: String, close: bool, drain_ms: u64 },
    /// Wait for the conversation `key`'s turn (one request of a conversation at a time, its reply
    /// included), making room in the session table; then [`Event::TurnTaken`].
    TakeTurn { key: SessionKey },
    /// Record the request in its conversation and prepare the call, with `notes` on its record
    /// and `opening`, the one-shot the conversation opened with; then [`Event::Prepared`] or
    /// [`Event::SessionGone`].
    Prepare {
        key: SessionKey,
        notes: Vec<String>,
        #[cfg_attr(test, ts(type = "ProxyCallRecord | null"))]
        opening: Option<Box<CallRecord>>,
    },
    /// Count this answered side call in the latest conversation of the agent's session.
    CountSideCall {
        agent_session: String,
        #[cfg_attr(test, ts(type = "ProxyCallRecord"))]
        record: Box<CallRecord>,
    },
    /// Send the request to `url` with the headers that cross (`plain`: the reply wanted
    /// uncompressed) and the engine's body when `prepared`, else the agent's; then
    /// [`Event::Answered`] or [`Event::Failed`] (`AgentGone` when the agent closes its connection
    /// meanwhile: the upstream's call is dropped).
    Send { url: String, prepared: bool, plain: bool },
    /// Read the upstream's reply whole, at most `limit` bytes, without answering the agent; then
    /// [`Event::ReplyRead`], or [`Event::Ended`] when it did not come whole (it broke off or ran
    /// over the limit: `broke_off`; went silent; the proxy stopped; the agent left).
    ReadReply { limit: usize },
    /// Answer with the upstream's status and the headers that cross; then pass each piece of its
    /// body through [`Exchange::relay`], and [`Event::Ended`] at its end.
    Respond { status: u16 },
    /// Give the agent the piece just relayed, as it came.
    Give,
    /// Give the agent these bytes (an error event closing a stream cut short).
    GiveText { text: String },
    /// Hand the reply to its session, without waiting: the record comes with `AwaitRecord`.
    Finish {
        status: u16,
        #[cfg_attr(test, ts(type = "unknown"))]
        outcome: Box<ReplyOutcome>,
    },
    /// Once the session has the reply: [`Event::Recorded`].
    AwaitRecord,
    /// End the agent's reply.
    EndReply,
    /// The call is recorded: the shell tells an embedder that wants each record (the record
    /// it passed in with [`Event::Recorded`]), and `--otlp` exports [`Exchange::span`].
    Called,
    /// Close the agent's connection (the reply cannot be completed).
    Close,
    /// The exchange is over: its turn, if it took one, is released.
    Done,
}

/// Where an exchange is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Body,
    Reading,
    Turn,
    Preparing,
    Sending,
    /// Reading the upstream's refusal of the engine's request.
    Refused,
    Relaying,
    Recording,
    Over,
}

/// One request on its way through the proxy.
#[derive(Debug)]
pub struct Exchange {
    head: RequestHead,
    route: Route,
    /// The team member it signed in as (team mode).
    person: Option<String>,
    stage: Stage,
    /// Why it is forwarded as it came (`None`: managed).
    why: Option<String>,
    side: Option<SideCall>,
    key: Option<SessionKey>,
    opening: Option<Box<CallRecord>>,
    pump: Option<ReplyPump>,
    /// The engine's body went upstream (not the agent's).
    rewritten: bool,
    /// The safety net sent the agent's own request instead: the note its record carries.
    fallback: Option<String>,
    /// The reply's status, once the upstream answered.
    status: u16,
    /// Whether the agent has the reply's head.
    responded: bool,
    /// The answer to give once a call the upstream gave no reply to is recorded.
    unanswered: Option<(u16, String)>,
    /// The call as its session recorded it.
    record: Option<Box<CallRecord>>,
}

impl Exchange {
    /// A request with `head`, arriving while the proxy runs or (`stopping`) stops.
    pub fn begin(gateway: &Gateway, head: RequestHead, stopping: bool) -> (Exchange, Vec<Effect>) {
        Exchange::begin_signed(gateway, head, stopping, None)
    }

    /// [`Exchange::begin`] in team mode when `team` is given: the request must sign in
    /// ([`Gateway::sign_in`]) or is answered 401, before its body is read.
    pub fn begin_signed(
        gateway: &Gateway,
        mut head: RequestHead,
        stopping: bool,
        team: Option<&Team>,
    ) -> (Exchange, Vec<Effect>) {
        let signed = team.map(|team| gateway.sign_in(&mut head, team)).transpose();
        let route = gateway.route(&head);
        let mut exchange = Exchange {
            head,
            route,
            person: None,
            stage: Stage::Body,
            why: None,
            side: None,
            key: None,
            opening: None,
            pump: None,
            rewritten: false,
            fallback: None,
            status: 0,
            responded: false,
            unanswered: None,
            record: None,
        };
        let refusal = match (gateway.forbidden(&exchange.head, route), signed) {
            (Some(answer), _) | (None, Err(answer)) => Err(answer),
            (None, Ok(_)) if stopping => Err(gateway.stopping(&exchange.head, route)),
            (None, Ok(person)) => {
                exchange.person = person;
                gateway.admit(&exchange.head, route)
            }
        };
        let effects = match refusal {
            Ok(limit) => vec![Effect::ReadBody { limit, timeout_ms: gateway.limits().body_timeout_ms }],
            Err(answer) => exchange.answer(gateway, answer, true),
        };
        (exchange, effects)
    }

    pub fn head(&self) -> &RequestHead {
        &self.head
    }

    pub fn route(&self) -> Route {
        self.route
    }

    /// The span of this exchange's recorded call (after `Called`), whose reply ended at
    /// `end_ms`: what `--otlp` exports.
    pub fn span(&self, end_ms: u64) -> Option<super::telemetry::CallSpan> {
        let record = self.record.as_deref()?;
        Some(super::telemetry::call_span(record, &record.trace_id, self.route.provider(), end_ms))
    }

    /// The team member the request signed in as (team mode), for [`Gateway::read_as`].
    pub fn person(&self) -> Option<&str> {
        self.person.as_deref()
    }

    /// A managed exchange's conversation.
    pub fn key(&self) -> Option<&SessionKey> {
        self.key.as_ref()
    }

    /// Whether the exchange is over (its last effect was `Done`).
    pub fn is_over(&self) -> bool {
        self.stage == Stage::Over
    }

    /// What the exchange does after `event`. An event it does not expect where it is ends it:
    /// answered as a failure of the proxy's when the agent has no reply yet, else closed.
    pub fn step(&mut self, gateway: &Gateway, event: Event) -> Vec<Effect> {
        match (self.stage, event) {
            (Stage::Body, Event::BodyRead { bytes }) => {
                self.stage = Stage::Reading;
                vec![Effect::Read { away: bytes > READ_AWAY_BYTES }]
            }
            (Stage::Body, Event::BodyRefused) => {
                self.answer(gateway, gateway.body_refused(&self.head, self.route), false)
            }
            (Stage::Body, Event::BodyTimedOut) => {
                self.answer(gateway, gateway.body_timed_out(&self.head, self.route), true)
            }
            (Stage::Reading, Event::Read { verdict }) => self.read(gateway, verdict),
            (Stage::Reading, Event::Unreadable { why }) => {
                self.forward(gateway, format!("unreadable by the engine ({why}), passed through"))
            }
            (Stage::Turn, Event::TurnTaken { notes }) => match self.key.clone() {
                Some(key) => {
                    self.stage = Stage::Preparing;
                    vec![Effect::Prepare { key, notes, opening: self.opening.take() }]
                }
                None => self.broke(gateway, "a turn was taken without a conversation"),
            },
            (Stage::Preparing, Event::Prepared { rewritten }) => {
                self.stage = Stage::Sending;
                self.rewritten = rewritten;
                vec![Effect::Send {
                    url: gateway.upstream_url(self.route, &self.head),
                    prepared: rewritten,
                    plain: true,
                }]
            }
            (Stage::Preparing, Event::SessionGone { why }) => {
                self.key = None;
                self.forward(gateway, format!("the session is gone ({why}), passed through"))
            }
            (Stage::Sending, Event::Answered { status, content_type, content_length }) => {
                self.answered(gateway, status, content_type.as_deref(), content_length)
            }
            (Stage::Sending, Event::Failed { failure }) => self.failed(gateway, failure),
            (Stage::Refused, Event::ReplyRead { body }) => self.refused(gateway, body),
            (Stage::Refused, Event::Ended { end }) => self.failed(gateway, end.failure()),
            (Stage::Relaying, Event::Ended { end }) => self.ended(gateway, end),
            (Stage::Recording, Event::Recorded { record }) => self.recorded(gateway, Ok(record)),
            (Stage::Recording, Event::NotRecorded { why }) => self.recorded(gateway, Err(why)),
            (_, Event::Broke { why }) => self.broke(gateway, &why),
            (stage, event) => self.broke(gateway, &format!("{event:?} was not expected at {stage:?}")),
        }
    }

    /// A piece of the reply's body: given to the agent as it came; the reply goes to its
    /// session once this piece made it whole.
    pub fn relay(&mut self, gateway: &Gateway, bytes: &[u8]) -> Vec<Effect> {
        let whole = self.pump.as_mut().and_then(|pump| pump.feed(bytes, gateway.counter()));
        match whole {
            Some(outcome) => vec![self.finish(self.status, outcome), Effect::Give],
            None => vec![Effect::Give],
        }
    }

    fn read(&mut self, gateway: &Gateway, verdict: Verdict) -> Vec<Effect> {
        match verdict {
            Verdict::Forward { why, side } => {
                self.side = side.map(|side| *side);
                self.forward(gateway, why)
            }
            Verdict::Manage { key } => {
                self.opening = gateway.opening(&key).map(Box::new);
                self.key = Some(key.clone());
                self.stage = Stage::Turn;
                vec![Effect::TakeTurn { key }]
            }
            Verdict::Answer { answer } => {
                gateway.count_request();
                self.answer(gateway, answer, false)
            }
        }
    }

    fn forward(&mut self, gateway: &Gateway, why: String) -> Vec<Effect> {
        self.why = Some(why);
        self.stage = Stage::Sending;
        vec![Effect::Send { url: gateway.upstream_url(self.route, &self.head), prepared: false, plain: false }]
    }

    fn answered(
        &mut self,
        gateway: &Gateway,
        status: u16,
        content_type: Option<&str>,
        content_length: Option<u64>,
    ) -> Vec<Effect> {
        self.status = status;
        if self.why.is_none() && self.rewritten && self.fallback.is_none() && status == 400 {
            self.stage = Stage::Refused;
            return vec![Effect::ReadReply { limit: REFUSAL_BYTES }];
        }
        self.stage = Stage::Relaying;
        self.responded = true;
        let Some(why) = &self.why else {
            let pump = |format| gateway.reply_pump(format, status, content_type, content_length);
            self.pump = self.route.managed().map(pump);
            return vec![Effect::Respond { status }];
        };
        let mut effects = vec![Effect::Log { line: gateway.forwarded(&self.head, why, status) }];
        if let Some((agent_session, record)) = self.side.take().and_then(|s| gateway.side_call_answered(s, status)) {
            effects.push(Effect::CountSideCall { agent_session, record: Box::new(record) });
        }
        effects.push(Effect::Respond { status });
        effects
    }

    fn failed(&mut self, gateway: &Gateway, failure: Failure) -> Vec<Effect> {
        if let Some(why) = &self.why {
            let answer = gateway.forward_failed(&self.head, self.route, why, failure);
            return self.answer(gateway, answer, false);
        }
        // The call is recorded with why it got no reply, then answered.
        let (status, body, why) = gateway.call_failed(&self.head, self.route, failure);
        self.record_then_answer(status, body, no_reply(why))
    }

    /// The upstream refused the engine's request with `body`: the agent's own goes instead, or
    /// the refusal is recorded and answered as it came.
    fn refused(&mut self, gateway: &Gateway, body: String) -> Vec<Effect> {
        if let Some((line, note)) = gateway.fallback(&self.head, self.route, &body) {
            self.fallback = Some(note);
            self.stage = Stage::Sending;
            let url = gateway.upstream_url(self.route, &self.head);
            return vec![Effect::Log { line }, Effect::Send { url, prepared: false, plain: true }];
        }
        let Some(format) = self.route.managed() else {
            return self.failed(gateway, Failure::Unreachable(Cause::Other));
        };
        let mut pump = gateway.reply_pump(format, self.status, Some("application/json"), None);
        let outcome = pump.feed(body.as_bytes(), gateway.counter());
        let outcome = outcome.or_else(|| pump.end(End::Done, gateway.counter()).outcome).unwrap_or_default();
        self.record_then_answer(self.status, body, outcome)
    }

    /// Record the call with `outcome`, then answer the agent `status` and `body`.
    fn record_then_answer(&mut self, status: u16, body: String, outcome: ReplyOutcome) -> Vec<Effect> {
        self.unanswered = Some((status, body));
        self.stage = Stage::Recording;
        vec![self.finish(status, outcome), Effect::AwaitRecord]
    }

    /// Hand the reply to its session, with the safety net's note when it answers the agent's
    /// own request.
    fn finish(&self, status: u16, mut outcome: ReplyOutcome) -> Effect {
        outcome.fallback.clone_from(&self.fallback);
        Effect::Finish { status, outcome: Box::new(outcome) }
    }

    fn ended(&mut self, gateway: &Gateway, end: End) -> Vec<Effect> {
        let Some(pump) = self.pump.take() else {
            self.stage = Stage::Over;
            return vec![Effect::EndReply, Effect::Done];
        };
        let ending = pump.end(end, gateway.counter());
        let mut effects: Vec<Effect> = ending.trailer.map(|text| Effect::GiveText { text }).into_iter().collect();
        if let Some(outcome) = ending.outcome {
            effects.push(self.finish(self.status, outcome));
        }
        self.stage = Stage::Recording;
        effects.push(Effect::AwaitRecord);
        effects
    }

    /// The session's answer to the reply it was handed: its record, none (no reply was), or why
    /// it could not record one.
    fn recorded(&mut self, gateway: &Gateway, record: Result<Option<Box<CallRecord>>, String>) -> Vec<Effect> {
        self.stage = Stage::Over;
        let mut effects = Vec::new();
        if self.responded {
            effects.push(Effect::EndReply);
        }
        match record {
            Ok(Some(record)) => {
                effects.push(Effect::Log { line: gateway.call_line(&record) });
                effects.push(Effect::Called);
                self.record = Some(record);
            }
            Ok(None) => {}
            Err(why) => effects.push(Effect::Log { line: gateway.unrecorded_line(&self.head, &why) }),
        }
        if let Some((status, body)) = self.unanswered.take() {
            effects.push(Effect::Answer { status, body, close: false, drain_ms: 0 });
        }
        effects.push(Effect::Done);
        effects
    }

    fn broke(&mut self, gateway: &Gateway, why: &str) -> Vec<Effect> {
        let answer = gateway.internal_error(&self.head, self.route, why);
        if self.responded || self.stage == Stage::Over {
            self.stage = Stage::Over;
            return vec![Effect::Log { line: answer.line }, Effect::Close, Effect::Done];
        }
        self.answer(gateway, answer, true)
    }

    fn answer(&mut self, gateway: &Gateway, answer: Answer, close: bool) -> Vec<Effect> {
        self.stage = Stage::Over;
        let drain_ms = if close { gateway.drain_ms() } else { 0 };
        vec![
            Effect::Log { line: answer.line },
            Effect::Answer { status: answer.status, body: answer.body, close, drain_ms },
            Effect::Done,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::proxy::args::Shell;
    use crate::proxy::upstreams::Upstreams;

    fn gateway() -> Gateway {
        let mut config = Config::default();
        config.proxy.max_body_bytes = 1000;
        Gateway::new(&config, Upstreams::default(), Shell::Native)
    }

    fn head(target: &str, headers: &[(&str, &str)]) -> RequestHead {
        let headers = headers.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
        RequestHead { method: "POST".into(), target: target.into(), headers }
    }

    const MESSAGES: &str = r#"{"model":"m","max_tokens":9,"tools":[{"name":"bash","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"fix the bug"}]}"#;

    /// Runs `head` with `body` through the gateway's read, as a shell would.
    fn read(gateway: &Gateway, exchange: &mut Exchange, body: &str) -> Vec<Effect> {
        let effects = exchange.step(gateway, Event::BodyRead { bytes: body.len() });
        assert_eq!(effects, vec![Effect::Read { away: false }]);
        let (verdict, _) = gateway.read(exchange.head(), exchange.route(), body.as_bytes()).into_parts();
        exchange.step(gateway, Event::Read { verdict })
    }

    fn names(effects: &[Effect]) -> Vec<&'static str> {
        effects
            .iter()
            .map(|e| match e {
                Effect::ReadBody { .. } => "read_body",
                Effect::Read { .. } => "read",
                Effect::Log { .. } => "log",
                Effect::Answer { .. } => "answer",
                Effect::TakeTurn { .. } => "take_turn",
                Effect::Prepare { .. } => "prepare",
                Effect::CountSideCall { .. } => "count_side_call",
                Effect::Send { .. } => "send",
                Effect::ReadReply { .. } => "read_reply",
                Effect::Respond { .. } => "respond",
                Effect::Give => "give",
                Effect::GiveText { .. } => "give_text",
                Effect::Finish { .. } => "finish",
                Effect::AwaitRecord => "await_record",
                Effect::EndReply => "end_reply",
                Effect::Called => "called",
                Effect::Close => "close",
                Effect::Done => "done",
            })
            .collect()
    }

    #[test]
    fn a_managed_call_is_read_prepared_sent_relayed_and_recorded_in_order() {
        let gateway = gateway();
        let (mut exchange, effects) = Exchange::begin(&gateway, head("/v1/messages", &[("x-api-key", "k")]), false);
        assert_eq!(effects, vec![Effect::ReadBody { limit: 1000, timeout_ms: gateway.limits().body_timeout_ms }]);
        let effects = read(&gateway, &mut exchange, MESSAGES);
        let Some(Effect::TakeTurn { key }) = effects.first().cloned() else { panic!("{effects:?}") };
        let effects = exchange.step(&gateway, Event::TurnTaken { notes: vec!["evicted".into()] });
        assert!(
            matches!(&effects[..], [Effect::Prepare { key: k, notes, opening: None }] if *k == key && notes == &["evicted"])
        );
        let effects = exchange.step(&gateway, Event::Prepared { rewritten: true });
        assert_eq!(
            effects,
            vec![Effect::Send { url: "https://api.anthropic.com/v1/messages".into(), prepared: true, plain: true }]
        );
        let answered =
            Event::Answered { status: 200, content_type: Some("application/json".into()), content_length: None };
        assert_eq!(names(&exchange.step(&gateway, answered)), ["respond"]);
        let reply = r#"{"id":"m1","type":"message","role":"assistant","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}}"#;
        assert_eq!(names(&exchange.relay(&gateway, reply.as_bytes())), ["give"]);
        // Without a declared length the upstream's end makes it whole: the session has it, then the reply ends.
        let effects = exchange.step(&gateway, Event::Ended { end: End::Done });
        assert_eq!(names(&effects), ["finish", "await_record"]);
        let record = CallRecord { trace_id: "t".into(), call: 1, managed: true, ..CallRecord::default() };
        let effects = exchange.step(&gateway, Event::Recorded { record: Some(Box::new(record)) });
        assert_eq!(names(&effects), ["end_reply", "log", "called", "done"]);
        assert!(exchange.is_over());
        assert!(gateway.progress().starts_with("1 requests, 1 managed"), "{}", gateway.progress());
    }

    #[test]
    fn a_reply_its_session_could_not_record_ends_and_is_logged_with_why() {
        let gateway = gateway();
        let mut exchange = sent(&gateway, true);
        let answered =
            Event::Answered { status: 200, content_type: Some("application/json".into()), content_length: None };
        exchange.step(&gateway, answered);
        exchange.step(&gateway, Event::Ended { end: End::Done });
        let effects = exchange.step(&gateway, Event::NotRecorded { why: "its session thread stopped".into() });
        let [Effect::EndReply, Effect::Log { line }, Effect::Done] = &effects[..] else { panic!("{effects:?}") };
        assert!(line.ends_with("POST /v1/messages: the reply was not recorded: its session thread stopped"), "{line}");
        assert!(exchange.is_over() && exchange.span(1).is_none());
        assert!(gateway.progress().starts_with("1 requests"), "counted: {}", gateway.progress());
    }

    #[test]
    fn a_managed_call_the_upstream_never_answers_is_recorded_then_answered_in_the_providers_shape() {
        let gateway = gateway();
        let (mut exchange, _) = Exchange::begin(&gateway, head("/v1/chat/completions", &[]), false);
        let body = r#"{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"on it"},{"role":"user","content":"go"}]}"#;
        assert_eq!(names(&read(&gateway, &mut exchange, body)), ["take_turn"]);
        exchange.step(&gateway, Event::TurnTaken { notes: Vec::new() });
        exchange.step(&gateway, Event::Prepared { rewritten: false });
        let effects = exchange.step(&gateway, Event::Failed { failure: Failure::Timeout });
        let [Effect::Finish { status: 504, outcome }, Effect::AwaitRecord] = &effects[..] else {
            panic!("{effects:?}")
        };
        assert_eq!(outcome.error.as_deref(), Some("the upstream did not answer in time"));
        let effects = exchange.step(&gateway, Event::Recorded { record: None });
        let [Effect::Answer { status: 504, body, close: false, .. }, Effect::Done] = &effects[..] else {
            panic!("{effects:?}")
        };
        assert!(body.contains("did not answer in time") && body.contains("\"error\""), "{body}");
    }

    /// An exchange at the point where the engine's body went upstream (`rewritten`) or the agent's.
    fn sent(gateway: &Gateway, rewritten: bool) -> Exchange {
        let (mut exchange, _) = Exchange::begin(gateway, head("/v1/messages", &[("x-api-key", "k")]), false);
        read(gateway, &mut exchange, MESSAGES);
        exchange.step(gateway, Event::TurnTaken { notes: Vec::new() });
        exchange.step(gateway, Event::Prepared { rewritten });
        exchange
    }

    const REFUSED: Event = Event::Answered { status: 400, content_type: None, content_length: None };

    #[test]
    fn an_engines_request_refused_as_invalid_sends_the_agents_own_once_and_its_reply_says_so() {
        let gateway = gateway();
        let mut exchange = sent(&gateway, true);
        assert_eq!(exchange.step(&gateway, REFUSED), vec![Effect::ReadReply { limit: REFUSAL_BYTES }]);
        let refusal = r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.2.content.0: unexpected `tool_use_id`"}}"#;
        let effects = exchange.step(&gateway, Event::ReplyRead { body: refusal.into() });
        let [Effect::Log { line }, Effect::Send { prepared: false, plain: true, .. }] = &effects[..] else {
            panic!("{effects:?}")
        };
        assert!(line.contains("refused the engine's request as invalid (messages.2.content.0"), "{line}");
        // The agent's own request is refused too: that answer stands, and there is no second fallback.
        assert_eq!(names(&exchange.step(&gateway, REFUSED)), ["respond"]);
        let effects = exchange.step(&gateway, Event::Ended { end: End::Done });
        let [Effect::Finish { status: 400, outcome }, Effect::AwaitRecord] = &effects[..] else {
            panic!("{effects:?}")
        };
        assert!(outcome.fallback.as_deref().is_some_and(|n| n.contains("the agent's own request was sent instead")));
    }

    #[test]
    fn a_refusal_the_agents_own_request_would_meet_too_is_recorded_and_answered_as_it_came() {
        let gateway = gateway();
        let too_long = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 201000 tokens > 200000 maximum"}}"#;
        let overloaded = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        for refusal in [too_long, overloaded] {
            let mut exchange = sent(&gateway, true);
            exchange.step(&gateway, REFUSED);
            let effects = exchange.step(&gateway, Event::ReplyRead { body: refusal.into() });
            let [Effect::Finish { status: 400, outcome }, Effect::AwaitRecord] = &effects[..] else {
                panic!("{effects:?}")
            };
            assert!(outcome.fallback.is_none() && !outcome.completed, "{outcome:?}");
            let effects = exchange.step(&gateway, Event::Recorded { record: None });
            let [Effect::Answer { status: 400, body, close: false, .. }, Effect::Done] = &effects[..] else {
                panic!("{effects:?}")
            };
            assert_eq!(body, refusal);
        }
        // The agent's own request refused: nothing to fall back to, the refusal passes as it comes.
        let mut exchange = sent(&gateway, false);
        assert_eq!(names(&exchange.step(&gateway, REFUSED)), ["respond"]);
    }

    #[test]
    fn a_request_or_a_project_can_be_left_unmanaged() {
        let gateway = gateway();
        let off = [("x-api-key", "k"), ("x-workbench", "off")];
        let (mut exchange, _) = Exchange::begin(&gateway, head("/v1/messages", &off), false);
        let effects = read(&gateway, &mut exchange, MESSAGES);
        assert!(matches!(&effects[..], [Effect::Send { prepared: false, plain: false, .. }]), "{effects:?}");
        let answered = Event::Answered { status: 200, content_type: None, content_length: None };
        let Effect::Log { line } = &exchange.step(&gateway, answered)[0] else { panic!("no log line") };
        assert_eq!(
            line,
            "workbench proxy: POST /v1/messages: unmanaged (x-workbench: off), passed through, status 200"
        );
        assert!(!crate::proxy::gateway::passes_to_upstream("X-Workbench", false), "the proxy's header stays here");
        let mut config = Config::default();
        config.proxy.manage = false;
        let unmanaged = Gateway::new(&config, Upstreams::default(), Shell::Native);
        let (mut exchange, _) = Exchange::begin(&unmanaged, head("/v1/messages", &[("x-api-key", "k")]), false);
        let effects = read(&unmanaged, &mut exchange, MESSAGES);
        assert!(matches!(&effects[..], [Effect::Send { prepared: false, .. }]), "{effects:?}");
    }

    #[test]
    fn a_side_call_is_forwarded_logged_and_counted_in_its_session() {
        let gateway = gateway();
        let headers = [("x-api-key", "k"), ("x-claude-code-session-id", "s1")];
        let (mut exchange, _) = Exchange::begin(&gateway, head("/v1/messages", &headers), false);
        let side = r#"{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"a title please"}]}"#;
        let effects = read(&gateway, &mut exchange, side);
        assert!(matches!(&effects[..], [Effect::Send { prepared: false, plain: false, .. }]), "{effects:?}");
        let effects =
            exchange.step(&gateway, Event::Answered { status: 200, content_type: None, content_length: None });
        assert_eq!(names(&effects), ["log", "count_side_call", "respond"]);
        let Effect::Log { line } = &effects[0] else { unreachable!() };
        assert_eq!(line, "workbench proxy: POST /v1/messages: side call, passed through, status 200");
        assert_eq!(names(&exchange.relay(&gateway, b"{}")), ["give"]);
        assert_eq!(names(&exchange.step(&gateway, Event::Ended { end: End::Done })), ["end_reply", "done"]);
    }

    #[test]
    fn refusals_answer_in_the_providers_shape_and_say_whether_the_connection_stays() {
        let gateway = gateway();
        let (_, effects) = Exchange::begin(&gateway, head("/v1/messages", &[("content-length", "1001")]), false);
        assert!(matches!(
            &effects[..],
            [Effect::Log { .. }, Effect::Answer { status: 413, close: true, .. }, Effect::Done]
        ));
        let (_, effects) = Exchange::begin(&gateway, head("/v1/messages", &[("content-length", "1001")]), true);
        let [Effect::Log { line }, Effect::Answer { status: 503, .. }, Effect::Done] = &effects[..] else {
            panic!("a stopping proxy refuses first: {effects:?}")
        };
        assert_eq!(line, "workbench proxy: POST /v1/messages: refused, the proxy is stopping");
        let (mut exchange, _) = Exchange::begin(&gateway, head("/v1/messages", &[]), false);
        let effects = exchange.step(&gateway, Event::BodyTimedOut);
        assert!(matches!(
            &effects[..],
            [Effect::Log { .. }, Effect::Answer { status: 408, close: true, .. }, Effect::Done]
        ));
        let (mut exchange, _) = Exchange::begin(&gateway, head("/v1/messages", &[("x-api-key", "k")]), false);
        let effects = read(&gateway, &mut exchange, "{not json");
        assert!(matches!(
            &effects[..],
            [Effect::Log { .. }, Effect::Answer { status: 400, close: false, .. }, Effect::Done]
        ));
    }

    #[test]
    fn a_web_page_can_neither_drive_nor_read_the_proxy() {
        let gateway = gateway();
        for headers in [
            [("host", "rebound.example:8787"), ("x-api-key", "k")],
            [("host", "127.0.0.1:8787"), ("origin", "https://evil.example")],
        ] {
            let (_, effects) = Exchange::begin(&gateway, head("/v1/messages", &headers), false);
            let [Effect::Log { line }, Effect::Answer { status: 403, body, close: true, .. }, Effect::Done] =
                &effects[..]
            else {
                panic!("{effects:?}")
            };
            assert!(line.starts_with("workbench proxy: POST /v1/messages: refused, this server answers"), "{line}");
            assert!(body.contains("permission_error"), "Anthropic's shape: {body}");
        }
        for host in ["127.0.0.1:8787", "localhost:8787", "[::1]:8787"] {
            let (_, effects) = Exchange::begin(&gateway, head("/v1/messages", &[("host", host)]), false);
            assert!(matches!(&effects[..], [Effect::ReadBody { .. }]), "{host}: {effects:?}");
        }
        let own = [("host", "127.0.0.1:8787"), ("origin", "http://127.0.0.1:8787")];
        assert!(matches!(
            &Exchange::begin(&gateway, head("/v1/messages", &own), false).1[..],
            [Effect::ReadBody { .. }]
        ));
    }

    #[test]
    fn in_team_mode_a_request_signs_in_or_is_refused_401_before_its_body() {
        let gateway = gateway();
        let token = crate::proxy::team::token_from(&[5; 32]);
        let mut team = Team::default();
        team.add("alice", &token, false, 1).unwrap();
        let anthropic = [("x-api-key", "k")];
        let (_, effects) = Exchange::begin_signed(&gateway, head("/v1/messages", &anthropic), false, Some(&team));
        let [Effect::Log { line }, Effect::Answer { status: 401, body, close: true, .. }, Effect::Done] = &effects[..]
        else {
            panic!("{effects:?}")
        };
        assert_eq!(line, "workbench proxy: POST /v1/messages: refused, no token");
        assert!(body.contains(r#""type":"authentication_error""#), "Anthropic's shape: {body}");
        // The token's path prefix: taken off, never logged, the rest routed.
        let target = format!("/t/{token}/v1/chat/completions?x=1");
        let (mut exchange, effects) = Exchange::begin_signed(&gateway, head(&target, &[]), false, Some(&team));
        assert!(matches!(&effects[..], [Effect::ReadBody { .. }]), "{effects:?}");
        assert_eq!((exchange.head().target.as_str(), exchange.person()), ("/v1/chat/completions?x=1", Some("alice")));
        let effects = exchange.step(&gateway, Event::BodyRead { bytes: 10 });
        assert_eq!(effects, vec![Effect::Read { away: false }]);
        let (verdict, _) =
            gateway.read_as(exchange.head(), exchange.route(), MESSAGES.as_bytes(), exchange.person()).into_parts();
        let Verdict::Manage { key } = verdict else { panic!("{verdict:?}") };
        assert_eq!(key.person.as_deref(), Some("alice"));
        // The header's token: taken off the head (it never crosses).
        let signed = [("x-workbench-token", token.as_str()), ("x-api-key", "k")];
        let (exchange, _) = Exchange::begin_signed(&gateway, head("/v1/messages", &signed), false, Some(&team));
        assert!(exchange.head().header("x-workbench-token").is_none());
        team.revoke("alice", 2).unwrap();
        let bad = format!("/t/{token}/v1beta/models/g:generateContent");
        let (_, effects) = Exchange::begin_signed(&gateway, head(&bad, &[]), false, Some(&team));
        let [Effect::Log { line }, Effect::Answer { status: 401, body, .. }, Effect::Done] = &effects[..] else {
            panic!("{effects:?}")
        };
        assert!(!line.contains(&token) && !body.contains(&token), "{line} {body}");
        assert!(body.contains("UNAUTHENTICATED") && line.ends_with("refused, a revoked token"), "{line} {body}");
        // Without a team, nothing changes.
        let (exchange, effects) = Exchange::begin_signed(&gateway, head("/v1/messages", &[]), false, None);
        assert!(matches!(&effects[..], [Effect::ReadBody { .. }]) && exchange.person().is_none());
    }

    #[test]
    fn an_unexpected_event_ends_the_exchange_with_an_answer_or_a_closed_connection() {
        let gateway = gateway();
        let (mut exchange, _) = Exchange::begin(&gateway, head("/v1/messages", &[]), false);
        let effects = exchange.step(&gateway, Event::Prepared { rewritten: true });
        assert!(matches!(&effects[..], [Effect::Log { .. }, Effect::Answer { status: 500, .. }, Effect::Done]));
        let (mut exchange, _) = Exchange::begin(&gateway, head("/v1/models", &[]), false);
        exchange.step(&gateway, Event::BodyRead { bytes: 0 });
        let (verdict, _) = gateway.read(exchange.head(), exchange.route(), b"").into_parts();
        exchange.step(&gateway, Event::Read { verdict });
        exchange.step(&gateway, Event::Answered { status: 200, content_type: None, content_length: None });
        let effects = exchange.step(&gateway, Event::Broke { why: "the socket failed".into() });
        assert_eq!(names(&effects), ["log", "close", "done"]);
    }

    #[test]
    fn events_and_effects_cross_as_plain_data() {
        let key = SessionKey { agent_session: Some("s".into()), conversation: u64::MAX, person: None };
        let effect = Effect::TakeTurn { key };
        let json = serde_json::to_string(&effect).unwrap();
        assert_eq!(json, r#"{"effect":"take_turn","key":{"agent_session":"s","conversation":"ffffffffffffffff"}}"#);
        assert_eq!(serde_json::from_str::<Effect>(&json).unwrap(), effect);
        let event: Event =
            serde_json::from_str(r#"{"event":"failed","failure":{"unreachable":"cannot_connect"}}"#).unwrap();
        assert!(matches!(event, Event::Failed { failure: Failure::Unreachable(crate::proxy::Cause::CannotConnect) }));
        let event: Event = serde_json::from_str(r#"{"event":"ended","end":{"silent":600000}}"#).unwrap();
        assert!(matches!(event, Event::Ended { end: End::Silent(600_000) }));
    }
}
