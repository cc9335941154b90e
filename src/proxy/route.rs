//! Which API a request is for, whether the proxy manages it, and where it goes. A request is
//! classified by its path and method (what the API is), its headers deciding only for paths
//! every provider has (`/v1/models`).

/// Where a proxy serves its dashboard (the page, its modules and the store's API, as `workbench
/// serve` has them at its root): a path no provider's API uses.
pub const DASHBOARD_PATH: &str = "/workbench";

/// The path within the dashboard that `path` names (`/` for the bare prefix), or `None` for an
/// agent's request.
pub fn dashboard_path(path: &str) -> Option<&str> {
    match path.strip_prefix(DASHBOARD_PATH)? {
        "" => Some("/"),
        rest if rest.starts_with('/') => Some(rest),
        _ => None,
    }
}

/// The wire format of a conversation API the engine manages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    /// Anthropic Messages (`POST /v1/messages`).
    Anthropic,
    /// OpenAI Chat Completions (`POST /v1/chat/completions`).
    OpenAi,
    /// OpenAI Responses (`POST /v1/responses`).
    Responses,
    /// Google's Gemini API (`POST /v1beta/models/{model}:generateContent` and
    /// `:streamGenerateContent`).
    Gemini,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Anthropic => "anthropic",
            Format::OpenAi => "openai",
            Format::Responses => "responses",
            Format::Gemini => "gemini",
        }
    }

    /// The format `name` names (`anthropic`, `openai`, `responses`, `gemini`).
    pub fn from_name(name: &str) -> Option<Format> {
        [Format::Anthropic, Format::OpenAi, Format::Responses, Format::Gemini].into_iter().find(|f| f.name() == name)
    }

    /// The provider whose API this is.
    pub fn provider(self) -> Provider {
        match self {
            Format::Anthropic => Provider::Anthropic,
            Format::OpenAi | Format::Responses => Provider::OpenAi,
            Format::Gemini => Provider::Gemini,
        }
    }

    /// The API's own path (`/v1/messages`), which a client may send without its `/v1`; `None`
    /// for Gemini, whose paths always carry their version and model.
    fn path(self) -> Option<&'static str> {
        match self {
            Format::Anthropic => Some("/v1/messages"),
            Format::OpenAi => Some("/v1/chat/completions"),
            Format::Responses => Some("/v1/responses"),
            Format::Gemini => None,
        }
    }
}

/// Whose API a request is for: the upstream it goes to and the shape of the proxy's own errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Provider {
    Anthropic,
    /// OpenAI and every server compatible with it (Chat Completions, Responses, `/v1/models`).
    OpenAi,
    /// Google's Gemini API (`/v1beta/models/{model}:generateContent`).
    Gemini,
}

impl Provider {
    pub const ALL: [Provider; 3] = [Provider::Anthropic, Provider::OpenAi, Provider::Gemini];

    /// Its name in `--upstream NAME=URL` and in log lines.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::OpenAi => "openai",
            Provider::Gemini => "gemini",
        }
    }

    /// The provider's own API, where requests go unless the upstream is overridden.
    pub fn default_upstream(self) -> &'static str {
        match self {
            Provider::Anthropic => "https://api.anthropic.com",
            Provider::OpenAi => "https://api.openai.com",
            Provider::Gemini => "https://generativelanguage.googleapis.com",
        }
    }
}

/// What the proxy does with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// A conversation turn the engine manages (unless it is a side call).
    Managed(Format),
    /// Anything else (`/v1/models`, `/v1/messages/count_tokens`, APIs not managed yet): sent to
    /// the provider's upstream unchanged; `why` goes in its log line.
    Passthrough { provider: Provider, why: &'static str },
}

impl Route {
    /// The format of a managed route.
    pub fn managed(self) -> Option<Format> {
        match self {
            Route::Managed(format) => Some(format),
            Route::Passthrough { .. } => None,
        }
    }

    pub fn provider(self) -> Provider {
        match self {
            Route::Managed(format) => format.provider(),
            Route::Passthrough { provider, .. } => provider,
        }
    }
}

/// What a request's headers say of its provider, for the paths that do not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeaderHints {
    /// `x-api-key` or `anthropic-version`, or Claude Code's user agent.
    pub anthropic: bool,
    /// `x-goog-api-key`.
    pub gemini: bool,
    /// Where a request of no provider's API goes (OpenAI when `None`).
    pub unknown: Option<Provider>,
}

/// The route of a request. `path` may carry a query string (`/v1/messages?beta=true`), which is
/// kept as it is when the request is forwarded.
pub fn classify(method: &str, path: &str, hints: HeaderHints) -> Route {
    let bare = path.split(['?', '#']).next().unwrap_or("").trim_end_matches('/');
    let unversioned = bare.strip_prefix("/v1").filter(|rest| rest.starts_with('/')).unwrap_or(bare);
    let post = method.eq_ignore_ascii_case("POST");
    let pass = |provider, why| Route::Passthrough { provider, why };
    match unversioned {
        "/messages" if post => Route::Managed(Format::Anthropic),
        "/chat/completions" if post => Route::Managed(Format::OpenAi),
        "/responses" if post => Route::Managed(Format::Responses),
        _ if post && is_gemini(bare) && bare.ends_with("enerateContent") => Route::Managed(Format::Gemini),
        _ if is_gemini(bare) || hints.gemini => pass(Provider::Gemini, "passed through"),
        p if p.starts_with("/responses/") => pass(Provider::OpenAi, "passed through"),
        p if hints.anthropic || p.starts_with("/messages") || p.starts_with("/complete") => {
            pass(Provider::Anthropic, "passed through")
        }
        _ => pass(hints.unknown.unwrap_or(Provider::OpenAi), "passed through"),
    }
}

/// A Gemini API path: under `/v1beta` or `/v1alpha`, or a model's method
/// (`/v1/models/gemini-2.5-pro:generateContent`); OpenAI's `/v1/models/{id}` has no method.
fn is_gemini(bare: &str) -> bool {
    let first = bare.trim_start_matches('/').split('/').next().unwrap_or("");
    let method = bare.rsplit('/').next().is_some_and(|last| last.contains(':'));
    first == "v1beta" || first == "v1alpha" || (bare.contains("/models/") && method)
}

/// The upstream URL of a request of `route`: `base` (a server, or an API base with a path such
/// as `…/v1`) joined with the request's path and query. A managed API's path gets its version
/// toward a bare server (`/messages` → `/v1/messages`); a path is never given a segment its base
/// already ends with (`…/v1` + `/v1/models` → `…/v1/models`, `…/v1beta` + `/v1beta/models/…`).
pub fn upstream_url(base: &str, route: Route, target: &str) -> String {
    let base = base.trim_end_matches('/');
    let target = if target.starts_with('/') { target.to_owned() } else { format!("/{target}") };
    let (path, query) = target.split_at(target.find(['?', '#']).unwrap_or(target.len()));
    let bare_server = base.split_once("://").is_none_or(|(_, rest)| !rest.contains('/'));
    let path = match route {
        Route::Managed(format) if bare_server && !path.starts_with("/v1/") => format.path().unwrap_or(path).to_owned(),
        _ => path.to_owned(),
    };
    let last = base.rsplit('/').next().unwrap_or("");
    let path = match path.strip_prefix('/').and_then(|p| p.strip_prefix(last)) {
        Some(rest) if !bare_server && (rest.is_empty() || rest.starts_with('/')) => rest.to_owned(),
        _ => path,
    };
    format!("{base}{path}{query}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: HeaderHints = HeaderHints { anthropic: false, gemini: false, unknown: None };
    const ANTHROPIC: HeaderHints = HeaderHints { anthropic: true, gemini: false, unknown: None };

    fn provider(method: &str, path: &str, hints: HeaderHints) -> Provider {
        classify(method, path, hints).provider()
    }

    #[test]
    fn routes_by_api_then_by_header() {
        assert_eq!(classify("POST", "/v1/messages?beta=true", ANTHROPIC), Route::Managed(Format::Anthropic));
        assert_eq!(classify("POST", "/messages", NONE), Route::Managed(Format::Anthropic), "Cline's form");
        assert_eq!(classify("POST", "/v1/chat/completions", NONE), Route::Managed(Format::OpenAi));
        assert_eq!(classify("POST", "/chat/completions/", ANTHROPIC), Route::Managed(Format::OpenAi));
        assert_eq!(provider("POST", "/v1/messages/count_tokens?beta=true", NONE), Provider::Anthropic);
        assert_eq!(provider("GET", "/v1/messages", NONE), Provider::Anthropic);
        assert_eq!(provider("GET", "/v1/models", ANTHROPIC), Provider::Anthropic);
        assert_eq!(provider("GET", "/v1/models", NONE), Provider::OpenAi);
        assert_eq!(provider("GET", "/v1/models/gpt-4o", NONE), Provider::OpenAi);
        assert_eq!(provider("HEAD", "/api/hello", NONE), Provider::OpenAi);
        let responses = classify("POST", "/v1/responses", ANTHROPIC);
        assert_eq!(responses, Route::Managed(Format::Responses), "the path decides, not a stray header");
        assert_eq!(classify("POST", "/responses", NONE), Route::Managed(Format::Responses));
        assert_eq!(provider("GET", "/responses/resp_1", ANTHROPIC), Provider::OpenAi);
        assert_eq!(provider("POST", "/v1/responses/compact", NONE), Provider::OpenAi);
        let gemini = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse";
        assert_eq!(classify("POST", gemini, ANTHROPIC), Route::Managed(Format::Gemini));
        assert_eq!(
            classify("POST", "/v1/models/gemini-2.5-flash:generateContent", NONE),
            Route::Managed(Format::Gemini)
        );
        assert_eq!(provider("POST", "/v1beta/models/gemini-2.5-pro:countTokens", NONE), Provider::Gemini);
        assert!(classify("POST", "/v1beta/models/gemini-2.5-pro:countTokens", NONE).managed().is_none());
        assert_eq!(provider("GET", "/v1beta/models", NONE), Provider::Gemini);
        let gemini_hint = HeaderHints { gemini: true, ..NONE };
        assert_eq!(provider("GET", "/v1/models", gemini_hint), Provider::Gemini);
        // A path of no provider's API goes where the proxy was told to send its requests.
        let anthropic_only = HeaderHints { unknown: Some(Provider::Anthropic), ..NONE };
        assert_eq!(provider("HEAD", "/api/hello", anthropic_only), Provider::Anthropic);
        assert_eq!(provider("GET", "/v1/models", anthropic_only), Provider::Anthropic);
        assert_eq!(provider("POST", "/v1/chat/completions", anthropic_only), Provider::OpenAi, "the path decides");
    }

    fn url(base: &str, route: Route, target: &str) -> String {
        upstream_url(base, route, target)
    }

    #[test]
    fn upstream_urls_keep_the_query_and_never_double_a_prefix() {
        let messages = Route::Managed(Format::Anthropic);
        let chat = Route::Managed(Format::OpenAi);
        let other = |provider| Route::Passthrough { provider, why: "" };
        assert_eq!(
            url("https://api.anthropic.com", messages, "/v1/messages?beta=true"),
            "https://api.anthropic.com/v1/messages?beta=true"
        );
        assert_eq!(url("https://api.anthropic.com/", messages, "/messages"), "https://api.anthropic.com/v1/messages");
        assert_eq!(
            url("https://api.openai.com", chat, "/chat/completions"),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(
            url("http://127.0.0.1:9/v1/", chat, "/v1/chat/completions"),
            "http://127.0.0.1:9/v1/chat/completions"
        );
        assert_eq!(url("http://h/v1", chat, "/chat/completions"), "http://h/v1/chat/completions");
        assert_eq!(
            url("https://generativelanguage.googleapis.com/v1beta/openai", chat, "/chat/completions"),
            "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions"
        );
        assert_eq!(url("http://h/base", other(Provider::OpenAi), "/v1/models"), "http://h/base/v1/models");
        let gemini = "/v1beta/models/g:streamGenerateContent?alt=sse";
        assert_eq!(
            url("https://generativelanguage.googleapis.com", other(Provider::Gemini), gemini),
            "https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            url("http://gw", Route::Managed(Format::Gemini), gemini),
            "http://gw/v1beta/models/g:streamGenerateContent?alt=sse",
            "a Gemini path keeps its own version"
        );
        assert_eq!(
            url("http://gw/v1beta", other(Provider::Gemini), gemini),
            "http://gw/v1beta/models/g:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            url("http://gw/v1", other(Provider::OpenAi), "/v1beta/x"),
            "http://gw/v1/v1beta/x",
            "a whole segment"
        );
    }
}
