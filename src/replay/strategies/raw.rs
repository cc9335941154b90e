//! `raw`: every message, no management.

use super::Flat;
use crate::error::Result;
use crate::model::Message;
use crate::replay::{Prompt, Strategy, TokenMemo};

/// The unmanaged history.
#[derive(Debug, Default)]
pub struct Raw {
    flat: Flat,
}

impl Strategy for Raw {
    fn name(&self) -> &str {
        "raw"
    }

    fn reset(&mut self) {
        self.flat.clear();
    }

    fn prompt(&mut self, history: &[Message], _tokens: &mut TokenMemo) -> Result<Prompt> {
        Ok(Prompt { messages: self.flat.sync(history).to_vec(), ..Prompt::default() })
    }
}
