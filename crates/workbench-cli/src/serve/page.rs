//! The dashboard's files (the engine's `dashboard`: embedded, with their CSP) and the refusal of
//! requests for another host name.

use axum::extract::{OriginalUri, Path, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use context_workbench::dashboard;

use super::AppState;
use super::errors::ApiError;

/// The page. Under a prefix (`/workbench`) it is asked for as `/workbench/`, so its relative
/// links stay under the prefix: the bare prefix is redirected there.
pub async fn index(OriginalUri(uri): OriginalUri) -> Response {
    if !uri.path().ends_with('/') {
        return Redirect::permanent(&format!("{}/", uri.path())).into_response();
    }
    asset_response("/")
}

pub async fn asset(Path(name): Path<String>) -> Response {
    asset_response(&name)
}

fn asset_response(name: &str) -> Response {
    match dashboard::asset(name) {
        Some(asset) => (dashboard::headers(&asset), asset.text).into_response(),
        None => ApiError::new(StatusCode::NOT_FOUND, "no_route", format!("no route for /{name}")).into_response(),
    }
}

/// Refuse a request for another host name (DNS rebinding) or from another site's page
/// (`dashboard::refusal`), WebSocket upgrades included.
/// Beyond loopback (team mode), any host name is answered: only another site's page is refused.
pub async fn local_host_only(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let refusal = {
        let headers = request.headers();
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
        let origin = headers.get(header::ORIGIN).and_then(|h| h.to_str().ok());
        if state.any_host { dashboard::foreign_origin(host, origin) } else { dashboard::refusal(host, origin) }
    };
    let Some(message) = refusal else { return next.run(request).await };
    let mut response = ApiError::new(StatusCode::FORBIDDEN, "forbidden_host", message).into_response();
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}
