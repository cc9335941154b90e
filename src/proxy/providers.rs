//! Which `Api` a [`Format`] is: the one place the proxy chooses by format, and so where a
//! request body is read (its format's API reads it).

use super::api::Api;
use super::request::{ClientRequest, RequestError};
use super::route::Format;
use super::wire::RawObject;
use super::{anthropic, gemini, openai, responses};
use crate::tokens::TokenCounter;

/// The API of `format`.
pub fn api(format: Format) -> &'static Api {
    match format {
        Format::Anthropic => &anthropic::MESSAGES,
        Format::OpenAi => &openai::CHAT_COMPLETIONS,
        Format::Responses => &responses::RESPONSES,
        Format::Gemini => &gemini::GEMINI,
    }
}

impl ClientRequest {
    /// Read a request body of `format` sent to `path` (without its query); `counter` estimates
    /// what opaque blocks cost. Gemini names the model and whether the reply streams in the
    /// path, not the body; the other formats do not read it.
    pub fn parse_at(
        format: Format,
        path: &str,
        body: &[u8],
        counter: &TokenCounter,
    ) -> Result<ClientRequest, RequestError> {
        let object = RawObject::parse(body).map_err(RequestError::invalid)?;
        (api(format).parse_request)(object, path, counter)
    }

    /// [`ClientRequest::parse_at`] without a path: a Gemini request then has no model and does
    /// not stream. For callers that have only the body (the tests).
    pub fn parse(format: Format, body: &[u8], counter: &TokenCounter) -> Result<ClientRequest, RequestError> {
        ClientRequest::parse_at(format, "", body, counter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_cut_short_ends_with_its_apis_error_event() {
        let error = |format| (api(format).stream_error)("cut");
        assert!(error(Format::Anthropic).starts_with("event: error\ndata: {\"error\""));
        let failed = error(Format::Responses);
        let data: serde_json::Value =
            serde_json::from_str(failed.strip_prefix("event: response.failed\ndata: ").unwrap()).unwrap();
        assert_eq!(
            (data["type"].as_str(), data["response"]["error"]["message"].as_str()),
            (Some("response.failed"), Some("cut"))
        );
        assert!(error(Format::OpenAi).starts_with("data: {\"error\""));
        assert!(error(Format::Gemini).starts_with("data: {\"error\":{\"code\":500"));
    }
}
