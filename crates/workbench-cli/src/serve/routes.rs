//! The REST routes of the query API (R8.4), with seed 002's shapes:
//!
//! ```text
//! GET /api/traces                                      {"traces": [...], "notes"?}
//! GET /api/traces/{id}                                 {"trace", "goal_tree", "branches", "last_event_id", "notes"?}
//! GET /api/traces/{id}/messages?goal_id=G              {"trace_id", "goal_id", "messages", "notes"?}
//! GET /api/traces/{id}/branches/{branch_id}            {branch meta…, "goal_tree", "messages", "notes"?}
//! GET /api/traces/{id}/events?since_event_id=N         {"trace_id", "events", "last_event_id", "notes"?}
//! GET /api/traces/{id}/calls                           {"trace_id", "calls", "notes"?} (the proxy's calls)
//! GET /api/traces/{id}/watch?since_event_id=N          WebSocket (watch.rs)
//! GET /api/traces/{id}/prompt                          {"trace_id", "prompt", "notes"?} (the newest call's)
//! GET /api/traces/{id}/originals?ref=R                 {"trace_id", "originals"} (what `recall` gives back)
//! GET /api/stats?since=DAY                             the proxy's sessions' sums (`workbench stats --json`)
//! GET /api/search?q=TEXT&limit=N                       {"query", "hits", "more", "notes"?}
//! GET /  and  /{asset}                                 the dashboard (page.rs)
//! ```
//!
//! Ids are checked before anything is read: an id that is not a plain name (`..`, `a/b`, also
//! when percent-encoded) is a 400 and never reaches the file system.

use axum::Router;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::get;
use context_workbench::Error;
use context_workbench::store::{Needle, check_id, message_ids};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::errors::ApiError;
use super::{AppState, page, read_store, watch};
use context_workbench::proxy::stats::read_traces;

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/api/traces", get(list))
        .route("/api/traces/{trace_id}", get(detail))
        .route("/api/traces/{trace_id}/messages", get(messages))
        .route("/api/traces/{trace_id}/branches/{branch_id}", get(branch))
        .route("/api/traces/{trace_id}/events", get(events))
        .route("/api/traces/{trace_id}/calls", get(calls))
        .route("/api/traces/{trace_id}/watch", get(watch::upgrade))
        .route("/api/traces/{trace_id}/prompt", get(prompt))
        .route("/api/traces/{trace_id}/originals", get(originals))
        .route("/api/stats", get(stats))
        .route("/api/search", get(search))
        .route("/", get(page::index))
        .route("/{asset}", get(page::asset))
        .fallback(no_route)
        .layer(axum::middleware::from_fn(page::local_host_only))
        .with_state(state)
}

type Reply = Result<Response, ApiError>;

#[derive(Deserialize)]
pub struct GoalQuery {
    goal_id: Option<String>,
}

#[derive(Deserialize)]
pub struct RefQuery {
    #[serde(rename = "ref")]
    reference: Option<String>,
}

#[derive(Deserialize)]
pub struct DayQuery {
    since: Option<String>,
}

#[derive(Deserialize)]
pub struct SearchQuery {
    q: Option<String>,
    limit: Option<usize>,
}

/// Hits in one search answer, unless the query asks for fewer.
const SEARCH_LIMIT: usize = 200;

#[derive(Deserialize)]
pub struct SinceQuery {
    pub since_event_id: Option<u64>,
}

async fn list(State(state): State<AppState>) -> Reply {
    let list = read_store(&state.fs, |store| pollster::block_on(store.list_traces())).await?;
    json(list)
}

async fn detail(State(state): State<AppState>, path: Result<Path<String>, PathRejection>) -> Reply {
    let trace_id = trace_id(path)?;
    let detail = read_store(&state.fs, move |store| pollster::block_on(store.trace(&trace_id))).await?;
    json(detail)
}

async fn messages(
    State(state): State<AppState>,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<GoalQuery>, QueryRejection>,
) -> Reply {
    let trace_id = trace_id(path)?;
    let goal_id = query_of(query)?.goal_id.ok_or_else(|| invalid("the query parameter `goal_id` is required"))?;
    let page = read_store(&state.fs, move |store| pollster::block_on(store.goal_messages(&trace_id, &goal_id))).await?;
    json(page)
}

async fn calls(State(state): State<AppState>, path: Result<Path<String>, PathRejection>) -> Reply {
    let trace_id = trace_id(path)?;
    let page = read_store(&state.fs, move |store| pollster::block_on(store.calls(&trace_id))).await?;
    json(page)
}

async fn prompt(State(state): State<AppState>, path: Result<Path<String>, PathRejection>) -> Reply {
    let trace_id = trace_id(path)?;
    json(read_store(&state.fs, move |store| pollster::block_on(store.prompt(&trace_id))).await?)
}

async fn originals(
    State(state): State<AppState>,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<RefQuery>, QueryRejection>,
) -> Reply {
    let trace_id = trace_id(path)?;
    let reference = query_of(query)?.reference.ok_or_else(|| invalid("the query parameter `ref` is required"))?;
    let ids = message_ids(&reference).map_err(ApiError::input)?;
    json(read_store(&state.fs, move |store| pollster::block_on(store.originals(&trace_id, &ids))).await?)
}

async fn stats(State(state): State<AppState>, query: Result<Query<DayQuery>, QueryRejection>) -> Reply {
    let since = query_of(query)?.since;
    if let Some(day) = since.as_deref().filter(|d| !crate::stats::is_day(d)) {
        return Err(invalid(&format!("since={day}: expected a day as YYYY-MM-DD (UTC)")));
    }
    let (traces, _) = read_store(&state.fs, |store| pollster::block_on(read_traces(store))).await?;
    json(context_workbench::proxy::stats::stats(&traces, &state.prices, since.as_deref()))
}

async fn search(State(state): State<AppState>, query: Result<Query<SearchQuery>, QueryRejection>) -> Reply {
    let SearchQuery { q, limit } = query_of(query)?;
    let q = q.ok_or_else(|| invalid("the query parameter `q` is required"))?;
    let needle = Needle::new(&q).map_err(ApiError::input)?;
    let limit = limit.unwrap_or(SEARCH_LIMIT).min(SEARCH_LIMIT);
    json(read_store(&state.fs, move |store| pollster::block_on(store.search(&needle, limit))).await?)
}

async fn branch(State(state): State<AppState>, path: Result<Path<(String, String)>, PathRejection>) -> Reply {
    let Path((trace_id, branch_id)) = path.map_err(|e| invalid(&e.body_text()))?;
    check_id("trace id", &trace_id).map_err(ApiError::input)?;
    check_id("branch id", &branch_id).map_err(ApiError::input)?;
    let detail = read_store(&state.fs, move |store| pollster::block_on(store.branch(&trace_id, &branch_id))).await?;
    json(detail)
}

async fn events(
    State(state): State<AppState>,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<SinceQuery>, QueryRejection>,
) -> Reply {
    let trace_id = trace_id(path)?;
    let since = query_of(query)?.since_event_id.unwrap_or(0);
    // All events, then the range check here: an `invalid_input` from the store is then a
    // damaged file (422), never this request's parameter.
    let mut page = read_store(&state.fs, move |store| pollster::block_on(store.events_after(&trace_id, 0))).await?;
    check_since(since, page.last_event_id, &page.trace_id)?;
    page.events.retain(|e| e.id > since);
    json(page)
}

async fn no_route(uri: Uri) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no_route", format!("no route for {}", uri.path()))
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

/// A `since_event_id` beyond the newest event names events that do not exist (another trace,
/// or a log that was replaced): refused rather than answered with nothing.
pub fn check_since(since: u64, last_event_id: u64, trace_id: &str) -> Result<(), ApiError> {
    if since > last_event_id {
        return Err(invalid(&format!(
            "since_event_id {since} is beyond the newest event ({last_event_id}) of trace `{trace_id}`"
        )));
    }
    Ok(())
}

fn invalid(message: &str) -> ApiError {
    ApiError::input(Error::InvalidInput(message.to_owned()))
}

fn json(value: impl serde::Serialize) -> Reply {
    Ok(Json(value).into_response())
}
