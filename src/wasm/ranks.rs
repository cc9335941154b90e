//! Loading the tokenizer's ranks from bytes the host supplies (the package's `.wasm` does not
//! embed them, so browsers fetch and cache the rank file on its own), compiling the text rank
//! files into the binary ones the package ships, and counting in an encoding without an engine.

use wasm_bindgen::prelude::*;

use super::convert::{js, to_js_value};
use super::error::to_js_error;
use crate::error::Error;
use crate::tokens::{Encoding, TokenCounter, compile_ranks, load_ranks, prepare_encoding, ranks_available};

fn encoding_of(name: &str) -> Result<Encoding, JsValue> {
    Encoding::parse(name).map_err(|message| to_js_error(Error::InvalidInput(message)))
}

/// Load the official rank file of `encoding` from its bytes, binary (`o200k_base.ranks`, 1.2 MB,
/// what the package ships) or text (`o200k_base.tiktoken`, 3.6 MB); a wrong, truncated or
/// altered file throws `invalid_input`. Loading twice is harmless.
#[wasm_bindgen(js_name = loadRanks)]
pub fn load_ranks_js(encoding: &str, file: &[u8]) -> Result<(), JsValue> {
    js(load_ranks(encoding_of(encoding)?, file).map_err(Error::from))
}

/// Get the pre-tokenizer of `encoding` ready (its character classes, a few ms) while its rank file
/// is still downloading. Optional: counting does it otherwise.
#[wasm_bindgen(js_name = prepareEncoding)]
pub fn prepare_encoding_js(encoding: &str) -> Result<(), JsValue> {
    js(prepare_encoding(encoding_of(encoding)?).map_err(Error::from))
}

/// The binary rank file (`o200k_base.ranks`) of the official text one (`o200k_base.tiktoken`):
/// what the package's build runs once, so that start-up loads rather than parses.
#[wasm_bindgen(js_name = compileRanks)]
pub fn compile_ranks_js(encoding: &str, text: &[u8]) -> Result<Vec<u8>, JsValue> {
    js(compile_ranks(encoding_of(encoding)?, text).map_err(Error::from))
}

/// Whether `encoding` can count: embedded in this build or loaded.
#[wasm_bindgen(js_name = ranksLoaded)]
pub fn ranks_loaded(encoding: &str) -> Result<bool, JsValue> {
    Ok(ranks_available(encoding_of(encoding)?))
}

/// Tokens of `text` in `encoding`, with `estimated: true` while its ranks are not loaded: the
/// package's `measureTokens` once the engine is in (before, the estimate's own small module).
#[wasm_bindgen(js_name = measureTokens, unchecked_return_type = "TokenCount")]
pub fn measure_tokens_js(encoding: &str, text: &str) -> Result<JsValue, JsValue> {
    to_js_value(&TokenCounter::estimating_until_loaded(encoding_of(encoding)?).measure(text))
}
