//! Where the proxy sends each provider's requests: the `--upstream` flags read once for every
//! shell, and the URL of a request under its upstream.

use super::route::{Provider, Route, upstream_url};

/// The upstream base URL of each provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstreams {
    bases: [String; 3],
}

impl Default for Upstreams {
    fn default() -> Self {
        Upstreams { bases: Provider::ALL.map(|p| p.default_upstream().to_owned()) }
    }
}

impl Upstreams {
    /// The providers' own APIs unless a flag names another: `URL` (every provider) or
    /// `NAME=URL` (`anthropic`, `openai`, `gemini`), later flags winning.
    pub fn from_flags<S: AsRef<str>>(flags: &[S]) -> Result<Upstreams, String> {
        let mut upstreams = Upstreams::default();
        for flag in flags.iter().map(AsRef::as_ref) {
            let named = flag.split_once('=').and_then(|(name, url)| {
                let provider = Provider::ALL.into_iter().find(|p| p.name() == name)?;
                Some((Some(provider), url))
            });
            let (target, url) = named.unwrap_or((None, flag));
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!(
                    "--upstream `{flag}`: expected URL, anthropic=URL, openai=URL or gemini=URL with http(s)://"
                ));
            }
            let url = url.trim_end_matches('/');
            for provider in Provider::ALL.into_iter().filter(|p| target.is_none_or(|t| t == *p)) {
                upstreams.bases[provider as usize] = url.to_owned();
            }
        }
        Ok(upstreams)
    }

    pub fn base(&self, provider: Provider) -> &str {
        &self.bases[provider as usize]
    }

    /// Where a request of `route` with this path and query goes.
    pub fn url(&self, route: Route, target: &str) -> String {
        upstream_url(self.base(route.provider()), route, target)
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
    fn flags_name_one_upstream_or_every_one() {
        let every = Upstreams::from_flags(&["http://127.0.0.1:9/"]).unwrap();
        assert!(Provider::ALL.iter().all(|&p| every.base(p) == "http://127.0.0.1:9"));
        let one = Upstreams::from_flags(&["openai=https://openrouter.ai/api/v1", "gemini=http://g"]).unwrap();
        assert_eq!(one.base(Provider::Anthropic), "https://api.anthropic.com");
        assert_eq!(one.base(Provider::Gemini), "http://g");
        let chat = Route::Managed(super::super::Format::OpenAi);
        assert_eq!(one.url(chat, "/v1/chat/completions"), "https://openrouter.ai/api/v1/chat/completions");
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
