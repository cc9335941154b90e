//! The wasm-bindgen face of the engine: the only module that names wasm_bindgen, js_sys or
//! JsValue. `ContextEngine` wraps `Engine<JsHost>`; errors become JS `Error`s with a `code`.

mod engine;
mod error;
mod host;
mod types;

pub use engine::ContextEngine;
