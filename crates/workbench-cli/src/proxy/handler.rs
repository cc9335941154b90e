//! One request through the proxy, as the gateway decides it: answered by the proxy, forwarded as
//! it came, or managed (recorded in its conversation's session, the engine's prompt upstream,
//! the reply pumped back while its session reads it). Nothing here panics into a connection.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use context_workbench::proxy::pump::no_reply;
use context_workbench::proxy::{
    Admission, Answer, ClientRequest, Decision, End, Gateway, ReplyPump, RequestHead, Route, SessionKey, SideCall,
};
use tokio::sync::watch;

use super::log::Log;
use super::sessions::{Registry, Turn};
use super::upstream::{AgentBody, Upstream, UpstreamBody};

/// What every request shares.
pub struct App {
    pub gateway: Arc<Gateway>,
    pub upstream: Upstream,
    pub registry: Registry,
    pub log: Log,
    stopping: AtomicBool,
    /// Requests whose reply has not ended.
    in_flight: Arc<AtomicUsize>,
    /// Set once what is still in flight must be cut short.
    cut: watch::Sender<bool>,
}

impl App {
    pub fn new(gateway: Arc<Gateway>, upstream: Upstream, registry: Registry) -> App {
        let log = Log::new(Arc::clone(&gateway));
        let (cut, _) = watch::channel(false);
        App { gateway, upstream, registry, log, stopping: AtomicBool::new(false), in_flight: Arc::default(), cut }
    }

    /// No new request is taken from now on.
    pub fn begin_stopping(&self) {
        self.stopping.store(true, Ordering::SeqCst);
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// Cut short every request still in flight.
    pub fn cut(&self) {
        self.cut.send_replace(true);
    }

    fn answer(&self, answer: Answer) -> Response {
        self.log.line(&answer.line);
        json_response(answer.status, answer.body)
    }
}

/// A request counted in flight until its reply ends (the guard moves into the reply's task).
struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    fn new(count: &Arc<AtomicUsize>) -> InFlight {
        count.fetch_add(1, Ordering::SeqCst);
        InFlight(Arc::clone(count))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
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
    let guard = InFlight::new(&app.in_flight);
    let (route, limit) = match app.gateway.admit(&head) {
        Admission::Refuse(answer) => return app.answer(answer),
        Admission::Read { route, limit } => (route, limit),
    };
    if app.stopping.load(Ordering::SeqCst) {
        return app.answer(app.gateway.stopping(&head, route));
    }
    let timeout = std::time::Duration::from_millis(app.gateway.limits().body_timeout_ms);
    let body = match tokio::time::timeout(timeout, axum::body::to_bytes(body, limit)).await {
        Ok(Ok(body)) => body,
        Ok(Err(_)) => return app.answer(app.gateway.body_refused(&head, route)),
        Err(_) => return app.answer(app.gateway.body_timed_out(&head, route)),
    };
    let decision = decide(&app.gateway, &head, route, &body).await;
    let request = Forwarding { head, headers: parts.headers, body, guard };
    match decision {
        Decision::Forward { route, why, side } => forward(&app, request, route, &why, side).await,
        Decision::Answer(answer) => app.answer(answer),
        Decision::Manage { key, request: client } => manage(&app, request, route, key, *client).await,
    }
}

/// The gateway's decision, read off the event loop (a long history takes a while to parse).
async fn decide(gateway: &Arc<Gateway>, head: &RequestHead, route: Route, body: &Bytes) -> Decision {
    let (gateway, head_copy, bytes) = (Arc::clone(gateway), head.clone(), body.clone());
    let decided = tokio::task::spawn_blocking(move || gateway.decide(&head_copy, route, &bytes)).await;
    decided.unwrap_or_else(|_| Decision::Forward {
        route,
        why: "unreadable by the engine, passed through".into(),
        side: None,
    })
}

/// A request with what the upstream needs of it.
struct Forwarding {
    head: RequestHead,
    headers: HeaderMap,
    body: Bytes,
    guard: InFlight,
}

/// The agent's request sent on as it came, the reply back as it comes; a side call of a known
/// session is counted in it once the upstream answers.
async fn forward(
    app: &Arc<App>,
    request: Forwarding,
    route: Route,
    why: &str,
    side: Option<Box<SideCall>>,
) -> Response {
    let url = app.gateway.upstream_url(route, &request.head);
    let cut = app.cut.subscribe();
    let sent = app.upstream.send(&url, &request.head.method, &request.headers, request.body, false, cut.clone()).await;
    match sent {
        Ok(response) => {
            let status = response.status().as_u16();
            app.log.line(&app.gateway.forwarded(&request.head, why, status));
            if let Some((agent_session, record)) = side.and_then(|s| app.gateway.side_call_answered(*s, status)) {
                app.registry.record_side_call(&agent_session, record);
            }
            let (status, headers) = (status_of(&response), reply_headers(&response));
            let (to_agent, body) = AgentBody::new();
            let from_upstream = UpstreamBody::new(response, app.upstream.timeout, cut);
            let guard = request.guard;
            tokio::spawn(async move {
                let _ = from_upstream.forward(&to_agent).await;
                drop(guard);
            });
            (status, headers, body).into_response()
        }
        Err(failure) => app.answer(app.gateway.forward_failed(&request.head, route, why, &failure)),
    }
}

/// A conversation turn through the engine.
async fn manage(app: &Arc<App>, request: Forwarding, route: Route, key: SessionKey, client: ClientRequest) -> Response {
    let format = client.format;
    let (turn, notes) = app.registry.turn(&key).await;
    let Some(prepared) = turn.prepare(key, client, notes).await else {
        return forward(app, request, route, "the session is gone, passed through", None).await;
    };
    let url = app.gateway.upstream_url(route, &request.head);
    let outgoing = prepared.body.map_or(request.body, Bytes::from);
    let cut = app.cut.subscribe();
    let response =
        match app.upstream.send(&url, &request.head.method, &request.headers, outgoing, true, cut.clone()).await {
            Ok(response) => response,
            Err(failure) => {
                let (status, body) = app.gateway.call_failed(route, &failure);
                if let Some(record) = turn.finish(status, no_reply(failure.message())).await {
                    app.log.line(&app.gateway.call_line(&record));
                }
                return json_response(status, body);
            }
        };
    let content_type = response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let length = response.content_length();
    let pump = app.gateway.reply_pump(format, response.status().as_u16(), content_type.as_deref(), length);
    let (status, headers) = (status_of(&response), reply_headers(&response));
    let (to_agent, body) = AgentBody::new();
    let from_upstream = UpstreamBody::new(response, app.upstream.timeout, cut);
    let (app, guard) = (Arc::clone(app), request.guard);
    tokio::spawn(async move {
        relay(&app, from_upstream, pump, to_agent, turn).await;
        drop(guard);
    });
    (status, headers, body).into_response()
}

/// Pass the reply on as it arrives while the pump reads it. The session gets the reply once it
/// is whole and records it while the last bytes go to the agent; the reply ends once it is
/// recorded, so the agent's next request finds it in the store, and the call's log line follows.
/// A reply that did not complete goes to the session at its end, with why.
async fn relay(app: &App, mut from_upstream: UpstreamBody, mut pump: ReplyPump, to_agent: AgentBody, turn: Turn) {
    let counter = app.gateway.counter();
    let status = pump.status();
    let mut recording = None;
    let end = loop {
        match from_upstream.next().await {
            Ok(Some(bytes)) => {
                if let Some(outcome) = pump.feed(&bytes, counter) {
                    recording = turn.begin_finish(status, outcome);
                }
                if !to_agent.give(bytes).await {
                    break End::AgentGone;
                }
            }
            Ok(None) => break End::Done,
            Err(end) => break end,
        }
    };
    let ending = pump.end(end, counter);
    if let Some(trailer) = ending.trailer {
        let _ = to_agent.give(Bytes::from(trailer)).await;
    }
    let recorded = match (recording, ending.outcome) {
        (Some(recording), _) => recording.await.ok(),
        (None, Some(outcome)) => turn.finish(status, outcome).await,
        (None, None) => None,
    };
    drop(to_agent);
    if let Some(record) = recorded {
        app.log.line(&app.gateway.call_line(&record));
    }
}

/// The upstream's status as axum takes it.
fn status_of(response: &reqwest::Response) -> StatusCode {
    StatusCode::from_u16(response.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY)
}

/// The upstream's headers that cross to the agent (reqwest leaves the body as it came).
fn reply_headers(response: &reqwest::Response) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in response.headers() {
        if context_workbench::proxy::gateway::passes_to_agent(name.as_str(), false) {
            headers.append(name.clone(), value.clone());
        }
    }
    headers
}

fn json_response(status: u16, body: String) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let content_type = (HeaderName::from_static("content-type"), HeaderValue::from_static("application/json"));
    (status, [content_type], Body::from(body)).into_response()
}
