//! The proxy's decisions about one request that need no engine session, the same for every
//! shell (the native server, the npm package's Node server): its route, the body limit, what is
//! refused and in which words, what passes through, which headers cross, where it goes upstream,
//! what a failure answers, and every log line. A shell reads bytes, keeps timers and calls these.

use std::collections::VecDeque;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::agents::agent_name;
use super::args::Shell;
use super::errors::{error_body, invalid_request};
use super::pump::{Failure, ReplyPump};
use super::record::CallRecord;
use super::report::{self, Totals};
use super::request::{ClientRequest, SessionKey};
use super::route::{DASHBOARD_PATH, Format, HeaderHints, Provider, Route, classify};
use super::team::{TOKEN_HEADER, Team, presented};
use super::upstreams::{Upstreams, without_credentials};
use crate::config::{Config, ProxyConfig};
use crate::tokens::TokenCounter;

/// Headers an agent may name its session with, besides a session id in the body.
pub const SESSION_HEADERS: [&str; 4] = ["x-claude-code-session-id", "x-session-id", "session-id", "agent-session-id"];

/// What a shell knows of a request before its body: header names in lower case. A header
/// whose value is not text is left out here (it still crosses as it came).
#[derive(Debug, Clone, Default)]
pub struct RequestHead {
    pub method: String,
    /// The path with its query, as the agent sent it.
    pub target: String,
    pub headers: Vec<(String, String)>,
}

impl RequestHead {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The path without its query, which may carry a key: what a log line names.
    pub fn path(&self) -> &str {
        self.target.split(['?', '#']).next().unwrap_or("/")
    }

    /// The request's route ([`classify`]); one of no provider's API goes to `unknown`'s.
    pub fn route(&self, unknown: Option<Provider>) -> Route {
        let claude = self.header("user-agent").is_some_and(|agent| agent.starts_with("claude-cli/"));
        let anthropic = claude || self.header("x-api-key").is_some() || self.header("anthropic-version").is_some();
        let hints = HeaderHints { anthropic, gemini: self.header("x-goog-api-key").is_some(), unknown };
        classify(&self.method, &self.target, hints)
    }
}

/// An answer the proxy gives itself: an error in the provider's shape, and its log line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    pub status: u16,
    /// `application/json`.
    pub body: String,
    pub line: String,
}

impl Answer {
    /// `message` and `line` go out after `who: ` (`workbench proxy: …`).
    fn uncounted(who: &str, route: Route, status: u16, message: &str, line: &str) -> Answer {
        let line = report::one_line(&format!("{who}: {line}"));
        Answer { status, body: error_body(route.provider(), status, &format!("{who}: {message}")), line }
    }
}

/// What to do with a request once its body is read.
#[derive(Debug)]
pub enum Decision {
    /// Send it upstream as it came, the reply back as it comes; `why` goes in its log line. A
    /// side call of an agent session the proxy knows by id carries its record, for the shell to
    /// count in that session once the upstream answers.
    Forward { route: Route, why: String, side: Option<Box<SideCall>> },
    /// Record it in the session of `key` and send the engine's prompt.
    Manage { key: SessionKey, request: Box<ClientRequest> },
    /// The proxy answers itself.
    Answer(Answer),
}

/// A decision as plain data, to cross from the thread that read the body to the one that acts
/// on it (the npm proxy reads a long body on an engine thread): a managed request's content stays
/// where it was read.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "lowercase")]
pub enum Verdict {
    Forward { why: String, side: Option<Box<SideCall>> },
    Manage { key: SessionKey },
    Answer { answer: Answer },
}

impl Decision {
    /// The decision as plain data, and a managed request's content.
    pub fn into_parts(self) -> (Verdict, Option<Box<ClientRequest>>) {
        match self {
            Decision::Forward { why, side, .. } => (Verdict::Forward { why, side }, None),
            Decision::Manage { key, request } => (Verdict::Manage { key }, Some(request)),
            Decision::Answer(answer) => (Verdict::Answer { answer }, None),
        }
    }
}

/// A side call (a title, a classifier's check) of the conversation `key`: it goes upstream as it
/// came and, once answered, is counted with its agent session's calls (#25: one conversation is
/// one session, whatever the agent sends beside it). One without a session id is kept by its
/// conversation key instead, and counted as call 1 of the session a continuation of it opens
/// ([`ClientRequest::opening`]); one that nothing continues is not counted.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SideCall {
    pub key: SessionKey,
    pub record: CallRecord,
}

/// What befell a shell's engine thread outside any request, for [`Gateway::thread_line`].
pub enum ThreadTrouble {
    /// A conversation's thread could not be started (its requests go upstream unmanaged).
    CannotStart(String),
    /// An engine thread ended (how: `exited (1)`) and a new one took its place.
    Replaced(String),
    SideCallPanicked,
}

/// A header that crosses the proxy toward the upstream: not hop-by-hop, not recomputed.
/// `plain`: the shell wants the reply uncompressed (it reads a managed reply as it passes, or
/// its client would decode it anyway), so the agent's `accept-encoding` stays behind.
/// The proxy's own headers ([`UNMANAGED_HEADER`], the team token's) never cross.
pub fn passes_to_upstream(name: &str, plain: bool) -> bool {
    let compression = plain && name.eq_ignore_ascii_case("accept-encoding");
    let own = name.eq_ignore_ascii_case(UNMANAGED_HEADER) || name.eq_ignore_ascii_case(TOKEN_HEADER);
    !(is_hop_by_hop(name) || compression || own)
}

/// A request with this header at `off` goes upstream as the agent sent it (`x-workbench: off`).
pub const UNMANAGED_HEADER: &str = "x-workbench";

/// A header of the upstream's reply that crosses to the agent. `decoded`: the shell's client
/// already undid the reply's compression, so its `content-encoding` no longer holds.
pub fn passes_to_agent(name: &str, decoded: bool) -> bool {
    let undone = decoded && name.eq_ignore_ascii_case("content-encoding");
    !(is_hop_by_hop(name) || undone)
}

fn is_hop_by_hop(name: &str) -> bool {
    const HOP: [&str; 11] = [
        "host",
        "content-length",
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    ];
    HOP.iter().any(|h| h.eq_ignore_ascii_case(name))
}

/// The decisions of one proxy process; shared by every request (`Sync`).
pub struct Gateway {
    /// The shell running it, whose name the lines and the proxy's own errors start with.
    shell: Shell,
    who: &'static str,
    limits: ProxyConfig,
    upstreams: Upstreams,
    counter: TokenCounter,
    totals: Mutex<Totals>,
    /// The latest one-shots of agents that send no session id, by conversation key name: a
    /// text-protocol agent's first call is one until its next call continues it (#26).
    one_shots: Mutex<VecDeque<(String, CallRecord)>>,
    /// Team mode beyond loopback: any `Host` is answered (an `Origin` must still be its own).
    any_host: bool,
}

/// How many recent one-shots the gateway keeps for the conversations they may open.
const ONE_SHOTS: usize = 64;

impl Gateway {
    /// The proxy of `config` (its `proxy` limits and encoding) toward `upstreams`, run by `shell`.
    pub fn new(config: &Config, upstreams: Upstreams, shell: Shell) -> Gateway {
        Gateway {
            shell,
            who: shell.proxy(),
            limits: config.proxy.clone(),
            upstreams,
            counter: TokenCounter::new(config.encoding),
            totals: Mutex::default(),
            one_shots: Mutex::default(),
            any_host: false,
        }
    }

    /// The gateway of a proxy listening beyond loopback, in team mode: requests for any host
    /// name are answered (the team's tokens guard them), another site's `Origin` still is not.
    pub fn answering_any_host(mut self) -> Gateway {
        self.any_host = true;
        self
    }

    /// What the lines and the proxy's own errors start with: `workbench proxy`.
    pub fn who(&self) -> &'static str {
        self.who
    }

    pub fn limits(&self) -> &ProxyConfig {
        &self.limits
    }

    pub fn upstreams(&self) -> &Upstreams {
        &self.upstreams
    }

    pub fn counter(&self) -> &TokenCounter {
        &self.counter
    }

    /// How long a body the proxy answers without reading is read and dropped before the answer
    /// goes (the body's own timeout, 10 s at the most).
    pub fn drain_ms(&self) -> u64 {
        self.limits.body_timeout_ms.min(10_000)
    }

    /// The body limit in bytes (requests and replies alike).
    pub fn body_limit(&self) -> usize {
        usize::try_from(self.limits.max_body_bytes).unwrap_or(usize::MAX)
    }

    /// How much body a request of `route` may have, or its refusal when the body it declares is
    /// over the limit.
    pub fn admit(&self, head: &RequestHead, route: Route) -> Result<usize, Answer> {
        let declared = head.header("content-length").and_then(|v| v.trim().parse::<u64>().ok());
        if declared.is_some_and(|length| length > self.limits.max_body_bytes) {
            return Err(self.body_refused(head, route));
        }
        Ok(self.body_limit())
    }

    /// The answer to a body over the limit, cut short by the agent, or never finished.
    pub fn body_refused(&self, head: &RequestHead, route: Route) -> Answer {
        let limit = self.body_limit();
        let message =
            format!("the request body is over the limit of {limit} bytes (proxy.max_body_bytes) or was cut short");
        let line = format!("{} {}: refused, body over {limit} bytes or cut short", head.method, head.path());
        self.answer(route, 413, &message, &line)
    }

    /// The answer to a body that did not arrive within `proxy.body_timeout_ms`.
    pub fn body_timed_out(&self, head: &RequestHead, route: Route) -> Answer {
        let seconds = self.limits.body_timeout_ms / 1000;
        let message = format!("the request body did not arrive within {seconds} s (proxy.body_timeout_ms)");
        let line = format!("{} {}: refused, the body did not arrive within {seconds} s", head.method, head.path());
        self.answer(route, 408, &message, &line)
    }

    /// The one-shot a managed conversation opened with, if one was kept ([`SideCall`]); taken,
    /// so it is counted once.
    pub fn opening(&self, key: &SessionKey) -> Option<CallRecord> {
        let name = key.name();
        let mut kept = self.one_shots.lock().unwrap_or_else(|e| e.into_inner());
        let at = kept.iter().position(|(n, _)| *n == name)?;
        kept.remove(at).map(|(_, record)| record)
    }

    /// What to do with a request of `route` whose body is `body`, from the body alone: nothing
    /// the gateway keeps is read or changed, so any thread's gateway reads a request alike (the
    /// [`Exchange`](super::exchange::Exchange) takes a managed request's `opening` and counts an
    /// answer). Reading a managed request's body is the engine's heaviest step outside a session:
    /// a shell with threads runs it off its event loop.
    pub fn read(&self, head: &RequestHead, route: Route, body: &[u8]) -> Decision {
        self.read_as(head, route, body, None)
    }

    /// [`Gateway::read`] for a request `person` signed in (team mode): their conversations are
    /// theirs ([`SessionKey::person`]).
    pub fn read_as(&self, head: &RequestHead, route: Route, body: &[u8], person: Option<&str>) -> Decision {
        let format = match route {
            Route::Managed(format) => format,
            Route::Passthrough { why, .. } => return Decision::Forward { route, why: why.into(), side: None },
        };
        if let Some(why) = self.left_unmanaged(head) {
            return Decision::Forward { route, why, side: None };
        }
        match ClientRequest::parse_at(format, head.path(), body, &self.counter) {
            Ok(mut request) => {
                request.agent = agent_name(head.header("user-agent").unwrap_or(""), &request.system_text);
                let header_session = SESSION_HEADERS.iter().find_map(|h| head.header(h));
                let key = request.session_key(header_session, person);
                if self.limits.side_calls && request.is_side_call() {
                    let tokens = request.tokens(&self.counter);
                    let record = CallRecord {
                        model: request.model,
                        agent: request.agent,
                        stream: request.stream,
                        messages: request.messages.len(),
                        new_messages: request.messages.len(),
                        client_tokens: tokens,
                        prompt_tokens: tokens,
                        ..CallRecord::default()
                    };
                    let side = Some(Box::new(SideCall { key, record }));
                    return Decision::Forward { route, why: "side call, passed through".into(), side };
                }
                Decision::Manage { key, request: Box::new(request) }
            }
            Err(e) if e.pass_through => {
                Decision::Forward { route, why: format!("passed through unmanaged ({})", e.message), side: None }
            }
            Err(e) => {
                let line = format!("{} {}: refused ({}): {}", head.method, head.path(), e.status, e.message);
                Decision::Answer(Answer::uncounted(self.who, route, e.status, &e.message, &line))
            }
        }
    }

    /// Why a request of a managed route goes as it came: the project leaves every request
    /// unmanaged (`proxy.manage = false`) or the request itself asks to be (`x-workbench: off`).
    fn left_unmanaged(&self, head: &RequestHead) -> Option<String> {
        if !self.limits.manage {
            return Some("unmanaged (proxy.manage = false), passed through".into());
        }
        let off = head.header(UNMANAGED_HEADER).is_some_and(|v| v.trim().eq_ignore_ascii_case("off"));
        off.then(|| format!("unmanaged ({UNMANAGED_HEADER}: off), passed through"))
    }

    /// What the safety net does with a managed call whose engine's request the upstream
    /// answered `body` with, status 400: the log line and the call's note when the agent's own
    /// request goes instead, or `None` when the refusal stands (not a refusal as invalid, or one
    /// of the prompt's length, which the agent's own, no shorter, would meet too).
    pub fn fallback(&self, head: &RequestHead, route: Route, body: &str) -> Option<(String, String)> {
        let refusal = invalid_request(route.provider(), body).filter(|r| !r.for_length)?;
        let what = format!("the upstream refused the engine's request as invalid ({})", refusal.message);
        let line = report::one_line(&format!(
            "{}: {} {}: {what}; the agent's own request goes instead (the session's `fallbacks` keep it)",
            self.who,
            head.method,
            head.path()
        ));
        Some((line, format!("{what}; the agent's own request was sent instead and answered")))
    }

    /// A side call the upstream answered with `status`: its agent session and its record, to be
    /// counted in that session's latest conversation; `None` for one without a session id, kept
    /// for the conversation it may open.
    pub fn side_call_answered(&self, side: SideCall, status: u16) -> Option<(String, CallRecord)> {
        let record = CallRecord { status: Some(status), ..side.record };
        match side.key.agent_session {
            Some(agent_session) => Some((agent_session, record)),
            None => {
                self.keep_one_shot(side.key.name(), record);
                None
            }
        }
    }

    /// Keep a one-shot of an agent without a session id for the conversation it may open.
    fn keep_one_shot(&self, name: String, record: CallRecord) {
        let mut kept = self.one_shots.lock().unwrap_or_else(|e| e.into_inner());
        kept.retain(|(n, _)| *n != name);
        if kept.len() == ONE_SHOTS {
            kept.pop_front();
        }
        kept.push_back((name, record));
    }

    /// The request's route: by its path and headers, and one of no provider's API to the
    /// upstream named alone ([`Upstreams::unknown`]).
    pub fn route(&self, head: &RequestHead) -> Route {
        head.route(Some(self.upstreams.unknown()))
    }

    /// The upstream URL of a request of `route`.
    pub fn upstream_url(&self, route: Route, head: &RequestHead) -> String {
        self.upstreams.url(route, &head.target)
    }

    /// The log line of a request sent on as it came, with the upstream's status.
    pub fn forwarded(&self, head: &RequestHead, why: &str, status: u16) -> String {
        self.request_line(&format!("{} {}: {why}, status {status}", head.method, head.path()))
    }

    /// The answer to a forwarded request the upstream gave no reply to.
    pub fn forward_failed(&self, head: &RequestHead, route: Route, why: &str, failure: Failure) -> Answer {
        let message = failure.message(&self.upstream_url(route, head));
        let line = format!("{} {}: {why}, {message}", head.method, head.path());
        self.answer(route, failure.status(), &message, &line)
    }

    /// The answer to a managed call the upstream gave no reply to (its log line is the call's),
    /// and why, for its record.
    pub fn call_failed(&self, head: &RequestHead, route: Route, failure: Failure) -> (u16, String, String) {
        let message = failure.message(&self.upstream_url(route, head));
        let body = error_body(route.provider(), failure.status(), &format!("{}: {message}", self.who));
        (failure.status(), body, message)
    }

    /// The answer to a request that failed inside the shell, unexpectedly.
    pub fn internal_error(&self, head: &RequestHead, route: Route, why: &str) -> Answer {
        let line = format!("{} {}: failed: {why}", head.method, head.path());
        self.answer(route, 500, why, &line)
    }

    /// The answer to a request a web page may have sent: its `Host` does not name this machine
    /// (a rebound host name) or it carries another site's `Origin` (#47: the dashboard's rule
    /// holds on every route). A request without a `Host` (HTTP/1.0, no browser) passes.
    pub fn forbidden(&self, head: &RequestHead, route: Route) -> Option<Answer> {
        let host = head.header("host")?;
        let why = if self.any_host {
            crate::dashboard::foreign_origin(host, head.header("origin"))?
        } else {
            crate::dashboard::refusal(host, head.header("origin"))?
        };
        let line = format!("{} {}: refused, {why}", head.method, head.path());
        Some(self.answer(route, 403, &why, &line))
    }

    /// Team mode: sign `head` in with the token it carries (the `x-workbench-token` header, or
    /// the base URL's prefix `/t/<token>`). The prefix comes off the target and the header off
    /// the head whatever the outcome, so neither is routed, forwarded or logged. A live
    /// member's name, or a 401 in the provider's shape.
    pub fn sign_in(&self, head: &mut RequestHead, team: &Team) -> Result<String, Answer> {
        let (token, target) = presented(&head.target, head.header(TOKEN_HEADER));
        head.target = target;
        head.headers.retain(|(name, _)| !name.eq_ignore_ascii_case(TOKEN_HEADER));
        match team.sign_in(token.as_deref()) {
            Ok(member) => Ok(member.name.clone()),
            Err(error) => {
                let line = format!("{} {}: refused, {}", head.method, head.path(), error.reason());
                Err(self.answer(self.route(head), 401, &error.message(), &line))
            }
        }
    }

    /// The answer to a request that arrives while the proxy stops.
    pub fn stopping(&self, head: &RequestHead, route: Route) -> Answer {
        let line = format!("{} {}: refused, the proxy is stopping", head.method, head.path());
        self.answer(route, 503, "the proxy is stopping", &line)
    }

    /// The log line of a managed call, counted in the totals.
    pub fn call_line(&self, record: &CallRecord) -> String {
        self.totals.lock().unwrap_or_else(|e| e.into_inner()).add_call(record);
        report::describe(self.who, record)
    }

    /// The running totals (`N requests, M managed: …`), for a terminal's progress line.
    pub fn progress(&self) -> String {
        self.totals.lock().unwrap_or_else(|e| e.into_inner()).progress()
    }

    /// What `workbench proxy` prints on stdout once listening on `url`: its address and the
    /// lines to paste.
    pub fn banner(&self, url: &str) -> String {
        format!("{url}\nANTHROPIC_BASE_URL={url}\nOPENAI_BASE_URL={url}/v1\ndashboard: {url}{DASHBOARD_PATH}/")
    }

    /// The first log line, once listening: where each provider's requests go.
    pub fn start_line(&self, url: &str, store_dir: &str) -> String {
        let upstreams: Vec<String> = [
            (Provider::Anthropic, "Anthropic Messages"),
            (Provider::OpenAi, "OpenAI Chat Completions and Responses"),
            (Provider::Gemini, "Gemini"),
        ]
        .iter()
        .map(|&(provider, api)| format!("{} ({api})", without_credentials(self.upstreams.base(provider))))
        .collect();
        format!(
            "{}: listening on {url}; upstreams {}; sessions saved under {store_dir}",
            self.who,
            upstreams.join(", ")
        )
    }

    /// The log line of a managed call whose reply its session could not record (`why`).
    pub fn unrecorded_line(&self, head: &RequestHead, why: &str) -> String {
        self.request_line(&format!("{} {}: the reply was not recorded: {why}", head.method, head.path()))
    }

    fn request_line(&self, text: &str) -> String {
        self.count_request();
        report::one_line(&format!("{}: {text}", self.who))
    }

    /// One more request in the running totals (an answer [`Gateway::read`] gave is counted by
    /// the gateway that acts on it).
    pub fn count_request(&self) {
        self.totals.lock().unwrap_or_else(|e| e.into_inner()).add_request();
    }

    fn answer(&self, route: Route, status: u16, message: &str, line: &str) -> Answer {
        self.count_request();
        Answer::uncounted(self.who, route, status, message, line)
    }

    /// The log line of the stop's start: `in_flight` requests have `grace_ms` to finish.
    pub fn stop_begun_line(&self, in_flight: usize, grace_ms: u64) -> String {
        match in_flight {
            0 => format!("{}: stopping: no new requests", self.who),
            n => format!("{}: stopping: no new requests; {n} in flight given {grace_ms} ms to finish", self.who),
        }
    }

    /// The log line of shutdown, before the sessions are saved.
    pub fn stopping_line(&self) -> String {
        format!("{}: stopping: saving every session", self.who)
    }

    /// The log line of requests still in flight once the shutdown grace is over.
    pub fn cut_line(&self, in_flight: usize, grace_ms: u64) -> String {
        let (s, whose) = if in_flight == 1 { ("", "its agent gets") } else { ("s", "their agents get") };
        format!(
            "{}: stopping: {in_flight} request{s} still in flight after {grace_ms} ms cut short ({whose} an error; those replies are not recorded)",
            self.who
        )
    }

    /// The log line of a session that could not be saved.
    pub fn unsaved_line(&self, failure: &str) -> String {
        format!("{}: proxy: {failure}", self.shell.program())
    }

    /// The log line of a shell's engine thread in trouble outside any request.
    pub fn thread_line(&self, trouble: &ThreadTrouble) -> String {
        let what = match trouble {
            ThreadTrouble::CannotStart(why) => format!("a session thread could not start: {why}"),
            ThreadTrouble::Replaced(how) => format!("an engine thread {how}; another takes its place"),
            ThreadTrouble::SideCallPanicked => "the engine panicked counting a side call; it is not counted".into(),
        };
        format!("{}: {what}", self.who)
    }

    /// A pump for the reply to a managed call of `format` (see [`ReplyPump::new`]).
    pub fn reply_pump(
        &self,
        format: Format,
        status: u16,
        content_type: Option<&str>,
        content_length: Option<u64>,
    ) -> ReplyPump {
        ReplyPump::new(self.who, format, status, content_type, content_length, self.body_limit())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(method: &str, target: &str, headers: &[(&str, &str)]) -> RequestHead {
        RequestHead {
            method: method.into(),
            target: target.into(),
            headers: headers.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect(),
        }
    }

    fn gateway() -> Gateway {
        let mut config = Config::default();
        config.proxy.max_body_bytes = 100;
        Gateway::new(&config, Upstreams::default(), Shell::Native)
    }

    #[test]
    fn a_declared_body_over_the_limit_is_refused_in_the_providers_shape_without_the_query() {
        let gateway = gateway();
        let request = head("POST", "/v1/messages?key=sk-secret", &[("content-length", "101"), ("x-api-key", "k")]);
        let Err(answer) = gateway.admit(&request, gateway.route(&request)) else { panic!("admitted") };
        assert_eq!(answer.status, 413);
        assert!(answer.body.contains("request_too_large"), "{}", answer.body);
        assert_eq!(answer.line, "workbench proxy: POST /v1/messages: refused, body over 100 bytes or cut short");
        let gemini = head("POST", "/v1beta/models/g:generateContent?key=k", &[("content-length", "101")]);
        let Err(answer) = gateway.admit(&gemini, gateway.route(&gemini)) else { panic!("admitted") };
        assert!(answer.body.contains(r#""status":"INVALID_ARGUMENT""#), "Gemini's shape: {}", answer.body);
        let fine = head("POST", "/v1/chat/completions", &[("content-length", "100")]);
        assert_eq!(gateway.admit(&fine, gateway.route(&fine)), Ok(100));
    }

    #[test]
    fn headers_cross_unless_hop_by_hop() {
        assert!(passes_to_upstream("x-api-key", true));
        assert!(passes_to_upstream("accept-encoding", false));
        assert!(!passes_to_upstream("Accept-Encoding", true));
        assert!(!passes_to_upstream("Connection", false));
        assert!(passes_to_agent("content-encoding", false));
        assert!(!passes_to_agent("content-encoding", true));
        assert!(!passes_to_agent("transfer-encoding", false));
    }

    #[test]
    fn the_start_line_hides_credentials_of_an_upstream() {
        let upstreams = Upstreams::from_flags(&["https://user:pass@gateway.example/v1"]).unwrap();
        let line = Gateway::new(&Config::default(), upstreams, Shell::Native).start_line("http://127.0.0.1:1", "/s");
        assert!(!line.contains("pass"), "{line}");
        assert!(line.contains("https://gateway.example/v1 (Anthropic Messages)"), "{line}");
        assert!(line.contains("https://gateway.example/v1 (Gemini)"), "every provider is named: {line}");
    }
}
