//! The strategies: `raw`, `mask`, `opencode`, `codex` and `workbench`.

mod compaction;
mod mask;
mod raw;
mod workbench;

use super::{Strategy, WireMessage, flatten};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::model::Message;

pub use compaction::{
    Compaction, CompactionConfig, OPENCODE_OUTPUT_RESERVE, OPENCODE_TAIL_TOKENS, SUMMARY_TOKENS, summary_text,
};
pub use mask::{MASK_KEEP, MASK_PLACEHOLDER, Mask};
pub use raw::Raw;
pub(crate) use workbench::EngineFeed;
pub use workbench::{Workbench, family_configs, replay_config, replay_config_from, with_family_runs};

/// Every strategy [`strategies_by_name`] knows, in the order `all` lists them.
pub const STRATEGY_NAMES: [&str; 5] = ["raw", "mask", "opencode", "codex", "workbench"];

/// Fresh strategies from a comma-separated list of names, or `all`; `window` is the model's
/// context window in tokens. An unknown or repeated name is an `InvalidInput` error.
pub fn strategies_by_name(names: &str, window: usize) -> Result<Vec<Box<dyn Strategy>>> {
    strategies_with(names, &Config::default(), window)
}

/// [`strategies_by_name`] with the engine of `workbench` configured by `config` (the replay's
/// window and the embedded compactor, [`replay_config_from`]).
pub fn strategies_with(names: &str, config: &Config, window: usize) -> Result<Vec<Box<dyn Strategy>>> {
    let names: Vec<&str> =
        if names.trim() == "all" { STRATEGY_NAMES.to_vec() } else { names.split(',').map(str::trim).collect() };
    let mut out: Vec<Box<dyn Strategy>> = Vec::new();
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            return Err(Error::InvalidInput(format!("strategy `{name}` named twice")));
        }
        out.push(match *name {
            "raw" => Box::new(Raw::default()),
            "mask" => Box::new(Mask::new(MASK_KEEP)),
            "opencode" => Box::new(Compaction::new(CompactionConfig::opencode(window))),
            "codex" => Box::new(Compaction::new(CompactionConfig::codex(window))),
            "workbench" => Box::new(Workbench::with_config(replay_config_from(config, window))),
            other => {
                return Err(Error::InvalidInput(format!(
                    "unknown strategy `{other}`; valid names: {}, or all",
                    STRATEGY_NAMES.join(", ")
                )));
            }
        });
    }
    Ok(out)
}

/// The flattened history, extended as it grows (a strategy's history only grows between calls).
#[derive(Debug, Default)]
pub(crate) struct Flat {
    messages: Vec<WireMessage>,
}

impl Flat {
    pub(crate) fn sync(&mut self, history: &[Message]) -> &[WireMessage] {
        self.messages.truncate(history.len());
        for m in &history[self.messages.len()..] {
            self.messages.push(flatten(m.role, &m.content));
        }
        &self.messages
    }

    pub(crate) fn clear(&mut self) {
        self.messages.clear();
    }
}
