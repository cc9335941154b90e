//! The session's cost ledger: every call's prompt priced beside the agent's own prompt, as a
//! provider's prefix cache would have served it (the counterfactual, [`CallCost`]), and the
//! credit a rewrite may spend (docs/engine.md, "Never worse than none").

use std::hash::{DefaultHasher, Hash, Hasher};

use serde::{Deserialize, Serialize};

use super::Engine;
use crate::config::Prices;
use crate::history::view::Withdrawal;
use crate::host::Host;
use crate::model::Role;
use crate::prompt::assemble::{Assembly, CallInput, ProjectRules};
use crate::prompt::{Layer, PromptMessage};
use crate::workbench::cost::{CacheTtl, CallCost, RewriteCost, choose_cache_ttl, horizon, prompt_cost_for};

/// The running totals, and what a cache would know of the agent's previous prompt; saved with
/// the session so a resume goes on counting.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct Ledger {
    agent_total: f64,
    sent_total: f64,
    previous: Option<AgentPrompt>,
    /// The previous call sent the agent's own prompt ([`Engine::agent_prompt_instead`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    passthrough: bool,
    /// The previous call: when it was made and the lifetimes its prefixes were written for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_call: Option<LastCall>,
    /// The most recent gaps between calls, oldest first (at most [`GAPS_KEPT`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    gaps_ms: Vec<u64>,
    /// What the chosen lifetimes saved against 5-minute breakpoints only.
    #[serde(default, skip_serializing_if = "is_zero")]
    ttl_saving_total: f64,
}

/// When the previous call was made (the host's clock) and what its prefixes were cached for:
/// the prompt sent, and the agent's own prompt.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct LastCall {
    at_ms: u64,
    sent_ttl: CacheTtl,
    agent_ttl: CacheTtl,
}

fn is_zero(value: &f64) -> bool {
    *value == 0.0
}

/// How many of the latest gaps between calls the choice of a cache lifetime reads.
const GAPS_KEPT: usize = 32;

/// The agent's previous prompt as a prefix cache reads it: its head (system prompt and tools,
/// hashed), the raw messages it held and the withdrawals then in force.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct AgentPrompt {
    head: u64,
    messages: usize,
    withdrawn: Vec<Withdrawal>,
}

/// How many times over a rewrite must earn back, within the calls a session is all but sure
/// still to make, what its one-off cost exceeds the session's savings by: that horizon is the
/// shortest of a handful of runs, and a run shorter still must not end dearer than its agent's.
const SURE_MARGIN: f64 = 1.5;

/// The cache lifetimes of one call, and whether each track's prefix outlived the gap since the
/// previous call.
struct Lifetimes {
    sent: CacheTtl,
    agent: CacheTtl,
    sent_alive: bool,
    agent_alive: bool,
    five_minutes_alive: bool,
}

impl Ledger {
    /// What the session saved so far against the agent's own prompts (negative: it cost more).
    pub(super) fn credit(&self) -> f64 {
        self.agent_total - self.sent_total
    }

    /// The lifetimes of a call made at `now_ms`: the agent's own (`agent`, else the provider's
    /// default, five minutes) and the one sent, the agent's too when it set one, else what
    /// [`choose_cache_ttl`] picks from the gaps seen so far (this call's included) over
    /// `calls_ahead` when the caller lets it choose. Records the call.
    fn lifetimes(
        &mut self,
        now_ms: u64,
        agent: Option<CacheTtl>,
        prices: &Prices,
        calls_ahead: Option<usize>,
    ) -> Lifetimes {
        let gap = self.last_call.map(|last| (last, now_ms.saturating_sub(last.at_ms)));
        if let Some((_, gap)) = gap {
            if self.gaps_ms.len() == GAPS_KEPT {
                self.gaps_ms.remove(0);
            }
            self.gaps_ms.push(gap);
        }
        let chosen = calls_ahead.map(|calls| choose_cache_ttl(prices, &self.gaps_ms, calls));
        let sent = agent.or(chosen).unwrap_or_default();
        let agent = agent.unwrap_or_default();
        // No previous call (or one saved before calls were timed): nothing says a prefix lapsed.
        let outlived = |ttl: fn(&LastCall) -> CacheTtl| gap.is_none_or(|(last, gap)| gap <= ttl(&last).ms());
        let lifetimes = Lifetimes {
            sent,
            agent,
            sent_alive: outlived(|last| last.sent_ttl),
            agent_alive: outlived(|last| last.agent_ttl),
            five_minutes_alive: outlived(|_| CacheTtl::FiveMinutes),
        };
        self.last_call = Some(LastCall { at_ms: now_ms, sent_ttl: sent, agent_ttl: agent });
        lifetimes
    }
}

impl<H: Host> Engine<H> {
    /// The agent's own prompt, to send instead of `engine`'s (docs/engine.md, "Never worse than
    /// none"), when the session's running cost has passed the agent's, the agent's prompt stays
    /// under R4.4's threshold (the reply's room), differs from `engine`'s, and either the
    /// previous call sent it too or going back to it costs no more than `engine`'s prompt over
    /// the calls the session is all but sure still to make. It is the raw history (what the
    /// agent withdrew left out) in the layers `input` and `rules` give (see
    /// [`Engine::assemble_agent`]): no block, form, bounded or pruned output, no summary.
    /// Nothing is rewritten while it is sent; a prompt that reaches the threshold ends it.
    pub(super) fn agent_prompt_instead(
        &self,
        input: &CallInput,
        rules: Option<&ProjectRules>,
        engine: &Assembly,
    ) -> Option<Assembly> {
        let (credit, was, calls, history) = {
            let state = self.state.borrow();
            let shown = state.trace.messages.iter().enumerate().filter(|(i, _)| !state.view.is_withdrawn(*i));
            let history: usize = shown.map(|(_, m)| m.tokens.unwrap_or(0) as usize).sum();
            (state.ledger.credit(), state.ledger.passthrough, state.calls, history)
        };
        // The history alone pressing the threshold spares rendering the agent's prompt.
        let fits = calls > 0 && credit < 0.0 && !self.wants_compaction(history);
        let agent = fits.then(|| self.assemble_agent(input, rules));
        let agent = agent.filter(|a| !self.wants_compaction(a.tokens));
        // Nothing to go back to while the engine's prompt is the agent's.
        let agent = agent.filter(|a| a.view.messages != engine.view.messages);
        let chosen = agent.filter(|agent| {
            was || {
                let cost = self.price(&engine.view.messages, &agent.view.messages);
                let sure = self.config.workbench.sure_horizon(calls) as f64;
                cost.one_off_cost <= cost.saving_per_call * sure
            }
        });
        self.state.borrow_mut().ledger.passthrough = chosen.is_some();
        chosen
    }

    /// Price the call `assembly` is for beside the agent's own prompt (`input`'s system prompt
    /// and tools, the project rules and tail `assembly` holds, and every recorded message not
    /// withdrawn), and add both to the totals.
    pub(super) fn account(&self, input: &CallInput, assembly: &Assembly) -> CallCost {
        let head_tokens = self.head_tokens(input);
        // The layers around the history (project rules, the plan and tail) are the agent's too:
        // the rules cached with the head, the tail after the newest message, never.
        let layer = |l: Layer| -> usize {
            let of = assembly.view.messages.iter().filter(|m| m.layer == l);
            of.map(|m| self.prompt_message_tokens(m)).sum()
        };
        let (rules, tail) = (layer(Layer::Rules), layer(Layer::Tail));
        let head_tokens = head_tokens + rules;
        let mut hasher = DefaultHasher::new();
        (&input.system_prompt, serde_json::to_string(&input.tools).unwrap_or_default()).hash(&mut hasher);
        let head = hasher.finish();
        let mut state = self.state.borrow_mut();
        let state = &mut *state;
        let view = &state.view;
        let messages = &state.trace.messages;
        // The cache serves the head and the leading messages the previous prompt also held.
        let cached_limit = match &state.ledger.previous {
            Some(previous) if previous.head == head => {
                let changed = (previous.withdrawn != view.withdrawn)
                    .then(|| {
                        (0..previous.messages)
                            .find(|&i| Withdrawal::any_holds(&previous.withdrawn, i) != view.is_withdrawn(i))
                    })
                    .flatten();
                Some(changed.unwrap_or(previous.messages))
            }
            _ => None,
        };
        let (mut tokens, mut cached) = (head_tokens + tail, if cached_limit.is_some() { head_tokens } else { 0 });
        for (i, message) in messages.iter().enumerate().filter(|(i, _)| !view.is_withdrawn(*i)) {
            let t = self.counter.message_tokens(message);
            tokens += t;
            if cached_limit.is_some_and(|limit| i < limit) {
                cached += t;
            }
        }
        let prices = &self.config.prices;
        let output: u64 = assembly.rewrites.iter().map(|r| r.output_tokens).sum();
        let w = &self.config.workbench;
        let calls_ahead = horizon(state.calls, w.min_horizon, w.max_horizon);
        let ledger = &mut state.ledger;
        let chosen = input.choose_cache_ttl.then_some(calls_ahead);
        let lifetimes = ledger.lifetimes(self.host.now_ms(), input.cache_ttl, prices, chosen);
        // A prefix lapsed over the gap is written again: nothing of it is served.
        let served = |alive: bool, cached: usize| if alive { cached } else { 0 };
        let agent_cached = served(lifetimes.agent_alive, cached);
        let agent_cost = prompt_cost_for(prices, lifetimes.agent, tokens, agent_cached, 0);
        let expected = assembly.expected_cached_tokens;
        let sent_cost =
            prompt_cost_for(prices, lifetimes.sent, assembly.tokens, served(lifetimes.sent_alive, expected), output);
        let five_minutes_only = served(lifetimes.five_minutes_alive, expected);
        let ttl_saving =
            prompt_cost_for(prices, CacheTtl::FiveMinutes, assembly.tokens, five_minutes_only, output) - sent_cost;
        ledger.agent_total += agent_cost;
        ledger.sent_total += sent_cost;
        ledger.ttl_saving_total += ttl_saving;
        ledger.previous = Some(AgentPrompt { head, messages: messages.len(), withdrawn: view.withdrawn.clone() });
        CallCost {
            agent_tokens: tokens,
            agent_cached_tokens: agent_cached,
            agent_cost,
            sent_cost,
            agent_total: ledger.agent_total,
            sent_total: ledger.sent_total,
            cache_ttl: lifetimes.sent,
            agent_cache_ttl: lifetimes.agent,
            ttl_saving,
            ttl_saving_total: ledger.ttl_saving_total,
        }
    }

    /// Whether a rewrite that is not forced may be made: it must pay over the calls the cost
    /// model expects, and its one-off cost beyond what the session saved so far against the
    /// agent's own prompts must be earned back [`SURE_MARGIN`] times over within the calls the
    /// session is all but sure still to make
    /// ([`WorkbenchConfig::sure_horizon`](crate::config::WorkbenchConfig::sure_horizon)). A
    /// session already dearer than the agent's own has nothing saved to spend.
    pub(super) fn affords(&self, cost: &RewriteCost) -> bool {
        let state = self.state.borrow();
        let saved = state.ledger.credit().max(0.0);
        let sure = self.config.workbench.sure_horizon(state.calls) as f64;
        cost.pays() && SURE_MARGIN * (cost.one_off_cost - saved) <= cost.saving_per_call * sure
    }

    /// Tokens of `input`'s system prompt (none when it is empty: it is not sent) and tools.
    fn head_tokens(&self, input: &CallInput) -> usize {
        let system = PromptMessage::text(Role::System, Layer::System, input.system_prompt.clone());
        let system_tokens = if input.system_prompt.is_empty() { 0 } else { self.prompt_message_tokens(&system) };
        self.tool_tokens(&input.tools) + system_tokens
    }
}
