//! One request through the proxy: the library's [`Exchange`] decides every step, and this
//! carries out its effects with axum, reqwest and the sessions' threads. Nothing here panics
//! into a connection.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use context_workbench::proxy::gateway::passes_to_agent;
use context_workbench::proxy::{
    CallRecord, ClientRequest, Effect, End, Event, Exchange, Failure, Gateway, RequestHead,
};
use futures_util::StreamExt;
use tokio::sync::{oneshot, watch};

use super::log::Log;
use super::sessions::{Registry, Turn};
use super::telemetry::{Telemetry, now_ms};
use super::upstream::{AgentBody, Upstream, UpstreamBody};
use crate::connections::or_never;
use crate::team_file::TeamFile;

/// What every request shares.
pub struct App {
    pub gateway: Arc<Gateway>,
    pub upstream: Upstream,
    pub registry: Registry,
    pub log: Arc<Log>,
    /// `--otlp`'s exporter.
    pub telemetry: Option<Telemetry>,
    /// Team mode's members: with one, every request signs in.
    pub team: TeamFile,
    stopping: AtomicBool,
    /// Requests whose exchange is not over.
    in_flight: Arc<watch::Sender<usize>>,
    /// Set once what is still in flight must be cut short.
    cut: watch::Sender<bool>,
}

impl App {
    pub fn new(
        gateway: Arc<Gateway>,
        upstream: Upstream,
        registry: Registry,
        log: Arc<Log>,
        telemetry: Option<Telemetry>,
        team: TeamFile,
    ) -> App {
        let (cut, _) = watch::channel(false);
        App {
            gateway,
            upstream,
            registry,
            log,
            telemetry,
            team,
            stopping: AtomicBool::new(false),
            in_flight: Arc::new(watch::Sender::new(0)),
            cut,
        }
    }

    /// No new request is taken from now on.
    pub fn begin_stopping(&self) {
        self.stopping.store(true, Ordering::SeqCst);
    }

    pub fn in_flight(&self) -> usize {
        *self.in_flight.borrow()
    }

    /// Resolves once no request is in flight (their calls run on tasks of their own, which the
    /// connections' end does not wait for).
    pub async fn settled(&self) {
        let _ = self.in_flight.subscribe().wait_for(|n| *n == 0).await;
    }

    /// Cut short every request still in flight.
    pub fn cut(&self) {
        self.cut.send_replace(true);
    }

    /// Set once [`App::cut`] is called.
    pub fn cut_signal(&self) -> watch::Receiver<bool> {
        self.cut.subscribe()
    }
}

/// A request counted in flight until its exchange is over (it moves with the call into its task).
struct InFlight(Arc<watch::Sender<usize>>);

impl InFlight {
    fn new(count: &Arc<watch::Sender<usize>>) -> InFlight {
        count.send_modify(|n| *n += 1);
        InFlight(Arc::clone(count))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

pub async fn handle(State(app): State<Arc<App>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let head = RequestHead {
        method: parts.method.to_string(),
        target: parts.uri.path_and_query().map_or("/", |p| p.as_str()).to_owned(),
        headers: parts
            .headers
            .iter()
            .filter_map(|(name, value)| Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned())))
            .collect(),
    };
    let in_flight = InFlight::new(&app.in_flight);
    let (team, note) = app.team.current();
    if let Some(line) = note {
        app.log.line(&format!("{}: {line}", app.gateway.who()));
    }
    let stopping = app.stopping.load(Ordering::SeqCst);
    let (exchange, effects) = Exchange::begin_signed(&app.gateway, head, stopping, team.as_deref());
    // The call runs on a task of its own: when the agent closes its connection, hyper drops this
    // handler, and the call learns it from its answer's channel (`Failure::AgentGone`).
    let (answer, answered) = oneshot::channel();
    let call = Call {
        app,
        exchange,
        answer: Some(answer),
        headers: parts.headers,
        incoming: Some(body),
        body: Bytes::new(),
        client: None,
        prepared: None,
        turn: None,
        upstream: None,
        chunk: Bytes::new(),
        to_agent: None,
        recording: None,
        _in_flight: in_flight,
    };
    tokio::spawn(call.run(effects));
    answered.await.unwrap_or_else(|_| json_response(500, String::new(), true))
}

/// One request and what its effects have gathered so far.
struct Call {
    app: Arc<App>,
    exchange: Exchange,
    /// Where the agent's answer (or the reply's head) goes, until it is given; closed once the
    /// agent has left (hyper drops the handler waiting on it).
    answer: Option<oneshot::Sender<Response>>,
    headers: HeaderMap,
    /// The agent's body, until it is read.
    incoming: Option<Body>,
    body: Bytes,
    /// A managed request as the gateway read it.
    client: Option<Box<ClientRequest>>,
    /// The engine's body for the upstream.
    prepared: Option<Bytes>,
    /// The conversation's turn, held until the reply ends.
    turn: Option<Turn>,
    upstream: Option<reqwest::Response>,
    /// The piece of the reply being relayed.
    chunk: Bytes,
    to_agent: Option<AgentBody>,
    recording: Option<oneshot::Receiver<CallRecord>>,
    _in_flight: InFlight,
}

/// What an effect leads to.
enum Flow {
    Go,
    Then(Event),
    Reply(Response),
    Over,
}

impl Call {
    /// The whole exchange: its answer to the agent, then the reply's body when one follows.
    async fn run(mut self, effects: Vec<Effect>) {
        if let Some(response) = self.drive(effects).await
            && let Some(answer) = self.answer.take()
        {
            let _ = answer.send(response);
        }
        if !self.exchange.is_over() {
            self.relay().await;
        }
    }

    /// Carry out `effects` and those of the events they lead to, until the agent has its answer
    /// (or the reply's head) or the exchange is over.
    async fn drive(&mut self, mut effects: Vec<Effect>) -> Option<Response> {
        loop {
            let mut then = None;
            for effect in effects {
                match self.act(effect).await {
                    Flow::Go => {}
                    Flow::Then(event) => then = Some(event),
                    Flow::Reply(response) => return Some(response),
                    Flow::Over => return None,
                }
            }
            effects = self.exchange.step(&self.app.gateway, then?);
        }
    }

    /// The reply's body, piece by piece, to the agent while the exchange reads it; then its end.
    async fn relay(mut self) {
        let Some(response) = self.upstream.take() else { return };
        let mut from_upstream = UpstreamBody::new(response, self.app.upstream.timeout, self.app.cut.subscribe());
        let end = loop {
            // The agent gone, the call ends at once, not at the upstream's next piece.
            let next = tokio::select! {
                biased;
                () = or_never(self.to_agent.as_ref().map(AgentBody::closed)) => Err(End::AgentGone),
                next = from_upstream.next() => next,
            };
            match next {
                Ok(Some(bytes)) => {
                    self.chunk = bytes;
                    for effect in self.exchange.relay(&self.app.gateway, &self.chunk) {
                        self.act(effect).await;
                    }
                    if self.to_agent.is_none() {
                        break End::AgentGone;
                    }
                }
                Ok(None) => break End::Done,
                Err(end) => break end,
            }
        };
        let effects = self.exchange.step(&self.app.gateway, Event::Ended { end });
        self.drive(effects).await;
    }

    async fn act(&mut self, effect: Effect) -> Flow {
        let app = Arc::clone(&self.app);
        match effect {
            Effect::ReadBody { limit, timeout_ms } => Flow::Then(self.read_body(limit, timeout_ms).await),
            Effect::Read { away } => Flow::Then(self.read(away).await),
            Effect::Log { line } => {
                app.log.line(&line);
                Flow::Go
            }
            Effect::Answer { status, body, close, drain_ms } => {
                if close && let Some(unread) = self.incoming.take() {
                    drain(unread, drain_ms).await;
                }
                Flow::Reply(json_response(status, body, close))
            }
            Effect::TakeTurn { key } => {
                let (turn, notes) = app.registry.turn(&key).await;
                self.turn = Some(turn);
                Flow::Then(Event::TurnTaken { notes })
            }
            Effect::Prepare { key, notes, opening } => Flow::Then(self.prepare(key, notes, opening).await),
            Effect::CountSideCall { agent_session, record } => {
                app.registry.record_side_call(&agent_session, *record);
                Flow::Go
            }
            Effect::Send { url, prepared, plain } => {
                let body = if prepared { self.prepared.take().unwrap_or_default() } else { self.body.clone() };
                let method = &self.exchange.head().method;
                let cut = app.cut.subscribe();
                let sent = tokio::select! {
                    biased;
                    () = or_never(self.answer.as_mut().map(|answer| answer.closed())) => Err(Failure::AgentGone),
                    sent = app.upstream.send(&url, method, &self.headers, body, plain, cut) => sent,
                };
                Flow::Then(match sent {
                    Ok(response) => {
                        let content_type = response.headers().get(header::CONTENT_TYPE);
                        let content_type = content_type.and_then(|v| v.to_str().ok()).map(str::to_owned);
                        let (status, content_length) = (response.status().as_u16(), response.content_length());
                        self.upstream = Some(response);
                        Event::Answered { status, content_type, content_length }
                    }
                    Err(failure) => Event::Failed { failure },
                })
            }
            Effect::ReadReply { limit } => Flow::Then(self.read_reply(limit).await),
            Effect::Respond { status } => {
                let headers = self.upstream.as_ref().map(reply_headers).unwrap_or_default();
                let (to_agent, body) = AgentBody::new();
                self.to_agent = Some(to_agent);
                let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
                Flow::Reply((status, headers, body).into_response())
            }
            Effect::Give => {
                self.give(self.chunk.clone()).await;
                Flow::Go
            }
            Effect::GiveText { text } => {
                self.give(Bytes::from(text)).await;
                Flow::Go
            }
            Effect::Finish { status, outcome } => {
                self.recording = self.turn.as_ref().map(|turn| turn.begin_finish(status, *outcome));
                Flow::Go
            }
            Effect::AwaitRecord => Flow::Then(match self.recording.take() {
                Some(recording) => match recording.await {
                    Ok(record) => Event::Recorded { record: Some(Box::new(record)) },
                    Err(_) => Event::NotRecorded { why: "its session thread stopped".into() },
                },
                None => Event::Recorded { record: None },
            }),
            Effect::EndReply | Effect::Close => {
                self.to_agent = None;
                Flow::Go
            }
            Effect::Called => {
                if let (Some(telemetry), Some(span)) = (&app.telemetry, self.exchange.span(now_ms())) {
                    telemetry.export(span);
                }
                Flow::Go
            }
            Effect::Done => Flow::Over,
        }
    }

    async fn read_body(&mut self, limit: usize, timeout_ms: u64) -> Event {
        let body = self.incoming.take().unwrap_or_default();
        match tokio::time::timeout(Duration::from_millis(timeout_ms), axum::body::to_bytes(body, limit)).await {
            Ok(Ok(body)) => {
                self.body = body;
                Event::BodyRead { bytes: self.body.len() }
            }
            Ok(Err(_)) => Event::BodyRefused,
            Err(_) => Event::BodyTimedOut,
        }
    }

    /// The upstream's reply, whole, without answering the agent.
    async fn read_reply(&mut self, limit: usize) -> Event {
        let Some(response) = self.upstream.take() else { return Event::Ended { end: End::BrokeOff } };
        let mut from_upstream = UpstreamBody::new(response, self.app.upstream.timeout, self.app.cut.subscribe());
        let mut body = Vec::new();
        loop {
            let next = tokio::select! {
                biased;
                () = or_never(self.answer.as_mut().map(|answer| answer.closed())) => Err(End::AgentGone),
                next = from_upstream.next() => next,
            };
            match next {
                Ok(Some(bytes)) if body.len() + bytes.len() <= limit => body.extend_from_slice(&bytes),
                Ok(Some(_)) => return Event::Ended { end: End::BrokeOff },
                Ok(None) => return Event::ReplyRead { body: String::from_utf8_lossy(&body).into_owned() },
                Err(end) => return Event::Ended { end },
            }
        }
    }

    /// What the gateway reads of the body; a long one off the event loop.
    async fn read(&mut self, away: bool) -> Event {
        let (gateway, head, route, body) =
            (Arc::clone(&self.app.gateway), self.exchange.head().clone(), self.exchange.route(), self.body.clone());
        let person = self.exchange.person().map(str::to_owned);
        let read = move || gateway.read_as(&head, route, &body, person.as_deref());
        let decision = if away {
            tokio::task::spawn_blocking(read).await.map_err(|_| ())
        } else {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)).map_err(|_| ())
        };
        match decision {
            Ok(decision) => {
                let (verdict, client) = decision.into_parts();
                self.client = client;
                Event::Read { verdict }
            }
            Err(()) => Event::Unreadable { why: "it panicked".into() },
        }
    }

    async fn prepare(
        &mut self,
        key: context_workbench::proxy::SessionKey,
        notes: Vec<String>,
        opening: Option<Box<CallRecord>>,
    ) -> Event {
        let (Some(turn), Some(mut client)) = (&self.turn, self.client.take()) else {
            return Event::SessionGone { why: "it was not read".into() };
        };
        client.opening = opening;
        match turn.prepare(key, *client, notes).await {
            Some(prepared) => {
                self.prepared = prepared.body.map(Bytes::from);
                Event::Prepared { rewritten: self.prepared.is_some() }
            }
            None => Event::SessionGone { why: "its thread stopped".into() },
        }
    }

    /// Hand `bytes` to the agent; once it has gone, nothing more.
    async fn give(&mut self, bytes: Bytes) {
        if let Some(to_agent) = &self.to_agent
            && !to_agent.give(bytes).await
        {
            self.to_agent = None;
        }
    }
}

/// Read and drop a body the answer does not need, for at most `timeout_ms`.
async fn drain(body: Body, timeout_ms: u64) {
    let mut pieces = body.into_data_stream();
    let within = Duration::from_millis(timeout_ms);
    let _ = tokio::time::timeout(within, async { while let Some(Ok(_)) = pieces.next().await {} }).await;
}

/// The upstream's headers that cross to the agent (reqwest leaves the body as it came).
fn reply_headers(response: &reqwest::Response) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in response.headers() {
        if passes_to_agent(name.as_str(), false) {
            headers.append(name.clone(), value.clone());
        }
    }
    headers
}

fn json_response(status: u16, body: String, close: bool) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let content_type = (HeaderName::from_static("content-type"), HeaderValue::from_static("application/json"));
    let mut response = (status, [content_type], Body::from(body)).into_response();
    if close {
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}
