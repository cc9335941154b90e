//! Where the proxy sends each provider's requests: the `--upstream` flags read once for every
//! shell, and the URL of a request under its upstream.

use super::route::{Format, upstream_url};

/// The upstream base URL of each format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstreams {
    pub anthropic: String,
    pub openai: String,
}

impl Default for Upstreams {
    fn default() -> Self {
        Upstreams {
            anthropic: Format::Anthropic.default_upstream().to_owned(),
            openai: Format::OpenAi.default_upstream().to_owned(),
        }
    }
}

impl Upstreams {
    /// The providers' own APIs unless a flag names another: `URL` (every route) or
    /// `anthropic=URL` / `openai=URL`, later flags winning.
    pub fn from_flags<S: AsRef<str>>(flags: &[S]) -> Result<Upstreams, String> {
        let mut upstreams = Upstreams::default();
        for flag in flags.iter().map(AsRef::as_ref) {
            let (target, url) = match flag.split_once('=') {
                Some(("anthropic", url)) => (Some(Format::Anthropic), url),
                Some(("openai", url)) => (Some(Format::OpenAi), url),
                _ => (None, flag),
            };
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!("--upstream `{flag}`: expected URL, anthropic=URL or openai=URL with http(s)://"));
            }
            let url = url.trim_end_matches('/').to_owned();
            match target {
                Some(Format::Anthropic) => upstreams.anthropic = url,
                Some(Format::OpenAi) => upstreams.openai = url,
                None => (upstreams.anthropic, upstreams.openai) = (url.clone(), url),
            }
        }
        Ok(upstreams)
    }

    pub fn base(&self, format: Format) -> &str {
        match format {
            Format::Anthropic => &self.anthropic,
            Format::OpenAi => &self.openai,
        }
    }

    /// Where a request for `format` with this path and query goes.
    pub fn url(&self, format: Format, target: &str) -> String {
        upstream_url(self.base(format), target)
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
    fn flags_name_one_upstream_or_both() {
        let both = Upstreams::from_flags(&["http://127.0.0.1:9/"]).unwrap();
        assert_eq!((both.anthropic.as_str(), both.openai.as_str()), ("http://127.0.0.1:9", "http://127.0.0.1:9"));
        let one = Upstreams::from_flags(&["openai=https://openrouter.ai/api/v1"]).unwrap();
        assert_eq!(one.anthropic, "https://api.anthropic.com");
        assert_eq!(one.url(Format::OpenAi, "/v1/chat/completions"), "https://openrouter.ai/api/v1/chat/completions");
        let error = Upstreams::from_flags(&["ftp://x"]).unwrap_err();
        assert_eq!(error, "--upstream `ftp://x`: expected URL, anthropic=URL or openai=URL with http(s)://");
    }

    #[test]
    fn an_origin_names_no_path_query_or_credentials() {
        assert_eq!(origin("https://user:pass@gateway.example:8443/v1/x?key=k"), "https://gateway.example:8443");
        assert_eq!(origin("http://127.0.0.1:9"), "http://127.0.0.1:9");
        assert_eq!(origin("nonsense"), "the upstream");
        assert_eq!(without_credentials("https://u:p@gw.example/v1"), "https://gw.example/v1");
    }
}
