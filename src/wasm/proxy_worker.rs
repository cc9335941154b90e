//! The proxy's engines for a JS worker thread: `ProxyWorker` holds the conversations of the keys
//! the server's `ProxyGateway` assigns it (the library's `Worker`), reads each managed request
//! again on its own thread and prepares it, finishes its reply, and saves its sessions. What
//! crosses between the threads is plain data: a request's head and body, a reply's outcome, a
//! call's record.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use js_sys::Promise;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::convert::{from_js, js, to_js_value};
use super::engine::config_from_js;
use super::error::to_js_error;
use super::host::JsHost;
use super::proxy::{head_of, invalid};
use crate::proxy::args::Shell;
use crate::proxy::{
    CallRecord, ClientRequest, Decision, Gateway, ReplyOutcome, SessionKey, Shared, Upstreams, Verdict, Worker,
};
use crate::tokens::require_ranks;

/// The engines of one worker thread.
#[wasm_bindgen]
pub struct ProxyWorker {
    inner: Rc<Inner>,
}

struct Inner {
    /// Reads the requests (the same decisions as the server's gateway).
    gateway: Gateway,
    worker: Worker<JsHost>,
    /// The managed request `decide` read last, for `prepare` on this thread to take rather than
    /// read the same body again.
    last_read: RefCell<Option<Read>>,
}

/// A managed request as `decide` read it, with what it was read from.
struct Read {
    method: String,
    target: String,
    raw_headers: Vec<String>,
    body: Vec<u8>,
    key: SessionKey,
    request: Box<ClientRequest>,
}

impl Read {
    fn is_of(&self, method: &str, target: &str, raw_headers: &[String], body: &[u8]) -> bool {
        self.method == method && self.target == target && self.raw_headers == raw_headers && self.body == body
    }
}

/// What the server adds to a request it hands `prepare`.
#[derive(serde::Deserialize)]
struct Given {
    notes: Vec<String>,
    #[serde(default)]
    opening: Option<CallRecord>,
}

/// What `finish` resolves to.
#[derive(Serialize)]
struct FinishedJs<'a> {
    record: &'a CallRecord,
    trace_id: &'a str,
}

#[wasm_bindgen]
impl ProxyWorker {
    /// Sessions saved through `host` (its `complete` is not used: the embedded compactor writes
    /// blocks) with `config`, the session configuration of the server's `ProxyGateway`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "Host")] host: JsValue,
        #[wasm_bindgen(unchecked_param_type = "ResolvedConfig")] config: JsValue,
    ) -> Result<ProxyWorker, JsValue> {
        let host = JsHost::new(host).map_err(|e| to_js_error(e.into()))?;
        let config = js(config_from_js(config))?;
        js(require_ranks(config.encoding))?;
        let gateway = Gateway::new(&config, Upstreams::default(), Shell::Npm);
        let worker = Worker::new(host, config, false, Arc::new(Shared::default()));
        Ok(ProxyWorker { inner: Rc::new(Inner { gateway, worker, last_read: RefCell::new(None) }) })
    }

    /// At start, before any request: the store is taken for this proxy (rejects with
    /// `store_in_use` when another live proxy records into it), and the traces a killed proxy
    /// left `running` are marked `interrupted`; resolves to the log line saying so, if any.
    #[wasm_bindgen(unchecked_return_type = "Promise<string | undefined>")]
    pub fn recover(&self) -> Promise {
        let inner = Rc::clone(&self.inner);
        future_to_promise(async move {
            match inner.worker.recover(Shell::Npm.proxy()).await {
                Ok(line) => Ok(line.map_or(JsValue::UNDEFINED, JsValue::from)),
                Err(refused) => Err(super::error::js_error("store_in_use", &refused)),
            }
        })
    }

    /// What the gateway reads of a request, read here so that a long body is not parsed on the
    /// server's thread: the verdict for its exchange's `read` event. A managed request is kept
    /// as read, for `prepare` on this thread to take.
    #[wasm_bindgen(unchecked_return_type = "unknown")]
    pub fn read(
        &self,
        method: String,
        target: String,
        raw_headers: Vec<String>,
        body: Vec<u8>,
    ) -> Result<JsValue, JsValue> {
        let head = head_of(method.clone(), target.clone(), &raw_headers);
        let (verdict, request) = self.inner.gateway.read(&head, head.route(None), &body).into_parts();
        if let (Verdict::Manage { key }, Some(request)) = (&verdict, request) {
            let key = key.clone();
            *self.inner.last_read.borrow_mut() = Some(Read { method, target, raw_headers, body, key, request });
        }
        to_js_value(&verdict)
    }

    /// Record a managed request (its head as the server received it, its body) in its
    /// conversation and prepare the call, as its exchange's `prepare` effect says (`notes` for
    /// its record, `opening`). Resolves to the body for the upstream, or to nothing: the agent's
    /// request goes as it came (the call's record will say why).
    #[wasm_bindgen(unchecked_return_type = "Promise<string | undefined>")]
    pub fn prepare(
        &self,
        method: String,
        target: String,
        raw_headers: Vec<String>,
        body: Vec<u8>,
        #[wasm_bindgen(unchecked_param_type = "{ notes: string[]; opening?: ProxyCallRecord | null }")] given: JsValue,
    ) -> Result<Promise, JsValue> {
        let Given { notes, opening } = from_js(given, "given")?;
        let read = self.inner.last_read.take();
        let (key, mut request) = match read {
            Some(read) if read.is_of(&method, &target, &raw_headers, &body) => (read.key, read.request),
            _ => {
                let head = head_of(method, target, &raw_headers);
                let Decision::Manage { key, request } = self.inner.gateway.read(&head, head.route(None), &body) else {
                    return Err(invalid("prepare takes a request the gateway manages".into()));
                };
                (key, request)
            }
        };
        request.opening = opening.map(Box::new);
        let inner = Rc::clone(&self.inner);
        Ok(future_to_promise(async move {
            let prepared = inner.worker.prepare(&key, &request, notes).await;
            Ok(prepared.body.map_or(JsValue::UNDEFINED, JsValue::from))
        }))
    }

    /// Save the session the last `prepare` left unsaved: the thread calls it once the prepared
    /// body is on its way to the server, so the save runs while the upstream has the call.
    #[wasm_bindgen(js_name = saveBehind, unchecked_return_type = "Promise<void>")]
    pub fn save_behind(&self) -> Promise {
        let inner = Rc::clone(&self.inner);
        future_to_promise(async move {
            inner.worker.save_behind().await;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// The reply of the call in flight of the key named `key`: `outcome` from the server's
    /// `ReplyPump` (or its `callFailed`). Resolves to `{ record, trace_id }`.
    #[wasm_bindgen(unchecked_return_type = "Promise<{ record: ProxyCallRecord; trace_id: string }>")]
    pub fn finish(&self, key: String, status: u16, outcome: JsValue) -> Result<Promise, JsValue> {
        let outcome: ReplyOutcome = from_js(outcome, "outcome")?;
        let inner = Rc::clone(&self.inner);
        Ok(future_to_promise(async move {
            let record = inner.worker.finish(&key, status, outcome).await;
            to_js_value(&FinishedJs { record: &record, trace_id: &record.trace_id })
        }))
    }

    /// Count a side call (`record` from the server's `sideCall`) in the session the key named
    /// `key` used last; resolves to whether it was counted.
    #[wasm_bindgen(js_name = recordSideCall, unchecked_return_type = "Promise<boolean>")]
    pub fn record_side_call(
        &self,
        key: String,
        #[wasm_bindgen(unchecked_param_type = "ProxyCallRecord")] record: JsValue,
    ) -> Result<Promise, JsValue> {
        let record: CallRecord = from_js(record, "record")?;
        let inner = Rc::clone(&self.inner);
        Ok(future_to_promise(async move {
            Ok(JsValue::from_bool(inner.worker.record_side_call(&key, record).await.is_some()))
        }))
    }

    /// Save and close the sessions of the key named `key` (it made room for another); resolves
    /// to what could not be saved.
    #[wasm_bindgen(unchecked_return_type = "Promise<string[]>")]
    pub fn close(&self, key: String) -> Promise {
        let inner = Rc::clone(&self.inner);
        future_to_promise(async move { to_js_value(&inner.worker.close(&key).await) })
    }

    /// Save and close every session, and let go of the store (the proxy stops); resolves to
    /// what could not be saved.
    #[wasm_bindgen(js_name = closeAll, unchecked_return_type = "Promise<string[]>")]
    pub fn close_all(&self) -> Promise {
        let inner = Rc::clone(&self.inner);
        future_to_promise(async move {
            let failures = inner.worker.close_all().await;
            inner.worker.release_store().await;
            to_js_value(&failures)
        })
    }
}
