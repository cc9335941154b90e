//! The proxy's own errors in each provider's shape, so an agent reports them as it reports its
//! provider's: a whole error body, and the event that ends a stream cut short.

use serde_json::json;

use super::route::Format;

/// The error body a provider sends with `status`, carrying `message`.
pub fn error_body(format: Format, status: u16, message: &str) -> String {
    match format {
        Format::Anthropic => {
            let kind = match status {
                400 | 422 => "invalid_request_error",
                401 => "authentication_error",
                403 => "permission_error",
                404 => "not_found_error",
                413 => "request_too_large",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
        }
        Format::OpenAi => {
            let kind = match status {
                400 | 404 | 413 | 422 => "invalid_request_error",
                401 | 403 => "authentication_error",
                429 => "rate_limit_error",
                _ => "server_error",
            };
            json!({"error": {"message": message, "type": kind, "param": null, "code": null}}).to_string()
        }
    }
}

/// The server-sent event that tells the agent its stream ended in an error (Anthropic's `error`
/// event; for OpenAI a chunk with an `error` object, as OpenAI-compatible servers send).
pub fn stream_error_event(format: Format, message: &str) -> String {
    match format {
        Format::Anthropic => format!("event: error\ndata: {}\n\n", error_body(format, 500, message)),
        Format::OpenAi => format!("data: {}\n\n", error_body(format, 500, message)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_take_the_providers_shapes() {
        assert_eq!(
            error_body(Format::Anthropic, 413, "too big"),
            r#"{"error":{"message":"too big","type":"request_too_large"},"type":"error"}"#
        );
        assert_eq!(
            error_body(Format::OpenAi, 502, "down"),
            r#"{"error":{"code":null,"message":"down","param":null,"type":"server_error"}}"#
        );
        assert!(stream_error_event(Format::Anthropic, "cut").starts_with("event: error\ndata: {"));
    }
}
