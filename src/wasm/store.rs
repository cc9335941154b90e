//! The trace store from JavaScript (R8): open or resume a persisted engine, save it, and the
//! query API over a host's trace root (`TraceQuery`).

use std::rc::Rc;

use js_sys::{Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::ContextEngine;
use super::convert::{js, to_js_value};
use super::engine::config_from_js;
use super::error::to_js_error;
use super::host::JsHost;
use crate::config::Config;
use crate::engine::Engine;
use crate::store::TraceStore;
use crate::tokens::require_ranks;

#[wasm_bindgen]
impl ContextEngine {
    /// Start or resume the trace `traceId` (a new `trace-<now>` without one) under the config's
    /// `store.root`. Resolves to `{ engine, notes }`; the notes say what a resume degraded.
    /// Rejects naming the file when a trace cannot be resumed without losing what it holds.
    #[wasm_bindgen(unchecked_return_type = "Promise<{ engine: ContextEngine; notes: string[] }>")]
    pub fn open(
        #[wasm_bindgen(unchecked_param_type = "Host")] host: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Config | undefined")] config: JsValue,
        trace_id: Option<String>,
    ) -> Promise {
        let prepared = prepare(host, config);
        future_to_promise(async move {
            let (host, config) = prepared?;
            let (engine, notes) = Engine::open(host, config, trace_id.as_deref()).await.map_err(to_js_error)?;
            let opened = Object::new();
            let engine = JsValue::from(ContextEngine { engine: Rc::new(engine) });
            Reflect::set(&opened, &"engine".into(), &engine)?;
            Reflect::set(&opened, &"notes".into(), &to_js_value(&notes)?)?;
            Ok(opened.into())
        })
    }

    /// Write what changed since the last save (each message once, appended logs, `state.json`
    /// last). Rejects for an engine without a store, or with the host's error on a failed write.
    #[wasm_bindgen(unchecked_return_type = "Promise<PersistReport>")]
    pub fn persist(&self) -> Promise {
        self.promise(|engine| async move { engine.persist().await })
    }

    /// Save to `root/<trace id>/` from now on (a trace recorded in memory first).
    #[wasm_bindgen(js_name = attachStore)]
    pub fn attach_store(&self, root: &str) -> Result<(), JsValue> {
        js(self.engine.attach_store(root))
    }

    /// Name the trace before it has a store.
    #[wasm_bindgen(js_name = setTraceId)]
    pub fn set_trace_id(&self, id: &str) -> Result<(), JsValue> {
        js(self.engine.set_trace_id(id))
    }

    /// The trace directory (`.trace/<id>`), when the engine has a store.
    #[wasm_bindgen(getter, js_name = traceDir)]
    pub fn trace_dir(&self) -> Option<String> {
        self.engine.trace_dir()
    }
}

fn prepare(host: JsValue, config: JsValue) -> Result<(JsHost, Config), JsValue> {
    let host = JsHost::new(host).map_err(|e| to_js_error(e.into()))?;
    let config = js(config_from_js(config))?;
    js(require_ranks(config.encoding))?;
    Ok((host, config))
}

/// The query API (R8.4) over the traces under one root of a host's file system. Reading never
/// writes; damaged files are notes in the answers.
#[wasm_bindgen]
pub struct TraceQuery {
    pub(super) host: Rc<JsHost>,
    pub(super) root: String,
}

/// Run one query on a fresh `TraceStore` over the shared host.
macro_rules! query {
    ($self:ident, |$store:ident| $call:expr) => {{
        let (host, root) = (Rc::clone(&$self.host), $self.root.clone());
        future_to_promise(async move {
            let $store = TraceStore::new(&*host, &root).map_err(to_js_error)?;
            let answer = $call.await.map_err(to_js_error)?;
            to_js_value(&answer)
        })
    }};
}

#[wasm_bindgen]
impl TraceQuery {
    /// Queries over `root` (the default trace root `.trace` when absent) of `host`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "Host")] host: JsValue,
        root: Option<String>,
    ) -> Result<TraceQuery, JsValue> {
        let host = JsHost::new(host).map_err(|e| to_js_error(e.into()))?;
        let root = root.unwrap_or_else(|| crate::store::DEFAULT_ROOT.to_owned());
        js(TraceStore::new(&host, &root))?;
        Ok(TraceQuery { host: Rc::new(host), root })
    }

    /// Every trace under the root, newest first.
    #[wasm_bindgen(js_name = listTraces, unchecked_return_type = "Promise<TraceList>")]
    pub fn list_traces(&self) -> Promise {
        query!(self, |store| store.list_traces())
    }

    /// A trace with its goal tree and its branches' metadata.
    #[wasm_bindgen(unchecked_return_type = "Promise<TraceDetail>")]
    pub fn trace(&self, trace_id: String) -> Promise {
        query!(self, |store| store.trace(&trace_id))
    }

    /// The main-line messages of one goal (its internal id): the detail of a DAG edge.
    #[wasm_bindgen(js_name = goalMessages, unchecked_return_type = "Promise<GoalMessages>")]
    pub fn goal_messages(&self, trace_id: String, goal_id: String) -> Promise {
        query!(self, |store| store.goal_messages(&trace_id, &goal_id))
    }

    /// One branch in detail: its metadata, its own goal tree and messages.
    #[wasm_bindgen(unchecked_return_type = "Promise<BranchDetail>")]
    pub fn branch(&self, trace_id: String, branch_id: String) -> Promise {
        query!(self, |store| store.branch(&trace_id, &branch_id))
    }

    /// The query API's answer to `method path?query` (`store::api`: every REST route, its checks
    /// and its errors, as a status and a body).
    #[wasm_bindgen(unchecked_return_type = "Promise<{ status: number; body: string }>")]
    pub fn answer(&self, method: String, path: String, query: String) -> Promise {
        let (host, root) = (Rc::clone(&self.host), self.root.clone());
        future_to_promise(async move {
            let reply = match TraceStore::new(&*host, &root) {
                Ok(store) => crate::store::api::answer(&store, &method, &path, &query).await,
                Err(e) => crate::store::api::ApiReply::store_failure(&e),
            };
            to_js_value(&reply)
        })
    }

    /// The events after `sinceEventId` (0: all).
    #[wasm_bindgen(js_name = eventsAfter, unchecked_return_type = "Promise<EventsPage>")]
    pub fn events_after(&self, trace_id: String, since_event_id: f64) -> Promise {
        let since = if since_event_id.is_finite() && since_event_id > 0.0 { since_event_id as u64 } else { 0 };
        query!(self, |store| store.events_after(&trace_id, since))
    }
}
