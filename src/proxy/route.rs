//! Which requests the proxy manages, which provider a request is for, and where it goes.

/// The wire format of a provider's API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    /// Anthropic Messages (`POST /v1/messages`).
    Anthropic,
    /// OpenAI Chat Completions (`POST /v1/chat/completions`).
    OpenAi,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Anthropic => "anthropic",
            Format::OpenAi => "openai",
        }
    }

    /// The format `name` names (`anthropic`, `openai`).
    pub fn from_name(name: &str) -> Option<Format> {
        [Format::Anthropic, Format::OpenAi].into_iter().find(|f| f.name() == name)
    }

    /// The provider's own API, where requests go unless the upstream is overridden.
    pub fn default_upstream(self) -> &'static str {
        match self {
            Format::Anthropic => "https://api.anthropic.com",
            Format::OpenAi => "https://api.openai.com",
        }
    }
}

/// What the proxy does with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// A conversation turn the engine manages (unless it is a side call).
    Managed(Format),
    /// Anything else (`/v1/models`, `/v1/messages/count_tokens`, unknown routes): sent to the
    /// provider's upstream unchanged.
    Passthrough(Format),
}

impl Route {
    pub fn format(self) -> Format {
        match self {
            Route::Managed(format) | Route::Passthrough(format) => format,
        }
    }
}

/// The route of a request. `path` may carry a query string (`/v1/messages?beta=true`), which is
/// kept as it is when the request is forwarded. `anthropic_headers` says whether the request
/// carries `x-api-key` or `anthropic-version` (how a pass-through request is told apart).
pub fn classify(method: &str, path: &str, anthropic_headers: bool) -> Route {
    let bare = path.split(['?', '#']).next().unwrap_or("").trim_end_matches('/');
    let post = method.eq_ignore_ascii_case("POST");
    if post && bare == "/v1/messages" {
        return Route::Managed(Format::Anthropic);
    }
    if post && (bare == "/v1/chat/completions" || bare == "/chat/completions") {
        return Route::Managed(Format::OpenAi);
    }
    let anthropic = anthropic_headers || bare.starts_with("/v1/messages") || bare.starts_with("/v1/complete");
    Route::Passthrough(if anthropic { Format::Anthropic } else { Format::OpenAi })
}

/// The upstream URL of a request: `base` (a server, or a `…/v1` base) joined with the request's
/// path and query, without doubling a `/v1`.
pub fn upstream_url(base: &str, path: &str) -> String {
    let base = base.trim_end_matches('/');
    let path = if path.starts_with('/') { path.to_owned() } else { format!("/{path}") };
    match path.strip_prefix("/v1/") {
        Some(rest) if base.ends_with("/v1") => format!("{base}/{rest}"),
        _ => format!("{base}{path}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_by_method_and_path() {
        assert_eq!(classify("POST", "/v1/messages?beta=true", true), Route::Managed(Format::Anthropic));
        assert_eq!(classify("POST", "/v1/chat/completions", false), Route::Managed(Format::OpenAi));
        assert_eq!(classify("POST", "/chat/completions", false), Route::Managed(Format::OpenAi));
        assert_eq!(
            classify("POST", "/v1/messages/count_tokens?beta=true", true),
            Route::Passthrough(Format::Anthropic)
        );
        assert_eq!(classify("GET", "/v1/messages", false), Route::Passthrough(Format::Anthropic));
        assert_eq!(classify("GET", "/v1/models", true), Route::Passthrough(Format::Anthropic));
        assert_eq!(classify("GET", "/v1/models", false), Route::Passthrough(Format::OpenAi));
        assert_eq!(classify("HEAD", "/api/hello", false), Route::Passthrough(Format::OpenAi));
    }

    #[test]
    fn upstream_urls_keep_the_query_and_one_v1() {
        assert_eq!(
            upstream_url("https://api.anthropic.com", "/v1/messages?beta=true"),
            "https://api.anthropic.com/v1/messages?beta=true"
        );
        assert_eq!(
            upstream_url("http://127.0.0.1:9/v1/", "/v1/chat/completions"),
            "http://127.0.0.1:9/v1/chat/completions"
        );
        assert_eq!(upstream_url("http://h/base", "/v1/models"), "http://h/base/v1/models");
        assert_eq!(upstream_url("http://h/v1", "/chat/completions"), "http://h/v1/chat/completions");
    }
}
