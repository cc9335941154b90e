//! The engine's rule for workspace-relative paths, for the JS hosts (the npm package's, the VS
//! Code extension's): one normalisation everywhere, each host adding only its link check.

use wasm_bindgen::prelude::*;

use super::error::to_js_error;
use crate::paths::normalize_workspace_path;

/// `path` in its normal form (`a/./b/../c/` → `a/c`; the root is `""`); throws an `Error` with
/// code `host_outside_workspace` when it is absolute, a URL, holds a NUL or climbs out.
#[wasm_bindgen(js_name = normalizeWorkspacePath)]
pub fn normalize_workspace_path_js(path: &str) -> Result<String, JsValue> {
    normalize_workspace_path(path).map_err(|e| to_js_error(e.into()))
}
