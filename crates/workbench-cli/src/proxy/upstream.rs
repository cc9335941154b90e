//! The native proxy's bytes: a streaming HTTPS client to the upstream (reqwest, rustls) that
//! sends the headers the gateway lets cross, the upstream's reply read piece by piece (silent
//! past the timeout, or cut short at a stop), and the body the agent reads as pieces arrive.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method};
use context_workbench::proxy::gateway::passes_to_upstream;
use context_workbench::proxy::{Cause, End, Failure};
use tokio::sync::{mpsc, watch};

/// The client every request shares, and how long the upstream may stay silent.
pub struct Upstream {
    client: reqwest::Client,
    pub timeout: Duration,
}

impl Upstream {
    pub fn new(timeout: Duration) -> Result<Upstream, String> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .tcp_nodelay(true)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot start the HTTP client: {e}"))?;
        Ok(Upstream { client, timeout })
    }

    /// Send a request to `url` with the agent's headers that cross (its key among them:
    /// forwarded, never logged). `managed`: the reply is read on the way, uncompressed.
    pub async fn send(
        &self,
        url: &str,
        method: &str,
        headers: &HeaderMap,
        body: Bytes,
        managed: bool,
        mut cut: watch::Receiver<bool>,
    ) -> Result<reqwest::Response, Failure> {
        let mut forwarded = HeaderMap::new();
        for (name, value) in headers {
            if passes_to_upstream(name.as_str(), managed) {
                forwarded.append(name.clone(), value.clone());
            }
        }
        let method = Method::from_bytes(method.as_bytes()).unwrap_or(Method::POST);
        let request = self.client.request(method, url).headers(forwarded).body(body);
        tokio::select! {
            sent = tokio::time::timeout(self.timeout, request.send()) => match sent {
                Ok(Ok(response)) => Ok(response),
                Ok(Err(e)) => Err(Failure::Unreachable(cause(&e))),
                Err(_) => Err(Failure::Timeout),
            },
            _ = cut.wait_for(|cut| *cut) => Err(Failure::Stopped),
        }
    }
}

fn cause(error: &reqwest::Error) -> Cause {
    if error.is_connect() {
        Cause::CannotConnect
    } else if error.is_timeout() {
        Cause::TimedOut
    } else {
        Cause::Other
    }
}

/// The upstream's reply body, read piece by piece.
pub struct UpstreamBody {
    response: reqwest::Response,
    timeout: Duration,
    cut: watch::Receiver<bool>,
}

impl UpstreamBody {
    pub fn new(response: reqwest::Response, timeout: Duration, cut: watch::Receiver<bool>) -> UpstreamBody {
        UpstreamBody { response, timeout, cut }
    }

    /// The next piece: `Ok(None)` at its end; how it ended otherwise.
    pub async fn next(&mut self) -> Result<Option<Bytes>, End> {
        tokio::select! {
            read = tokio::time::timeout(self.timeout, self.response.chunk()) => match read {
                Ok(Ok(chunk)) => Ok(chunk),
                Ok(Err(_)) => Err(End::BrokeOff),
                Err(_) => Err(End::Silent(self.timeout.as_millis() as u64)),
            },
            _ = self.cut.wait_for(|cut| *cut) => Err(End::Stopped),
        }
    }
}

/// The writing end of the body the agent reads.
pub struct AgentBody(mpsc::Sender<Bytes>);

impl AgentBody {
    /// The writing end and the body that gives the agent what it is given.
    pub fn new() -> (AgentBody, Body) {
        let (to_agent, from_upstream) = mpsc::channel::<Bytes>(32);
        let stream = futures_util::stream::unfold(from_upstream, |mut rx| async move {
            rx.recv().await.map(|bytes| (Ok::<Bytes, Infallible>(bytes), rx))
        });
        (AgentBody(to_agent), Body::from_stream(stream))
    }

    /// Resolves once the agent has gone (its connection dropped the body).
    pub async fn closed(&self) {
        self.0.closed().await;
    }

    /// Hand `bytes` to the agent; `false` when it has gone.
    pub async fn give(&self, bytes: Bytes) -> bool {
        self.0.send(bytes).await.is_ok()
    }
}
