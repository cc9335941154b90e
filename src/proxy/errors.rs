//! The proxy's own errors in each provider's shape, so an agent reports them as it reports its
//! provider's: a whole error body, and the event that ends a stream cut short.

use serde_json::json;

use super::route::Provider;

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

/// A provider's refusal of a request as invalid: Anthropic's and OpenAI's
/// `invalid_request_error`, Gemini's `INVALID_ARGUMENT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// What the provider said, on one line and at most [`REFUSAL_CHARS`] characters.
    pub message: String,
    /// It refuses the prompt for its length (too many tokens for the model).
    pub for_length: bool,
}

/// How much of a refusal's message is kept.
pub const REFUSAL_CHARS: usize = 300;

/// The refusal `body` (a reply with status 400) carries, if the provider refused the request as
/// invalid; `None` for any other error, or a body of no provider's shape.
pub fn invalid_request(provider: Provider, body: &str) -> Option<Refusal> {
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    let error = value.get("error")?;
    let kind = match provider {
        Provider::Anthropic | Provider::OpenAi => error.get("type"),
        Provider::Gemini => error.get("status"),
    };
    if !matches!(kind.and_then(|k| k.as_str()), Some("invalid_request_error" | "INVALID_ARGUMENT")) {
        return None;
    }
    let said = error.get("message").and_then(|m| m.as_str()).unwrap_or("");
    let code = error.get("code").and_then(|c| c.as_str()).unwrap_or("");
    let lower = said.to_lowercase();
    let for_length = code == "context_length_exceeded" || LENGTH_WORDS.iter().any(|w| lower.contains(w));
    let message: String = said.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(REFUSAL_CHARS).collect();
    Some(Refusal { message, for_length })
}

/// What the providers' refusals of a prompt too long for the model say.
const LENGTH_WORDS: [&str; 6] =
    ["prompt is too long", "context length", "context window", "maximum context", "too many tokens", "token count"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_as_invalid_are_read_in_each_providers_shape() {
        let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.3: `tool_use` ids were found without `tool_result` blocks"}}"#;
        let refusal = invalid_request(Provider::Anthropic, anthropic).unwrap();
        assert!(refusal.message.starts_with("messages.3: `tool_use` ids") && !refusal.for_length);
        let long = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 212345 tokens > 200000 maximum"}}"#;
        assert!(invalid_request(Provider::Anthropic, long).unwrap().for_length);
        let openai = r#"{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        assert!(invalid_request(Provider::OpenAi, openai).unwrap().for_length);
        let gemini = r#"{"error":{"code":400,"message":"Invalid JSON payload","status":"INVALID_ARGUMENT"}}"#;
        assert_eq!(invalid_request(Provider::Gemini, gemini).unwrap().message, "Invalid JSON payload");
        // Other errors, and bodies of no provider's shape, are no refusal as invalid.
        let overloaded = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(invalid_request(Provider::Anthropic, overloaded), None);
        assert_eq!(invalid_request(Provider::OpenAi, "Bad Request"), None);
        let huge = format!(r#"{{"error":{{"type":"invalid_request_error","message":"{}"}}}}"#, "x ".repeat(1000));
        assert_eq!(invalid_request(Provider::OpenAi, &huge).unwrap().message.chars().count(), REFUSAL_CHARS);
    }

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
    }
}
