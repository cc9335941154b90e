//! The upstream side: a streaming HTTPS client (reqwest, rustls), the headers that pass in each
//! direction, and the pump that hands a reply to the agent piece by piece as it arrives.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderName, Method, StatusCode, header};
use context_workbench::proxy::{Format, upstream_url};
use tokio::sync::mpsc;

/// Where requests go, and how long the upstream may stay silent.
pub struct Upstream {
    client: reqwest::Client,
    anthropic: String,
    openai: String,
    pub timeout: Duration,
}

/// Why the upstream gave no answer.
pub enum SendError {
    /// It could not be reached (down, refused, a TLS failure); the text names its host only.
    Unreachable(String),
    /// It sent no headers within the timeout.
    Timeout,
}

impl Upstream {
    pub fn new(anthropic: String, openai: String, timeout: Duration) -> Result<Upstream, String> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot start the HTTP client: {e}"))?;
        Ok(Upstream { client, anthropic, openai, timeout })
    }

    pub fn base(&self, format: Format) -> &str {
        match format {
            Format::Anthropic => &self.anthropic,
            Format::OpenAi => &self.openai,
        }
    }

    /// Send a request on to the upstream of `format` with the agent's headers (its key among
    /// them: forwarded, never logged). `plain` asks for an uncompressed reply, which the engine
    /// reads as it passes.
    pub async fn send(
        &self,
        format: Format,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
        body: Bytes,
        plain: bool,
    ) -> Result<reqwest::Response, SendError> {
        let url = upstream_url(self.base(format), path);
        let mut forwarded = HeaderMap::new();
        for (name, value) in headers {
            if passes(name) && !(plain && name == header::ACCEPT_ENCODING) {
                forwarded.append(name.clone(), value.clone());
            }
        }
        let request = self.client.request(method.clone(), &url).headers(forwarded).body(body);
        match tokio::time::timeout(self.timeout, request.send()).await {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(e)) => Err(SendError::Unreachable(describe(&e, &host_of(&url)))),
            Err(_) => Err(SendError::Timeout),
        }
    }
}

/// A header that goes from one side to the other (not hop-by-hop, not recomputed).
pub fn passes(name: &HeaderName) -> bool {
    !matches!(
        name.as_str(),
        "host"
            | "content-length"
            | "connection"
            | "keep-alive"
            | "proxy-connection"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
    )
}

/// The upstream's headers for the agent.
pub fn reply_headers(response: &reqwest::Response) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in response.headers() {
        if passes(name) {
            headers.append(name.clone(), value.clone());
        }
    }
    headers
}

/// Whether the reply is a stream of server-sent events.
pub fn is_event_stream(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/event-stream"))
}

/// How a pumped body ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// The upstream's body ended.
    Done,
    /// The agent closed its connection.
    AgentGone,
    /// The upstream's body broke off, or it went silent past the timeout: why.
    Cut(String),
}

/// The reading end of a reply being pumped, and the writing end the body for the agent reads.
pub struct Pump {
    pub response: reqwest::Response,
    pub to_agent: mpsc::Sender<Bytes>,
    pub timeout: Duration,
}

impl Pump {
    /// A pump from `response` and the body that gives the agent what it sends.
    pub fn new(response: reqwest::Response, timeout: Duration) -> (Pump, Body) {
        let (to_agent, from_upstream) = mpsc::channel::<Bytes>(32);
        let stream = futures_util::stream::unfold(from_upstream, |mut rx| async move {
            rx.recv().await.map(|bytes| (Ok::<Bytes, Infallible>(bytes), rx))
        });
        (Pump { response, to_agent, timeout }, Body::from_stream(stream))
    }

    /// The next piece of the upstream's body: `Ok(None)` at its end.
    pub async fn next(&mut self) -> Result<Option<Bytes>, End> {
        match tokio::time::timeout(self.timeout, self.response.chunk()).await {
            Ok(Ok(chunk)) => Ok(chunk),
            Ok(Err(_)) => Err(End::Cut("the upstream's reply broke off".into())),
            Err(_) => Err(End::Cut(format!("the upstream sent nothing for {} s", self.timeout.as_secs()))),
        }
    }

    /// Hand `bytes` to the agent; `false` when it has gone.
    pub async fn give(&self, bytes: Bytes) -> bool {
        self.to_agent.send(bytes).await.is_ok()
    }
}

/// Forward a whole body without reading it (pass-through routes, side calls).
pub async fn forward(mut pump: Pump) -> End {
    loop {
        match pump.next().await {
            Ok(Some(bytes)) => {
                if !pump.give(bytes).await {
                    return End::AgentGone;
                }
            }
            Ok(None) => return End::Done,
            Err(end) => return end,
        }
    }
}

/// The status of a reply as axum takes it.
pub fn status_of(response: &reqwest::Response) -> StatusCode {
    StatusCode::from_u16(response.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY)
}

/// `scheme://host[:port]` of a URL: what an error may name (never a path or a query, which can
/// carry a key).
fn host_of(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(url) => {
            format!("{}://{}", url.scheme(), url.host_str().unwrap_or("?"))
                + &url.port().map(|p| format!(":{p}")).unwrap_or_default()
        }
        Err(_) => "the upstream".into(),
    }
}

fn describe(error: &reqwest::Error, host: &str) -> String {
    let why = if error.is_connect() {
        "cannot connect"
    } else if error.is_timeout() {
        "timed out"
    } else if error.is_builder() {
        "the request could not be built"
    } else {
        "the request failed"
    };
    format!("upstream {host}: {why}")
}
