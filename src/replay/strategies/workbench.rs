//! `workbench`: this crate's [`Engine`] over a [`ReplayHost`]. Each call records the messages
//! that are new since the previous call (a leading system message becomes the call's system
//! prompt instead) and sends what `prepare_call` assembles. When it fails (a context overflow,
//! say) the call falls back to the unmanaged history, with a note; it never panics.

use super::Flat;
use crate::config::Config;
use crate::engine::{Engine, MessageDraft};
use crate::error::Result;
use crate::host::block_on;
use crate::model::{Message, Role};
use crate::prompt::{Assembly, CallInput};
use crate::replay::{Prompt, ReplayHost, Strategy, TokenMemo, flatten};

/// The engine of this crate, with its default configuration (or one given) and the replay's window.
pub struct Workbench {
    config: Config,
    feed: EngineFeed,
    flat: Flat,
}

impl std::fmt::Debug for Workbench {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workbench").field("window", &self.config.window).field("recorded", &self.feed.recorded).finish()
    }
}

impl Workbench {
    pub fn new(window: usize) -> Self {
        Workbench::with_config(replay_config(window))
    }

    /// The engine with `config` (its window is the replay's; see [`replay_config_from`]).
    pub fn with_config(config: Config) -> Self {
        Workbench { feed: EngineFeed::with_config(config.clone()), config, flat: Flat::default() }
    }
}

/// The configuration the replay runs the engine with: the defaults, the replay's window, and the
/// embedded default compactor (the replay has no LLM, so the extractive compactor writes blocks).
pub fn replay_config(window: usize) -> Config {
    replay_config_from(&Config::default(), window)
}

/// `config` as the replay runs it: the replay's window, the embedded compactor.
pub fn replay_config_from(config: &Config, window: usize) -> Config {
    let mut config = Config { window: u32::try_from(window).unwrap_or(u32::MAX), ..config.clone() };
    config.workbench.llm_compactor = false;
    config
}

/// `config` told what runs of a family look like: the lengths (in calls) of `others`, the other
/// runs of the trajectory's family in the replay (never its own, which the engine could not
/// know when it decides).
pub fn with_family_runs(config: &Config, others: impl IntoIterator<Item = usize>) -> Config {
    let mut config = config.clone();
    config.workbench.family_runs = others.into_iter().map(|n| u32::try_from(n).unwrap_or(u32::MAX)).collect();
    config
}

/// For each trajectory, `config` told the lengths of the other runs of its family; one with no
/// other run of its family keeps the configured `workbench.family_runs`.
pub fn family_configs(config: &Config, trajectories: &[&crate::import::Trajectory]) -> Vec<Config> {
    let runs = |i: usize| {
        let family = trajectories[i].format.family();
        let others = trajectories.iter().enumerate().filter(move |&(j, t)| j != i && t.format.family() == family);
        others.map(|(_, t)| t.calls.len()).collect::<Vec<_>>()
    };
    let config_for = |others: Vec<usize>| match others.is_empty() {
        true => config.clone(),
        false => with_family_runs(config, others),
    };
    (0..trajectories.len()).map(|i| config_for(runs(i))).collect()
}

/// An engine fed a recorded history call by call, as the `workbench` strategy and the
/// playground's [`ReplaySession`](crate::replay::ReplaySession) both run it.
pub(crate) struct EngineFeed {
    pub(crate) engine: Engine<ReplayHost>,
    /// How many of the history's messages were handed to the engine.
    pub(crate) recorded: usize,
    /// The history index of each message the engine recorded, by its sequence.
    pub(crate) sources: Vec<usize>,
    system_prompt: String,
    llm_requests: usize,
}

impl EngineFeed {
    pub(crate) fn new(window: usize) -> Self {
        EngineFeed::with_config(replay_config(window))
    }

    pub(crate) fn with_config(config: Config) -> Self {
        EngineFeed {
            engine: Engine::new(ReplayHost::default(), config),
            recorded: 0,
            sources: Vec::new(),
            system_prompt: String::new(),
            llm_requests: 0,
        }
    }

    /// Record the messages of `history` that are new since the last call (a leading system
    /// message becomes the system prompt instead); notes say what the engine refused.
    pub(crate) fn record_new(&mut self, history: &[Message]) -> Vec<String> {
        let mut notes = Vec::new();
        for (i, m) in history.iter().enumerate().skip(self.recorded) {
            if i == 0 && m.role == Role::System {
                self.system_prompt = flatten(m.role, &m.content).content.to_string();
                continue;
            }
            match self.engine.record(MessageDraft::from(m)) {
                Ok(_) => self.sources.push(i),
                Err(e) => {
                    notes.push(format!("the engine refused a message ({}); it is missing from its prompts", e.code()))
                }
            }
        }
        self.recorded = self.recorded.max(history.len());
        notes
    }

    /// `prepare_call` with the recorded system prompt; a note when the engine asked the LLM.
    pub(crate) fn prepare(&mut self, notes: &mut Vec<String>) -> Result<Assembly> {
        let input = CallInput { system_prompt: self.system_prompt.clone(), ..CallInput::default() };
        let result = block_on(self.engine.prepare_call(&input));
        let requests = self.engine.host().llm_requests() - self.llm_requests;
        self.llm_requests += requests;
        if requests > 0 {
            notes.push("the engine asked for a completion; the replay has no LLM".into());
        }
        result
    }
}

impl Workbench {
    /// The engine after the calls replayed so far (to persist the session, say).
    pub fn into_engine(self) -> Engine<ReplayHost> {
        self.feed.engine
    }
}

impl Strategy for Workbench {
    fn name(&self) -> &str {
        "workbench"
    }

    fn reset(&mut self) {
        *self = Workbench::with_config(self.config.clone());
    }

    fn prompt(&mut self, history: &[Message], _tokens: &mut TokenMemo) -> Result<Prompt> {
        if history.len() < self.feed.recorded {
            self.reset();
        }
        let mut prompt = Prompt { notes: self.feed.record_new(history), ..Prompt::default() };
        match self.feed.prepare(&mut prompt.notes) {
            Ok(assembly) => {
                let sent = assembly.view.messages.iter().filter(|m| !m.sends_nothing());
                prompt.messages = sent.map(|m| flatten(m.role, &m.content)).collect();
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
