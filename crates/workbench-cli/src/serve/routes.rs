//! The routes of `workbench serve` (and of the proxy's dashboard): the query API (R8.4) is the
//! engine's (`store::api`: every REST route, its checks and its errors), answered here on a
//! blocking thread; the WebSocket is this server's own (`watch.rs`), and the page is `page.rs`.
//!
//! ```text
//! GET /api/traces[/…], /api/stats, /api/search          store::api (the routes are listed there)
//! GET /api/traces/{id}/watch?since_event_id=N          WebSocket (watch.rs)
//! GET /  and  /{asset}                                 the dashboard (page.rs)
//! ```

use axum::Router;
use axum::body::Body;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use context_workbench::Error;
use context_workbench::store::api::{self, ApiReply};
use context_workbench::store::check_id;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::errors::ApiError;
use super::{AppState, page, read_store, signin, watch};

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/api/traces/{trace_id}/watch", get(watch::upgrade))
        .route("/", get(page::index))
        .route("/{asset}", get(page::asset))
        .fallback(query_api)
        .layer(axum::middleware::from_fn_with_state(state.clone(), signin::sign_in))
        .layer(axum::middleware::from_fn_with_state(state.clone(), page::local_host_only))
        .with_state(state)
}

#[derive(Deserialize)]
pub struct SinceQuery {
    pub since_event_id: Option<u64>,
}

/// Any other path: the engine's query API (a `no_route` for a path it does not know).
async fn query_api(State(state): State<AppState>, request: Request) -> Response {
    let method = request.method().as_str().to_owned();
    let path = request.uri().path().to_owned();
    let query = request.uri().query().unwrap_or("").to_owned();
    let reply = read_store(&state.fs, signin::viewer_of(&request), move |store| {
        Ok(pollster::block_on(api::answer(store, &method, &path, &query)))
    })
    .await
    .unwrap_or_else(|e| ApiReply::error(e.status.as_u16(), e.code, &e.message));
    reply_response(reply)
}

pub fn reply_response(reply: ApiReply) -> Response {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, [(header::CONTENT_TYPE, "application/json")], Body::from(reply.body)).into_response()
}

/// The `{trace_id}` of a path, checked to be a plain name.
pub fn trace_id(path: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    let Path(id) = path.map_err(|e| invalid(&e.body_text()))?;
    check_id("trace id", &id).map_err(ApiError::input)?;
    Ok(id)
}

pub fn query_of<T: DeserializeOwned>(query: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    query.map(|Query(q)| q).map_err(|e| invalid(&e.body_text()))
}

fn invalid(message: &str) -> ApiError {
    ApiError::input(Error::InvalidInput(message.to_owned()))
}
