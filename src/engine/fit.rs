//! No prompt over the window, ever, while the fixed layers fit. Three measures beyond R4's:
//!
//! - **first sight**: a tool output larger than `workbench.first_sight_share` of the window is
//!   bounded to its history form when it is recorded, even inside the open round (the one
//!   exception to R3.1). The next call judges it: when the prompt holding every output recorded
//!   since the previous call whole stays under R4.4's threshold with room for as much again,
//!   they are shown whole (a prompt without management would keep them); otherwise the form
//!   stays, so the output never enters the prompt whole and nothing is rewritten later;
//! - **merge**: when the blocks themselves fill the window (a long run of many tail
//!   compactions), the blocks of each round and the turns between them become one block, built
//!   from the raw messages with the window's budgets (an R5.9 rewrite, with its cost);
//! - **bound**: when even that is not enough, the newest tool outputs are shown in a form
//!   bounded to what is left of the window.
//!
//! Every form names its original (`raw#<id>`), which the `recall` tool and the trace store's
//! plain-text copy give back. What remains over the window is the fixed layers (system prompt
//! and tools, project rules, the user's own messages): `context_overflow` names the layer.

use std::ops::Range;

use super::Engine;
use super::calls::Reshaping;
use super::tail::BlockBudget;
use crate::compress::focus::pointed_lines_of;
use crate::compress::{CompressConfig, ToolOutput, compress_tool_output};
use crate::error::Error;
use crate::history::HistoryView;
use crate::history::view::{RewritePosition, RewriteRecord, anchored_by};
use crate::host::Host;
use crate::model::{Message, Role, ToolCall, as_tool_output};
use crate::prompt::assemble::{Assembly, CallInput, ProjectRules};
use crate::prompt::{Layer, PromptMessage};
use crate::workbench::Replaces;
use crate::workbench::turns::{Trigger, turns};

/// A bounded output keeps at least this many tokens (less with a tiny window).
const MIN_BOUND_TOKENS: usize = 200;

/// The measures against a prompt over the threshold, in the order they are tried.
#[derive(Debug, Clone, Copy)]
enum Stage {
    /// Merge the blocks at `scale` × the window's budgets.
    Merge(f64),
    /// R4.7.
    Prune,
    /// R4.5 through the host's LLM, R4.6 when it fails.
    Summary,
    /// The newest tool outputs bounded.
    Bound,
    /// A tail compaction of every turn but the kept ones, whatever the configuration says: the
    /// last resort when the prompt is over the window itself.
    ForceTail,
}

/// While the prompt is over the threshold.
const STAGES: [Stage; 5] = [Stage::Merge(1.0), Stage::Prune, Stage::Summary, Stage::Merge(0.5), Stage::Bound];
/// While it is over the window itself.
const LAST_RESORT: [Stage; 3] = [Stage::ForceTail, Stage::Merge(0.25), Stage::Bound];

impl<H: Host> Engine<H> {
    /// Bring a prompt over R4.4's threshold under it (every stage a rewrite with its cost, and
    /// its notes), and one over the window under the window whatever the configuration says.
    pub(super) async fn relieve(&self, call: &mut Reshaping<'_>, mut assembly: Assembly) -> Assembly {
        let window = self.config.window as usize;
        let target = (self.config.compaction_trigger_tokens() as usize).min(window);
        let plan = STAGES.iter().map(|s| (*s, false)).chain(LAST_RESORT.iter().map(|s| (*s, true)));
        for (stage, last_resort) in plan {
            let pressed = if last_resort { assembly.tokens > window } else { self.wants_compaction(assembly.tokens) };
            if !pressed {
                continue;
            }
            let before = assembly.view.messages.clone();
            let render = || self.assemble_now(call.input, call.rules).view.messages;
            let record = match stage {
                Stage::Merge(scale) => self.merge_blocks(&before, scale, last_resort, render).await,
                Stage::Prune => self.prune().then(|| {
                    call.notes.push("old tool outputs pruned".to_owned());
                    self.record_middle("prune", &before, &render())
                }),
                Stage::Summary => {
                    let (mechanism, compaction_notes) = self.compact().await;
                    call.notes.extend(compaction_notes);
                    mechanism.map(|(mechanism, output_tokens)| {
                        let mut record = self.record_middle(mechanism, &before, &render());
                        record.output_tokens = output_tokens;
                        if let Some(kept) = self.state.borrow_mut().view.rewrites.last_mut() {
                            kept.output_tokens = output_tokens;
                        }
                        record
                    })
                }
                Stage::Bound => {
                    let goal = if last_resort { window } else { target };
                    let excess = assembly.tokens.saturating_sub(goal.saturating_sub(1));
                    self.bound_newest(excess, &before, render)
                }
                Stage::ForceTail => match self.build_candidate_with(&[Trigger::Window], true).await {
                    Some(candidate) => {
                        let after = self.assemble_with(call.input, call.rules, Some(&candidate.block)).view.messages;
                        let record = self.decide(candidate, &before, &after, true);
                        call.notes
                            .push("the prompt was over the window: the tail was compacted as a last resort".into());
                        record
                    }
                    None => None,
                },
            };
            if let Some(record) = record {
                // Pruning's and a summary's notes are in already.
                call.took(record, !matches!(stage, Stage::Prune | Stage::Summary));
                assembly = self.assemble_now(call.input, call.rules);
            }
        }
        assembly
    }

    /// First sight's judgement at a call (see the module's note): the outputs bounded on arrival
    /// since the previous call are shown whole when the prompt holding them whole stays under
    /// R4.4's threshold with room for as much again (a prompt that passes the threshold soon
    /// after would pay for a compaction instead). Their whole size is the recorded count, so a
    /// huge output is never rendered to be judged.
    pub(super) fn judge_first_sight(&self, input: &CallInput, rules: Option<&ProjectRules>) {
        let pending: Vec<(usize, usize)> = {
            let mut state = self.state.borrow_mut();
            let state = &mut *state;
            let sighted = std::mem::replace(&mut state.view.sighted, state.trace.messages.len());
            // Each bounded output with the tokens showing it whole adds.
            (state.view.bounded.range(sighted..))
                .map(|(&i, form)| {
                    let whole = state.trace.messages[i].tokens.unwrap_or(0) as usize;
                    (i, whole.saturating_sub(self.counter.count(form)))
                })
                .collect()
        };
        if pending.is_empty() {
            return;
        }
        let extra: usize = pending.iter().map(|(_, extra)| extra).sum();
        if !self.wants_compaction(self.assemble_now(input, rules).tokens + 2 * extra) {
            let bounded = &mut self.state.borrow_mut().view.bounded;
            for (i, _) in &pending {
                bounded.remove(i);
            }
        }
    }

    /// Show message `index` in its history form, until the next call judges it, when its tool
    /// outputs are larger than the first-sight share of the window.
    pub(super) fn bound_at_first_sight(&self, index: usize) {
        let limit = self.config.workbench.first_sight_tokens(self.config.window);
        let form = {
            let state = self.state.borrow();
            let outputs = |m: &&Message| matches!(m.role, Role::Tool | Role::Observation);
            let Some(message) = state.trace.messages.get(index).filter(outputs) else { return };
            if message.tokens.unwrap_or(0) as usize <= limit {
                return;
            }
            let max = (limit / 2).clamp(self.config.compress.min_tokens, self.config.compress.max_tokens);
            self.bounded_form(&state.trace.messages, &state.view, index, max)
        };
        if let Some(form) = form {
            self.state.borrow_mut().view.bounded.insert(index, form);
        }
    }

    /// The history form of the tool outputs (or the observation) of message `index`, at most
    /// about `max` tokens.
    fn bounded_form(&self, messages: &[Message], view: &HistoryView, index: usize, max: usize) -> Option<String> {
        let message = messages.get(index)?;
        let floor = self.min_bound_tokens();
        let compress = CompressConfig {
            max_tokens: max.max(floor),
            min_tokens: self.config.compress.min_tokens.min(max.max(floor)),
            ..self.config.compress.clone()
        };
        let file = self.raw_file(message.id.as_str());
        let observed = as_tool_output(view.shown_before(messages, index), message);
        let forms: Vec<String> = message
            .tool_results()
            .chain(observed.as_ref().map(|(_, result)| result))
            .map(|result| {
                let call =
                    find_call(&messages[..index], result.call_id.as_str()).or(observed.as_ref().map(|(call, _)| call));
                let focus = pointed_lines_of(call, &messages[..index], &self.config.compress);
                let output = ToolOutput {
                    original: file.as_deref(),
                    focus: &focus,
                    ..ToolOutput::of(result, call, message.id.as_str())
                };
                compress_tool_output(&output, &compress, &self.counter).text
            })
            .collect();
        (!forms.is_empty()).then(|| forms.join("\n"))
    }

    /// Merge the blocks of every round that holds more than one block (or a block and turns
    /// after it) into one block per round, built with the window's budgets from the raw
    /// messages (by the embedded compactor when `embedded`); `scale` shrinks those budgets
    /// further. A middle rewrite (R5.9), returned with its cost; `None` when there was nothing
    /// to merge.
    pub(super) async fn merge_blocks(
        &self,
        before: &[PromptMessage],
        scale: f64,
        embedded: bool,
        render: impl Fn() -> Vec<PromptMessage>,
    ) -> Option<RewriteRecord> {
        let windows = self.merge_windows();
        if windows.is_empty() {
            return None;
        }
        // Lines the blocks outside the merged windows show; the merged blocks add their own.
        let mut anchored = {
            let state = self.state.borrow();
            anchored_by(state.view.blocks.iter().filter(|b| !windows.iter().any(|w| w.0.contains(&b.start))))
        };
        let reasons = vec![Trigger::Window.describe(), "the blocks fill the window: merged".to_owned()];
        let mut merged = Vec::new();
        for (window, replaces) in windows {
            let budget = BlockBudget { scale, anchored, embedded };
            let candidate = self.build_block_with(window, replaces, reasons.clone(), budget).await;
            anchored = candidate.anchored.clone();
            merged.push(candidate);
        }
        let start = merged.first().map_or(0, |c| c.window.start);
        let end = merged.last().map_or(0, |c| c.window.end);
        let mut notes = vec![format!("{} block(s) merged", merged.len())];
        {
            let mut state = self.state.borrow_mut();
            let state = &mut *state;
            for candidate in merged {
                let w = candidate.window.clone();
                state.view.blocks.retain(|b| !(w.start <= b.start && b.end <= w.end));
                let at = state.view.blocks.partition_point(|b| b.start < w.start);
                state.view.blocks.insert(at, candidate.block);
                state.view.board = candidate.board;
                notes.extend(candidate.notes);
            }
            state.view.anchored = anchored;
        }
        let after = render();
        Some(self.record_rewrite("merge", RewritePosition::Middle, start..end, reasons, notes, before, &after))
    }

    /// One window per round with blocks: from its first block to the end of the round (the
    /// newest round: to the turns a tail compaction keeps), when it holds more than one block.
    fn merge_windows(&self) -> Vec<(Range<usize>, Replaces)> {
        let state = self.state.borrow();
        let messages = &state.trace.messages;
        let keep = self.config.workbench.keep_turns as usize;
        let users: Vec<usize> =
            messages.iter().enumerate().filter(|(_, m)| m.role == Role::User).map(|(i, _)| i).collect();
        let mut out = Vec::new();
        for (k, &user) in users.iter().enumerate() {
            let round_end = users.get(k + 1).copied().unwrap_or(messages.len());
            let blocks: Vec<_> = state.view.blocks.iter().filter(|b| b.start > user && b.end <= round_end).collect();
            let Some(first) = blocks.first() else { continue };
            let all = turns(messages, first.start);
            let in_round: Vec<Range<usize>> = all.into_iter().filter(|t| t.end <= round_end).collect();
            let end = if round_end == messages.len() {
                let keep_from = in_round.len().saturating_sub(keep);
                in_round.get(keep_from).map_or(round_end, |t| t.start)
            } else {
                round_end
            };
            let end = end.max(blocks.last().map_or(0, |b| b.end));
            let summarised = state.view.summary.as_ref().is_some_and(|s| s.start < end && first.start < s.end);
            let more_turns = in_round.iter().any(|t| t.start >= blocks.last().map_or(0, |b| b.end) && t.end <= end);
            // Nothing is merged across messages the agent withdrew.
            if summarised || state.view.withdraws_any(first.start..end) || (blocks.len() < 2 && !more_turns) {
                continue;
            }
            let chosen: Vec<Range<usize>> = turns(messages, first.start).into_iter().filter(|t| t.end <= end).collect();
            if let Some(found) = super::tail::replacing(messages, &chosen, None) {
                out.push(found);
            }
        }
        out
    }

    /// Show the newest tool outputs and observations (after the last block) bounded so that the prompt of
    /// `tokens` tokens loses at least `excess`; a rewrite from the first one changed, or `None`
    /// when none could shrink.
    pub(super) fn bound_newest(
        &self,
        excess: usize,
        before: &[PromptMessage],
        render: impl Fn() -> Vec<PromptMessage>,
    ) -> Option<RewriteRecord> {
        let plan: Vec<(usize, String)> = {
            let state = self.state.borrow();
            let messages = &state.trace.messages;
            let hot = state.view.hot_start(messages);
            let mut outputs: Vec<(usize, usize)> = (hot..messages.len())
                .filter(|&i| {
                    matches!(messages[i].role, Role::Tool | Role::Observation) && !state.view.pruned.contains(&i)
                })
                .map(|i| (i, self.shown_tokens(&state.view.bounded, messages, i)))
                .filter(|(_, tokens)| *tokens > self.min_bound_tokens())
                .collect();
            if outputs.is_empty() {
                return None;
            }
            // The largest give way first; each keeps an equal share of what must remain.
            outputs.sort_by_key(|(i, tokens)| (std::cmp::Reverse(*tokens), *i));
            let total: usize = outputs.iter().map(|(_, t)| t).sum();
            let keep = total.saturating_sub(excess);
            let share = (keep / outputs.len()).max(self.min_bound_tokens());
            outputs
                .into_iter()
                .filter(|(_, tokens)| *tokens > share)
                .filter_map(|(i, _)| Some((i, self.bounded_form(messages, &state.view, i, share)?)))
                .collect()
        };
        if plan.is_empty() {
            return None;
        }
        let start = plan.iter().map(|(i, _)| *i).min().unwrap_or(0);
        let end = plan.iter().map(|(i, _)| *i).max().unwrap_or(0) + 1;
        let notes = vec![format!("{} newest tool output(s) bounded to fit the window", plan.len())];
        self.state.borrow_mut().view.bounded.extend(plan);
        let after = render();
        let reasons = vec![Trigger::Window.describe()];
        Some(self.record_rewrite("bound", RewritePosition::Tail, start..end, reasons, notes, before, &after))
    }

    /// The least a bounded output keeps: [`MIN_BOUND_TOKENS`], or a 50th of a tiny window.
    fn min_bound_tokens(&self) -> usize {
        MIN_BOUND_TOKENS.min(self.config.window as usize / 50).max(1)
    }

    /// Tokens a tool message shows now.
    fn shown_tokens(
        &self,
        bounded: &std::collections::BTreeMap<usize, String>,
        messages: &[Message],
        i: usize,
    ) -> usize {
        match bounded.get(&i) {
            Some(form) => self.counter.count(form),
            None => messages[i].tokens.unwrap_or(0) as usize,
        }
    }

    /// Record a rewrite made under window pressure, priced on the prompts around it.
    #[allow(clippy::too_many_arguments)]
    fn record_rewrite(
        &self,
        mechanism: &str,
        position: RewritePosition,
        range: Range<usize>,
        reasons: Vec<String>,
        mut notes: Vec<String>,
        before: &[PromptMessage],
        after: &[PromptMessage],
    ) -> RewriteRecord {
        let cost = self.price(before, after);
        notes.push(format!(
            "the prompt changed from {} tokens in: {} cached tokens lost, {:.0} extra to re-write",
            cost.kept_prefix_tokens, cost.tokens_before, cost.one_off_cost
        ));
        let mut state = self.state.borrow_mut();
        let record = RewriteRecord {
            call: state.calls,
            mechanism: mechanism.to_owned(),
            position,
            start: range.start,
            end: range.end,
            reasons,
            cost,
            output_tokens: 0,
            notes,
        };
        state.view.rewrites.push(record.clone());
        state.last_rewrite_call = Some(state.calls);
        record
    }

    /// The error for a prompt still over the window: which fixed layer does not fit, by how much.
    pub(super) fn overflow(&self, messages: &[PromptMessage], tools: usize, tokens: usize) -> Error {
        let window = self.config.window as usize;
        let layer_tokens = |pick: &dyn Fn(&PromptMessage) -> bool| -> usize {
            messages.iter().filter(|m| pick(m)).map(|m| self.prompt_message_tokens(m)).sum()
        };
        let system = layer_tokens(&|m| m.layer == Layer::System) + tools;
        let rules = layer_tokens(&|m| m.layer == Layer::Rules);
        let user = layer_tokens(&|m| m.role == Role::User);
        let fixed = system + rules + user;
        let layer = if fixed <= window {
            "history, after every compaction (please report this)"
        } else if system > window {
            "the system prompt and tools"
        } else if system + rules > window {
            "the system prompt, tools and project rules"
        } else {
            "the system prompt, tools, project rules and the user's messages"
        };
        let needed = if fixed > window { fixed } else { tokens };
        Error::ContextOverflow { layer: layer.to_owned(), needed, window }
    }
}

/// The call `id` answers, searched from the newest message back.
fn find_call<'a>(messages: &'a [Message], id: &str) -> Option<&'a ToolCall> {
    messages.iter().rev().find_map(|m| m.tool_calls().find(|c| c.id.as_str() == id))
}
