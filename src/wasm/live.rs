//! The reads of a viewer following sessions as they are written (`crate::store::live`), as
//! more methods of `TraceQuery`: the trace directories, a trace's summary and state (each
//! `null` when unchanged since the stamp given), and single messages.

use std::rc::Rc;

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::convert::to_js_value;
use super::error::to_js_error;
use super::store::TraceQuery;
use crate::store::LiveTraces;

#[wasm_bindgen(typescript_custom_section)]
const LIVE_TS: &'static str = r#"
/** One trace as a list of sessions shows it. */
export interface SessionSummary {
  meta: TraceMeta;
  /** A proxy wrote it (it has the proxy's record of each call). */
  proxied: boolean;
  /** The agent of its calls (`Claude Code 2.1.328`; older stores: `claude-cli/2.1.3`), or empty. */
  agent: string;
  /** Pass it back to learn cheaply whether the trace changed. */
  stamp: string;
}
/** One trace as the views following it show it. */
export interface SessionState {
  meta: TraceMeta;
  goal_tree: GoalTree | null;
  calls: ProxyCallRecord[];
  /** The newest call's prompt as the engine assembled it. */
  prompt: Assembly | null;
  /** What could not be read (a damaged file or line); the rest is still there. */
  notes: string[];
  stamp: string;
}
"#;

/// Run one read on a fresh `LiveTraces` over the query's host.
macro_rules! live {
    ($self:ident, |$live:ident| $call:expr) => {{
        let (host, root) = (Rc::clone(&$self.host), $self.root.clone());
        future_to_promise(async move {
            let $live = LiveTraces::new(&*host, &root).map_err(to_js_error)?;
            let answer = $call.await.map_err(to_js_error)?;
            to_js_value(&answer)
        })
    }};
}

#[wasm_bindgen]
impl TraceQuery {
    /// The directories under the root that may hold a trace, sorted.
    #[wasm_bindgen(js_name = traceIds, unchecked_return_type = "Promise<string[]>")]
    pub fn trace_ids(&self) -> Promise {
        live!(self, |live| live.trace_ids())
    }

    /// A trace's summary, `null` when unchanged since `since` (a stamp it returned).
    #[wasm_bindgen(js_name = sessionSummary, unchecked_return_type = "Promise<SessionSummary | null>")]
    pub fn session_summary(&self, trace_id: String, since: Option<String>) -> Promise {
        live!(self, |live| live.summary(&trace_id, since.as_deref()))
    }

    /// A trace's state, `null` when unchanged since `since` (a stamp it returned).
    #[wasm_bindgen(js_name = sessionState, unchecked_return_type = "Promise<SessionState | null>")]
    pub fn session_state(&self, trace_id: String, since: Option<String>) -> Promise {
        live!(self, |live| live.state(&trace_id, since.as_deref()))
    }

    /// One message of the main line by its id, `null` when there is none.
    #[wasm_bindgen(unchecked_return_type = "Promise<Message | null>")]
    pub fn message(&self, trace_id: String, message_id: String) -> Promise {
        live!(self, |live| live.message(&trace_id, &message_id))
    }

    /// The first message the trace recorded, `null` when there is none yet.
    #[wasm_bindgen(js_name = firstMessage, unchecked_return_type = "Promise<Message | null>")]
    pub fn first_message(&self, trace_id: String) -> Promise {
        live!(self, |live| live.first_message(&trace_id))
    }
}
