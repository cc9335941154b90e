//! TypeScript declarations of the engine's data as JavaScript receives it: the serde form of
//! the Rust types, emitted into the `.d.ts`. They are generated from those types by
//! `src/ts_types.rs` into `types_data.ts` beside this file, and a test fails when that file is
//! not what the types generate now (`UPDATE_TS_TYPES=1 cargo test --lib ts_types` rewrites it).
//!
//! Why ts-rs (12) and not tsify (0.5.8): tsify's derive would emit into the `.d.ts` directly,
//! but it must then be a dependency of the wasm build, and it reads every `#[serde(default)]`
//! field as optional with no way to say otherwise, so what the engine returns would come out
//! optional (`StateBoard`, a container default, entirely; `Trace.spans`, `Goal.reason` …),
//! while a `Vec` skipped when empty would not. ts-rs describes the serialized form (optional
//! where a field is skipped and has a default), takes `#[ts(optional)]` where a field is only
//! read with a default (`CallInput`, `StateDelta`) or skipped when `None` (no `| null`), is a
//! dev-dependency derived under `cfg(test)` only, and its output is checked in.

use wasm_bindgen::prelude::wasm_bindgen;

#[wasm_bindgen(typescript_custom_section)]
const DATA_TS: &'static str = include_str!("types_data.ts");
