//! The proxy's core for a JS server (the npm package's `startProxy` and bin): every decision is
//! the library's `proxy` module's, as in `workbench proxy`. `ProxyGateway` holds the gateway and
//! the session table on the server's own thread; each request is a `ProxyExchange` (the library's
//! `Exchange`) the JS side steps with what happened, carrying out the effects it returns; the
//! engines run in `ProxyWorker`s (`proxy_worker.rs`), one per worker thread.

use std::rc::Rc;

use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::convert::{from_js, js, to_js_value};
use super::engine::config_from_js;
use super::error::{js_error, to_js_error};
use crate::config::Config;
use crate::error::Error;
use crate::proxy::args::{ProxyArgs, Shell, StoreLocation, config_from_file, usage};
use crate::proxy::gateway::{passes_to_agent, passes_to_upstream};
use crate::proxy::{Effect, Event, Exchange, Gateway, RequestHead, SessionKey, SessionTable, ThreadTrouble, Upstreams};
use crate::tokens::require_ranks;

/// The proxy's decisions for the JS server's own thread: every request's [`Exchange`] and the
/// session table's keys; the engines run in `ProxyWorker`s on worker threads (a long prepare in
/// one conversation then never holds up another, nor a side call, nor a forwarded request).
#[wasm_bindgen]
pub struct ProxyGateway {
    gateway: Rc<Gateway>,
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
        Ok(ProxyGateway { gateway: Rc::new(Gateway::new(&config, upstreams, Shell::Npm)), config, table })
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

    /// A request arriving with its head (`raw_headers`: Node's `rawHeaders`, names and values in
    /// turn) while the proxy runs or (`stopping`) stops; its first effects are `start()`'s.
    pub fn begin(&self, method: String, target: String, raw_headers: Vec<String>, stopping: bool) -> ProxyExchange {
        let (exchange, first) = Exchange::begin(&self.gateway, head_of(method, target, &raw_headers), stopping);
        ProxyExchange { gateway: Rc::clone(&self.gateway), exchange, first }
    }

    /// A managed exchange's key, now the most recently used, and the key that made room for it
    /// (its worker then closes it), if any; `in_flight`: the keys with a request in flight.
    pub fn touch(&mut self, exchange: &ProxyExchange, in_flight: Vec<String>) -> Result<Option<String>, JsValue> {
        let key = exchange.exchange.key().ok_or_else(|| invalid("touch takes a managed exchange".into()))?;
        let busy = |key: &SessionKey, _: &()| in_flight.contains(&key.name());
        Ok(self.table.touch(key, || (), busy).1.map(|(evicted, ())| evicted.name()))
    }

    /// The key whose worker counts a side call of the agent's session `agentSession` (its latest
    /// conversation here), if any.
    #[wasm_bindgen(js_name = latestOf)]
    pub fn latest_of(&self, agent_session: &str) -> Option<String> {
        self.table.latest_of(agent_session).map(|(key, ())| key.name())
    }

    /// The log line of the stop's start: `in_flight` requests have `graceMs` to finish.
    #[wasm_bindgen(js_name = stopBegunLine)]
    pub fn stop_begun_line(&self, in_flight: usize, grace_ms: f64) -> String {
        self.gateway.stop_begun_line(in_flight, grace_ms.max(0.0) as u64)
    }

    /// The log line of requests cut short after the shutdown grace.
    #[wasm_bindgen(js_name = cutLine)]
    pub fn cut_line(&self, in_flight: usize, grace_ms: f64) -> String {
        self.gateway.cut_line(in_flight, grace_ms.max(0.0) as u64)
    }

    /// The log line of an engine thread that ended (`how`: `exited (1)`) and was replaced.
    #[wasm_bindgen(js_name = threadReplacedLine)]
    pub fn thread_replaced_line(&self, how: String) -> String {
        self.gateway.thread_line(&ThreadTrouble::Replaced(how))
    }

    /// The log lines of the shutdown: the stopping line, then what could not be saved.
    #[wasm_bindgen(js_name = closingLines)]
    pub fn closing_lines(&self, failures: Vec<String>) -> Vec<String> {
        std::iter::once(self.gateway.stopping_line())
            .chain(failures.iter().map(|f| self.gateway.unsaved_line(f)))
            .collect()
    }
}

pub(super) fn head_of(method: String, target: String, raw_headers: &[String]) -> RequestHead {
    let headers = raw_headers.chunks_exact(2).map(|pair| (pair[0].to_ascii_lowercase(), pair[1].clone())).collect();
    RequestHead { method, target, headers }
}

/// One request on its way through the proxy: the library's [`Exchange`], stepped by the JS
/// server with what happened; it returns what to do (`ExchangeEffect[]`).
#[wasm_bindgen]
pub struct ProxyExchange {
    gateway: Rc<Gateway>,
    exchange: Exchange,
    first: Vec<Effect>,
}

#[wasm_bindgen]
impl ProxyExchange {
    /// The first effects, once.
    #[wasm_bindgen(unchecked_return_type = "ExchangeEffect[]")]
    pub fn start(&mut self) -> Result<JsValue, JsValue> {
        to_js_value(&std::mem::take(&mut self.first))
    }

    /// What to do after `event`.
    #[wasm_bindgen(unchecked_return_type = "ExchangeEffect[]")]
    pub fn step(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "ExchangeEvent")] event: JsValue,
    ) -> Result<JsValue, JsValue> {
        let event: Event = from_js(event, "event")?;
        to_js_value(&self.exchange.step(&self.gateway, event))
    }

    /// What the gateway reads of `body` on this thread (a short one), for the `read` event.
    #[wasm_bindgen(unchecked_return_type = "unknown")]
    pub fn verdict(&self, body: &[u8]) -> Result<JsValue, JsValue> {
        let (verdict, _) = self.gateway.read(self.exchange.head(), self.exchange.route(), body).into_parts();
        to_js_value(&verdict)
    }

    /// A piece of the reply's body: what to do with it.
    #[wasm_bindgen(unchecked_return_type = "ExchangeEffect[]")]
    pub fn relay(&mut self, bytes: &[u8]) -> Result<JsValue, JsValue> {
        to_js_value(&self.exchange.relay(&self.gateway, bytes))
    }

    /// A managed exchange's conversation key (requests of one key go one at a time).
    #[wasm_bindgen(getter)]
    pub fn key(&self) -> Option<String> {
        self.exchange.key().map(SessionKey::name)
    }

    /// The span `--otlp` exports for this exchange's recorded call (after `called`), whose reply
    /// ended at `endMs` (ms since the epoch).
    #[wasm_bindgen(unchecked_return_type = "CallSpan | null")]
    pub fn span(&self, #[wasm_bindgen(js_name = endMs)] end_ms: f64) -> Result<JsValue, JsValue> {
        to_js_value(&self.exchange.span(end_ms as u64))
    }

    /// The name the key's traces start with: the conversations of one base run on one worker.
    #[wasm_bindgen(getter, js_name = traceBase)]
    pub fn trace_base(&self) -> Option<String> {
        self.exchange.key().map(SessionKey::trace_base)
    }
}

/// The proxy's flags, as `workbench proxy` reads them: `{ port, upstream, store, window?,
/// config?, otlp?, help }`. Throws `invalid_input` with the flag and why.
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
        otlp: Option<String>,
        help: bool,
    }
    let a = ProxyArgs::parse_for(Shell::Npm, args);
    let a = a.map_err(|message| js_error("invalid_input", &message))?;
    to_js_value(&ArgsJs {
        port: a.port,
        upstream: a.upstream,
        store: a.store,
        window: a.window,
        config: a.config,
        otlp: a.otlp,
        help: a.help,
    })
}

/// What `context-workbench proxy --help` prints.
#[wasm_bindgen(js_name = cannotListen)]
pub fn cannot_listen_js(address: &str, in_use: bool, detail: &str) -> String {
    crate::proxy::args::cannot_listen(address, in_use, detail)
}

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

/// Why the store at `absolute` could not be created, with the platform's `detail`.
#[wasm_bindgen(js_name = cannotCreateStore)]
pub fn cannot_create_store(absolute: &str, detail: &str) -> String {
    StoreLocation::cannot_create(absolute, detail)
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

/// The collector's traces URL for `url` (`--otlp`, or the config's `proxy.otlp`); `undefined`
/// when it is empty. Throws `invalid_input` saying what is wrong with it.
#[wasm_bindgen(js_name = otlpTracesUrl)]
pub fn otlp_traces_url(url: &str) -> Result<Option<String>, JsValue> {
    crate::proxy::telemetry::traces_url(url).map_err(|message| js_error("invalid_input", &message))
}

/// The log lines of `--otlp`: at start (`exported` undefined), and at stop with how many of the
/// `ended` spans were exported.
#[wasm_bindgen(js_name = otlpLine)]
pub fn otlp_line(url: &str, ended: Option<f64>, exported: Option<f64>) -> String {
    use crate::proxy::telemetry::{start_line, stop_line};
    match (ended, exported) {
        (Some(ended), Some(exported)) => stop_line(Shell::Npm, url, ended as u64, exported as u64),
        _ => start_line(Shell::Npm, url),
    }
}
