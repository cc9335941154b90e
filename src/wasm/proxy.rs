//! The proxy's translation core for a JS server (the npm package's `startProxy`): `ProxyCore`
//! reads requests, keeps one `Conversation` per key over a JS host and says what to send
//! upstream; `ReplyReader` reads a reply as it passes. The server, the upstream client and the
//! per-key ordering of requests are the JS side's; the decisions and the log lines are the
//! library's, the same as `workbench proxy`'s.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

use js_sys::Promise;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::convert::{js, to_js_value};
use super::engine::config_from_js;
use super::error::to_js_error;
use super::host::JsHost;
use crate::config::Config;
use crate::error::Error;
use crate::proxy::conversation::{Conversation, fresh_trace_id, open_session};
use crate::proxy::report::{Totals, describe};
use crate::proxy::{
    self, CallRecord, ClientRequest, Format, ReplyOutcome, Route, SessionKey, agent_name, error_body,
    stream_error_event,
};
use crate::tokens::{TokenCounter, require_ranks};

/// The proxy's decisions for one process; see the module's doc.
#[wasm_bindgen]
pub struct ProxyCore {
    core: Rc<Core>,
}

struct Core {
    host: JsHost,
    config: Config,
    counter: TokenCounter,
    keys: RefCell<HashMap<String, Slot>>,
    used_ids: RefCell<BTreeSet<String>>,
    clock: Cell<u64>,
    totals: RefCell<Totals>,
}

/// One key's sessions.
struct Slot {
    key: SessionKey,
    conversation: Shared,
    last_used: u64,
}

/// A key's conversation, taken out while a `prepare` or `finish` of it awaits: the JS side sends
/// one request of a key at a time, and one that comes anyway is told so.
type Shared = Rc<RefCell<Option<Conversation<JsHost>>>>;

fn take(shared: &Shared) -> Result<Conversation<JsHost>, JsValue> {
    shared.borrow_mut().take().ok_or_else(|| invalid("this conversation is busy with another request"))
}

/// A request as read: what to do with it, and the request itself when it is managed.
#[wasm_bindgen]
pub struct ReadRequest {
    action: &'static str,
    why: String,
    status: u16,
    key: String,
    request: Option<(ClientRequest, SessionKey)>,
}

#[wasm_bindgen]
impl ReadRequest {
    /// `manage` (prepare it under `key`), `pass` (send it on as it came; `why` says why) or
    /// `refuse` (answer `status` with `why`).
    #[wasm_bindgen(getter)]
    pub fn action(&self) -> String {
        self.action.to_owned()
    }

    #[wasm_bindgen(getter)]
    pub fn why(&self) -> String {
        self.why.clone()
    }

    #[wasm_bindgen(getter)]
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The conversation's key: requests of one key go through `prepare`/`finish` one at a time.
    #[wasm_bindgen(getter)]
    pub fn key(&self) -> String {
        self.key.clone()
    }
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
    /// writes blocks) under the config's `store.root`. Throws on an invalid config or missing
    /// ranks.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "Host")] host: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Config | undefined")] config: JsValue,
    ) -> Result<ProxyCore, JsValue> {
        let host = JsHost::new(host).map_err(|e| to_js_error(e.into()))?;
        let config = js(config_from_js(config))?;
        js(require_ranks(config.encoding))?;
        let counter = TokenCounter::new(config.encoding);
        let core = Core {
            host,
            config,
            counter,
            keys: RefCell::default(),
            used_ids: RefCell::default(),
            clock: Cell::new(0),
            totals: RefCell::default(),
        };
        Ok(ProxyCore { core: Rc::new(core) })
    }

    /// The configuration in effect (its `proxy` limits among it).
    #[wasm_bindgen(unchecked_return_type = "Required<Config>")]
    pub fn config(&self) -> Result<JsValue, JsValue> {
        to_js_value(&self.core.config)
    }

    /// Read a managed route's body (`format` from `classifyRoute`). A side call, a request the
    /// engine cannot manage or cannot read is `pass`; a malformed one `refuse`.
    pub fn read(
        &self,
        format: &str,
        body: &[u8],
        session_header: Option<String>,
        user_agent: Option<String>,
    ) -> Result<ReadRequest, JsValue> {
        let format = format_of(format)?;
        let counter = &self.core.counter;
        let read = |action, why: String, status| ReadRequest { action, why, status, key: String::new(), request: None };
        Ok(match ClientRequest::parse(format, body, counter) {
            Ok(request) if request.is_side_call(counter, self.core.config.proxy.side_call_tokens as usize) => {
                read("pass", "side call, passed through".into(), 0)
            }
            Ok(mut request) => {
                request.agent = agent_name(user_agent.as_deref().unwrap_or(""));
                let key = request.session_key(session_header.as_deref());
                ReadRequest {
                    action: "manage",
                    why: String::new(),
                    status: 0,
                    key: key_name(&key),
                    request: Some((request, key)),
                }
            }
            Err(e) if e.pass_through => read("pass", format!("passed through unmanaged ({})", e.message), 0),
            Err(e) => read("refuse", e.message, e.status),
        })
    }

    /// Record a managed request in its conversation and prepare the call: resolves to
    /// `{ body?, record }` (no body: the agent's request goes as it came, `record.notes` say
    /// why). Never rejects for the engine's sake; rejects when the request is not a managed one
    /// or its conversation has a call in flight.
    #[wasm_bindgen(unchecked_return_type = "Promise<{ body?: string; record: ProxyCallRecord }>")]
    pub fn prepare(&self, read: ReadRequest) -> Promise {
        let core = Rc::clone(&self.core);
        future_to_promise(async move {
            let (request, key) =
                read.request.ok_or_else(|| invalid("prepare takes a request whose action is `manage`"))?;
            let (shared, evicted) = core.slot(&read.key, &key);
            let unsaved = match evicted {
                Some(evicted) => core.close(evicted).await,
                None => Vec::new(),
            };
            let mut conversation = take(&shared)?;
            let open = async || {
                let reserve = |id: &str| core.used_ids.borrow_mut().insert(id.to_owned());
                let id = fresh_trace_id(&core.host, &core.config.store.root, &key.trace_base(), reserve).await;
                open_session(core.host.clone(), &core.config, false, &id, &request).await
            };
            let mut prepared = conversation.prepare(&request, open).await;
            *shared.borrow_mut() = Some(conversation);
            // What the least recently used conversation, closed to make room, could not save.
            prepared.record.notes.extend(unsaved);
            to_js_value(&PreparedJs { body: prepared.body.as_deref(), record: &prepared.record })
        })
    }

    /// The reply of `key`'s call in flight: read by `reader` (none when the upstream gave no
    /// reply), `error` when it broke off or never came. Resolves to `{ record, trace_id, line }`.
    #[wasm_bindgen(unchecked_return_type = "Promise<{ record: ProxyCallRecord; trace_id: string; line: string }>")]
    pub fn finish(&self, key: String, status: u16, reader: Option<ReplyReader>, error: Option<String>) -> Promise {
        let core = Rc::clone(&self.core);
        future_to_promise(async move {
            let mut outcome = match reader {
                Some(reader) => reader.reader.finish(&core.counter),
                None => ReplyOutcome::default(),
            };
            if let Some(error) = error {
                outcome.completed = false;
                outcome.parts.clear();
                outcome.error = Some(error);
            }
            let shared = core.keys.borrow().get(&key).map(|slot| Rc::clone(&slot.conversation));
            let record = match shared {
                Some(shared) => {
                    let mut conversation = take(&shared)?;
                    let record = conversation.finish(status, outcome).await;
                    *shared.borrow_mut() = Some(conversation);
                    record
                }
                None => CallRecord { status: Some(status), usage: outcome.usage, ..CallRecord::default() },
            };
            core.totals.borrow_mut().add_call(&record);
            to_js_value(&FinishedJs { record: &record, trace_id: &record.trace_id, line: describe(&record) })
        })
    }

    /// The log line of a request the engine did not manage (`workbench proxy: …`), counted.
    #[wasm_bindgen(js_name = requestLine)]
    pub fn request_line(&self, text: &str) -> String {
        self.core.totals.borrow_mut().add_request();
        format!("workbench proxy: {text}")
    }

    /// The running totals (`N requests, M managed: …`).
    pub fn progress(&self) -> String {
        self.core.totals.borrow().progress()
    }

    /// Save and close every session; resolves to what could not be saved.
    #[wasm_bindgen(js_name = closeAll, unchecked_return_type = "Promise<string[]>")]
    pub fn close_all(&self) -> Promise {
        let core = Rc::clone(&self.core);
        future_to_promise(async move {
            let slots: Vec<Slot> = core.keys.borrow_mut().drain().map(|(_, slot)| slot).collect();
            let mut failures = Vec::new();
            for slot in slots {
                failures.extend(core.close(slot).await);
            }
            to_js_value(&failures)
        })
    }
}

impl Core {
    /// The key's conversation (new when the key is), and past `proxy.max_sessions` keys the
    /// least recently used idle one, taken out to be closed.
    fn slot(&self, name: &str, key: &SessionKey) -> (Shared, Option<Slot>) {
        let now = self.clock.get() + 1;
        self.clock.set(now);
        let mut keys = self.keys.borrow_mut();
        let mut evicted = None;
        if !keys.contains_key(name) && keys.len() >= self.config.proxy.max_sessions.max(1) as usize {
            let idle = keys
                .iter()
                .filter(|(_, s)| s.conversation.borrow().as_ref().is_some_and(|c| !c.in_flight()))
                .min_by_key(|(_, s)| s.last_used)
                .map(|(k, _)| k.clone());
            evicted = idle.and_then(|k| keys.remove(&k));
        }
        let slot = keys.entry(name.to_owned()).or_insert_with(|| Slot {
            key: key.clone(),
            conversation: Rc::new(RefCell::new(Some(Conversation::default()))),
            last_used: now,
        });
        slot.last_used = now;
        (Rc::clone(&slot.conversation), evicted)
    }

    async fn close(&self, slot: Slot) -> Vec<String> {
        match take(&slot.conversation) {
            Ok(mut conversation) => conversation.close_all().await,
            Err(_) => vec![format!("the sessions of {} were busy and not saved", slot.key.trace_base())],
        }
    }
}

/// A provider's reply read as it passes (see the library's `ReplyReader`).
#[wasm_bindgen]
pub struct ReplyReader {
    reader: proxy::ReplyReader,
}

#[wasm_bindgen]
impl ReplyReader {
    /// A reader of a reply with HTTP `status`, an event stream when `stream`; a body past
    /// `limit` bytes is not read further (it still passes to the agent).
    #[wasm_bindgen(constructor)]
    pub fn new(format: &str, stream: bool, status: u16, limit: f64) -> Result<ReplyReader, JsValue> {
        let limit = if limit.is_finite() && limit > 0.0 { limit as usize } else { usize::MAX };
        Ok(ReplyReader { reader: proxy::ReplyReader::new(format_of(format)?, stream, status, limit) })
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.reader.push(bytes);
    }

    /// The reply is whole (its last event or its JSON body arrived).
    #[wasm_bindgen(js_name = isComplete)]
    pub fn is_complete(&self) -> bool {
        self.reader.is_complete()
    }
}

/// Which route a request takes: `{ managed, format }` (`anthropic` or `openai`).
#[wasm_bindgen(js_name = classifyRoute, unchecked_return_type = "{ managed: boolean; format: 'anthropic' | 'openai' }")]
pub fn classify_route(method: &str, path: &str, anthropic_headers: bool) -> Result<JsValue, JsValue> {
    let route = proxy::classify(method, path, anthropic_headers);
    #[derive(Serialize)]
    struct RouteJs {
        managed: bool,
        format: &'static str,
    }
    to_js_value(&RouteJs { managed: matches!(route, Route::Managed(_)), format: route.format().name() })
}

/// The upstream URL of a request path under `base`, without doubling a `/v1`.
#[wasm_bindgen(js_name = upstreamUrl)]
pub fn upstream_url(base: &str, path: &str) -> String {
    proxy::upstream_url(base, path)
}

/// The proxy's own error as the provider's JSON error body.
#[wasm_bindgen(js_name = proxyErrorBody)]
pub fn proxy_error_body(format: &str, status: u16, message: &str) -> Result<String, JsValue> {
    Ok(error_body(format_of(format)?, status, message))
}

/// An error event closing a stream that broke off, in the provider's shape.
#[wasm_bindgen(js_name = proxyStreamErrorEvent)]
pub fn proxy_stream_error_event(format: &str, message: &str) -> Result<String, JsValue> {
    Ok(stream_error_event(format_of(format)?, message))
}

fn format_of(name: &str) -> Result<Format, JsValue> {
    match name {
        "anthropic" => Ok(Format::Anthropic),
        "openai" => Ok(Format::OpenAi),
        other => Err(invalid(&format!("format `{other}`: expected `anthropic` or `openai`"))),
    }
}

/// A key as a JS map's name: the agent's session id and the conversation's hash.
fn key_name(key: &SessionKey) -> String {
    format!("{}\u{1}{:016x}", key.agent_session.as_deref().unwrap_or(""), key.conversation)
}

fn invalid(message: &str) -> JsValue {
    to_js_error(Error::InvalidInput(message.to_owned()))
}
