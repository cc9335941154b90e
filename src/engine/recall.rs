//! The `recall` tool in the engine: the originals of compressed forms back from the raw trace,
//! bounded to what a tool output may take in the window.

use serde::Serialize;

use super::Engine;
use crate::host::Host;
use crate::prompt::ToolSpec;
use crate::workbench::recall::{recall, recall_spec};

/// What a `recall` call returns to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct RecallResult {
    /// The original (numbered lines), or what was wrong and what exists.
    pub text: String,
    /// True when the call was refused; nothing changed either way.
    pub is_error: bool,
}

/// A recalled original is cut at this many tokens at most, and at half the first-sight limit.
const MAX_RECALL_TOKENS: usize = 8_000;
const MIN_RECALL_TOKENS: usize = 500;

impl<H: Host> Engine<H> {
    /// The `recall` tool to offer the model beside the plan tools.
    pub fn recall_tool(&self) -> ToolSpec {
        recall_spec()
    }

    /// Answer a `recall` call (`{"ref": "raw#m000123", "lines": "40-80"}` or `"grep"`) from the
    /// main line's raw trace. Read-only: nothing is recorded or changed.
    pub fn recall(&self, arguments: &str) -> RecallResult {
        let limit = self.config.workbench.first_sight_tokens(self.config.window) / 2;
        let budget = limit.clamp(MIN_RECALL_TOKENS, MAX_RECALL_TOKENS);
        let state = self.state.borrow();
        match recall(&state.trace.messages, arguments, budget, &self.counter) {
            Ok(text) => RecallResult { text, is_error: false },
            Err(text) => RecallResult { text, is_error: true },
        }
    }
}
