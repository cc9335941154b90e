//! The dashboard: a page and its modules, embedded in the binary (it works offline), each
//! served with a strict Content-Security-Policy (scripts, styles and requests of its own origin
//! only). The page reads only the query API beside it, so one copy serves `workbench serve`'s
//! root and `workbench proxy`'s `/workbench/`. Every route here answers only requests addressed
//! to 127.0.0.1 or localhost by name, so a web page that rebinds its own host name to this
//! address reads nothing.

use axum::extract::{OriginalUri, Path, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};

use super::errors::ApiError;

/// The page's sources: the dashboard's own, and the view modules it shares with the playground.
const ASSETS: &[(&str, &str, &str)] = &[
    ("index.html", "text/html; charset=utf-8", include_str!("../../../../bindings/dashboard/index.html")),
    ("dashboard.js", "text/javascript; charset=utf-8", include_str!("../../../../bindings/dashboard/dashboard.js")),
    ("dashboard.css", "text/css; charset=utf-8", include_str!("../../../../bindings/dashboard/dashboard.css")),
    ("dom.js", "text/javascript; charset=utf-8", include_str!("../../../../bindings/playground/dom.js")),
    ("chart.js", "text/javascript; charset=utf-8", include_str!("../../../../bindings/playground/chart.js")),
    ("views.js", "text/javascript; charset=utf-8", include_str!("../../../../bindings/playground/views.js")),
];

/// Nothing but this origin's own scripts, styles and API; no frames, forms or plugins.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
    connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The page. Under a prefix (`/workbench`) it is asked for as `/workbench/`, so its relative
/// links stay under the prefix: the bare prefix is redirected there.
pub async fn index(OriginalUri(uri): OriginalUri) -> Response {
    if !uri.path().ends_with('/') {
        return Redirect::permanent(&format!("{}/", uri.path())).into_response();
    }
    asset_response("index.html").unwrap_or_else(|| StatusCode::NOT_FOUND.into_response())
}

pub async fn asset(Path(name): Path<String>, OriginalUri(uri): OriginalUri) -> Response {
    asset_response(&name).unwrap_or_else(|| {
        ApiError::new(StatusCode::NOT_FOUND, "no_route", format!("no route for {}", uri.path())).into_response()
    })
}

fn asset_response(name: &str) -> Option<Response> {
    let &(_, content_type, text) = ASSETS.iter().find(|(asset, _, _)| *asset == name)?;
    let headers = [
        (header::CONTENT_TYPE, content_type),
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CACHE_CONTROL, "no-cache"),
    ];
    Some((headers, text).into_response())
}

/// Refuse a request whose `Host` is not this machine by name (DNS rebinding).
pub async fn local_host_only(request: Request, next: Next) -> Response {
    let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    if is_local(host) {
        return next.run(request).await;
    }
    let message = format!("this server answers requests for 127.0.0.1 or localhost only, not for host `{host}`");
    let mut response = ApiError::new(StatusCode::FORBIDDEN, "forbidden_host", message).into_response();
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// `127.0.0.1`, `localhost` or `[::1]`, with or without a port.
fn is_local(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    matches!(name.to_ascii_lowercase().as_str(), "127.0.0.1" | "localhost" | "::1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_machine_by_name_is_local() {
        for host in ["127.0.0.1:8000", "localhost:1", "LOCALHOST", "[::1]:9", "127.0.0.1"] {
            assert!(is_local(host), "{host}");
        }
        for host in ["", "evil.example:8000", "127.0.0.1.evil.example", "localhost.evil:80", "10.0.0.1"] {
            assert!(!is_local(host), "{host}");
        }
    }
}
