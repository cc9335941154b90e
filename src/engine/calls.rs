//! Preparing an LLM call: settle finished rounds (R3.1), assemble the layers (R2.1), prune and
//! compact when R4.4's trigger fires (R4.7, R4.5, R4.6), rehydrate, and report what changed.

use std::collections::BTreeSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use super::Engine;
use crate::compress::focus::pointed_lines_of;
use crate::compress::{Family, ToolOutput, compress_tool_output, family_of};
use crate::error::Result;
use crate::history::HistoryView;
use crate::history::MAX_FAILED_COMPACTIONS;
use crate::history::compaction::{self, TIMEOUT_NOTICE};
use crate::history::prune::plan_prune;
use crate::history::view::{RewritePosition, RewriteRecord, TailBlock};
use crate::host::{Host, HostErrorKind, Progress};
use crate::model::{ContentPart, Role, tool_calls_by_id};
use crate::prompt::assemble::{self, Assembly, CallInput, Canonical, ProjectRules};
use crate::prompt::template::{body, render};
use crate::prompt::{Layer, PromptMessage, PromptView, ToolSpec};
use crate::workbench::cost::CallCost;
use crate::workbench::turns::Trigger;

/// What the user is told when the summary fails for another reason than a timeout (R4.6).
pub const FAILURE_NOTICE: &str = "Summary generation failed, keeping recent history only.";

const REHYDRATE: &str = include_str!("../../prompts/rehydrate.md");

/// One call's prompt as rewrites reshape it: the layers it is assembled with, and the notes
/// and rewrites made for it so far.
pub(super) struct Reshaping<'a> {
    pub input: &'a CallInput,
    pub rules: Option<&'a ProjectRules>,
    pub notes: Vec<String>,
    pub rewrites: Vec<RewriteRecord>,
}

impl Reshaping<'_> {
    /// A rewrite made, with its notes (`with_notes`: they are not in already).
    pub fn took(&mut self, record: RewriteRecord, with_notes: bool) {
        if with_notes {
            self.notes.extend(record.notes.iter().cloned());
        }
        self.rewrites.push(record);
    }
}

impl<H: Host> Engine<H> {
    /// Assemble the next call's prompt, the goal tree's plan (and a todo reminder when one is
    /// due) leading the dynamic tail once the model has a plan (R2.2, R2.4, R6.10). A tail compaction runs when a trigger nominates one and
    /// the cache cost model says it pays (R5.4, R5.5), or when the prompt reaches R4.4's
    /// threshold; if that is not enough, the prune stage and the archived summary follow, each
    /// reported as a middle-of-history rewrite with its cost (R5.9). Fails with
    /// `ContextOverflow` when even that prompt exceeds the window. With a trace store, the
    /// trace is saved before it returns (a failed save is a note, the call goes on).
    pub async fn prepare_call(&self, input: &CallInput) -> Result<Assembly> {
        let mut assembly = self.prepare_call_unsaved(input).await?;
        assembly.notes.extend(self.save_if_stored().await);
        Ok(assembly)
    }

    /// Save the trace when the engine has a store; a failed save gives the note it leaves on
    /// the call (the call goes on).
    pub async fn save_if_stored(&self) -> Option<String> {
        if self.store.borrow().is_none() {
            return None;
        }
        self.persist().await.err().map(|e| format!("the trace was not saved: {e}"))
    }

    /// [`Engine::prepare_call`] without the save: for a caller that sends the call first and
    /// saves ([`Engine::persist`]) while it is on its way.
    pub async fn prepare_call_unsaved(&self, input: &CallInput) -> Result<Assembly> {
        self.counter.require_exact()?;
        self.attribute_pending();
        let with_plan;
        let goal_blocks = self.goal_blocks();
        let input = if goal_blocks.is_empty() {
            input
        } else {
            with_plan = CallInput { tail: [goal_blocks, input.tail.clone()].concat(), ..input.clone() };
            &with_plan
        };
        self.settle_finished_rounds();
        let rules = self.project_rules().await;
        self.judge_first_sight(input, rules.as_ref());
        let assembly = self.assemble_now(input, rules.as_ref());
        let mut call = Reshaping { input, rules: rules.as_ref(), notes: Vec::new(), rewrites: Vec::new() };
        let mut assembly = match self.agent_prompt_instead(input, rules.as_ref(), &assembly) {
            Some(agent) => agent,
            None => self.rewrite_as_needed(&mut call, assembly).await,
        };
        let Reshaping { mut notes, rewrites, .. } = call;
        if self.state.borrow().view.failed_compactions >= MAX_FAILED_COMPACTIONS {
            notes.push(format!("automatic compaction stopped after {MAX_FAILED_COMPACTIONS} failed attempts"));
        }
        let window = self.config.window as usize;
        if assembly.tokens > window {
            let tools = self.tool_tokens(&assembly.view.tools);
            return Err(self.overflow(&assembly.view.messages, tools, assembly.tokens));
        }
        let now = assemble::canonical_units(&assembly.view);
        let previous = self.state.borrow_mut().previous_prompt.take();
        assembly.expected_cached_tokens = match &previous {
            Some(before) => self.cached_tokens(&assembly.view, &now, assemble::common_prefix(before, &now.text)),
            None => 0,
        };
        assembly.first_changed_byte =
            previous.as_deref().and_then(|before| assemble::first_difference(before, &now.text));
        {
            let mut state = self.state.borrow_mut();
            state.previous_prompt = Some(now.text);
            state.previous_tools = assembly.view.tools.clone();
            state.previous_tokens = Some(assembly.tokens);
            state.previous_messages = assembly.view.messages.clone();
            state.calls += 1;
            state.opening.settle();
            assembly.call = input.call.unwrap_or(state.calls as u64);
        }
        assembly.notes.extend(notes);
        assembly.rewrites = rewrites;
        assembly.cost = self.account(input, &assembly);
        self.state.borrow_mut().last_prompt = Some(assembly.clone());
        Ok(assembly)
    }

    /// The rewrites this call's prompt needs: a tail compaction when a trigger nominates one and
    /// the cost model lets it (or R4.4's threshold forces it, with the turns after it), then
    /// whatever brings a prompt still over the threshold under it ([`Engine::relieve`]).
    async fn rewrite_as_needed(&self, call: &mut Reshaping<'_>, mut assembly: Assembly) -> Assembly {
        let forced = self.wants_compaction(assembly.tokens);
        let triggers = self.nominate(forced);
        if !triggers.is_empty()
            && let Some(candidate) = self.build_candidate(&triggers).await
        {
            let after = self.assemble_with(call.input, call.rules, Some(&candidate.block));
            if let Some(record) = self.decide(candidate, &assembly.view.messages, &after.view.messages, forced) {
                call.took(record, true);
                assembly = after;
                if forced {
                    assembly = self.compact_rest(call, assembly).await;
                }
            }
        }
        self.relieve(call, assembly).await
    }

    /// The agent's own prompt: `input`'s layers (system prompt, tools, the plan and tail) and
    /// `rules` around the raw history, what the agent withdrew left out (see
    /// [`Engine::agent_prompt_instead`]).
    pub(super) fn assemble_agent(&self, input: &CallInput, rules: Option<&ProjectRules>) -> Assembly {
        let history = {
            let state = self.state.borrow();
            let raw = HistoryView { withdrawn: state.view.withdrawn.clone(), ..HistoryView::default() };
            raw.render(&state.trace.messages)
        };
        self.assemble_history(input, rules, history)
    }

    /// The tokens of `view` that a provider's prefix cache serves when the previous prompt shares
    /// its first `common` bytes: the units (tools, then messages) that lie wholly within them.
    fn cached_tokens(&self, view: &PromptView, now: &Canonical, common: usize) -> usize {
        match now.units_within(common) {
            0 => 0,
            units => {
                self.tool_tokens(&view.tools)
                    + view.messages[..units - 1].iter().map(|m| self.prompt_message_tokens(m)).sum::<usize>()
            }
        }
    }

    /// Tokens of the tools' schemas, as JSON.
    pub(super) fn tool_tokens(&self, tools: &[ToolSpec]) -> usize {
        tools.iter().map(|t| self.counter.count(&serde_json::to_string(t).unwrap_or_default())).sum()
    }

    /// Record a middle-of-history rewrite (R5.9) with its cost, priced on the prompts around it.
    pub(super) fn record_middle(
        &self,
        mechanism: &str,
        before: &[PromptMessage],
        after: &[PromptMessage],
    ) -> RewriteRecord {
        let cost = self.price(before, after);
        let mut state = self.state.borrow_mut();
        let common = before.iter().zip(after).take_while(|(a, b)| a == b).count();
        let range =
            |m: &PromptMessage| m.source.as_ref().and_then(|id| state.trace.messages.iter().position(|r| r.id == *id));
        let start = before[common..].iter().find_map(range).unwrap_or(0);
        let end = before.iter().rev().find_map(range).map_or(start, |i| i + 1);
        let record = RewriteRecord {
            call: state.calls,
            mechanism: mechanism.to_owned(),
            position: RewritePosition::Middle,
            start,
            end,
            reasons: vec![Trigger::Window.describe()],
            cost,
            output_tokens: 0,
            notes: vec![format!(
                "the prompt changed from {} tokens in: {} cached tokens lost, {:.0} extra to re-write",
                cost.kept_prefix_tokens, cost.tokens_before, cost.one_off_cost
            )],
        };
        state.view.rewrites.push(record.clone());
        state.last_rewrite_call = Some(state.calls);
        record
    }

    /// R4.4 before every call, unless compaction has failed too often in a row. R10: when the
    /// provider reported usage for an earlier prompt, its figure plus what the prompt grew by
    /// since; otherwise the engine's exact count.
    pub(super) fn wants_compaction(&self, tokens: usize) -> bool {
        let state = self.state.borrow();
        let tokens = match (state.last_usage, state.tokens_at_usage) {
            (Some(usage), Some(then)) => (usage.prompt_tokens as usize + tokens).saturating_sub(then),
            _ => tokens,
        };
        state.view.failed_compactions < MAX_FAILED_COMPACTIONS
            && compaction::should_compact(tokens, state.trace.messages.len(), &self.config)
    }

    pub(super) fn assemble_now(&self, input: &CallInput, rules: Option<&ProjectRules>) -> Assembly {
        self.assemble_with(input, rules, None)
    }

    /// Assemble with the recorded view, plus `extra` as if it were already recorded.
    pub(super) fn assemble_with(
        &self,
        input: &CallInput,
        rules: Option<&ProjectRules>,
        extra: Option<&TailBlock>,
    ) -> Assembly {
        let state = self.state.borrow();
        let history = match extra {
            Some(block) => {
                let mut view = state.view.clone();
                view.blocks.push(block.clone());
                view.render(&state.trace.messages)
            }
            None => state.view.render(&state.trace.messages),
        };
        drop(state);
        self.assemble_history(input, rules, history)
    }

    /// Assemble `history` (the rendered view) with `input`'s layers and count it.
    fn assemble_history(
        &self,
        input: &CallInput,
        rules: Option<&ProjectRules>,
        history: Vec<PromptMessage>,
    ) -> Assembly {
        let budget = self.config.dynamic_tail_budget as usize;
        let (view, notes) = assemble::assemble(input, rules, history, budget, &self.counter);
        let tokens =
            view.messages.iter().map(|m| self.prompt_message_tokens(m)).sum::<usize>() + self.tool_tokens(&view.tools);
        let tail_rewrite_tokens = if input.tail_in_system && !input.tail.is_empty() {
            tokens
        } else {
            let tail = view.messages.iter().filter(|m| m.layer == Layer::Tail);
            tail.map(|m| self.counter.count_message_content(&m.content)).sum()
        };
        Assembly {
            call: 0,
            view,
            tokens,
            tail_rewrite_tokens,
            first_changed_byte: None,
            expected_cached_tokens: 0,
            rewrites: Vec::new(),
            notes,
            cost: CallCost::default(),
        }
    }

    /// Tokens of one prompt message: the raw message's cached count when it renders one
    /// unchanged, else counted once per distinct content.
    pub(super) fn prompt_message_tokens(&self, message: &PromptMessage) -> usize {
        if message.sends_nothing() {
            return 0;
        }
        let state = self.state.borrow();
        if let Some(id) = &message.source {
            let index = id.as_str().strip_prefix('m').and_then(|n| n.parse::<usize>().ok());
            let raw = index.and_then(|i| state.trace.messages.get(i).filter(|m| m.id == *id).map(|m| (i, m)));
            let shown_as_recorded = |i: &usize| !state.view.pruned.contains(i) && !state.view.bounded.contains_key(i);
            if let Some((_, raw)) = raw.filter(|(i, _)| shown_as_recorded(i))
                && let Some(tokens) = raw.tokens
            {
                return tokens as usize;
            }
        }
        let key = content_hash(&message.content);
        if let Some(tokens) = state.token_memo.get(&key) {
            return *tokens;
        }
        drop(state);
        let tokens = self.counter.count_message_content(&message.content);
        self.state.borrow_mut().token_memo.insert(key, tokens);
        tokens
    }

    /// L2: `CODE_LAW.md` at the workspace root, any case, read through the host on every build.
    pub(super) async fn project_rules(&self) -> Option<ProjectRules> {
        let entries = self.host.list_dir("").await.ok()?;
        let file = entries.into_iter().find(|e| !e.is_dir && e.name.eq_ignore_ascii_case("code_law.md"))?.name;
        let text = self.host.read_file(&file).await.ok()?.text;
        Some(ProjectRules { file, text })
    }

    /// Rounds that ended (a newer user message exists) show their tool outputs in history form.
    fn settle_finished_rounds(&self) {
        let mut state = self.state.borrow_mut();
        let state = &mut *state;
        let messages = &state.trace.messages;
        let Some(newest_user) = messages.iter().rposition(|m| m.role == Role::User) else { return };
        if newest_user <= state.view.settled {
            return;
        }
        let calls = tool_calls_by_id(&messages[..newest_user]);
        for (i, message) in messages.iter().enumerate().take(newest_user).skip(state.view.settled) {
            let Some(result) = message.tool_results().next() else { continue };
            let call = calls.get(result.call_id.as_str()).copied();
            let focus = pointed_lines_of(call, &messages[..i], &self.config.compress);
            let output = ToolOutput { focus: &focus, ..ToolOutput::of(result, call, message.id.as_str()) };
            let compressed = compress_tool_output(&output, &self.config.compress, &self.counter);
            if !compressed.notes.is_empty() {
                state.view.forms.insert(i, compressed.text);
            }
        }
        state.view.settled = newest_user;
    }

    /// The prune stage; true when it pruned anything.
    pub(super) fn prune(&self) -> bool {
        let mut state = self.state.borrow_mut();
        let rendered: Vec<usize> = {
            let messages = &state.trace.messages;
            let view = &state.view;
            let tokens_of = |i: usize| {
                let shown = view.forms.get(&i).cloned();
                messages[i]
                    .tool_results()
                    .map(|r| self.counter.count(shown.as_deref().unwrap_or(&r.output)))
                    .sum::<usize>()
            };
            plan_prune(messages, view, &self.config.prune, tokens_of)
        };
        let pruned = !rendered.is_empty();
        state.view.pruned.extend(rendered);
        pruned
    }

    /// Summarise the rounds before the kept ones through the host's LLM; on a timeout or any
    /// LLM error, drop them with R4.6's notice. Returns the mechanism used, if any, and notes.
    /// The mechanism is returned with the output tokens its LLM call used.
    pub(super) async fn compact(&self) -> (Option<(&'static str, u64)>, Vec<String>) {
        let planned = {
            let state = self.state.borrow();
            let cut = compaction::plan_cut(&state.trace.messages, &state.view, self.config.min_rounds_kept as usize);
            cut.map(|cut| {
                let request = compaction::summary_request(&state.trace.messages, &state.view, &cut, &self.config);
                (cut, request)
            })
        };
        let Some((cut, request)) = planned else {
            return (None, vec!["compaction found no whole round to summarise beyond the kept rounds".to_owned()]);
        };
        let rounds_note = format!("summarising messages {}..{}", cut.start, cut.end);
        self.report(&rounds_note, false);
        match self.host.complete(request).await {
            Ok(reply) if !reply.text.trim().is_empty() => {
                let output_tokens = reply.usage.map_or(0, |u| u.completion_tokens);
                let rehydration = self.rehydration(cut.end).await;
                let summary = if rehydration.is_empty() {
                    reply.text
                } else {
                    format!("{}\n\n{rehydration}", reply.text.trim_end())
                };
                compaction::apply_summary(&mut self.state.borrow_mut().view, cut, &summary);
                self.report("summary archived", true);
                (Some(("summary", output_tokens)), vec![rounds_note])
            }
            outcome => {
                let notice = match outcome {
                    Err(e) if e.kind == HostErrorKind::Timeout => TIMEOUT_NOTICE,
                    _ => FAILURE_NOTICE,
                };
                {
                    let mut state = self.state.borrow_mut();
                    let state = &mut *state;
                    compaction::apply_truncation(&mut state.view, &state.trace.messages, cut, notice);
                }
                self.report(notice, true);
                (Some(("truncation", 0)), vec![notice.to_owned()])
            }
        }
    }

    fn report(&self, message: &str, done: bool) {
        self.host.progress(&Progress { operation: "compaction".into(), message: message.into(), done });
    }

    /// The most recently touched files before `end`, read again through the host, within the
    /// configured budget; files the host cannot read are named only.
    async fn rehydration(&self, end: usize) -> String {
        let paths = self.recently_touched(end);
        let budget = self.config.rehydrate_tokens as usize;
        let mut used = 0;
        let mut blocks = Vec::new();
        for path in paths {
            let block = match self.host.read_file(&path).await {
                Ok(file) => format!("`{path}`:\n```\n{}\n```", file.text.trim_end()),
                Err(_) => format!("`{path}` (not readable now)"),
            };
            let tokens = self.counter.count(&block);
            if used + tokens > budget {
                continue;
            }
            used += tokens;
            blocks.push(block);
        }
        if blocks.is_empty() { String::new() } else { render(body(REHYDRATE), &[("files", &blocks.join("\n\n"))]) }
    }

    /// Paths of Read/Edit/Write calls before `end`, newest first, each once.
    fn recently_touched(&self, end: usize) -> Vec<String> {
        let state = self.state.borrow();
        let mut seen = BTreeSet::new();
        let mut paths = Vec::new();
        for message in state.trace.messages[..end].iter().rev() {
            for part in &message.content {
                let ContentPart::ToolCall(call) = part else { continue };
                let args: serde_json::Value = serde_json::from_str(&call.arguments).unwrap_or_default();
                let family = family_of(&call.name, &args, &self.config.compress);
                if !matches!(family, Family::Read | Family::Edit | Family::Write) {
                    continue;
                }
                let path = ["file_path", "filePath", "path"].iter().find_map(|k| args.get(*k).and_then(|v| v.as_str()));
                if let Some(path) = path.filter(|p| seen.insert(p.to_string())) {
                    paths.push(path.to_owned());
                }
            }
        }
        paths
    }
}

/// A hash of a message's content, for the token memo.
fn content_hash(content: &[ContentPart]) -> u64 {
    let mut hasher = DefaultHasher::new();
    for part in content {
        match part {
            ContentPart::Text { text } | ContentPart::Reasoning { text, .. } => text.hash(&mut hasher),
            ContentPart::ToolCall(call) => (&call.name, &call.arguments).hash(&mut hasher),
            ContentPart::ToolResult(result) => (&result.output, &result.stderr).hash(&mut hasher),
            ContentPart::Opaque(opaque) => opaque.json.hash(&mut hasher),
        }
        0xffu8.hash(&mut hasher);
    }
    hasher.finish()
}
