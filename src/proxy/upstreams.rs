//! Where the proxy sends each provider's requests: the `--upstream` flags read once for every
//! shell, and the URL of a request under its upstream.

use super::route::{Provider, Route, upstream_url};

/// The upstream base URL of each provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstreams {
    bases: [String; 3],
    /// A query each request to the provider's upstream carries (`api-version=…`), never shown.
    queries: [String; 3],
    /// The provider a `NAME=URL` flag named alone (no other flag given): where a request of no
    /// provider's API goes (Claude Code's `HEAD /api/hello` with only an Anthropic upstream).
    alone: Option<Provider>,
}

impl Default for Upstreams {
    fn default() -> Self {
        Upstreams {
            bases: Provider::ALL.map(|p| p.default_upstream().to_owned()),
            queries: Default::default(),
            alone: None,
        }
    }
}

impl Upstreams {
    /// The providers' own APIs unless a flag names another: `URL` (every provider) or
    /// `NAME=URL` (`anthropic`, `openai`, `gemini`), later flags winning. A URL's query goes on
    /// every request to it, after the request's own.
    pub fn from_flags<S: AsRef<str>>(flags: &[S]) -> Result<Upstreams, String> {
        let mut upstreams = Upstreams::default();
        for flag in flags.iter().map(AsRef::as_ref) {
            let named = flag.split_once('=').and_then(|(name, url)| {
                let provider = Provider::ALL.into_iter().find(|p| p.name() == name)?;
                Some((Some(provider), url))
            });
            let (target, url) = named.unwrap_or((None, flag));
            upstreams.alone = if flags.len() == 1 { target } else { None };
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!(
                    "--upstream `{flag}`: expected URL, anthropic=URL, openai=URL or gemini=URL with http(s)://"
                ));
            }
            let url = url.split('#').next().unwrap_or(url);
            let (url, query) = url.split_once('?').unwrap_or((url, ""));
            let url = url.trim_end_matches('/');
            for provider in Provider::ALL.into_iter().filter(|p| target.is_none_or(|t| t == *p)) {
                upstreams.bases[provider as usize] = url.to_owned();
                upstreams.queries[provider as usize] = query.to_owned();
            }
        }
        Ok(upstreams)
    }

    pub fn base(&self, provider: Provider) -> &str {
        &self.bases[provider as usize]
    }

    /// Where a request of no provider's API goes: the provider named alone, else OpenAI (and
    /// every server compatible with it).
    pub fn unknown(&self) -> Provider {
        self.alone.unwrap_or(Provider::OpenAi)
    }

    /// Where a request of `route` with this path and query goes.
    pub fn url(&self, route: Route, target: &str) -> String {
        let url = upstream_url(self.base(route.provider()), route, target);
        match self.queries[route.provider() as usize].as_str() {
            "" => url,
            query if url.contains('?') => format!("{url}&{query}"),
            query => format!("{url}?{query}"),
        }
    }
}

/// `scheme://host[:port]` of a URL: all an error or a log line may name of an upstream (a path,
/// a query or credentials can carry a key).
pub fn origin(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return "the upstream".into() };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    if host.is_empty() { "the upstream".into() } else { format!("{scheme}://{host}") }
}

/// A URL as a log line may show it: without credentials (`user:pass@`).
pub fn without_credentials(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return origin(url) };
    let (authority, tail) = rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()));
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    format!("{scheme}://{host}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_of_no_api_goes_to_the_upstream_named_alone() {
        assert_eq!(Upstreams::from_flags(&["anthropic=http://127.0.0.1:9"]).unwrap().unknown(), Provider::Anthropic);
        assert_eq!(Upstreams::from_flags(&["http://127.0.0.1:9"]).unwrap().unknown(), Provider::OpenAi);
        let two = Upstreams::from_flags(&["anthropic=http://a.example", "gemini=http://g.example"]).unwrap();
        assert_eq!(two.unknown(), Provider::OpenAi);
        assert_eq!(Upstreams::default().unknown(), Provider::OpenAi);
    }

    #[test]
    fn flags_name_one_upstream_or_every_one() {
        let every = Upstreams::from_flags(&["http://127.0.0.1:9/"]).unwrap();
        assert!(Provider::ALL.iter().all(|&p| every.base(p) == "http://127.0.0.1:9"));
        let one = Upstreams::from_flags(&["openai=https://openrouter.ai/api/v1", "gemini=http://g"]).unwrap();
        assert_eq!(one.base(Provider::Anthropic), "https://api.anthropic.com");
        assert_eq!(one.base(Provider::Gemini), "http://g");
        let chat = Route::Managed(super::super::Format::OpenAi);
        assert_eq!(one.url(chat, "/v1/chat/completions"), "https://openrouter.ai/api/v1/chat/completions");
        // A query on the flag (Azure's `api-version`) goes on every request, after the path.
        let azure = Upstreams::from_flags(&["openai=https://az.example/openai/v1?api-version=1&key=k"]).unwrap();
        assert_eq!(azure.base(Provider::OpenAi), "https://az.example/openai/v1", "shown without its query");
        let url = azure.url(chat, "/v1/chat/completions");
        assert_eq!(url, "https://az.example/openai/v1/chat/completions?api-version=1&key=k");
        assert_eq!(
            azure.url(chat, "/v1/chat/completions?x=2"),
            "https://az.example/openai/v1/chat/completions?x=2&api-version=1&key=k"
        );
        let error = Upstreams::from_flags(&["ftp://x"]).unwrap_err();
        assert_eq!(
            error,
            "--upstream `ftp://x`: expected URL, anthropic=URL, openai=URL or gemini=URL with http(s)://"
        );
    }

    #[test]
    fn an_origin_names_no_path_query_or_credentials() {
        assert_eq!(origin("https://user:pass@gateway.example:8443/v1/x?key=k"), "https://gateway.example:8443");
        assert_eq!(origin("http://127.0.0.1:9"), "http://127.0.0.1:9");
        assert_eq!(origin("nonsense"), "the upstream");
        assert_eq!(without_credentials("https://u:p@gw.example/v1"), "https://gw.example/v1");
    }
}
