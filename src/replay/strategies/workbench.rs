//! `workbench`: this crate's [`Engine`] over a [`ReplayHost`]. Each call records the messages
//! that are new since the previous call (a leading system message becomes the call's system
//! prompt instead) and sends what `prepare_call` assembles. When it fails (a context overflow,
//! say) the call falls back to the unmanaged history, with a note; it never panics.

use super::Flat;
use crate::config::Config;
use crate::engine::{Engine, MessageDraft};
use crate::error::Result;
use crate::model::{Message, Role};
use crate::prompt::CallInput;
use crate::replay::{Prompt, ReplayHost, Strategy, TokenMemo, flatten};
use crate::testing::block_on;

/// The engine of this crate, with its default configuration and the replay's window.
pub struct Workbench {
    window: usize,
    engine: Engine<ReplayHost>,
    recorded: usize,
    system_prompt: String,
    llm_requests: usize,
    flat: Flat,
}

impl std::fmt::Debug for Workbench {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workbench").field("window", &self.window).field("recorded", &self.recorded).finish()
    }
}

impl Workbench {
    pub fn new(window: usize) -> Self {
        // The embedded default: the replay has no LLM, so the extractive compactor writes blocks.
        let mut config = Config { window: u32::try_from(window).unwrap_or(u32::MAX), ..Config::default() };
        config.workbench.llm_compactor = false;
        Workbench {
            window,
            engine: Engine::new(ReplayHost::default(), config),
            recorded: 0,
            system_prompt: String::new(),
            llm_requests: 0,
            flat: Flat::default(),
        }
    }
}

impl Workbench {
    /// The engine after the calls replayed so far (to persist the session, say).
    pub fn into_engine(self) -> Engine<ReplayHost> {
        self.engine
    }
}

impl Strategy for Workbench {
    fn name(&self) -> &str {
        "workbench"
    }

    fn reset(&mut self) {
        *self = Workbench::new(self.window);
    }

    fn prompt(&mut self, history: &[Message], _tokens: &mut TokenMemo) -> Result<Prompt> {
        if history.len() < self.recorded {
            self.reset();
        }
        let mut prompt = Prompt::default();
        for (i, m) in history.iter().enumerate().skip(self.recorded) {
            if i == 0 && m.role == Role::System {
                self.system_prompt = flatten(m.role, &m.content).content.to_string();
                continue;
            }
            let draft = MessageDraft::from(m);
            if let Err(e) = self.engine.record(draft) {
                prompt
                    .notes
                    .push(format!("the engine refused a message ({}); it is missing from its prompts", e.code()));
            }
        }
        self.recorded = history.len();
        let input = CallInput { system_prompt: self.system_prompt.clone(), ..CallInput::default() };
        let result = block_on(self.engine.prepare_call(&input));
        let requests = self.engine.host().llm_requests() - self.llm_requests;
        self.llm_requests += requests;
        if requests > 0 {
            prompt.notes.push("the engine asked for a completion; the replay has no LLM".into());
        }
        match result {
            Ok(assembly) => {
                prompt.messages = assembly.view.messages.iter().map(|m| flatten(m.role, &m.content)).collect();
                prompt.notes.extend(assembly.notes.iter().map(|n| format!("engine: {n}")));
                // Output tokens the engine's own LLM calls cost (none without an LLM).
                prompt.aux_output_tokens = assembly.rewrites.iter().map(|r| r.output_tokens as usize).sum();
            }
            Err(e) => {
                prompt.messages = self.flat.sync(history).to_vec();
                prompt.fallback = true;
                prompt.notes.push(format!(
                    "the engine could not prepare the call ({}); the unmanaged history was sent",
                    e.code()
                ));
            }
        }
        Ok(prompt)
    }
}
