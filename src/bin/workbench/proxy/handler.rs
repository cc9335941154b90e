//! One request through the proxy: classified, read, handed to its conversation's session, sent
//! upstream (the engine's prompt, or the agent's own request when it is not managed), and the
//! reply passed back as it arrives while the session reads it. Every failure answers in the
//! provider's error shape; nothing here panics into a connection.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use context_workbench::config::ProxyConfig;
use context_workbench::proxy::{
    ClientRequest, Format, ReplyOutcome, ReplyReader, Route, agent_name, classify, error_body, stream_error_event,
};
use context_workbench::tokens::TokenCounter;

use super::log::Log;
use super::sessions::{Registry, Turn};
use super::upstream::{End, Pump, SendError, Upstream, forward, is_event_stream, reply_headers, status_of};

/// What every request shares.
pub struct App {
    pub upstream: Upstream,
    pub registry: Registry,
    pub log: Log,
    pub counter: TokenCounter,
    pub limits: ProxyConfig,
}

/// Headers an agent may name its session with.
const SESSION_HEADERS: [&str; 2] = ["x-claude-code-session-id", "x-session-id"];

pub async fn handle(State(app): State<Arc<App>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let anthropic = parts.headers.contains_key("x-api-key") || parts.headers.contains_key("anthropic-version");
    let route = classify(parts.method.as_str(), &path, anthropic);
    let format = route.format();
    let limit = usize::try_from(app.limits.max_body_bytes).unwrap_or(usize::MAX);
    let declared = parts.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    let read = match declared {
        Some(length) if length > app.limits.max_body_bytes => None,
        _ => axum::body::to_bytes(body, limit).await.ok(),
    };
    let Some(body) = read else {
        let message = format!(
            "workbench proxy: the request body is over the limit of {limit} bytes (proxy.max_body_bytes) or was cut short"
        );
        app.log.line(&format!("{} {path}: refused, body over {limit} bytes or cut short", parts.method));
        return error(format, StatusCode::PAYLOAD_TOO_LARGE, &message);
    };
    match route {
        Route::Passthrough(format) => {
            passthrough(&app, format, &parts.method, &path, &parts.headers, body, "passed through").await
        }
        Route::Managed(format) => managed(&app, format, &parts.method, &path, &parts.headers, body).await,
    }
}

/// The agent's request sent on as it came, the reply back as it comes.
async fn passthrough(
    app: &App,
    format: Format,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
    body: Bytes,
    why: &str,
) -> Response {
    let bare = path.split('?').next().unwrap_or(path);
    match app.upstream.send(format, method, path, headers, body, false).await {
        Ok(response) => {
            let status = status_of(&response);
            app.log.line(&format!("{method} {bare}: {why}, status {}", status.as_u16()));
            let headers = reply_headers(&response);
            let (pump, body) = Pump::new(response, app.upstream.timeout);
            tokio::spawn(forward(pump));
            (status, headers, body).into_response()
        }
        Err(e) => {
            let (status, message) = send_error(e);
            app.log.line(&format!("{method} {bare}: {why}, {message}"));
            error(format, status, &format!("workbench proxy: {message}"))
        }
    }
}

async fn managed(
    app: &Arc<App>,
    format: Format,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
    body: Bytes,
) -> Response {
    let counter = app.counter;
    let side_call_tokens = app.limits.side_call_tokens as usize;
    let bytes = body.clone();
    let parsed = tokio::task::spawn_blocking(move || {
        ClientRequest::parse(format, &bytes, &counter).map(|r| {
            let side = r.is_side_call(&counter, side_call_tokens);
            (r, side)
        })
    })
    .await;
    let request = match parsed {
        Ok(Ok((_, true))) => {
            return passthrough(app, format, method, path, headers, body, "side call, passed through").await;
        }
        Ok(Ok((mut request, false))) => {
            request.agent = agent_name(headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or(""));
            request
        }
        Ok(Err(e)) if e.pass_through => {
            let why = format!("passed through unmanaged ({})", e.message);
            return passthrough(app, format, method, path, headers, body, &why).await;
        }
        Ok(Err(e)) => {
            app.log.line(&format!("{method} {path}: refused ({}): {}", e.status, e.message));
            let status = StatusCode::from_u16(e.status).unwrap_or(StatusCode::BAD_REQUEST);
            return error(format, status, &format!("workbench proxy: {}", e.message));
        }
        Err(_) => {
            return passthrough(app, format, method, path, headers, body, "unreadable by the engine, passed through")
                .await;
        }
    };
    let header_session = SESSION_HEADERS.iter().find_map(|h| headers.get(*h).and_then(|v| v.to_str().ok()));
    let key = request.session_key(header_session);
    let turn = app.registry.turn(&key).await;
    let Some(prepared) = turn.prepare(request).await else {
        return passthrough(app, format, method, path, headers, body, "the session is gone, passed through").await;
    };
    let outgoing = prepared.body.map_or(body, Bytes::from);
    let response = match app.upstream.send(format, method, path, headers, outgoing, true).await {
        Ok(response) => response,
        Err(e) => {
            let (status, message) = send_error(e);
            let outcome = ReplyOutcome { error: Some(message.clone()), ..ReplyOutcome::default() };
            if let Some(record) = turn.finish(status.as_u16(), outcome).await {
                app.log.call(&record);
            }
            return error(format, status, &format!("workbench proxy: {message}"));
        }
    };
    let status = status_of(&response);
    let reply_headers = reply_headers(&response);
    let limit = usize::try_from(app.limits.max_body_bytes).unwrap_or(usize::MAX);
    let reader = ReplyReader::new(format, is_event_stream(&response), status.as_u16(), limit);
    let (pump, body) = Pump::new(response, app.upstream.timeout);
    let app = Arc::clone(app);
    tokio::spawn(async move { relay(app, format, pump, reader, turn).await });
    (status, reply_headers, body).into_response()
}

/// Pass the reply on as it arrives while the session reads it; once it is whole (or the
/// stream ends, breaks off or the agent leaves), the session gets it and the turn ends.
async fn relay(app: Arc<App>, format: Format, mut pump: Pump, reader: ReplyReader, turn: Turn) {
    let status = pump.response.status().as_u16();
    let mut pending = Some((reader, turn));
    let end = loop {
        match pump.next().await {
            Ok(Some(bytes)) => {
                let complete = pending.as_mut().is_some_and(|(reader, _)| {
                    reader.push(&bytes);
                    reader.is_complete()
                });
                if complete && let Some((reader, turn)) = pending.take() {
                    finish(&app, reader, turn, status, None).await;
                }
                if !pump.give(bytes).await {
                    break End::AgentGone;
                }
            }
            Ok(None) => break End::Done,
            Err(end) => break end,
        }
    };
    let note = match &end {
        End::Done => None,
        End::AgentGone => Some("the agent closed the connection before the reply ended".to_owned()),
        End::Cut(why) => {
            let _ = pump.give(Bytes::from(stream_error_event(format, &format!("workbench proxy: {why}")))).await;
            Some(why.clone())
        }
    };
    if let Some((reader, turn)) = pending.take() {
        finish(&app, reader, turn, status, note).await;
    }
}

async fn finish(app: &App, reader: ReplyReader, turn: Turn, status: u16, note: Option<String>) {
    let mut outcome = reader.finish(&app.counter);
    if let Some(note) = note {
        outcome.completed = false;
        outcome.parts.clear();
        outcome.error = Some(note);
    }
    if let Some(record) = turn.finish(status, outcome).await {
        app.log.call(&record);
    }
}

fn send_error(error: SendError) -> (StatusCode, String) {
    match error {
        SendError::Unreachable(why) => (StatusCode::BAD_GATEWAY, why),
        SendError::Timeout => (StatusCode::GATEWAY_TIMEOUT, "the upstream did not answer in time".into()),
    }
}

/// The proxy's own error in the provider's shape.
pub fn error(format: Format, status: StatusCode, message: &str) -> Response {
    let body = error_body(format, status.as_u16(), message);
    (status, [(header::CONTENT_TYPE, "application/json")], Body::from(body)).into_response()
}
