//! Facts of the engine that embedders read instead of copying them: the store format version
//! this build writes and reads, the default configuration (prices included), a configuration
//! resolved against those defaults, checked as the engine checks it, what a proxied trace's
//! calls cost and saved by the engine's cost model, the message ids a raw reference names, and a
//! user's text without the reminders agents inject.

use wasm_bindgen::prelude::*;

use super::convert::{from_js, js, to_js_value};
use super::engine::config_from_js;
use crate::config::Config;
use crate::model::without_reminders;
use crate::proxy::CallRecord;
use crate::proxy::stats::Totals;
use crate::store::{STORE_FORMAT_VERSION, message_ids};

/// The version of the trace store's layout this build writes and the newest it reads.
#[wasm_bindgen(js_name = storeFormatVersion)]
pub fn store_format_version() -> u32 {
    STORE_FORMAT_VERSION
}

/// The engine's default configuration, every field present.
#[wasm_bindgen(js_name = defaultConfig, unchecked_return_type = "ResolvedConfig")]
pub fn default_config() -> Result<JsValue, JsValue> {
    to_js_value(&Config::default())
}

/// `config` with the defaults for what it leaves out; `invalid_config` naming the key for an
/// unknown or mistyped one, as the engine would refuse it.
#[wasm_bindgen(js_name = resolveConfig, unchecked_return_type = "ResolvedConfig")]
pub fn resolve_config(
    #[wasm_bindgen(unchecked_param_type = "Config | undefined")] config: JsValue,
) -> Result<JsValue, JsValue> {
    to_js_value(&js(config_from_js(config))?)
}

/// What the calls of one proxied trace (its `calls.jsonl` records, in order) cost and saved, as
/// `workbench stats` counts them.
#[wasm_bindgen(js_name = callTotals, unchecked_return_type = "CallTotals")]
pub fn call_totals(
    #[wasm_bindgen(unchecked_param_type = "ProxyCallRecord[]")] calls: JsValue,
) -> Result<JsValue, JsValue> {
    let calls: Vec<CallRecord> = from_js(calls, "calls")?;
    to_js_value(&Totals::of_calls(&calls))
}

/// The message ids a raw reference names, in order: one id (`m000012`, `raw#m000012`) or a range
/// of one prefix (`m000022..m000025`, as a compaction block's `raw="…"` says), at most as many as
/// `recall` gives at once; `invalid_input` for anything else.
#[wasm_bindgen(js_name = messageIds)]
pub fn message_ids_js(reference: &str) -> Result<Vec<String>, JsValue> {
    js(message_ids(reference))
}

/// `text` without the `<system-reminder>` blocks agents inject (one cut short runs to the end).
#[wasm_bindgen(js_name = withoutReminders)]
pub fn without_reminders_js(text: &str) -> String {
    without_reminders(text)
}
