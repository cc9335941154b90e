//! Preparing an LLM call: settle finished rounds (R3.1), assemble the layers (R2.1), prune and
//! compact when R4.4's trigger fires (R4.7, R4.5, R4.6), rehydrate, and report what changed.

use std::collections::BTreeSet;

use super::Engine;
use crate::compress::{Family, ToolOutput, compress_tool_output, family_of};
use crate::error::{Error, Result};
use crate::history::MAX_FAILED_COMPACTIONS;
use crate::history::compaction::{self, TIMEOUT_NOTICE};
use crate::history::prune::plan_prune;
use crate::host::{Host, HostErrorKind, Progress};
use crate::model::{ContentPart, Role, tool_calls_by_id};
use crate::prompt::Layer;
use crate::prompt::assemble::{self, Assembly, CallInput, ProjectRules};
use crate::prompt::template::{body, render};

/// What the user is told when the summary fails for another reason than a timeout (R4.6).
pub const FAILURE_NOTICE: &str = "Summary generation failed, keeping recent history only.";

const REHYDRATE: &str = include_str!("../../prompts/rehydrate.md");

impl<H: Host> Engine<H> {
    /// Assemble the next call's prompt. Compacts first when the prompt reaches the trigger of
    /// R4.4 (checked on its exact count, before every call), and fails with `ContextOverflow`
    /// when even the compacted prompt exceeds the window.
    pub async fn prepare_call(&self, input: &CallInput) -> Result<Assembly> {
        self.settle_finished_rounds();
        let rules = self.project_rules().await;
        let mut assembly = self.assemble_now(input, rules.as_ref());
        let mut notes = Vec::new();
        if self.wants_compaction(assembly.tokens) {
            if self.prune() {
                notes.push("old tool outputs pruned".to_owned());
                assembly = self.assemble_now(input, rules.as_ref());
            }
            if self.wants_compaction(assembly.tokens) {
                notes.extend(self.compact().await);
                assembly = self.assemble_now(input, rules.as_ref());
            }
        }
        if self.state.borrow().view.failed_compactions >= MAX_FAILED_COMPACTIONS {
            notes.push(format!("automatic compaction stopped after {MAX_FAILED_COMPACTIONS} failed attempts"));
        }
        let window = self.config.window as usize;
        if assembly.tokens > window {
            return Err(Error::ContextOverflow { needed: assembly.tokens, window });
        }
        let now = assemble::canonical(&assembly.view);
        let mut state = self.state.borrow_mut();
        assembly.first_changed_byte =
            state.previous_prompt.as_deref().and_then(|before| assemble::first_difference(before, &now));
        state.previous_prompt = Some(now);
        state.previous_tokens = Some(assembly.tokens);
        assembly.notes.extend(notes);
        Ok(assembly)
    }

    /// R4.4 before every call, unless compaction has failed too often in a row. R10: when the
    /// provider reported usage for an earlier prompt, its figure plus what the prompt grew by
    /// since; otherwise the engine's exact count.
    fn wants_compaction(&self, tokens: usize) -> bool {
        let state = self.state.borrow();
        let tokens = match (state.last_usage, state.tokens_at_usage) {
            (Some(usage), Some(then)) => (usage.prompt_tokens as usize + tokens).saturating_sub(then),
            _ => tokens,
        };
        state.view.failed_compactions < MAX_FAILED_COMPACTIONS
            && compaction::should_compact(tokens, state.trace.messages.len(), &self.config)
    }

    fn assemble_now(&self, input: &CallInput, rules: Option<&ProjectRules>) -> Assembly {
        let state = self.state.borrow();
        let history = state.view.render(&state.trace.messages);
        let budget = self.config.dynamic_tail_budget as usize;
        let (view, notes) = assemble::assemble(input, rules, history, budget, &self.counter);
        let tokens = assemble::count_view(&view, &self.counter);
        let tail_rewrite_tokens = if input.tail_in_system && !input.tail.is_empty() {
            tokens
        } else {
            let tail = view.messages.iter().filter(|m| m.layer == Layer::Tail);
            tail.map(|m| self.counter.count_message_content(&m.content)).sum()
        };
        Assembly { view, tokens, tail_rewrite_tokens, first_changed_byte: None, notes }
    }

    /// L2: `CODE_LAW.md` at the workspace root, any case, read through the host on every build.
    async fn project_rules(&self) -> Option<ProjectRules> {
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
            let output = ToolOutput::of(result, calls.get(result.call_id.as_str()).copied(), message.id.as_str());
            let compressed = compress_tool_output(&output, &self.config.compress, &self.counter);
            if !compressed.notes.is_empty() {
                state.view.forms.insert(i, compressed.text);
            }
        }
        state.view.settled = newest_user;
    }

    /// The prune stage; true when it pruned anything.
    fn prune(&self) -> bool {
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
    /// LLM error, drop them with R4.6's notice. Returns the notes for the caller.
    async fn compact(&self) -> Vec<String> {
        let planned = {
            let state = self.state.borrow();
            let cut = compaction::plan_cut(&state.trace.messages, &state.view, self.config.min_rounds_kept as usize);
            cut.map(|cut| {
                let request = compaction::summary_request(&state.trace.messages, &state.view, &cut, &self.config);
                (cut, request)
            })
        };
        let Some((cut, request)) = planned else {
            return vec!["compaction found no whole round to summarise beyond the kept rounds".to_owned()];
        };
        let rounds_note = format!("summarising messages {}..{}", cut.start, cut.end);
        self.report(&rounds_note, false);
        match self.host.complete(request).await {
            Ok(reply) if !reply.text.trim().is_empty() => {
                let rehydration = self.rehydration(cut.end).await;
                let summary = if rehydration.is_empty() {
                    reply.text
                } else {
                    format!("{}\n\n{rehydration}", reply.text.trim_end())
                };
                compaction::apply_summary(&mut self.state.borrow_mut().view, cut, &summary);
                self.report("summary archived", true);
                vec![rounds_note]
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
                vec![notice.to_owned()]
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
