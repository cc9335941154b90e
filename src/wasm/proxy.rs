//! The proxy's core for a JS server (the npm package's `startProxy` and bin): every decision is
//! the library's `proxy` module's, as in `workbench proxy`; the JS side reads bytes, keeps
//! timers and orders each conversation's requests. `ProxyGateway` decides on the server's own
//! thread (`ProxyRequest` is one request on its way, `ReplyPump` one managed reply); the
//! engines run in `ProxyWorker`s (`proxy_worker.rs`), one per worker thread.

use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::convert::{from_js, js, to_js_value};
use super::engine::config_from_js;
use super::error::{js_error, to_js_error};
use crate::config::Config;
use crate::error::Error;
use crate::proxy::args::{ProxyArgs, Shell, StoreLocation, config_from_file, usage};
use crate::proxy::gateway::{passes_to_agent, passes_to_upstream};
use crate::proxy::pump::no_reply;
use crate::proxy::{
    Admission, Answer, CallRecord, Cause, End, Failure, Gateway, ReplyOutcome, RequestHead, Route, SessionKey,
    SessionTable, SideCall, Upstreams, Verdict,
};
use crate::tokens::{TokenCounter, require_ranks};

/// An answer the proxy gives itself, as JS sends it.
#[derive(Serialize)]
struct AnswerJs<'a> {
    status: u16,
    body: &'a str,
    line: &'a str,
}

fn answer_js(answer: &Answer) -> Result<JsValue, JsValue> {
    to_js_value(&AnswerJs { status: answer.status, body: &answer.body, line: &answer.line })
}

/// The proxy's decisions for the JS server's own thread: everything but the engines, which
/// run in `ProxyWorker`s on worker threads (a long prepare in one conversation then never holds
/// up another, nor a side call, nor a forwarded request).
#[wasm_bindgen]
pub struct ProxyGateway {
    gateway: Gateway,
    /// The session configuration the workers are to run with.
    config: Config,
    /// The keys held, for eviction; the workers hold their conversations.
    table: SessionTable<()>,
}

#[wasm_bindgen]
impl ProxyGateway {
    /// The proxy of `config` (the `Config` keys; checked, throws `invalid_config`) toward the
    /// `--upstream` flags (throws `invalid_input`), saving sessions in the trace root `root`
    /// of `workspace` (see `proxyStoreLocation`), at `window` tokens when given.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "Config | undefined")] config: JsValue,
        upstream: Vec<String>,
        window: Option<u32>,
        workspace: String,
        root: String,
    ) -> Result<ProxyGateway, JsValue> {
        let upstreams = Upstreams::from_flags(&upstream).map_err(invalid)?;
        let location = StoreLocation { workspace, root };
        let config = js(location.session_config(js(config_from_js(config))?, window))?;
        js(require_ranks(config.encoding))?;
        let table = SessionTable::new(config.proxy.max_sessions as usize);
        Ok(ProxyGateway { gateway: Gateway::new(&config, upstreams, Shell::Npm), config, table })
    }

    /// The configuration in effect, for the workers (its `proxy` limits among it).
    #[wasm_bindgen(unchecked_return_type = "ResolvedConfig")]
    pub fn config(&self) -> Result<JsValue, JsValue> {
        to_js_value(&self.config)
    }

    /// What the bin prints on stdout once listening on `url`.
    pub fn banner(&self, url: &str) -> String {
        self.gateway.banner(url)
    }

    /// The first log line, once listening.
    #[wasm_bindgen(js_name = startLine)]
    pub fn start_line(&self, url: &str, store_dir: &str) -> String {
        self.gateway.start_line(url, store_dir)
    }

    /// The running totals (`N requests, M managed: …`).
    pub fn progress(&self) -> String {
        self.gateway.progress()
    }

    /// A request's route from its head (`raw_headers`: Node's `rawHeaders`, names and values in
    /// turn), or its refusal when the body it declares is over the limit.
    pub fn admit(&self, method: String, target: String, raw_headers: Vec<String>) -> ProxyRequest {
        let head = head_of(method, target, &raw_headers);
        let (route, limit, answer) = match self.gateway.admit(&head) {
            Admission::Read { route, limit } => (route, limit, None),
            Admission::Refuse(answer) => (head.route(), 0, Some(answer)),
        };
        ProxyRequest { head, route, limit, answer, why: None, key: None, side: None, opening: None }
    }

    /// Decide on `request` with its `body` (absent: over the limit or cut short). Returns the
    /// action: `forward` (send it as it came), `manage` (its worker prepares it; `key`,
    /// `traceBase`) or `answer` (send `answer()`).
    pub fn decide(&self, request: &mut ProxyRequest, body: Option<Vec<u8>>) -> String {
        let verdict = match body {
            None => Verdict::Answer { answer: self.gateway.body_refused(&request.head, request.route) },
            Some(body) => self.gateway.read(&request.head, request.route, &body).verdict(),
        };
        self.act(request, verdict)
    }

    /// `decide`, from what an engine thread read of the body (`ProxyWorker.decide`: a long body
    /// is not parsed on the server's thread).
    #[wasm_bindgen(js_name = applyDecision)]
    pub fn apply_decision(&self, request: &mut ProxyRequest, decided: &str) -> Result<String, JsValue> {
        let verdict = serde_json::from_str(decided).map_err(|e| invalid(format!("decision: {e}")))?;
        Ok(self.act(request, verdict))
    }

    fn act(&self, request: &mut ProxyRequest, verdict: Verdict) -> String {
        match verdict {
            Verdict::Forward { why, side } => {
                request.why = Some(why);
                request.side = side.map(|side| *side);
                "forward"
            }
            Verdict::Manage { key } => {
                request.opening = self.gateway.opening(&key);
                request.key = Some(key);
                "manage"
            }
            Verdict::Answer { answer } => {
                self.gateway.count_request();
                request.answer = Some(answer);
                "answer"
            }
        }
        .to_owned()
    }

    /// A managed request's key, now the most recently used, and the key that made room for it
    /// (its worker then closes it), if any; `in_flight`: the keys with a request in flight.
    pub fn touch(&mut self, request: &ProxyRequest, in_flight: Vec<String>) -> Result<Option<String>, JsValue> {
        let key = request.key.as_ref().ok_or_else(|| invalid("touch takes a managed request".into()))?;
        let busy = |key: &SessionKey, _: &()| in_flight.contains(&key.name());
        Ok(self.table.touch(key, || (), busy).1.map(|(evicted, ())| evicted.name()))
    }

    /// Where `request` goes upstream.
    #[wasm_bindgen(js_name = upstreamUrl)]
    pub fn upstream_url(&self, request: &ProxyRequest) -> String {
        self.gateway.upstream_url(request.route, &request.head)
    }

    /// The log line of a forwarded request, with the upstream's status.
    pub fn forwarded(&self, request: &ProxyRequest, status: u16) -> String {
        self.gateway.forwarded(&request.head, request.why(), status)
    }

    /// A forwarded side call answered with `status`, to be counted in its agent session's
    /// latest conversation: `{ key, record }` for that key's worker (`recordSideCall`), or
    /// undefined when the request is no side call of a session held here.
    #[wasm_bindgen(js_name = sideCall, unchecked_return_type = "{ key: string; record: ProxyCallRecord } | undefined")]
    pub fn side_call(&self, request: &mut ProxyRequest, status: u16) -> Result<JsValue, JsValue> {
        let Some(side) = request.side.take() else { return Ok(JsValue::UNDEFINED) };
        let Some((agent_session, record)) = self.gateway.side_call_answered(side, status) else {
            return Ok(JsValue::UNDEFINED);
        };
        let Some((key, ())) = self.table.latest_of(&agent_session) else { return Ok(JsValue::UNDEFINED) };
        to_js_value(&serde_json::json!({"key": key.name(), "record": record}))
    }

    /// The answer to a forwarded request the upstream gave no reply to: `failure` is
    /// `unreachable` (with `cause`: `connect`, `timeout` or `other`), `timeout` or `stopped`.
    #[wasm_bindgen(js_name = forwardFailed, unchecked_return_type = "{ status: number; body: string; line: string }")]
    pub fn forward_failed(
        &self,
        request: &ProxyRequest,
        failure: &str,
        cause: Option<String>,
    ) -> Result<JsValue, JsValue> {
        let failure = self.failure(request, failure, cause.as_deref())?;
        answer_js(&self.gateway.forward_failed(&request.head, request.route, request.why(), &failure))
    }

    /// The answer to a managed call the upstream gave no reply to, and the outcome its worker
    /// records: `{ status, body, outcome }`.
    #[wasm_bindgen(js_name = callFailed, unchecked_return_type = "{ status: number; body: string; outcome: unknown }")]
    pub fn call_failed(
        &self,
        request: &ProxyRequest,
        failure: &str,
        cause: Option<String>,
    ) -> Result<JsValue, JsValue> {
        let failure = self.failure(request, failure, cause.as_deref())?;
        let (status, body) = self.gateway.call_failed(request.route, &failure);
        to_js_value(&serde_json::json!({"status": status, "body": body, "outcome": no_reply(failure.message())}))
    }

    /// The answer to a request that failed inside the JS server.
    #[wasm_bindgen(js_name = internalError, unchecked_return_type = "{ status: number; body: string; line: string }")]
    pub fn internal_error(&self, request: &ProxyRequest, why: &str) -> Result<JsValue, JsValue> {
        answer_js(&self.gateway.internal_error(&request.head, request.route, why))
    }

    /// The answer to a request whose body did not arrive within `proxy.body_timeout_ms`.
    #[wasm_bindgen(js_name = bodyTimedOut, unchecked_return_type = "{ status: number; body: string; line: string }")]
    pub fn body_timed_out(&self, request: &ProxyRequest) -> Result<JsValue, JsValue> {
        answer_js(&self.gateway.body_timed_out(&request.head, request.route))
    }

    /// The answer to a request that arrives while the proxy stops.
    #[wasm_bindgen(unchecked_return_type = "{ status: number; body: string; line: string }")]
    pub fn stopping(&self, request: &ProxyRequest) -> Result<JsValue, JsValue> {
        answer_js(&self.gateway.stopping(&request.head, request.route))
    }

    /// A pump for the reply of `request` with `status`, `contentType` and `contentLength` (the
    /// headers as they came).
    #[wasm_bindgen(js_name = replyPump)]
    pub fn reply_pump(
        &self,
        request: &ProxyRequest,
        status: u16,
        content_type: Option<String>,
        content_length: Option<String>,
    ) -> Result<ReplyPump, JsValue> {
        let format = request.route.managed().ok_or_else(|| invalid("replyPump takes a managed request".into()))?;
        let length = content_length.and_then(|v| v.trim().parse().ok());
        Ok(ReplyPump {
            pump: Some(self.gateway.reply_pump(format, status, content_type.as_deref(), length)),
            status,
            outcome: None,
            counter: *self.gateway.counter(),
        })
    }

    /// The log line of a managed call (its record and trace id from its worker), counted.
    #[wasm_bindgen(js_name = callLine)]
    pub fn call_line(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ProxyCallRecord")] record: JsValue,
        trace_id: String,
    ) -> Result<String, JsValue> {
        let record = CallRecord { trace_id, ..from_js::<CallRecord>(record, "record")? };
        Ok(self.gateway.call_line(&record))
    }

    /// The log line of requests cut short after the shutdown grace.
    #[wasm_bindgen(js_name = cutLine)]
    pub fn cut_line(&self, in_flight: usize, grace_ms: f64) -> String {
        self.gateway.cut_line(in_flight, grace_ms.max(0.0) as u64)
    }

    /// The log lines of the shutdown: the stopping line, then what could not be saved.
    #[wasm_bindgen(js_name = closingLines)]
    pub fn closing_lines(&self, failures: Vec<String>) -> Vec<String> {
        std::iter::once(self.gateway.stopping_line())
            .chain(failures.iter().map(|f| self.gateway.unsaved_line(f)))
            .collect()
    }

    fn failure(&self, request: &ProxyRequest, kind: &str, cause: Option<&str>) -> Result<Failure, JsValue> {
        Ok(match (kind, cause) {
            ("unreachable", cause) => {
                let cause = match cause {
                    Some("connect") => Cause::CannotConnect,
                    Some("timeout") => Cause::TimedOut,
                    _ => Cause::Other,
                };
                Failure::unreachable(&self.upstream_url(request), cause)
            }
            ("timeout", _) => Failure::Timeout,
            ("stopped", _) => Failure::Stopped,
            (other, _) => return Err(invalid(format!("failure `{other}`: expected unreachable, timeout or stopped"))),
        })
    }
}

pub(super) fn head_of(method: String, target: String, raw_headers: &[String]) -> RequestHead {
    let headers = raw_headers.chunks_exact(2).map(|pair| (pair[0].to_ascii_lowercase(), pair[1].clone())).collect();
    RequestHead { method, target, headers }
}

/// One request on its way through the proxy.
#[wasm_bindgen]
pub struct ProxyRequest {
    head: RequestHead,
    route: Route,
    /// The body limit to read up to.
    limit: usize,
    answer: Option<Answer>,
    /// Why it is forwarded as it came.
    why: Option<String>,
    key: Option<SessionKey>,
    /// A side call of a known agent session, counted in it once answered.
    side: Option<SideCall>,
    /// The one-shot the managed request's conversation opened with (`ClientRequest::opening`).
    opening: Option<CallRecord>,
}

#[wasm_bindgen]
impl ProxyRequest {
    /// A managed request's API format (`anthropic`, `openai`).
    #[wasm_bindgen(getter)]
    pub fn format(&self) -> Option<String> {
        self.route.managed().map(|format| format.name().to_owned())
    }

    /// The most body bytes to read; 0 when the request is refused at once (`answer()`).
    #[wasm_bindgen(getter)]
    pub fn limit(&self) -> f64 {
        self.limit as f64
    }

    /// The conversation's key (requests of one key go through `prepare`/`finish` one at a time).
    #[wasm_bindgen(getter)]
    pub fn key(&self) -> Option<String> {
        self.key.as_ref().map(SessionKey::name)
    }

    /// The one-shot this managed request's conversation opened with, for its worker's
    /// `prepare` (it counts it as the session's first call); undefined for most requests.
    #[wasm_bindgen(getter, unchecked_return_type = "ProxyCallRecord | undefined")]
    pub fn opening(&self) -> Result<JsValue, JsValue> {
        self.opening.as_ref().map_or(Ok(JsValue::UNDEFINED), to_js_value)
    }

    /// The name the key's traces start with: the conversations of one base run on one worker.
    #[wasm_bindgen(getter, js_name = traceBase)]
    pub fn trace_base(&self) -> Option<String> {
        self.key.as_ref().map(SessionKey::trace_base)
    }

    /// The proxy's own answer, when it gives one: `{ status, body, line }`.
    #[wasm_bindgen(unchecked_return_type = "{ status: number; body: string; line: string } | undefined")]
    pub fn answer(&self) -> Result<JsValue, JsValue> {
        match &self.answer {
            Some(answer) => answer_js(answer),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// Send it as it came after all (its worker is gone), `why` in its log line.
    #[wasm_bindgen(js_name = passAs)]
    pub fn pass_as(&mut self, why: String) {
        self.why = Some(why);
    }

    fn why(&self) -> &str {
        self.why.as_deref().unwrap_or("passed through")
    }
}

/// A managed reply on its way to the agent (see the library's `ReplyPump`).
#[wasm_bindgen]
pub struct ReplyPump {
    pump: Option<crate::proxy::ReplyPump>,
    status: u16,
    /// The reply for its session, once whole or ended.
    outcome: Option<ReplyOutcome>,
    counter: TokenCounter,
}

#[wasm_bindgen]
impl ReplyPump {
    /// Read the next piece of the reply (the JS side gives it to the agent as it is); true
    /// once the reply is whole: its worker records it then, and the reply ends once it has.
    pub fn feed(&mut self, bytes: &[u8]) -> bool {
        let outcome = self.pump.as_mut().and_then(|pump| pump.feed(bytes, &self.counter));
        let whole = outcome.is_some();
        if whole {
            self.outcome = outcome;
        }
        whole
    }

    /// The reply's body ended: `done`, `agent-gone`, `broke-off`, `silent` (after `silent_ms`)
    /// or `stopped`. Returns the bytes to send the agent last (an error event), if any.
    pub fn end(&mut self, end: &str, silent_ms: Option<f64>) -> Result<Option<String>, JsValue> {
        let end = match end {
            "done" => End::Done,
            "agent-gone" => End::AgentGone,
            "broke-off" => End::BrokeOff,
            "silent" => End::Silent(silent_ms.unwrap_or(0.0).max(0.0) as u64),
            "stopped" => End::Stopped,
            other => {
                return Err(invalid(format!("end `{other}`: expected done, agent-gone, broke-off, silent or stopped")));
            }
        };
        let Some(pump) = self.pump.take() else { return Ok(None) };
        let ending = pump.end(end, &self.counter);
        if let Some(outcome) = ending.outcome {
            self.outcome = Some(outcome);
        }
        Ok(ending.trailer)
    }

    /// Whether the reply is ready for its worker (whole, or ended).
    #[wasm_bindgen(getter)]
    pub fn ready(&self) -> bool {
        self.outcome.is_some()
    }

    /// The reply's HTTP status.
    #[wasm_bindgen(getter)]
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The reply for its worker's `finish`, once ready (taken: a second call has none).
    #[wasm_bindgen(js_name = takeOutcome)]
    pub fn take_outcome(&mut self) -> Result<JsValue, JsValue> {
        match self.outcome.take() {
            Some(outcome) => to_js_value(&outcome),
            None => Err(invalid("the reply is not ready".into())),
        }
    }
}

/// The proxy's flags, as `workbench proxy` reads them: `{ port, upstream, store, window?,
/// config?, llm_url?, llm_model?, help }`. Throws `invalid_input` with the flag and why.
#[wasm_bindgen(js_name = parseProxyArgs)]
pub fn parse_proxy_args(args: Vec<String>) -> Result<JsValue, JsValue> {
    #[derive(Serialize)]
    struct ArgsJs {
        port: u16,
        upstream: Vec<String>,
        store: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        window: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        config: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        llm_url: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        llm_model: Option<String>,
        help: bool,
    }
    let a = ProxyArgs::parse(args).map_err(|message| js_error("invalid_input", &message))?;
    to_js_value(&ArgsJs {
        port: a.port,
        upstream: a.upstream,
        store: a.store,
        window: a.window,
        config: a.config,
        llm_url: a.llm_url,
        llm_model: a.llm_model,
        help: a.help,
    })
}

/// What `context-workbench proxy --help` prints.
#[wasm_bindgen(js_name = proxyUsage)]
pub fn proxy_usage() -> String {
    usage(Shell::Npm)
}

/// A config file's text as the engine's configuration (TOML, or JSON when `name` ends in
/// `.json`); throws `invalid_config` naming the file and the key.
#[wasm_bindgen(js_name = configFromFile, unchecked_return_type = "Required<Config>")]
pub fn config_from_file_js(name: &str, text: &str) -> Result<JsValue, JsValue> {
    let config: Config = config_from_file(name, text).map_err(|message| js_error("invalid_config", &message))?;
    to_js_value(&config)
}

/// Where the proxy's sessions are saved, from the working directory and the store (both
/// absolute, links resolved): `{ workspace, root }`.
#[wasm_bindgen(js_name = proxyStoreLocation, unchecked_return_type = "{ workspace: string; root: string }")]
pub fn proxy_store_location(cwd: &str, store: &str) -> Result<JsValue, JsValue> {
    let location = StoreLocation::new(cwd, store).map_err(invalid)?;
    to_js_value(&serde_json::json!({"workspace": location.workspace, "root": location.root}))
}

/// Whether a request header crosses to the upstream (`plain`: the reply is wanted uncompressed).
#[wasm_bindgen(js_name = passesToUpstream)]
pub fn passes_to_upstream_js(name: &str, plain: bool) -> bool {
    passes_to_upstream(name, plain)
}

/// Whether a reply header crosses to the agent (`decoded`: the client undid the compression).
#[wasm_bindgen(js_name = passesToAgent)]
pub fn passes_to_agent_js(name: &str, decoded: bool) -> bool {
    passes_to_agent(name, decoded)
}

/// The path within the dashboard that `path` names, or `undefined` for an agent's request.
#[wasm_bindgen(js_name = dashboardPath)]
pub fn dashboard_path_js(path: &str) -> Option<String> {
    crate::proxy::dashboard_path(path).map(str::to_owned)
}

/// The dashboard's file `name` with the headers it goes out with, or `undefined`.
#[wasm_bindgen(js_name = dashboardAsset, unchecked_return_type = "{ text: string; headers: [string, string][] } | undefined")]
pub fn dashboard_asset_js(name: &str) -> Result<JsValue, JsValue> {
    match crate::dashboard::asset(name) {
        Some(asset) => {
            to_js_value(&serde_json::json!({"text": asset.text, "headers": crate::dashboard::headers(&asset)}))
        }
        None => Ok(JsValue::UNDEFINED),
    }
}

/// Why a request to the dashboard is refused (another host name, another site's page), or `undefined`.
#[wasm_bindgen(js_name = dashboardRefusal)]
pub fn dashboard_refusal_js(host: &str, origin: Option<String>) -> Option<String> {
    crate::dashboard::refusal(host, origin.as_deref())
}

pub(super) fn invalid(message: String) -> JsValue {
    to_js_error(Error::InvalidInput(message))
}
