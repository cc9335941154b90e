//! The query API over HTTP as one function of a request, for every shell that serves it
//! (`workbench serve`, and the dashboard of the native and the npm proxy): which route a path
//! names, its parameters checked before anything is read (a bad one is a 400 and never reaches
//! the file system), the store's answer as JSON, and an error whose status says whose fault it
//! was. Live events over WebSocket are the native server's own.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Serialize;
use serde_json::json;

use super::layout::check_id;
use super::lookup::{Needle, message_ids};
use super::query::TraceStore;
use crate::error::{Error, Result};
use crate::host::Host;
use crate::proxy::stats::{StatsReport, read_traces, stats};

/// Hits in one search answer, unless the query asks for fewer.
pub const SEARCH_LIMIT: usize = 200;

/// An answer: its HTTP status and its JSON body.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApiReply {
    pub status: u16,
    pub body: String,
}

impl ApiReply {
    fn json(value: &impl Serialize) -> ApiReply {
        match serde_json::to_string(value) {
            Ok(body) => ApiReply { status: 200, body },
            Err(e) => ApiReply::error(500, "internal", &format!("the answer could not be written: {e}")),
        }
    }

    /// `{"error": {"code", "message"}}` with `status`.
    pub fn error(status: u16, code: &str, message: &str) -> ApiReply {
        ApiReply { status, body: json!({"error": {"code": code, "message": message}}).to_string() }
    }

    /// Bad request input: an id that is not a plain name, a malformed or out-of-range parameter.
    pub fn bad_input(error: &Error) -> ApiReply {
        ApiReply::error(400, error.code(), &error.to_string())
    }

    /// A failure reading the store once the request's input was checked: an `invalid_input` from
    /// there is a damaged file (422).
    pub fn store_failure(error: &Error) -> ApiReply {
        ApiReply::error(store_status(error.code()), error.code(), &error.to_string())
    }

    pub fn no_route(path: &str) -> ApiReply {
        ApiReply::error(404, "no_route", &format!("no route for {path}"))
    }
}

/// The status of a store failure with `code`.
pub fn store_status(code: &str) -> u16 {
    match code {
        "host_not_found" => 404,
        "host_outside_workspace" => 403,
        "unsupported_version" => 409,
        "invalid_input" => 422,
        _ => 500,
    }
}

/// A `since_event_id` beyond the newest event names events that do not exist (another trace, or
/// a log that was replaced): refused rather than answered with nothing.
pub fn check_since(since: u64, last_event_id: u64, trace_id: &str) -> Result<()> {
    if since > last_event_id {
        return Err(Error::InvalidInput(format!(
            "since_event_id {since} is beyond the newest event ({last_event_id}) of trace `{trace_id}`"
        )));
    }
    Ok(())
}

/// A route with its checked parameters.
#[derive(Debug, Clone, PartialEq)]
enum Route {
    Traces,
    Trace(String),
    Messages { trace_id: String, goal_id: String },
    Branch { trace_id: String, branch_id: String },
    Events { trace_id: String, since: u64 },
    Calls { trace_id: String, from: usize },
    Prompt { trace_id: String, call: Option<u64> },
    Compactions(String),
    Originals { trace_id: String, ids: Vec<String> },
    Stats { since: Option<String> },
    Search { needle: Needle, limit: usize },
}

impl Route {
    /// The trace a route reads, if one.
    fn trace_id(&self) -> Option<&str> {
        match self {
            Route::Traces | Route::Stats { .. } | Route::Search { .. } => None,
            Route::Trace(id) | Route::Compactions(id) => Some(id),
            Route::Messages { trace_id, .. }
            | Route::Branch { trace_id, .. }
            | Route::Events { trace_id, .. }
            | Route::Calls { trace_id, .. }
            | Route::Prompt { trace_id, .. }
            | Route::Originals { trace_id, .. } => Some(trace_id),
        }
    }
}

/// The answer to `method path?query` (`path` as it came, percent-encoded; `query` without its
/// `?`), read from `store`.
pub async fn answer<H: Host>(store: &TraceStore<'_, H>, method: &str, path: &str, query: &str) -> ApiReply {
    let route = match route(path, query) {
        Ok(Some(route)) => route,
        Ok(None) => return ApiReply::no_route(path),
        Err(e) => return ApiReply::bad_input(&e),
    };
    if !matches!(method, "GET" | "HEAD") {
        return ApiReply::error(405, "method_not_allowed", &format!("{path} answers GET, not {method}"));
    }
    match read(store, route).await {
        Ok(reply) => reply,
        Err(e) => ApiReply::store_failure(&e),
    }
}

async fn read<H: Host>(store: &TraceStore<'_, H>, route: Route) -> Result<ApiReply> {
    if let Some(trace_id) = route.trace_id() {
        store.check_visible(trace_id).await?;
    }
    Ok(match route {
        Route::Traces => ApiReply::json(&store.list_traces().await?),
        Route::Trace(id) => ApiReply::json(&store.trace(&id).await?),
        Route::Messages { trace_id, goal_id } => ApiReply::json(&store.goal_messages(&trace_id, &goal_id).await?),
        Route::Branch { trace_id, branch_id } => ApiReply::json(&store.branch(&trace_id, &branch_id).await?),
        Route::Events { trace_id, since } => {
            // All events, then the range check here: an `invalid_input` from the store is then a
            // damaged file (422), never this request's parameter.
            let mut page = store.events_after(&trace_id, 0).await?;
            if let Err(e) = check_since(since, page.last_event_id, &trace_id) {
                return Ok(ApiReply::bad_input(&e));
            }
            page.events.retain(|e| e.id > since);
            ApiReply::json(&page)
        }
        Route::Calls { trace_id, from } => {
            let mut page = store.calls(&trace_id).await?;
            page.calls.drain(..from.min(page.calls.len()));
            ApiReply::json(&page)
        }
        Route::Prompt { trace_id, call } => ApiReply::json(&store.prompt(&trace_id, call).await?),
        Route::Compactions(id) => ApiReply::json(&store.compactions(&id).await?),
        Route::Originals { trace_id, ids } => ApiReply::json(&store.originals(&trace_id, &ids).await?),
        Route::Stats { since } => {
            let (traces, notes) = read_traces(store).await?;
            ApiReply::json(&StatsReport { notes, ..stats(&traces, since.as_deref()) })
        }
        Route::Search { needle, limit } => ApiReply::json(&store.search(&needle, limit).await?),
    })
}

/// The route `path?query` names, its parameters checked; `None` for no route.
fn route(path: &str, query: &str) -> Result<Option<Route>> {
    let Some(rest) = path.strip_prefix("/api/") else { return Ok(None) };
    let segments: Vec<Cow<str>> = rest
        .split('/')
        .map(|s| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .map_err(|_| Error::InvalidInput(format!("the path {path} is not UTF-8 once decoded")))
        })
        .collect::<Result<_>>()?;
    let params: HashMap<String, String> = form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    let param = |name: &str| params.get(name).map(String::as_str);
    let required = |name: &str| {
        param(name).map(str::to_owned).ok_or_else(|| invalid(format!("the query parameter `{name}` is required")))
    };
    let trace = |id: &str| check_id("trace id", id).map(|()| id.to_owned());
    let segments: Vec<&str> = segments.iter().map(|s| s.as_ref()).collect();
    Ok(Some(match segments.as_slice() {
        ["traces"] => Route::Traces,
        ["traces", id] => Route::Trace(trace(id)?),
        ["traces", id, "messages"] => Route::Messages { trace_id: trace(id)?, goal_id: required("goal_id")? },
        ["traces", id, "branches", branch] => {
            check_id("branch id", branch)?;
            Route::Branch { trace_id: trace(id)?, branch_id: (*branch).to_owned() }
        }
        ["traces", id, "events"] => Route::Events {
            trace_id: trace(id)?,
            since: number(param("since_event_id"), "since_event_id")?.unwrap_or(0),
        },
        ["traces", id, "calls"] => {
            Route::Calls { trace_id: trace(id)?, from: number(param("from"), "from")?.unwrap_or(0) }
        }
        ["traces", id, "prompt"] => Route::Prompt { trace_id: trace(id)?, call: number(param("call"), "call")? },
        ["traces", id, "compactions"] => Route::Compactions(trace(id)?),
        ["traces", id, "originals"] => Route::Originals { trace_id: trace(id)?, ids: message_ids(&required("ref")?)? },
        ["stats"] => {
            let since = param("since").map(str::to_owned);
            if let Some(day) = since.as_deref().filter(|d| !crate::goals::is_utc_day(d)) {
                return Err(invalid(format!("since={day}: expected a day as YYYY-MM-DD (UTC)")));
            }
            Route::Stats { since }
        }
        ["search"] => Route::Search {
            needle: Needle::new(&required("q")?)?,
            limit: number(param("limit"), "limit")?.map_or(SEARCH_LIMIT, |n: usize| n.min(SEARCH_LIMIT)),
        },
        _ => return Ok(None),
    }))
}

/// A whole-number parameter, when given (one this platform cannot hold is refused, not wrapped).
fn number<T: std::str::FromStr>(value: Option<&str>, name: &str) -> Result<Option<T>> {
    value.map(|v| v.parse().map_err(|_| invalid(format!("`{name}` is \"{v}\", not a whole number")))).transpose()
}

fn invalid(message: String) -> Error {
    Error::InvalidInput(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_routes_and_bad_parameters_are_refused_before_any_read() {
        assert_eq!(route("/api/traces", "").unwrap(), Some(Route::Traces));
        assert_eq!(
            route("/api/traces/t%2D1/events", "since_event_id=3").unwrap(),
            Some(Route::Events { trace_id: "t-1".into(), since: 3 })
        );
        assert_eq!(
            route("/api/traces/t/originals", "ref=raw%23m000002..m000003").unwrap(),
            Some(Route::Originals { trace_id: "t".into(), ids: vec!["m000002".into(), "m000003".into()] })
        );
        assert_eq!(
            route("/api/traces/t/prompt", "call=7").unwrap(),
            Some(Route::Prompt { trace_id: "t".into(), call: Some(7) })
        );
        assert_eq!(route("/api/nothing", "").unwrap(), None);
        assert_eq!(route("/elsewhere", "").unwrap(), None);
        for (path, query) in [
            ("/api/traces/..", ""),
            ("/api/traces/..%2Fx/calls", ""),
            ("/api/traces/t/events", "since_event_id=soon"),
            ("/api/traces/t/messages", ""),
            ("/api/traces/t/prompt", "call=last"),
            ("/api/stats", "since=yesterday"),
            ("/api/search", "q=%20"),
            ("/api/traces/%ff", ""),
        ] {
            assert!(route(path, query).is_err(), "{path}?{query}");
        }
        assert_eq!(store_status("invalid_input"), 422);
        assert_eq!(ApiReply::bad_input(&invalid("x".into())).status, 400);
    }
}
