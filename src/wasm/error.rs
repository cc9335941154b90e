//! The one mapping from engine errors to JavaScript.

use wasm_bindgen::{JsCast, JsValue};

use crate::error::Error;
use crate::host::{HostError, HostErrorKind};

/// A JS `Error` named `ContextWorkbenchError` with the message and a stable `code` property.
pub fn to_js_error(err: Error) -> JsValue {
    js_error(err.code(), &err.to_string())
}

/// A `ContextWorkbenchError` with `code` and `message` as they are (a message that already
/// says what is wrong in the caller's terms, such as a command line's).
pub fn js_error(code: &str, message: &str) -> JsValue {
    let js = js_sys::Error::new(message);
    js.set_name("ContextWorkbenchError");
    // Setting a property on a fresh Error object cannot fail.
    let _ = js_sys::Reflect::set(&js, &"code".into(), &code.into());
    js.into()
}

/// What a JS host's rejection becomes: its message (never the stack), classified by its
/// `code` property when that names a known kind (`not_found`, `ENOENT`, `timeout` …).
pub fn host_error_from_js(method: &str, value: &JsValue) -> HostError {
    let (message, code) = if let Some(error) = value.dyn_ref::<js_sys::Error>() {
        let code = js_sys::Reflect::get(error, &"code".into()).ok().and_then(|c| c.as_string());
        (String::from(error.message()), code)
    } else if let Some(text) = value.as_string() {
        (text, None)
    } else {
        let shown = js_sys::JSON::stringify(value).ok().and_then(|s| s.as_string());
        (shown.unwrap_or_else(|| "a value that is not an Error".to_owned()), None)
    };
    let kind = code.as_deref().and_then(HostErrorKind::from_code).unwrap_or(HostErrorKind::Failed);
    HostError::new(kind, format!("host.{method} failed: {message}"))
}
