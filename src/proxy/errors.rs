//! The proxy's own errors in each provider's shape, so an agent reports them as it reports its
//! provider's: a whole error body, and the event that ends a stream cut short.

use serde_json::json;

use super::route::{Format, Provider};

/// The error body a provider sends with `status`, carrying `message`.
pub fn error_body(provider: Provider, status: u16, message: &str) -> String {
    match provider {
        Provider::Anthropic => {
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
        Provider::OpenAi => {
            let kind = match status {
                400 | 404 | 413 | 422 => "invalid_request_error",
                401 | 403 => "authentication_error",
                429 => "rate_limit_error",
                _ => "server_error",
            };
            json!({"error": {"message": message, "type": kind, "param": null, "code": null}}).to_string()
        }
        Provider::Gemini => {
            let kind = match status {
                400 | 413 | 422 => "INVALID_ARGUMENT",
                401 => "UNAUTHENTICATED",
                403 => "PERMISSION_DENIED",
                404 => "NOT_FOUND",
                408 | 504 => "DEADLINE_EXCEEDED",
                429 => "RESOURCE_EXHAUSTED",
                502 | 503 => "UNAVAILABLE",
                _ => "INTERNAL",
            };
            json!({"error": {"code": status, "message": message, "status": kind}}).to_string()
        }
    }
}

/// The server-sent event that tells the agent its stream ended in an error: Anthropic's `error`
/// event, the Responses API's `response.failed`; for Chat Completions and Gemini an event whose
/// data is the error body, as their servers send.
pub fn stream_error_event(format: Format, message: &str) -> String {
    let provider = format.provider();
    match format {
        Format::Anthropic => format!("event: error\ndata: {}\n\n", error_body(provider, 500, message)),
        Format::Responses => {
            let error = json!({"code": "server_error", "message": message});
            let response = json!({"object": "response", "status": "failed", "error": error});
            format!("event: response.failed\ndata: {}\n\n", json!({"type": "response.failed", "response": response}))
        }
        Format::OpenAi | Format::Gemini => format!("data: {}\n\n", error_body(provider, 500, message)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_take_the_providers_shapes() {
        assert_eq!(
            error_body(Provider::Anthropic, 413, "too big"),
            r#"{"error":{"message":"too big","type":"request_too_large"},"type":"error"}"#
        );
        assert_eq!(
            error_body(Provider::OpenAi, 502, "down"),
            r#"{"error":{"code":null,"message":"down","param":null,"type":"server_error"}}"#
        );
        assert_eq!(
            error_body(Provider::Gemini, 413, "too big"),
            r#"{"error":{"code":413,"message":"too big","status":"INVALID_ARGUMENT"}}"#
        );
        assert!(stream_error_event(Format::Anthropic, "cut").starts_with("event: error\ndata: {"));
        let failed = stream_error_event(Format::Responses, "cut");
        let data: serde_json::Value =
            serde_json::from_str(failed.strip_prefix("event: response.failed\ndata: ").unwrap()).unwrap();
        assert_eq!(
            (data["type"].as_str(), data["response"]["error"]["message"].as_str()),
            (Some("response.failed"), Some("cut"))
        );
        assert!(stream_error_event(Format::OpenAi, "cut").starts_with("data: {\"error\""));
    }
}
