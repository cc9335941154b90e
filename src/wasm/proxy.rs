//! The proxy's core for a JS server (the npm package's `startProxy` and bin): every decision is
//! the library's `proxy` module's, as in `workbench proxy`; the JS side reads bytes, keeps
//! timers and orders each conversation's requests. `ProxyCore` holds the gateway, the session
//! table and the worker of every conversation; `ProxyRequest` is one request on its way;
//! `ReplyPump` one managed reply.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use js_sys::Promise;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::convert::{js, to_js_value};
use super::engine::config_from_js;
use super::error::{js_error, to_js_error};
use super::host::JsHost;
use crate::config::Config;
use crate::error::Error;
use crate::proxy::args::{ProxyArgs, StoreLocation, config_from_file, usage};
use crate::proxy::gateway::{cut_line, passes_to_agent, passes_to_upstream, stopping_line, unsaved_line};
use crate::proxy::pump::no_reply;
use crate::proxy::{
    Admission, Answer, CallRecord, Cause, Decision, End, Failure, Gateway, ReplyOutcome, RequestHead, Route,
    SessionKey, SessionTable, TraceIds, Upstreams, Worker,
};
use crate::tokens::{TokenCounter, require_ranks};

/// The proxy of one process; see the module's doc.
#[wasm_bindgen]
pub struct ProxyCore {
    inner: Rc<Inner>,
}

struct Inner {
    gateway: Gateway,
    worker: Worker<JsHost>,
    /// The keys held, for eviction; the worker holds their conversations.
    table: RefCell<SessionTable<()>>,
}

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

/// What `prepare` resolves to.
#[derive(Serialize)]
struct PreparedJs<'a> {
    /// The body for the upstream; absent: send the agent's own request.
    body: Option<&'a str>,
    record: &'a CallRecord,
}

/// What `finish` resolves to: the call's record and its log line.
#[derive(Serialize)]
struct FinishedJs<'a> {
    record: &'a CallRecord,
    trace_id: &'a str,
    line: String,
}

#[wasm_bindgen]
impl ProxyCore {
    /// Sessions are saved through `host` (its `complete` is not used: the embedded compactor
    /// writes blocks) in the trace root `root` of `workspace` (see `proxyStoreLocation`);
    /// `upstream` holds the `--upstream` flags. Throws `invalid_input` on a bad flag, `config`
    /// on a bad configuration, and when the tokenizer's ranks are not loaded.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "Host")] host: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Config | undefined")] config: JsValue,
        upstream: Vec<String>,
        window: Option<u32>,
        workspace: String,
        root: String,
    ) -> Result<ProxyCore, JsValue> {
        let host = JsHost::new(host).map_err(|e| to_js_error(e.into()))?;
        let upstreams = Upstreams::from_flags(&upstream).map_err(invalid)?;
        let location = StoreLocation { workspace, root };
        let config = js(location.session_config(js(config_from_js(config))?, window))?;
        js(require_ranks(config.encoding))?;
        let gateway = Gateway::new(&config, upstreams);
        let table = RefCell::new(SessionTable::new(config.proxy.max_sessions as usize));
        let worker = Worker::new(host, config, false, Arc::new(TraceIds::default()));
        Ok(ProxyCore { inner: Rc::new(Inner { gateway, worker, table }) })
    }

    /// The configuration in effect (its `proxy` limits among it).
    #[wasm_bindgen(unchecked_return_type = "Required<Config>")]
    pub fn config(&self) -> Result<JsValue, JsValue> {
        to_js_value(self.inner.worker.config())
    }

    /// At start, before any request: the traces a killed proxy left `running` are marked
    /// `interrupted`; resolves to the log line saying so, if there were any.
    #[wasm_bindgen(unchecked_return_type = "Promise<string | undefined>")]
    pub fn recover(&self) -> Promise {
        let inner = Rc::clone(&self.inner);
        future_to_promise(async move { Ok(inner.worker.recover().await.map_or(JsValue::UNDEFINED, JsValue::from)) })
    }

    /// What the bin prints on stdout once listening on `url`.
    pub fn banner(&self, url: &str) -> String {
        self.inner.gateway.banner(url)
    }

    /// The first log line, once listening.
    #[wasm_bindgen(js_name = startLine)]
    pub fn start_line(&self, url: &str, store_dir: &str) -> String {
        self.inner.gateway.start_line(url, store_dir)
    }

    /// The running totals (`N requests, M managed: …`).
    pub fn progress(&self) -> String {
        self.inner.gateway.progress()
    }

    /// A request's route from its head (`raw_headers`: Node's `rawHeaders`, names and values in
    /// turn), or its refusal when the body it declares is over the limit.
    pub fn admit(&self, method: String, target: String, raw_headers: Vec<String>) -> ProxyRequest {
        let headers = raw_headers.chunks_exact(2).map(|pair| (pair[0].to_ascii_lowercase(), pair[1].clone())).collect();
        let head = RequestHead { method, target, headers };
        let (route, limit, answer) = match self.inner.gateway.admit(&head) {
            Admission::Read { route, limit } => (route, limit, None),
            Admission::Refuse(answer) => (head_route(&head), 0, Some(answer)),
        };
        ProxyRequest { head, route, limit, answer, decision: None, key: None }
    }

    /// Decide on `request` with its `body` (absent: over the limit or cut short). Returns the
    /// action: `forward` (send it as it came; `why`), `manage` (`prepare` it) or `answer`
    /// (send `answer()`).
    pub fn decide(&self, request: &mut ProxyRequest, body: Option<Vec<u8>>) -> String {
        let gateway = &self.inner.gateway;
        let decision = match body {
            None => Decision::Answer(gateway.body_refused(&request.head, request.route.format())),
            Some(body) => gateway.decide(&request.head, request.route, &body),
        };
        let action = match &decision {
            Decision::Forward { .. } => "forward",
            Decision::Manage { key, .. } => {
                request.key = Some(key.clone());
                "manage"
            }
            Decision::Answer(answer) => {
                request.answer = Some(answer.clone());
                "answer"
            }
        };
        request.decision = Some(decision);
        action.to_owned()
    }

    /// Where `request` goes upstream.
    #[wasm_bindgen(js_name = upstreamUrl)]
    pub fn upstream_url(&self, request: &ProxyRequest) -> String {
        self.inner.gateway.upstream_url(request.route.format(), &request.head)
    }

    /// The log line of a forwarded request, with the upstream's status.
    pub fn forwarded(&self, request: &ProxyRequest, status: u16) -> String {
        self.inner.gateway.forwarded(&request.head, &request.why(), status)
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
        let format = request.route.format();
        answer_js(&self.inner.gateway.forward_failed(&request.head, format, &request.why(), &failure))
    }

    /// The answer to a request that failed inside the JS server.
    #[wasm_bindgen(js_name = internalError, unchecked_return_type = "{ status: number; body: string; line: string }")]
    pub fn internal_error(&self, request: &ProxyRequest, why: &str) -> Result<JsValue, JsValue> {
        answer_js(&self.inner.gateway.internal_error(&request.head, request.route.format(), why))
    }

    /// The answer to a request whose body did not arrive within `proxy.body_timeout_ms`.
    #[wasm_bindgen(js_name = bodyTimedOut, unchecked_return_type = "{ status: number; body: string; line: string }")]
    pub fn body_timed_out(&self, request: &ProxyRequest) -> Result<JsValue, JsValue> {
        answer_js(&self.inner.gateway.body_timed_out(&request.head, request.route.format()))
    }

    /// The answer to a request that arrives while the proxy stops.
    #[wasm_bindgen(unchecked_return_type = "{ status: number; body: string; line: string }")]
    pub fn stopping(&self, request: &ProxyRequest) -> Result<JsValue, JsValue> {
        answer_js(&self.inner.gateway.stopping(&request.head, request.route.format()))
    }

    /// Record a managed request in its conversation and prepare the call: resolves to
    /// `{ body?, record }` (no body: the agent's request goes as it came, `record.notes` say
    /// why). Never rejects for the engine's sake; throws when `request` is not to be managed.
    #[wasm_bindgen(unchecked_return_type = "Promise<{ body?: string; record: ProxyCallRecord }>")]
    pub fn prepare(&self, request: &mut ProxyRequest) -> Result<Promise, JsValue> {
        let Some(Decision::Manage { key, request: client }) = request.decision.take() else {
            return Err(invalid("prepare takes a request whose action is `manage`".into()));
        };
        let inner = Rc::clone(&self.inner);
        Ok(future_to_promise(async move {
            let evicted = {
                let busy = |key: &SessionKey, _: &()| inner.worker.in_flight(&key.name());
                inner.table.borrow_mut().touch(&key, || (), busy).1
            };
            // What the conversation closed to make room could not save goes on this call.
            let notes = match evicted {
                Some((evicted, ())) => inner.worker.close(&evicted.name()).await,
                None => Vec::new(),
            };
            let prepared = inner.worker.prepare(&key, &client, notes).await;
            to_js_value(&PreparedJs { body: prepared.body.as_deref(), record: &prepared.record })
        }))
    }

    /// A pump for the reply of `request` with `status` and `contentType`.
    #[wasm_bindgen(js_name = replyPump)]
    pub fn reply_pump(&self, request: &ProxyRequest, status: u16, content_type: Option<String>) -> ReplyPump {
        let gateway = &self.inner.gateway;
        let format = request.route.format();
        ReplyPump {
            pump: Some(crate::proxy::ReplyPump::new(format, status, content_type.as_deref(), gateway.body_limit())),
            status,
            outcome: None,
            counter: *gateway.counter(),
        }
    }

    /// The reply of `request`'s call (after `prepare`), read by `pump` (once `feed` said it is
    /// whole, or after `end`). Resolves to `{ record, trace_id, line }`.
    #[wasm_bindgen(unchecked_return_type = "Promise<{ record: ProxyCallRecord; trace_id: string; line: string }>")]
    pub fn finish(&self, request: &ProxyRequest, pump: &mut ReplyPump) -> Result<Promise, JsValue> {
        let name = request.key_name()?;
        let status = pump.status;
        let outcome = pump.outcome.take().ok_or_else(|| invalid("the pump has no reply ready".into()))?;
        let inner = Rc::clone(&self.inner);
        Ok(future_to_promise(async move { inner.finished(&name, status, outcome).await }))
    }

    /// The call of `request` got no reply (`failure` as for `forwardFailed`). Resolves to `{
    /// record, trace_id, line }`; the agent's answer is `callFailed`'s.
    #[wasm_bindgen(js_name = finishFailed, unchecked_return_type = "Promise<{ record: ProxyCallRecord; trace_id: string; line: string }>")]
    pub fn finish_failed(
        &self,
        request: &ProxyRequest,
        failure: &str,
        cause: Option<String>,
    ) -> Result<Promise, JsValue> {
        let name = request.key_name()?;
        let failure = self.failure(request, failure, cause.as_deref())?;
        let inner = Rc::clone(&self.inner);
        Ok(future_to_promise(async move { inner.finished(&name, failure.status(), no_reply(failure.message())).await }))
    }

    /// The answer to a managed call the upstream gave no reply to.
    #[wasm_bindgen(js_name = callFailed, unchecked_return_type = "{ status: number; body: string }")]
    pub fn call_failed(
        &self,
        request: &ProxyRequest,
        failure: &str,
        cause: Option<String>,
    ) -> Result<JsValue, JsValue> {
        let failure = self.failure(request, failure, cause.as_deref())?;
        let (status, body) = self.inner.gateway.call_failed(request.route.format(), &failure);
        to_js_value(&serde_json::json!({"status": status, "body": body}))
    }

    /// Save and close every session; resolves to the log lines of what could not be saved,
    /// after the stopping line.
    #[wasm_bindgen(js_name = closeAll, unchecked_return_type = "Promise<string[]>")]
    pub fn close_all(&self) -> Promise {
        let inner = Rc::clone(&self.inner);
        future_to_promise(async move {
            inner.table.borrow_mut().drain();
            let mut lines = vec![stopping_line()];
            lines.extend(inner.worker.close_all().await.iter().map(|f| unsaved_line(f)));
            to_js_value(&lines)
        })
    }

    /// The log line of requests cut short after the shutdown grace.
    #[wasm_bindgen(js_name = cutLine)]
    pub fn cut_line(&self, in_flight: usize, grace_ms: f64) -> String {
        cut_line(in_flight, grace_ms.max(0.0) as u64)
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

impl Inner {
    async fn finished(&self, name: &str, status: u16, outcome: ReplyOutcome) -> Result<JsValue, JsValue> {
        let record = self.worker.finish(name, status, outcome).await;
        let line = self.gateway.call_line(&record);
        to_js_value(&FinishedJs { record: &record, trace_id: &record.trace_id, line })
    }
}

/// One request on its way through the proxy.
#[wasm_bindgen]
pub struct ProxyRequest {
    head: RequestHead,
    route: Route,
    /// The body limit to read up to.
    limit: usize,
    answer: Option<Answer>,
    decision: Option<Decision>,
    key: Option<SessionKey>,
}

#[wasm_bindgen]
impl ProxyRequest {
    /// `anthropic` or `openai`: the provider whose shapes its answers take.
    #[wasm_bindgen(getter)]
    pub fn format(&self) -> String {
        self.route.format().name().to_owned()
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

    /// The proxy's own answer, when it gives one: `{ status, body, line }`.
    #[wasm_bindgen(unchecked_return_type = "{ status: number; body: string; line: string } | undefined")]
    pub fn answer(&self) -> Result<JsValue, JsValue> {
        match &self.answer {
            Some(answer) => answer_js(answer),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    fn key_name(&self) -> Result<String, JsValue> {
        self.key.as_ref().map(SessionKey::name).ok_or_else(|| invalid("a managed request was expected".into()))
    }

    fn why(&self) -> String {
        match &self.decision {
            Some(Decision::Forward { why, .. }) => why.clone(),
            _ => "passed through".into(),
        }
    }
}

fn head_route(head: &RequestHead) -> Route {
    let anthropic = head.header("x-api-key").is_some() || head.header("anthropic-version").is_some();
    crate::proxy::classify(&head.method, &head.target, anthropic)
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
    /// once the reply is whole: `finish` it then, before writing the piece.
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

    /// Whether the reply is ready for `finish` (whole, or ended).
    #[wasm_bindgen(getter)]
    pub fn ready(&self) -> bool {
        self.outcome.is_some()
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

/// What `proxy --help` prints for `program`.
#[wasm_bindgen(js_name = proxyUsage)]
pub fn proxy_usage(program: &str) -> String {
    usage(program)
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

fn invalid(message: String) -> JsValue {
    to_js_error(Error::InvalidInput(message))
}
