//! `ContextEngine`, the class JavaScript sees.

use std::rc::Rc;

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::error::to_js_error;
use super::host::{JsHost, to_js};
use crate::config::Config;
use crate::engine::Engine;
use crate::error::Error;
use crate::host::CompletionRequest;

/// The context engine over one trace, driven from JavaScript.
///
/// Methods take `&self` and the engine's state sits behind a `RefCell` that is never held
/// across an `await`, so calling `countTokens` while `complete` waits on the host is fine.
#[wasm_bindgen]
pub struct ContextEngine {
    engine: Rc<Engine<JsHost>>,
}

#[wasm_bindgen]
impl ContextEngine {
    /// Throws a `ContextWorkbenchError` when the host lacks a method or the config is invalid.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "Host")] host: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Config | undefined")] config: JsValue,
    ) -> Result<ContextEngine, JsValue> {
        let host = JsHost::new(host).map_err(|e| to_js_error(e.into()))?;
        let config = config_from_js(config).map_err(to_js_error)?;
        Ok(ContextEngine { engine: Rc::new(Engine::new(host, config)) })
    }

    /// Exact tokens of `text` in the configured encoding; never throws.
    #[wasm_bindgen(js_name = countTokens)]
    pub fn count_tokens(&self, text: &str) -> usize {
        self.engine.count_tokens(text)
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

    /// Ask the host's LLM through the engine; rejects with a `ContextWorkbenchError`.
    #[wasm_bindgen(unchecked_return_type = "Promise<Completion>")]
    pub fn complete(&self, #[wasm_bindgen(unchecked_param_type = "CompletionRequest")] request: JsValue) -> Promise {
        let engine = Rc::clone(&self.engine);
        future_to_promise(async move {
            let request: CompletionRequest = serde_wasm_bindgen::from_value(request)
                .map_err(|e| to_js_error(Error::InvalidInput(format!("completion request: {e}"))))?;
            let completion = engine.complete(request).await.map_err(to_js_error)?;
            to_js(&completion).map_err(|e| to_js_error(e.into()))
        })
    }

    /// Usage the provider reported for the last completion, or `undefined`.
    #[wasm_bindgen(js_name = lastUsage, unchecked_return_type = "Usage | undefined")]
    pub fn last_usage(&self) -> JsValue {
        self.engine.last_usage().and_then(|u| to_js(&u).ok()).unwrap_or(JsValue::UNDEFINED)
    }
}

fn config_from_js(value: JsValue) -> Result<Config, Error> {
    if value.is_undefined() || value.is_null() {
        return Ok(Config::default());
    }
    let json: serde_json::Value = serde_wasm_bindgen::from_value(value)
        .map_err(|e| Error::Config(format!("config must be a plain object: {e}")))?;
    Config::from_value(json)
}
