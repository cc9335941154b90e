//! The server's errors on the wire: `{"error": {"code", "message"}}` with an HTTP status that
//! says whose fault it was. Request input (ids, query parameters) is checked before the store
//! is read, so an `invalid_input` coming back from the store is a damaged file on disk (422).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use context_workbench::Error;
use context_workbench::store::api::store_status;
use serde_json::json;

/// An error response.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    /// Bad request input: an id that is not a plain name, a malformed or out-of-range parameter.
    pub fn input(error: Error) -> Self {
        ApiError { status: StatusCode::BAD_REQUEST, code: error.code(), message: error.to_string() }
    }

    /// A failure reading the store, after the request's input was checked.
    pub fn store(error: Error) -> Self {
        let status = StatusCode::from_u16(store_status(error.code())).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        ApiError { status, code: error.code(), message: error.to_string() }
    }

    pub fn internal(message: impl Into<String>) -> Self {
        ApiError { status: StatusCode::INTERNAL_SERVER_ERROR, code: "internal", message: message.into() }
    }

    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError { status, code, message: message.into() }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"code": self.code, "message": self.message}});
        (self.status, Json(body)).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use context_workbench::{HostError, HostErrorKind};

    #[test]
    fn statuses_follow_the_error_code() {
        let missing = Error::from(HostError::new(HostErrorKind::NotFound, "no trace `x`"));
        assert_eq!(ApiError::store(missing).status, StatusCode::NOT_FOUND);
        let damaged = Error::InvalidInput("goal.json is corrupted".into());
        assert_eq!(ApiError::store(damaged.clone()).status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(ApiError::input(damaged).status, StatusCode::BAD_REQUEST);
        let newer = Error::UnsupportedVersion { found: 9, supported: 1 };
        assert_eq!(ApiError::store(newer).status, StatusCode::CONFLICT);
        let io = Error::from(HostError::new(HostErrorKind::Io, "disk"));
        let api = ApiError::store(io);
        assert_eq!((api.status, api.code), (StatusCode::INTERNAL_SERVER_ERROR, "host_io"));
    }
}
