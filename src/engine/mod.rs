//! `Engine<H: Host>`: the façade the CLI, the tests and the wasm layer all use.
//!
//! Methods take `&self`; mutable state lives in a `RefCell` that is never borrowed across an
//! `.await`, so a JS caller may call into the engine while one of its host calls is pending.

mod branches;
mod calls;
mod fit;
mod goals;
mod ledger;
mod mission;
mod persist;
mod recall;
mod snapshot;
mod state;
mod tail;

pub use goals::GoalToolResult;
pub use persist::PersistReport;
pub use recall::RecallResult;
pub use state::StateUpdate;

use std::cell::RefCell;
use std::collections::HashMap;

use crate::compress::{Family, family_of};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::goals::{GoalTree, focuses};
use crate::history::HistoryView;
use crate::history::mentions::{Freshness, append_mention_reminder};
use crate::history::repair::{RepairNote, repair_history};
use crate::host::{Completion, CompletionRequest, Host, Usage};
use crate::model::{
    BranchId, ContentPart, GoalId, Message, MessageId, Role, Span, SpanId, ToolCallId, Trace, TraceId, reported_run,
};
use crate::prompt::assemble::Assembly;
use crate::prompt::{PromptMessage, ToolSpec};
use crate::store::SessionEnd;
use crate::tokens::TokenCounter;

/// The context engine over one trace.
pub struct Engine<H: Host> {
    host: H,
    config: Config,
    counter: TokenCounter,
    state: RefCell<State>,
    /// The trace directory this engine saves to, when it has one (R8).
    store: RefCell<Option<persist::Store>>,
}

struct State {
    trace: Trace,
    /// The provider's usage of the last completion (R4.4's `last_usage`).
    last_usage: Option<Usage>,
    /// What the prompt shows of the trace: settled forms, summary, pruned outputs.
    view: HistoryView,
    /// The canonical form of the previous call's prompt, to report the first changed byte.
    previous_prompt: Option<String>,
    /// The engine's exact count of the previous call's prompt.
    previous_tokens: Option<usize>,
    /// The newest call's assembly, saved as the trace's `prompt.json` (what the model received).
    last_prompt: Option<Assembly>,
    /// The engine's count of the prompt `last_usage` was reported for.
    tokens_at_usage: Option<usize>,
    /// Modification times of the files read so far (R7.2), in memory only.
    freshness: Freshness,
    /// Calls prepared so far, and the one of the newest rewrite (R5.5's batching).
    calls: usize,
    last_rewrite_call: Option<usize>,
    /// The previous call's prompt messages and tools, to report what stayed cached.
    previous_messages: Vec<PromptMessage>,
    previous_tools: Vec<ToolSpec>,
    /// Token counts of prompt messages that render no raw message, by content hash.
    token_memo: HashMap<u64, usize>,
    /// The goal tree, from the model's first plan tool call on (R6).
    goals: Option<GoalTree>,
    /// Explore branches' contexts, apart from the main line (R6.5).
    branches: branches::Branches,
    /// The todo probe's memory between calls (R6.10).
    probe: goals::Probe,
    /// The id of the newest event handed to the host.
    delivered_events: u64,
    /// Whether the model has used the engine's plan tools (not only another agent's plan tool).
    native_plan: bool,
    /// An assistant message that focuses or plans with the engine's tools, waiting for those
    /// calls to run: it is then attributed to the goal focused (see [`Engine::record`]).
    unattributed: Option<usize>,
    /// How the session ended, once its host says so; recording again reopens it.
    ended: Option<SessionEnd>,
    /// Which user message is the mission, while the session opens.
    opening: mission::Opening,
    /// Every call's cost beside the agent's own prompt's, and their totals.
    ledger: ledger::Ledger,
}

/// A message to record; the engine fills in id, sequence, description, tokens and time.
#[derive(Debug, Clone, Default)]
pub struct MessageDraft {
    pub role: Option<Role>,
    pub content: Vec<ContentPart>,
    pub branch_id: Option<BranchId>,
    pub goal_id: Option<GoalId>,
    pub span_id: Option<SpanId>,
    pub tool_call_id: Option<ToolCallId>,
}

impl From<&Message> for MessageDraft {
    /// A recorded message as a draft to record again (its id, sequence and time are new).
    fn from(m: &Message) -> Self {
        MessageDraft {
            role: Some(m.role),
            content: m.content.clone(),
            branch_id: m.branch_id.clone(),
            goal_id: m.goal_id.clone(),
            span_id: m.span_id.clone(),
            tool_call_id: m.tool_call_id.clone(),
        }
    }
}

impl MessageDraft {
    /// The message this draft records as, with `role` already checked.
    fn into_message(self, role: Role, id: MessageId, trace_id: TraceId, sequence: u64, now: u64) -> Message {
        Message {
            id,
            branch_id: self.branch_id,
            goal_id: self.goal_id,
            span_id: self.span_id,
            tool_call_id: self.tool_call_id,
            created_at_ms: now,
            ..Message::new(trace_id, sequence, role, self.content)
        }
    }

    pub fn new(role: Role, content: Vec<ContentPart>) -> Self {
        MessageDraft { role: Some(role), content, ..Default::default() }
    }

    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Self::new(role, vec![ContentPart::Text { text: text.into() }])
    }
}

impl<H: Host> Engine<H> {
    /// A new engine on an empty trace whose id comes from the host clock.
    pub fn new(host: H, config: Config) -> Self {
        let trace_id = TraceId(format!("trace-{}", host.now_ms()));
        let counter = TokenCounter::estimating_until_loaded(config.encoding);
        let state = State {
            trace: Trace::new(trace_id, ""),
            last_usage: None,
            view: HistoryView::default(),
            previous_prompt: None,
            previous_tokens: None,
            last_prompt: None,
            tokens_at_usage: None,
            freshness: Freshness::default(),
            calls: 0,
            last_rewrite_call: None,
            previous_messages: Vec::new(),
            previous_tools: Vec::new(),
            token_memo: HashMap::new(),
            goals: None,
            branches: Default::default(),
            probe: Default::default(),
            delivered_events: 0,
            native_plan: false,
            unattributed: None,
            ended: None,
            opening: Default::default(),
            ledger: Default::default(),
        };
        Engine { host, config, counter, state: RefCell::new(state), store: RefCell::new(None) }
    }

    pub fn host(&self) -> &H {
        &self.host
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn counter(&self) -> TokenCounter {
        self.counter
    }

    /// Tokens of `text` in the configured encoding: exact, or the calibrated estimate while the
    /// encoding's ranks are not loaded (a wasm engine made before them; [`TokenCounter::measure`]
    /// says which). Saving and preparing calls wait for exact counts (`ranks_not_loaded`).
    pub fn count_tokens(&self, text: &str) -> usize {
        self.counter.count(text)
    }

    pub fn trace_id(&self) -> TraceId {
        self.state.borrow().trace.id.clone()
    }

    /// A copy of the prompt's view of the history.
    pub fn history_view(&self) -> HistoryView {
        self.state.borrow().view.clone()
    }

    /// A value the host keeps with the trace (`Trace::metadata`): saved with the engine's
    /// state, so a resume gets it back exactly.
    pub fn set_metadata(&self, key: &str, value: serde_json::Value) {
        self.state.borrow_mut().trace.metadata.insert(key.to_owned(), value);
    }

    /// Forget what the host kept under `key`.
    pub fn remove_metadata(&self, key: &str) {
        self.state.borrow_mut().trace.metadata.remove(key);
    }

    /// The value the host kept under `key`.
    pub fn metadata(&self, key: &str) -> Option<serde_json::Value> {
        self.state.borrow().trace.metadata.get(key).cloned()
    }

    /// The newest recorded message of the main line.
    pub fn last_message(&self) -> Option<Message> {
        self.state.borrow().trace.messages.last().cloned()
    }

    /// A copy of the trace as recorded so far.
    pub fn trace(&self) -> Trace {
        self.state.borrow().trace.clone()
    }

    /// Append a message to the trace; the first user message with the user's words (not only an
    /// agent's context block, nor one its own script answered before the first call) becomes the
    /// mission. The successful result of another agent's plan tool (`TodoWrite`, `update_plan`,
    /// Claude Code's task tools) updates the goal tree before the result is attributed; one
    /// focusing or planning with the engine's `goal` or `step` tool is attributed once they ran
    /// (at the next record, call or save), to the goal focused. A user message that answers a
    /// reply acting through text (one fenced command, no tool call) is what the command printed:
    /// it is recorded as an [`Role::Observation`], as is one in which the agent reports a command
    /// it ran itself ([`reported_run`]).
    pub fn record(&self, draft: MessageDraft) -> Result<MessageId> {
        let role = draft.role.ok_or_else(|| Error::InvalidInput("a message needs a role".into()))?;
        if role == Role::Tool && !draft.content.iter().any(|p| matches!(p, ContentPart::ToolResult(_))) {
            return Err(Error::InvalidInput("a tool message needs a tool_result part".into()));
        }
        let now = self.host.now_ms();
        let mut state = self.state.borrow_mut();
        let acted = || {
            let before = state.view.shown_before(&state.trace.messages, state.trace.messages.len());
            before.is_some_and(|m| m.text_action().is_some())
        };
        let reported =
            || draft.content.iter().any(|p| matches!(p, ContentPart::Text { text } if reported_run(text).is_some()));
        let role = if role == Role::User && (acted() || reported()) { Role::Observation } else { role };
        let sequence = state.trace.messages.len() as u64;
        let id = MessageId::for_sequence(sequence);
        if role == Role::User {
            let state = &mut *state;
            state.opening.user(&mut state.trace.mission, Message::describe(role, &draft.content));
        }
        if role == Role::User
            && let Some(tree) = state.goals.as_mut()
        {
            tree.reopen();
        }
        state.ended = None;
        let mut message = draft.into_message(role, id.clone(), state.trace.id.clone(), sequence, now);
        self.counter.cache_message_tokens(&mut message);
        if role == Role::Assistant {
            let acts = message.tool_calls().next().is_some() || message.text_action().is_some();
            let state = &mut *state;
            state.opening.reply(&mut state.trace.mission, acts, state.calls);
        }
        drop(state);
        // The agent's plan follows its plan tools' calls that ran (their results), and its
        // sub-agents are branches of it.
        self.sync_agent_plan(&message);
        self.sync_sub_agents(&message);
        if self.plan_calls_answered(&message) {
            self.attribute_pending();
        }
        // A message that focuses or plans with the engine's tools belongs to the goal focused once
        // they ran: the host runs them after recording it, so it waits for them (#19.5).
        let waits = message.goal_id.is_none() && message.tool_calls().any(|c| focuses(&c.name, &c.arguments));
        if !waits {
            self.attribute_to_goal(&mut message);
        }
        let mut state = self.state.borrow_mut();
        state.trace.messages.push(message);
        if waits {
            state.unattributed = Some(sequence as usize);
        }
        drop(state);
        self.bound_at_first_sight(sequence as usize);
        self.deliver_events();
        Ok(id)
    }

    /// Withdraw the main line's messages from `from` on: the agent sent them again changed (aider
    /// renders the files it shows and its format reminder anew at each call), and records its new
    /// version next. They stay in the raw trace (R5.1); the prompt shows none of them, and what
    /// the view made of them is dropped (the cache breaks there, as the agent's own prompt does).
    /// Returns how many were withdrawn; `invalid_input` when `from` is not a message the history
    /// shows.
    pub fn withdraw_from(&self, from: &MessageId) -> Result<usize> {
        let mut state = self.state.borrow_mut();
        let state = &mut *state;
        let end = state.trace.messages.len();
        let start = state.trace.messages.iter().position(|m| &m.id == from).filter(|&i| !state.view.is_withdrawn(i));
        let start = start.ok_or_else(|| Error::InvalidInput(format!("no message {from} in the history shown")))?;
        state.view.withdraw(start..end);
        if state.unattributed.is_some_and(|i| i >= start) {
            state.unattributed = None;
        }
        Ok(end - start)
    }

    /// Replace the recorded history with one the host hands over (an agent framework's session,
    /// say). A malformed history is repaired (orphan results, unanswered calls, repeated ids,
    /// parts in the wrong role) and the notes say what changed; one that cannot be repaired
    /// without inventing meaning is refused with an error naming the message. Nothing is dropped.
    pub fn load_history(&self, messages: Vec<Message>) -> Result<Vec<RepairNote>> {
        let repaired = repair_history(messages)?;
        let mut state = self.state.borrow_mut();
        let trace_id = state.trace.id.clone();
        state.trace.messages = repaired.messages;
        for message in &mut state.trace.messages {
            message.trace_id = trace_id.clone();
            self.counter.cache_message_tokens(message);
        }
        if let Some(first) = state.trace.messages.iter().find(|m| m.role == Role::User && !m.description.is_empty()) {
            state.trace.mission = first.description.clone();
        }
        state.view = HistoryView::default();
        state.unattributed = None;
        state.previous_prompt = None;
        state.previous_messages.clear();
        let loaded = state.trace.messages.len();
        drop(state);
        (0..loaded).for_each(|i| self.bound_at_first_sight(i));
        Ok(repaired.notes)
    }

    /// `SPAN_START(id, goal)` (R5.7): the span opens at the next recorded message.
    pub fn start_span(&self, id: &str, goal: &str) -> Result<()> {
        let mut state = self.state.borrow_mut();
        if id.trim().is_empty() || state.trace.spans.iter().any(|s| s.id.as_str() == id) {
            return Err(Error::InvalidInput(format!("span id `{id}` is empty or already used")));
        }
        let start = MessageId::for_sequence(state.trace.messages.len() as u64);
        state.trace.spans.push(Span { id: id.into(), goal: goal.to_owned(), start, end: None, outcome: None });
        Ok(())
    }

    /// `SPAN_END(id, outcome)` (R5.7): the span closes at the newest recorded message. Its turns
    /// become the window of the next tail compaction, which still goes through the cost model.
    pub fn end_span(&self, id: &str, outcome: &str) -> Result<()> {
        let mut state = self.state.borrow_mut();
        let last = state.trace.messages.last().map(|m| m.id.clone());
        let span = state.trace.spans.iter_mut().find(|s| s.id.as_str() == id && s.end.is_none());
        let (Some(span), Some(last)) = (span, last) else {
            return Err(Error::InvalidInput(format!("no open span `{id}` with messages to close")));
        };
        span.end = Some(last);
        span.outcome = Some(outcome.to_owned());
        Ok(())
    }

    /// Record the user's input, opening a round: `@path` mentions that the host's `stat` finds
    /// get a reminder to read them with the host's read tool appended (R7.1); file contents are
    /// never injected.
    pub async fn record_user_input(&self, text: &str) -> Result<MessageId> {
        let text = append_mention_reminder(&self.host, text, self.read_tool().as_deref()).await;
        self.record(MessageDraft::text(Role::User, text))
    }

    /// The tool a mention reminder names: `read_tool` from the configuration, else the first
    /// tool of the read family offered on the last call; `None` before any call.
    fn read_tool(&self) -> Option<String> {
        if let Some(tool) = self.config.read_tool.as_ref().filter(|t| !t.trim().is_empty()) {
            return Some(tool.clone());
        }
        let state = self.state.borrow();
        let read = |t: &&ToolSpec| family_of(&t.name, &serde_json::Value::Null, &self.config.compress) == Family::Read;
        state.previous_tools.iter().find(read).map(|t| t.name.clone())
    }

    /// Tell the engine a file was read with this mtime. A note for the Read result when the file
    /// changed since the agent last read it (R7.2).
    pub fn observe_read(&self, path: &str, mtime_ms: u64) -> Option<String> {
        self.state.borrow_mut().freshness.observe_read(path, mtime_ms)
    }

    /// Ask the host LLM for a completion and remember its usage (R10.1).
    pub async fn complete(&self, mut request: CompletionRequest) -> Result<Completion> {
        if request.messages.is_empty() {
            return Err(Error::InvalidInput("a completion request needs at least one message".into()));
        }
        request.timeout_ms.get_or_insert(self.config.summary_timeout_ms);
        let completion = self.host.complete(request).await?;
        if let Some(usage) = completion.usage {
            self.report_usage(usage);
        }
        Ok(completion)
    }

    /// The provider's usage for the call last prepared with [`Engine::prepare_call`]. R10: it
    /// then drives the compaction trigger in place of the engine's own count.
    pub fn report_usage(&self, usage: Usage) {
        let mut state = self.state.borrow_mut();
        state.last_usage = Some(usage);
        state.tokens_at_usage = state.previous_tokens;
    }

    /// The provider's usage of the last completion, if it reported one.
    pub fn last_usage(&self) -> Option<Usage> {
        self.state.borrow().last_usage
    }
}
