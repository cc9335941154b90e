//! The state board's deltas outside compactions (R5.3): a STATE_DELTA from the model or the host
//! (or asked of the host's LLM with STATE_UPDATE) is checked against what was observed (R5.6),
//! applied to the board, and appended to history, where it stays and joins the cached prefix.

use serde::Serialize;

use super::{Engine, MessageDraft};
use crate::error::{Error, Result};
use crate::host::Host;
use crate::model::{MessageId, Role};
use crate::workbench::block::{fit_delta, neutralise_delta, render_delta};
use crate::workbench::{Observations, Rejection, StateBoard, StateDelta, llm};

/// What became of a delta.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct StateUpdate {
    /// The board's version after the delta.
    pub version: u32,
    /// The history message it was appended as.
    pub message: MessageId,
    /// Items whose evidence did not check out: anchors dropped, facts marked unknown.
    pub rejected: Vec<Rejection>,
    /// Conflicts with earlier versions, merged and marked.
    pub conflicts: Vec<String>,
    pub notes: Vec<String>,
}

impl<H: Host> Engine<H> {
    /// The state board after every delta so far (R5.2).
    pub fn state_board(&self) -> StateBoard {
        self.state.borrow().view.board.clone()
    }

    /// Apply a STATE_DELTA (R5.3): its evidence checked (R5.6), its text neutralised, fitted to
    /// `delta_tokens`, then appended to history as a system message that stays. An empty delta
    /// is refused.
    pub fn update_state(&self, mut delta: StateDelta) -> Result<StateUpdate> {
        self.counter.require_exact()?;
        if delta.is_empty() {
            return Err(Error::InvalidInput("an empty STATE_DELTA changes nothing".into()));
        }
        let rejected = {
            let state = self.state.borrow();
            Observations::from_messages(&state.trace.messages, &self.config.compress).check_delta(&mut delta)
        };
        let mut notes = Vec::new();
        if neutralise_delta(&mut delta) > 0 {
            notes.push("text that would pose as the system was neutralised".to_owned());
        }
        let dropped = fit_delta(&mut delta, self.config.workbench.delta_tokens as usize, &self.counter);
        if dropped > 0 {
            notes.push(format!("{dropped} items left out to keep the delta within budget"));
        }
        let conflicts = self.state.borrow_mut().view.board.apply(&mut delta);
        let message = self.record(MessageDraft::text(Role::System, render_delta(&delta)))?;
        Ok(StateUpdate { version: delta.version, message, rejected, conflicts, notes })
    }

    /// Ask the host's LLM for a STATE_DELTA over the uncompacted tail (STATE_UPDATE, seed 000
    /// §7.1), one retry on an invalid reply, then [`Engine::update_state`].
    pub async fn request_state_update(&self) -> Result<StateUpdate> {
        self.counter.require_exact()?;
        let request = {
            let state = self.state.borrow();
            let messages = &state.trace.messages;
            let hot = state.view.hot_start(messages);
            let transcript = llm::transcript(messages, hot..messages.len(), &self.config.compress, &self.counter);
            llm::state_update_request(&state.view.board, &transcript, &self.config)
        };
        let reply = self.host.complete(request.clone()).await?;
        let delta = match llm::parse_state_delta(&reply.text) {
            Ok(delta) => delta,
            Err(error) => {
                let again = self.host.complete(llm::retry_request(&request, &reply.text, &error)).await?;
                llm::parse_state_delta(&again.text).map_err(|e| {
                    Error::InvalidInput(format!("the LLM's STATE_DELTA was invalid twice ({error}; then {e})"))
                })?
            }
        };
        self.update_state(delta)
    }
}
