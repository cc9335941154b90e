//! Team mode on the dashboard's server (`workbench serve`, the proxy's `/workbench/`): every
//! API request and WebSocket carries a member's token (the `x-workbench-token` header; a
//! WebSocket, to which a browser gives no header, the `token` query parameter) and reads what
//! that member may: an admin every session, a member their own. The page and its files need
//! none: its sign-in form asks for the token. Without a team, everyone reads everything.

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use context_workbench::proxy::team::TOKEN_HEADER;

use super::AppState;
use super::errors::ApiError;

/// Whose sessions a request reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Viewer {
    /// Everyone's: no team, or an admin.
    All,
    /// One member's own.
    Person(String),
}

/// Sign the request in and hand its [`Viewer`] on; an API request without a live token is a
/// 401. Any other request (the page) goes on as a viewer of nothing.
pub async fn sign_in(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let (team, _) = state.team.current();
    let viewer = match team {
        None => Viewer::All,
        Some(team) => {
            let header = request.headers().get(TOKEN_HEADER).and_then(|v| v.to_str().ok());
            let query = request.uri().query().unwrap_or("");
            let token = header.or_else(|| query.split('&').find_map(|pair| pair.strip_prefix("token=")));
            match team.sign_in(token) {
                Ok(member) if member.admin => Viewer::All,
                Ok(member) => Viewer::Person(member.name.clone()),
                Err(_) if !request.uri().path().starts_with("/api/") => Viewer::Person(String::new()),
                Err(error) => {
                    return ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", error.message()).into_response();
                }
            }
        }
    };
    request.extensions_mut().insert(viewer);
    next.run(request).await
}

/// The viewer the sign-in handed on (none: nothing is seen).
pub fn viewer_of(request: &Request) -> Viewer {
    request.extensions().get::<Viewer>().cloned().unwrap_or(Viewer::Person(String::new()))
}
