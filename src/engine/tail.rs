//! Tail compaction inside `prepare_call` (R5.4, R5.5): triggers nominate, a compactor builds
//! the block, the cache cost model decides, and the rewrite is recorded with what it cost.

use std::ops::Range;

use super::Engine;
use super::calls::Reshaping;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::history::view::{RewritePosition, RewriteRecord, TailBlock};
use crate::host::{Host, Progress};
use crate::model::{Message, MessageId, Role, Trace};
use crate::prompt::PromptMessage;
use crate::prompt::assemble::Assembly;
use crate::workbench::block::{fit_delta, neutralise_all, render_delta};
use crate::workbench::cost::{RewriteCost, horizon};
use crate::workbench::extractive::{self, Anchored};
use crate::workbench::index::index;
use crate::workbench::turns::{Trigger, triggers, turns, wrapping_up};
use crate::workbench::{CompressedTurns, Learned, Observations, Replaces, StateBoard, StateDelta, llm};

/// A tail compaction ready to apply.
pub(super) struct Candidate {
    pub window: Range<usize>,
    pub block: TailBlock,
    pub board: StateBoard,
    pub anchored: Anchored,
    pub reasons: Vec<String>,
    pub notes: Vec<String>,
    /// Output tokens the LLM compactor used (0 for the embedded one).
    pub output_tokens: u64,
}

/// How big a block may be: a share of the window's budgets, and the code lines earlier blocks
/// already show (not repeated as anchors).
pub(super) struct BlockBudget {
    pub scale: f64,
    pub anchored: Anchored,
    /// The embedded compactor only, whatever `llm_compactor` says (the last resort).
    pub embedded: bool,
}

/// A block and delta written by the host's LLM and sanitised.
struct LlmCompaction {
    block: CompressedTurns,
    delta: StateDelta,
    notes: Vec<String>,
    output_tokens: u64,
}

impl<H: Host> Engine<H> {
    /// The triggers that fire now, or `Trigger::Window` alone when `forced`; empty when none
    /// fire or the batching rule (one rewrite per `min_calls_between_rewrites` calls) holds
    /// the rewrite back.
    pub(super) fn nominate(&self, forced: bool) -> Vec<Trigger> {
        let state = self.state.borrow();
        let config = &self.config.workbench;
        if !config.tail_compaction {
            return Vec::new();
        }
        if forced {
            return vec![Trigger::Window];
        }
        let gap = config.min_calls_between_rewrites as usize;
        // The start counts as a rewrite: a run shorter than the gap is never compacted by choice.
        if state.calls < state.last_rewrite_call.unwrap_or(0) + gap {
            return Vec::new();
        }
        let messages = &state.trace.messages;
        let hot = state.view.hot_start(messages);
        if wrapping_up(messages, hot) {
            return Vec::new();
        }
        let tokens_of = |i: usize| messages[i].tokens.unwrap_or(0) as usize;
        let output_tokens_of = |i: usize| {
            let m = &messages[i];
            let output = m.tool_results().next().is_some() || m.role == Role::Observation;
            if output { m.tokens.unwrap_or(0) as usize } else { 0 }
        };
        let mut fired = triggers(messages, hot, config, &self.config.compress, tokens_of, output_tokens_of);
        drop(state);
        if let Some((id, _)) = self.ended_span(hot) {
            fired.push(Trigger::SpanEnd(id));
        }
        fired
    }

    /// The window a tail compaction would replace: the newest span that ended in the uncompacted
    /// tail (R5.7), else whole turns from the start of that tail with the newest `keep_turns`
    /// kept, at most `max_turns`, at least `min_turns` (one when the window forces it or a round
    /// has ended). User messages are requirements and stay verbatim: a window lies in one round.
    fn plan_window(&self, any_size: bool) -> Option<(Range<usize>, Replaces)> {
        let state = self.state.borrow();
        let config = &self.config.workbench;
        let messages = &state.trace.messages;
        let hot = state.view.hot_start(messages);
        let all = turns(messages, hot);
        let is_user = |t: &Range<usize>| messages[t.start].role == Role::User;
        let (span_id, chosen): (Option<String>, Vec<Range<usize>>) = match self.ended_span(hot) {
            Some((id, span)) => {
                let inside = all.iter().filter(|t| t.start >= span.start && t.end <= span.end);
                (Some(id), inside.take_while(|t| !is_user(t)).cloned().collect())
            }
            None => {
                let first = all.iter().position(|t| !is_user(t))?;
                let keep_from = all.len().checked_sub(config.keep_turns as usize)?.max(first);
                let take = all[first..keep_from].iter().take_while(|t| !is_user(t)).count();
                let take = take.min(config.max_turns as usize);
                if take < config.min_turns as usize && !any_size {
                    return None;
                }
                (None, all[first..first + take].to_vec())
            }
        };
        replacing(messages, &chosen, span_id)
    }

    /// Compact an ended span now, wherever it lies (R5.7, R5.10): a goal that is done or
    /// abandoned makes its messages eligible and this replaces them. At the tail it is an ordinary
    /// tail compaction; earlier, an R5.9 middle-of-history compaction, recorded with its cost
    /// (priced on the history: everything after the span is re-written). User messages inside the
    /// span stay verbatim: the window ends before the first one.
    pub async fn compact_span(&self, id: &str) -> Result<RewriteRecord> {
        self.counter.require_exact()?;
        let (window, replaces) = {
            let state = self.state.borrow();
            let messages = &state.trace.messages;
            let span = state.trace.spans.iter().find(|s| s.id.as_str() == id);
            let span = span.ok_or_else(|| Error::InvalidInput(format!("no span `{id}`")))?;
            let end_id = span.end.as_ref().ok_or_else(|| Error::InvalidInput(format!("span `{id}` has not ended")))?;
            let index = |id: &MessageId| messages.iter().position(|m| m.id == *id);
            let (Some(start), Some(end)) = (index(&span.start), index(end_id)) else {
                return Err(Error::InvalidInput(format!("span `{id}` names messages that are not recorded")));
            };
            let chosen: Vec<Range<usize>> = turns(messages, start)
                .into_iter()
                .filter(|t| t.end <= end + 1)
                .take_while(|t| messages[t.start].role != Role::User)
                .collect();
            let Some((window, replaces)) = replacing(messages, &chosen, Some(id.to_owned())) else {
                return Err(Error::InvalidInput(format!("span `{id}` has no turns to compact")));
            };
            let view = &state.view;
            let overlaps = view.blocks.iter().any(|b| b.start < window.end && window.start < b.end)
                || view.summary.as_ref().is_some_and(|s| s.start < window.end && window.start < s.end);
            if overlaps {
                return Err(Error::InvalidInput(format!("span `{id}` overlaps history already compacted")));
            }
            if view.withdraws_any(window.clone()) {
                return Err(Error::InvalidInput(format!("span `{id}` holds messages the agent withdrew")));
            }
            (window, replaces)
        };
        let candidate = self.build_block(window, replaces, vec![format!("span {id} compacted on request")]).await;
        Ok(self.apply_on_request(candidate))
    }

    /// Compact the uncompacted tail now, on request (a user's "compact now"): the window a
    /// tail compaction forced by the context window would take (R5.4, R5.7: the newest ended
    /// span, else the oldest whole turns with the newest `keep_turns` kept), applied whatever
    /// the batching rule and the cost model say; the rewrite is recorded with its cost.
    pub async fn compact_tail(&self) -> Result<RewriteRecord> {
        self.counter.require_exact()?;
        let (window, replaces) = self.plan_window(true).ok_or_else(|| {
            Error::InvalidInput(format!(
                "nothing to compact: the uncompacted tail has no whole turn outside the newest {} kept",
                self.config.workbench.keep_turns
            ))
        })?;
        let candidate = self.build_block(window, replaces, vec!["tail compacted on request".to_owned()]).await;
        Ok(self.apply_on_request(candidate))
    }

    /// Apply a compaction asked for by the host, priced against the prompt as it is.
    fn apply_on_request(&self, candidate: Candidate) -> RewriteRecord {
        let (before, after) = {
            let state = self.state.borrow();
            let mut view = state.view.clone();
            view.blocks.push(candidate.block.clone());
            view.blocks.sort_by_key(|b| b.start);
            (state.view.render(&state.trace.messages), view.render(&state.trace.messages))
        };
        let cost = self.price(&before, &after);
        self.apply(candidate, cost)
    }

    /// The newest span that ended after `hot` and started at or after it, as a message range.
    fn ended_span(&self, hot: usize) -> Option<(String, Range<usize>)> {
        let state = self.state.borrow();
        let index = |id: &MessageId| state.trace.messages.iter().position(|m| m.id == *id);
        state.trace.spans.iter().rev().find_map(|span| {
            let (start, end) = (index(&span.start)?, index(span.end.as_ref()?)?);
            (start >= hot && end >= start).then(|| (span.id.to_string(), start..end + 1))
        })
    }

    /// Build the block for the planned window with the extractive compactor.
    pub(super) async fn build_candidate(&self, triggers: &[Trigger]) -> Option<Candidate> {
        self.build_candidate_with(triggers, false).await
    }

    /// [`Engine::build_candidate`], with the embedded compactor only when `embedded`.
    pub(super) async fn build_candidate_with(&self, triggers: &[Trigger], embedded: bool) -> Option<Candidate> {
        let any_size = triggers.iter().any(|t| matches!(t, Trigger::Window | Trigger::RoundEnd));
        let (window, replaces) = self.plan_window(any_size)?;
        let reasons = triggers.iter().map(Trigger::describe).collect();
        let anchored = self.state.borrow().view.anchored.clone();
        Some(self.build_block_with(window, replaces, reasons, BlockBudget { scale: 1.0, anchored, embedded }).await)
    }

    /// Build the block that would replace `window` with the budgets for the window.
    pub(super) async fn build_block(
        &self,
        window: Range<usize>,
        replaces: Replaces,
        reasons: Vec<String>,
    ) -> Candidate {
        let anchored = self.state.borrow().view.anchored.clone();
        self.build_block_with(window, replaces, reasons, BlockBudget { scale: 1.0, anchored, embedded: false }).await
    }

    /// The configuration a block is built with: the budgets capped for the window
    /// ([`WorkbenchConfig::for_window`](crate::config::WorkbenchConfig::for_window)), times `scale`.
    fn block_config(&self, scale: f64) -> Config {
        let mut config = self.config.clone();
        let mut w = config.workbench.for_window(config.window);
        let times = |v: u32| (f64::from(v) * scale) as u32;
        (w.block_tokens, w.anchor_tokens, w.index_tokens) =
            (times(w.block_tokens), times(w.anchor_tokens), times(w.index_tokens));
        config.workbench = w;
        config
    }

    /// Build the block that would replace `window`: through the host's LLM with TAIL_COMPACTION
    /// when `llm_compactor` is on (one retry on an invalid reply), else, or when that fails, with
    /// the embedded extractive compactor; a note says which and why. The index of what the window
    /// touched is written by code either way.
    pub(super) async fn build_block_with(
        &self,
        window: Range<usize>,
        replaces: Replaces,
        reasons: Vec<String>,
        budget: BlockBudget,
    ) -> Candidate {
        self.host.progress(&Progress {
            operation: "tail_compaction".into(),
            message: format!("compacting messages {}..{}", window.start, window.end),
            done: false,
        });
        let config = self.block_config(budget.scale);
        let mut anchored = budget.anchored;
        let (mut board, goal, outcome) = {
            let state = self.state.borrow();
            let span_id = replaces.span_id.as_deref();
            let span = span_id.and_then(|id| state.trace.spans.iter().find(|s| s.id.as_str() == id));
            let goal = span.map_or_else(|| current_goal(&state.trace), |s| s.goal.clone());
            (state.view.board.clone(), goal, span.and_then(|s| s.outcome.clone()))
        };
        let mut notes = Vec::new();
        let mut output_tokens = 0;
        let llm = if config.workbench.llm_compactor && !budget.embedded {
            match self.llm_compaction(&window, &replaces, &board, &config).await {
                Ok(compacted) => Some(compacted),
                Err(why) => {
                    notes.push(format!("{why}; the embedded compactor was used"));
                    None
                }
            }
        } else {
            None
        };
        let (mut block, delta, compactor) = match llm {
            Some(LlmCompaction { block, delta, notes: llm_notes, output_tokens: used }) => {
                notes.extend(llm_notes);
                output_tokens = used;
                (block, delta, "llm")
            }
            None => {
                let state = self.state.borrow();
                let input = extractive::Window {
                    messages: &state.trace.messages,
                    range: window.clone(),
                    replaces,
                    goal: &goal,
                    board: &board,
                };
                let extracted = extractive::compact(input, &mut anchored, &config, &self.counter);
                notes.extend(extracted.notes);
                (extracted.block, extracted.delta, "extractive")
            }
        };
        if let Some(outcome) = outcome {
            let evidence = vec![format!("msg#{}", window.end - 1)];
            block.what_we_learned.push(Learned { conclusion: format!("outcome: {outcome}"), evidence });
        }
        {
            let state = self.state.borrow();
            let budget = config.workbench.index_tokens as usize;
            let shown = block.render();
            let found = index(&state.trace.messages, window.clone(), &shown, &config.compress, budget, &self.counter);
            (block.files, block.names) = (found.files, found.names);
        }
        let (first, last) = (&block.replaces.first_message, &block.replaces.last_message);
        block.originals = self.raw_file(first).zip(self.raw_file(last));
        let (block, delta) = self.finish(block, delta, &mut board, &mut notes);
        let tail_block = TailBlock {
            start: window.start,
            end: window.end,
            text: block.render(),
            delta_text: if delta.is_empty() { String::new() } else { render_delta(&delta) },
            compactor: compactor.into(),
            content: block,
            delta,
        };
        Candidate { window, block: tail_block, board, anchored, reasons, notes, output_tokens }
    }

    /// TAIL_COMPACTION through the host's LLM: the reply parsed (one retry naming the error),
    /// then neutralised, its evidence checked against what was observed, and fitted.
    async fn llm_compaction(
        &self,
        window: &Range<usize>,
        replaces: &Replaces,
        board: &StateBoard,
        config: &Config,
    ) -> std::result::Result<LlmCompaction, String> {
        let (request, observations) = {
            let state = self.state.borrow();
            let messages = &state.trace.messages;
            let transcript = llm::transcript(messages, window.clone(), &config.compress, &self.counter);
            let request = llm::tail_compaction_request(board, &transcript, replaces, config);
            (request, Observations::from_messages(&messages[..window.end], &config.compress))
        };
        let unavailable = |e: crate::host::HostError| format!("the LLM compactor failed ({e})");
        let reply = self.host.complete(request.clone()).await.map_err(unavailable)?;
        let mut output_tokens = reply.usage.map_or(0, |u| u.completion_tokens);
        let (mut block, mut delta) = match llm::parse_tail_compaction(&reply.text, replaces.clone()) {
            Ok(parsed) => parsed,
            Err(error) => {
                let retry = llm::retry_request(&request, &reply.text, &error);
                let again = self.host.complete(retry).await.map_err(unavailable)?;
                output_tokens += again.usage.map_or(0, |u| u.completion_tokens);
                llm::parse_tail_compaction(&again.text, replaces.clone())
                    .map_err(|e| format!("the LLM's reply was invalid twice ({error}; then {e})"))?
            }
        };
        let notes = llm::sanitise(&mut block, &mut delta, &observations, &config.workbench, &self.counter);
        Ok(LlmCompaction { block, delta, notes, output_tokens })
    }

    /// Neutralise, version, apply the delta to the board and fit it to its budget.
    fn finish(
        &self,
        mut block: CompressedTurns,
        mut delta: StateDelta,
        board: &mut StateBoard,
        notes: &mut Vec<String>,
    ) -> (CompressedTurns, StateDelta) {
        if neutralise_all(&mut block, &mut delta) > 0 {
            notes.push("text that would close the block or pose as the system was neutralised".into());
        }
        block.version = self.state.borrow().view.blocks.len() as u32 + 1;
        let dropped = fit_delta(&mut delta, self.config.workbench.delta_tokens as usize, &self.counter);
        if dropped > 0 {
            notes.push(format!("{dropped} delta items left out to keep it within budget"));
        }
        let conflicts = board.apply(&mut delta);
        notes.extend(conflicts.into_iter().map(|c| format!("state conflict merged: {c}")));
        (block, delta)
    }

    /// After a compaction the window forced: the turns between the user's messages that follow
    /// it in the uncompacted tail (the newest `keep_turns` kept), each compacted into a block of
    /// its own. The prompt is re-written from the first block on either way, so a block that is
    /// smaller than its turns costs nothing more now and less on every later call.
    pub(super) async fn compact_rest(&self, call: &mut Reshaping<'_>, mut assembly: Assembly) -> Assembly {
        while let Some(candidate) = self.build_candidate(&[Trigger::Window]).await {
            let after = self.assemble_with(call.input, call.rules, Some(&candidate.block));
            if after.tokens >= assembly.tokens {
                break;
            }
            let Some(record) = self.decide(candidate, &assembly.view.messages, &after.view.messages, true) else {
                break;
            };
            call.took(record, true);
            assembly = after;
        }
        assembly
    }

    /// Price `candidate` against the prompt as it is; apply it when it pays (or `forced`).
    pub(super) fn decide(
        &self,
        candidate: Candidate,
        before: &[PromptMessage],
        after: &[PromptMessage],
        forced: bool,
    ) -> Option<RewriteRecord> {
        let cost = self.price(before, after);
        if !forced && !self.affords(&cost) {
            return None;
        }
        Some(self.apply(candidate, cost))
    }

    /// Put `candidate`'s block into the prompt view and record the rewrite.
    fn apply(&self, candidate: Candidate, cost: RewriteCost) -> RewriteRecord {
        let mut state = self.state.borrow_mut();
        // At the tail when only the turns a tail compaction keeps anyway follow the window.
        let following = turns(&state.trace.messages, candidate.window.end).len();
        let position = if following <= self.config.workbench.keep_turns as usize {
            RewritePosition::Tail
        } else {
            RewritePosition::Middle
        };
        let record = RewriteRecord {
            call: state.calls,
            mechanism: "tail_compaction".into(),
            position,
            start: candidate.window.start,
            end: candidate.window.end,
            reasons: candidate.reasons,
            cost,
            output_tokens: candidate.output_tokens,
            notes: candidate.notes,
        };
        let at = state.view.blocks.partition_point(|b| b.start < candidate.block.start);
        state.view.blocks.insert(at, candidate.block);
        state.view.board = candidate.board;
        state.view.anchored = candidate.anchored;
        state.view.rewrites.push(record.clone());
        state.last_rewrite_call = Some(state.calls);
        record
    }

    /// The cost of going from the prompt `before` to `after`: the common leading messages stay
    /// cached, everything from the first difference on is re-written.
    pub(super) fn price(&self, before: &[PromptMessage], after: &[PromptMessage]) -> RewriteCost {
        let common = before.iter().zip(after).take_while(|(a, b)| a == b).count();
        let kept: usize = before[..common].iter().map(|m| self.prompt_message_tokens(m)).sum();
        let old: usize = before[common..].iter().map(|m| self.prompt_message_tokens(m)).sum();
        let new: usize = after[common..].iter().map(|m| self.prompt_message_tokens(m)).sum();
        let state = self.state.borrow();
        let w = &self.config.workbench;
        RewriteCost::new(&self.config.prices, kept, old, new, horizon(state.calls, w.min_horizon, w.max_horizon))
    }
}

/// The raw range of the turns `chosen` and what a block over them replaces; turn numbers count
/// every turn of the trace from the first message.
pub(super) fn replacing(
    messages: &[Message],
    chosen: &[Range<usize>],
    span_id: Option<String>,
) -> Option<(Range<usize>, Replaces)> {
    let window = chosen.first()?.start..chosen.last()?.end;
    let first_turn = turns(messages, 0).iter().position(|t| t.start == window.start).unwrap_or(0);
    let replaces = Replaces {
        start_turn: first_turn,
        end_turn: first_turn + chosen.len() - 1,
        first_message: messages[window.start].id.to_string(),
        last_message: messages[window.end - 1].id.to_string(),
        span_id,
    };
    Some((window, replaces))
}

/// The goal a block states: the newest open span's goal, else the mission.
fn current_goal(trace: &Trace) -> String {
    let span = trace.spans.iter().rev().find(|s| s.end.is_none()).map(|s| s.goal.trim());
    let goal = span.unwrap_or(trace.mission.trim());
    if goal.is_empty() { "unknown".to_owned() } else { goal.to_owned() }
}
