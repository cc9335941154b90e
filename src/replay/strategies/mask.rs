//! `mask`: observation masking ("The Complexity Trap", JetBrains 2025): every tool output but
//! the newest [`MASK_KEEP`] is replaced by a fixed placeholder; everything else is sent as is.

use std::sync::Arc;

use super::Flat;
use crate::error::Result;
use crate::model::Message;
use crate::replay::{Prompt, Strategy, TokenMemo, WireMessage};

/// How many of the newest tool outputs `mask` keeps.
pub const MASK_KEEP: usize = 10;
/// What an older tool output (a whole `tool` message) becomes.
pub const MASK_PLACEHOLDER: &str = "[Old tool output omitted]";

/// Observation masking.
#[derive(Debug)]
pub struct Mask {
    flat: Flat,
    keep: usize,
    placeholder: WireMessage,
}

impl Mask {
    /// Keep the newest `keep` tool outputs.
    pub fn new(keep: usize) -> Self {
        Mask { flat: Flat::default(), keep, placeholder: WireMessage::new("tool", Arc::from(MASK_PLACEHOLDER)) }
    }
}

impl Strategy for Mask {
    fn name(&self) -> &str {
        "mask"
    }

    fn reset(&mut self) {
        self.flat.clear();
    }

    fn prompt(&mut self, history: &[Message], _tokens: &mut TokenMemo) -> Result<Prompt> {
        let flat = self.flat.sync(history);
        let outputs = flat.iter().filter(|m| m.role == "tool").count();
        let mut masked = outputs.saturating_sub(self.keep);
        let messages = flat
            .iter()
            .map(|m| {
                if m.role == "tool" && masked > 0 {
                    masked -= 1;
                    self.placeholder.clone()
                } else {
                    m.clone()
                }
            })
            .collect();
        Ok(Prompt { messages, ..Prompt::default() })
    }
}
