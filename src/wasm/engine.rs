//! `ContextEngine`, the class JavaScript sees: construction, counting, recording, spans and the
//! LLM. The prompt, goal, branch and state methods are in the sibling files, on the same class.

use std::rc::Rc;

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::convert::{from_js, js, to_js_value, tool_result_draft};
use super::error::to_js_error;
use super::host::JsHost;
use crate::config::Config;
use crate::engine::Engine;
use crate::error::Error;
use crate::host::{CompletionRequest, Usage};
use crate::js_forms::MessageInput;
use crate::model::{Message, MessageId, ToolResult};

/// The context engine over one trace, driven from JavaScript.
///
/// Methods take `&self` and the engine's state sits behind a `RefCell` that is never held
/// across an `await`, so calling `countTokens` while `complete` waits on the host is fine.
#[wasm_bindgen]
pub struct ContextEngine {
    pub(super) engine: Rc<Engine<JsHost>>,
}

impl ContextEngine {
    /// A promise of what `run` makes of the engine, as JSON; `run` holds its own handle on the
    /// engine, so the promise outlives this borrow.
    pub(super) fn promise<T, F>(&self, run: impl FnOnce(Rc<Engine<JsHost>>) -> F) -> Promise
    where
        T: serde::Serialize,
        F: Future<Output = crate::error::Result<T>> + 'static,
    {
        let answer = run(Rc::clone(&self.engine));
        future_to_promise(async move { to_js_value(&answer.await.map_err(to_js_error)?) })
    }
}

#[wasm_bindgen]
impl ContextEngine {
    /// Throws a `ContextWorkbenchError` when the host lacks a method or the config is invalid.
    /// Made before the encoding's ranks are loaded, the engine counts with a calibrated estimate
    /// (`estimating`, `measureTokens`) and refuses to save or prepare a call (`ranks_not_loaded`)
    /// until they are; then it counts exactly.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "Host")] host: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Config | undefined")] config: JsValue,
    ) -> Result<ContextEngine, JsValue> {
        let host = JsHost::new(host).map_err(|e| to_js_error(e.into()))?;
        let config = js(config_from_js(config))?;
        Ok(ContextEngine { engine: Rc::new(Engine::new(host, config)) })
    }

    /// Tokens of `text` in the configured encoding: exact, or the estimate while `estimating`
    /// (`measureTokens` marks which); never throws.
    #[wasm_bindgen(js_name = countTokens)]
    pub fn count_tokens(&self, text: &str) -> usize {
        self.engine.count_tokens(text)
    }

    /// Tokens of `text` with `estimated: true` while the encoding's ranks are not loaded.
    #[wasm_bindgen(js_name = measureTokens, unchecked_return_type = "TokenCount")]
    pub fn measure_tokens(&self, text: &str) -> Result<JsValue, JsValue> {
        to_js_value(&self.engine.counter().measure(text))
    }

    /// True while counts are estimates (the encoding's ranks not loaded yet).
    #[wasm_bindgen(getter)]
    pub fn estimating(&self) -> bool {
        !self.engine.counter().is_exact()
    }

    /// The configured encoding's name (`o200k_base` or `cl100k_base`).
    #[wasm_bindgen(getter)]
    pub fn encoding(&self) -> String {
        self.engine.config().encoding.name().to_owned()
    }

    /// The id of the trace this engine records.
    #[wasm_bindgen(getter, js_name = traceId)]
    pub fn trace_id(&self) -> String {
        self.engine.trace_id().0
    }

    /// The configuration in effect, every field filled in.
    #[wasm_bindgen(unchecked_return_type = "Required<Config>")]
    pub fn config(&self) -> Result<JsValue, JsValue> {
        to_js_value(self.engine.config())
    }

    /// Record a message; returns its id (`m000042`).
    #[wasm_bindgen]
    pub fn record(
        &self,
        #[wasm_bindgen(unchecked_param_type = "MessageInput")] message: JsValue,
    ) -> Result<String, JsValue> {
        let input: MessageInput = from_js(message, "message")?;
        js(self.engine.record(input.into_draft(None))).map(|id| id.0)
    }

    /// Record one tool result as a `tool` message answering `result.call_id`.
    #[wasm_bindgen(js_name = recordToolResult)]
    pub fn record_tool_result(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ToolResult")] result: JsValue,
    ) -> Result<String, JsValue> {
        let result: ToolResult = from_js(result, "tool result")?;
        js(self.engine.record(tool_result_draft(result))).map(|id| id.0)
    }

    /// Record the user's input, opening a round; `@path` mentions the host's `stat` finds get
    /// a reminder to read them (R7.1). Resolves to the message id.
    #[wasm_bindgen(js_name = recordUserInput, unchecked_return_type = "Promise<string>")]
    pub fn record_user_input(&self, text: String) -> Promise {
        let engine = Rc::clone(&self.engine);
        future_to_promise(async move {
            let id = engine.record_user_input(&text).await.map_err(to_js_error)?;
            Ok(JsValue::from(id.0))
        })
    }

    /// Replace the recorded history with `messages` (repaired where needed); the repair notes.
    #[wasm_bindgen(js_name = loadHistory, unchecked_return_type = "RepairNote[]")]
    pub fn load_history(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Message[]")] messages: JsValue,
    ) -> Result<JsValue, JsValue> {
        let messages: Vec<Message> = from_js(messages, "messages")?;
        to_js_value(&js(self.engine.load_history(messages))?)
    }

    /// Withdraw the messages from `from` on: the agent sent them again changed, and its version
    /// is recorded next; they stay in the raw trace and the prompt shows none of them. How many.
    #[wasm_bindgen(js_name = withdrawFrom)]
    pub fn withdraw_from(&self, from: String) -> Result<usize, JsValue> {
        js(self.engine.withdraw_from(&MessageId::from(from)))
    }

    /// The trace recorded so far: messages (with tokens), spans, mission.
    #[wasm_bindgen(unchecked_return_type = "Trace")]
    pub fn trace(&self) -> Result<JsValue, JsValue> {
        to_js_value(&self.engine.trace())
    }

    /// How the prompt shows the history: the compressed blocks (with the raw ranges they
    /// replaced), the archived summary, pruned outputs, the board and every rewrite with its cost.
    #[wasm_bindgen(js_name = historyView, unchecked_return_type = "HistoryView")]
    pub fn history_view(&self) -> Result<JsValue, JsValue> {
        // Through JSON: its maps have number keys (message indices, line numbers), which JSON
        // writes as strings and a JS object needs as strings.
        let json = serde_json::to_value(self.engine.history_view())
            .map_err(|e| to_js_error(Error::InvalidInput(format!("history view: {e}"))))?;
        to_js_value(&json)
    }

    /// `SPAN_START(id, goal)`: the span opens at the next recorded message (R5.7).
    #[wasm_bindgen(js_name = startSpan)]
    pub fn start_span(&self, id: &str, goal: &str) -> Result<(), JsValue> {
        js(self.engine.start_span(id, goal))
    }

    /// `SPAN_END(id, outcome)`: the span closes at the newest message.
    #[wasm_bindgen(js_name = endSpan)]
    pub fn end_span(&self, id: &str, outcome: &str) -> Result<(), JsValue> {
        js(self.engine.end_span(id, outcome))
    }

    /// A file was read with this mtime: the note to add to the result when it changed since
    /// the agent last read it (R7.2), else `undefined`.
    #[wasm_bindgen(js_name = observeRead)]
    pub fn observe_read(&self, path: &str, mtime_ms: f64) -> Option<String> {
        let mtime = if mtime_ms.is_finite() && mtime_ms > 0.0 { mtime_ms as u64 } else { 0 };
        self.engine.observe_read(path, mtime)
    }

    /// Ask the host's LLM through the engine; rejects with a `ContextWorkbenchError`.
    #[wasm_bindgen(unchecked_return_type = "Promise<Completion>")]
    pub fn complete(&self, #[wasm_bindgen(unchecked_param_type = "CompletionRequest")] request: JsValue) -> Promise {
        let engine = Rc::clone(&self.engine);
        future_to_promise(async move {
            let request: CompletionRequest = from_js(request, "completion request")?;
            let completion = engine.complete(request).await.map_err(to_js_error)?;
            to_js_value(&completion)
        })
    }

    /// The provider's usage for the call last prepared (it then drives the compaction trigger).
    #[wasm_bindgen(js_name = reportUsage)]
    pub fn report_usage(&self, #[wasm_bindgen(unchecked_param_type = "Usage")] usage: JsValue) -> Result<(), JsValue> {
        let usage: Usage = from_js(usage, "usage")?;
        self.engine.report_usage(usage);
        Ok(())
    }

    /// Usage the provider reported for the last completion, or `undefined`.
    #[wasm_bindgen(js_name = lastUsage, unchecked_return_type = "Usage | undefined")]
    pub fn last_usage(&self) -> JsValue {
        self.engine.last_usage().and_then(|u| to_js_value(&u).ok()).unwrap_or(JsValue::UNDEFINED)
    }
}

pub(super) fn config_from_js(value: JsValue) -> Result<Config, Error> {
    if value.is_undefined() || value.is_null() {
        return Ok(Config::default());
    }
    let json: serde_json::Value = serde_wasm_bindgen::from_value(value)
        .map_err(|e| Error::Config(format!("config must be a plain object: {e}")))?;
    Config::from_value(json)
}
