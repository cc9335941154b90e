//! `ReplaySession`, the playground's engine: a recorded trajectory replayed call by call through
//! the `workbench` strategy (no LLM), as `crate::replay::ReplaySession` describes.

use wasm_bindgen::prelude::*;

use super::convert::{js, to_js_value};
use crate::replay::ReplaySession as Session;
use crate::tokens::{Encoding, require_ranks};

/// A replay of one imported trajectory file. Needs the o200k_base ranks.
#[wasm_bindgen]
pub struct ReplaySession {
    session: Session,
}

#[wasm_bindgen]
impl ReplaySession {
    /// Import `text` (any trajectory format the importers detect; `file` names it) and select
    /// its first trajectory with calls. `window` defaults to 200,000 tokens. Throws
    /// `invalid_trajectory` for a file that is no trajectory, `invalid_input` for one over the
    /// size limit, `ranks_not_loaded` before the o200k_base ranks are loaded.
    #[wasm_bindgen(constructor)]
    pub fn new(file: &str, text: &str, window: Option<u32>) -> Result<ReplaySession, JsValue> {
        js(require_ranks(Encoding::O200kBase))?;
        let window = window.filter(|w| *w > 0).unwrap_or(200_000) as usize;
        Ok(ReplaySession { session: js(Session::import(file, text, window))? })
    }

    /// The agent contexts of the file (a Claude Code session first, then its sub-agents).
    #[wasm_bindgen(unchecked_return_type = "TrajectoryInfo[]")]
    pub fn trajectories(&self) -> Result<JsValue, JsValue> {
        to_js_value(&self.session.trajectories())
    }

    /// The index of the selected trajectory.
    #[wasm_bindgen(getter)]
    pub fn selected(&self) -> usize {
        self.session.selected()
    }

    /// Start over on trajectory `index`.
    #[wasm_bindgen]
    pub fn select(&mut self, index: usize) -> Result<(), JsValue> {
        js(self.session.select(index))
    }

    /// The number of recorded calls of the selected trajectory.
    #[wasm_bindgen(getter)]
    pub fn calls(&self) -> usize {
        self.session.calls()
    }

    /// The selected trajectory's raw messages, as recorded.
    #[wasm_bindgen(js_name = rawMessages, unchecked_return_type = "Message[]")]
    pub fn raw_messages(&self) -> Result<JsValue, JsValue> {
        to_js_value(&self.session.raw_messages())
    }

    /// Replay the next call: the call's prompt (texts by id) and the texts first seen on it;
    /// `undefined` once every call was replayed.
    #[wasm_bindgen(unchecked_return_type = "ReplayStep | undefined")]
    pub fn step(&mut self) -> Result<JsValue, JsValue> {
        match self.session.step() {
            Some(step) => to_js_value(&step),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// The state board now.
    #[wasm_bindgen(unchecked_return_type = "StateBoard")]
    pub fn board(&self) -> Result<JsValue, JsValue> {
        to_js_value(&self.session.board())
    }

    /// The replay's figures for the selected trajectory (`workbench replay`'s totals of `raw`
    /// and `workbench`); replays it once more, so call it once the steps are done.
    #[wasm_bindgen(unchecked_return_type = "ReplaySummary")]
    pub fn summary(&self) -> Result<JsValue, JsValue> {
        to_js_value(&js(self.session.summary())?)
    }

    /// The goal tree now (a Claude Code session's TodoWrite items as goals).
    #[wasm_bindgen(js_name = goalTree, unchecked_return_type = "GoalTree")]
    pub fn goal_tree(&self) -> Result<JsValue, JsValue> {
        to_js_value(&self.session.goal_tree())
    }
}
