//! The wasm-bindgen face of the engine: the only module that names wasm_bindgen, js_sys or
//! JsValue. `ContextEngine` wraps `Engine<JsHost>` (its methods are spread over `engine.rs`,
//! `calls.rs`, `goals.rs` and `store.rs` by concern); `TraceQuery` is the query API over a trace
//! root (with a viewer's reads of live sessions in `live.rs`); `ReplaySession` is the playground's replay; `facts.rs` exports the store format version and the default configuration; `ProxyGateway` and `ProxyWorker` are the proxy's core for a JS server and its worker threads; the tokenizer's ranks can be loaded from
//! bytes. Errors become JS `Error`s with a `code`.

mod calls;
mod convert;
mod engine;
mod error;
mod facts;
mod goals;
mod host;
mod live;
mod paths;
mod proxy;
mod proxy_worker;
mod ranks;
mod replay;
mod store;
mod types;
mod types_data;

pub use engine::ContextEngine;
pub use facts::{default_config, resolve_config, store_format_version};
pub use paths::normalize_workspace_path_js;
pub use proxy::{
    ProxyExchange, ProxyGateway, config_from_file_js, parse_proxy_args, passes_to_agent_js, passes_to_upstream_js,
    proxy_store_location, proxy_usage,
};
pub use proxy_worker::ProxyWorker;
pub use ranks::{compile_ranks_js, load_ranks_js, prepare_encoding_js, ranks_loaded};
pub use replay::ReplaySession;
pub use store::TraceQuery;
