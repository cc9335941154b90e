//! The goal tree inside the engine (R6): the model's plan tools change it, recorded messages are
//! attributed to the focused goal (stats up the ancestor chain, R1.5), each goal is a span, and a
//! goal that is done or abandoned ends its span, which makes its messages eligible for the
//! workbench's compaction (R6.3, R6.4 through R5.10: tail under the cost model, or
//! `compact_span` with its cost reported). Every change is an event (R8.2).

use serde::Serialize;

use super::Engine;
use crate::compress::{Family, family_of, logs};
use crate::config::Config;
use crate::goals::{
    Delivery, Event, EventKind, GoalTree, Phase, ProbeState, Step, TaskList, ToolOutcome, call_tool, dump_tree,
    dump_tree_json, finished_sub_agents, focuses, goal_tool_specs, is_launch_notice, is_task_tool, open_goals_reminder,
    parse_plan_call, step_view, sub_agent_call, sync_plan, todo_probe,
};
use crate::host::Host;
use crate::model::{
    ContentPart, GoalId, Message, MessageId, Role, Span, ToolResult, ToolStatus, Trace, tool_calls_by_id,
};
use crate::prompt::ToolSpec;

/// What a plan tool call returns to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct GoalToolResult {
    /// The tool result text: what changed and the plan, or what to do instead.
    pub text: String,
    /// True when the call was refused; the tree is then unchanged.
    pub is_error: bool,
    /// Branches an `explore` call started, for the host to run as sub-agents.
    pub branches: Vec<String>,
}

/// The span id of a goal.
fn span_of(goal: &GoalId) -> String {
    format!("goal-{goal}")
}

impl<H: Host> Engine<H> {
    /// The plan tools to offer the model: `goal`, `step`, `read_progress`, `explore`.
    pub fn goal_tools(&self) -> Vec<ToolSpec> {
        goal_tool_specs(self.goal_tree().config())
    }

    /// A copy of the goal tree (an empty one, on the mission, before the first plan call).
    pub fn goal_tree(&self) -> GoalTree {
        let state = self.state.borrow();
        state.goals.clone().unwrap_or_else(|| self.new_tree(&state.trace.mission))
    }

    /// Hand the host every event it has not been given yet, in id order.
    pub(super) fn deliver_events(&self) {
        let fresh = {
            let mut state = self.state.borrow_mut();
            let Some(tree) = state.goals.as_ref() else { return };
            let fresh = tree.events().since(state.delivered_events).to_vec();
            state.delivered_events = tree.events().last_id();
            fresh
        };
        for event in &fresh {
            self.host.event(event);
        }
    }

    /// The step view of the main line (R1.4): each message as a goal, thought, evaluation,
    /// response, action or result step with its parent.
    pub fn step_view(&self) -> Vec<Step> {
        let state = self.state.borrow();
        step_view(&state.trace.messages, &self.goal_tree())
    }

    /// Seed 004's tree dump: text, or JSON when `json` (R1.4).
    pub fn dump_tree(&self, json: bool) -> String {
        let state = self.state.borrow();
        let (id, tree, now) = (state.trace.id.as_str(), self.goal_tree(), self.host.now_ms());
        if json {
            dump_tree_json(id, &tree, &state.trace.messages, now).to_string()
        } else {
            dump_tree(id, &tree, &state.trace.messages, now)
        }
    }

    /// The trace is finished: `trace_completed` with the totals (R8.2), and `meta.json` says
    /// `completed` from the next save. Once per task: the next user input runs it again.
    pub fn complete_trace(&self) -> crate::error::Result<()> {
        {
            let mut state = self.state.borrow_mut();
            let state = &mut *state;
            let tree = state.goals.get_or_insert_with(|| self.new_tree(&state.trace.mission));
            tree.complete_trace().map_err(|e| crate::error::Error::InvalidInput(e.message))?;
        }
        self.deliver_events();
        Ok(())
    }

    fn new_tree(&self, mission: &str) -> GoalTree {
        GoalTree::new(mission).with_config(self.config.goals.clone())
    }

    /// Every goal event after `since_event_id` (0 for all), for a consumer that resumes.
    pub fn events_since(&self, since_event_id: u64) -> Vec<Event> {
        self.state.borrow().goals.as_ref().map_or_else(Vec::new, |t| t.events().since(since_event_id).to_vec())
    }

    /// Run a plan tool the model called. A refused call is an error result the model can act on,
    /// never an engine error. Goals that end close their spans; the newly focused goal opens one.
    pub fn call_goal_tool(&self, name: &str, arguments: &str) -> GoalToolResult {
        let result = self.run_goal_tool(name, arguments);
        self.deliver_events();
        result
    }

    fn run_goal_tool(&self, name: &str, arguments: &str) -> GoalToolResult {
        let mut state = self.state.borrow_mut();
        let state = &mut *state;
        state.native_plan = true;
        let tree = state.goals.get_or_insert_with(|| self.new_tree(&state.trace.mission));
        let outcome = match call_tool(tree, name, arguments) {
            Ok(outcome) => outcome,
            Err(e) => return GoalToolResult { text: e.message, is_error: true, branches: Vec::new() },
        };
        apply_outcome(tree, &mut state.trace, outcome)
    }

    /// Map the agent's own plan onto the goal tree (creating the tree on the mission if needed)
    /// from `results`, the tool message about to be recorded: each successful result of a plan
    /// call (`TodoWrite`, `update_plan`, `todowrite`: the whole list; Claude Code's task tools:
    /// the list replayed from every successful task call so far) reconciles the tree; spans
    /// close and open as with [`Engine::call_goal_tool`]. A call the agent refused or that
    /// failed changes nothing, nor does a malformed one or one the tree refuses: recording never
    /// fails because of it.
    pub(super) fn sync_agent_plan(&self, results: &Message) {
        let mut state = self.state.borrow_mut();
        let state = &mut *state;
        for result in results.tool_results().filter(|r| r.status == ToolStatus::Ok) {
            let history = &state.trace.messages;
            let call = history.iter().rev().flat_map(Message::tool_calls).find(|c| c.id == result.call_id);
            let Some(call) = call else { continue };
            let items = if is_task_tool(&call.name) {
                task_list(history, result).items().to_vec()
            } else {
                match parse_plan_call(&call.name, &call.arguments) {
                    Some(Ok(items)) => items,
                    _ => continue,
                }
            };
            let tree = state.goals.get_or_insert_with(|| self.new_tree(&state.trace.mission));
            if let Ok(outcome) = sync_plan(tree, &items) {
                apply_outcome(tree, &mut state.trace, outcome);
            }
        }
    }

    /// The agent's own sub-agents as explore branches of its plan (R6.5): the calls of a
    /// spawning tool in `message` (an assistant's reply) start branches, each linked to its call
    /// ([`GoalTree::start_sub_agents`]); each call's answer finishes its branch with the answer
    /// as the summary: the call's result, or for one run in the background, the notice in a
    /// later message (user or system) or tool result. The exploration merges when every branch has finished. What the
    /// tree refuses (more sub-agents at once than `max_branches`) is left out of the plan.
    pub(super) fn sync_sub_agents(&self, message: &Message) {
        let mut state = self.state.borrow_mut();
        let state = &mut *state;
        let calls: Vec<(String, String)> =
            message.tool_calls().filter_map(|c| sub_agent_call(c).map(|s| (c.id.to_string(), s.description))).collect();
        if !calls.is_empty() {
            let tree = state.goals.get_or_insert_with(|| self.new_tree(&state.trace.mission));
            let calls: Vec<(&str, &str)> = calls.iter().map(|(id, d)| (id.as_str(), d.as_str())).collect();
            let _ = tree.start_sub_agents(&calls);
        }
        let Some(tree) = state.goals.as_mut() else { return };
        let mut finished: Vec<(String, String)> = message
            .tool_results()
            .filter(|r| r.status != ToolStatus::Ok || !is_launch_notice(&r.output))
            .map(|r| {
                let answer =
                    if r.status == ToolStatus::Ok { r.output.clone() } else { format!("failed: {}", r.output) };
                (r.call_id.to_string(), answer)
            })
            .collect();
        // The notice is the text of a message the agent sends (Claude Code 2.1: a `system`
        // message in the conversation), or rides on a tool result when the agent was running
        // tools as the sub-agent finished.
        let texts = message.content.iter().filter_map(|part| match part {
            ContentPart::Text { text } if message.role != Role::Assistant => Some(text.as_str()),
            ContentPart::ToolResult(result) => Some(result.output.as_str()),
            _ => None,
        });
        finished.extend(texts.flat_map(finished_sub_agents));
        for (call_id, answer) in finished {
            let _ = tree.finish_sub_agent(&call_id, &answer);
        }
    }

    /// The phase of the work (R6.8), from the goal tree: planning, executing a step, completed.
    pub fn phase(&self) -> Phase {
        self.state.borrow().goals.as_ref().map_or(Phase::Planning, GoalTree::phase)
    }

    /// Whether the model's plain reply just recorded ends the task (R6.8: a plain reply never
    /// ends a workflow with open goals). While goals are open the first plain reply since the
    /// user's message does not: the next prompt reminds the model of them (see
    /// [`Engine::goal_blocks`]); a second plain reply ends it, so a model that will not go on
    /// is not asked for ever.
    pub fn reply_ends_task(&self) -> bool {
        !matches!(self.phase(), Phase::Executing { .. }) || self.plain_replies_since_user() > 1
    }

    /// The assistant replies without tool calls since the newest user message.
    fn plain_replies_since_user(&self) -> usize {
        let state = self.state.borrow();
        let since = state.trace.messages.iter().rev().take_while(|m| m.role != Role::User);
        since.filter(|m| m.role == Role::Assistant && m.tool_calls().next().is_none()).count()
    }

    /// Whether the message waiting for its plan calls can take its goal before `next` is
    /// recorded: `next` is not a tool result, or it answers the last of those calls (they have
    /// all run; the host runs a message's calls in order).
    pub(super) fn plan_calls_answered(&self, next: &Message) -> bool {
        let state = self.state.borrow();
        let Some(waiting) = state.unattributed.and_then(|i| state.trace.messages.get(i)) else { return false };
        let last = waiting.tool_calls().filter(|c| focuses(&c.name, &c.arguments)).last();
        next.role != Role::Tool || last.is_none_or(|call| next.tool_results().any(|r| r.call_id == call.id))
    }

    /// Attribute the message that waited for its own plan calls (see [`Engine::record`]) to the
    /// goal focused now that they ran.
    pub(super) fn attribute_pending(&self) {
        let Some(index) = self.state.borrow_mut().unattributed.take() else { return };
        let mut state = self.state.borrow_mut();
        let state = &mut *state;
        if let (Some(tree), Some(message)) = (state.goals.as_mut(), state.trace.messages.get_mut(index)) {
            attribute(tree, message);
        }
    }

    /// Attribute a just-recorded message to the focused goal: its id and the stats up the chain.
    pub(super) fn attribute_to_goal(&self, message: &mut Message) {
        if let Some(tree) = self.state.borrow_mut().goals.as_mut() {
            attribute(tree, message);
        }
    }

    /// The blocks the goal tree adds to the dynamic tail, once the model has a plan made with
    /// the engine's tools: the plan
    /// (R2.2, R2.4); when a sub-task looks delivered since the previous call (an edit
    /// landed, a test run passed) but the plan did not change, one reminder to update it
    /// (R6.10), never on two calls in a row; and after a plain reply with goals open, the
    /// reminder that they are (R6.8).
    pub(super) fn goal_blocks(&self) -> Vec<String> {
        let mut state = self.state.borrow_mut();
        let state = &mut *state;
        // A plan imported from the agent's own plan tool is already in its messages.
        let native = state.native_plan;
        let Some(tree) = state.goals.as_ref().filter(|t| native && !t.goals().is_empty()) else { return Vec::new() };
        let mut blocks = Vec::new();
        if self.config.workbench.plan_in_tail {
            blocks.push(tree.to_prompt());
        }
        let since = state.probe.messages;
        let delivered = delivery(&state.trace.messages[since.min(state.trace.messages.len())..], &self.config);
        let plan_changed = tree.events().since(state.probe.event).iter().any(|e| {
            matches!(
                e.kind,
                EventKind::GoalAdded { .. } | EventKind::GoalUpdated { .. } | EventKind::GoalRemoved { .. }
            )
        });
        let (reminder, next) = todo_probe(delivered, plan_changed, state.probe.state);
        state.probe = Probe { state: next, messages: state.trace.messages.len(), event: tree.events().last_id() };
        if self.config.workbench.todo_probe {
            blocks.extend(reminder);
        }
        // The model answered in plain text with goals open (R6.8): the task goes on.
        let answered =
            state.trace.messages.last().is_some_and(|m| m.role == Role::Assistant && m.tool_calls().next().is_none());
        if answered && let Phase::Executing { .. } = tree.phase() {
            blocks.push(open_goals_reminder(tree));
        }
        blocks
    }
}

/// What the todo probe remembers between calls: its state, and how far it has looked.
#[derive(Debug, Clone, Copy, Default, serde::Deserialize, Serialize)]
pub(super) struct Probe {
    state: ProbeState,
    messages: usize,
    event: u64,
}

/// A delivered sub-task among `messages`: a test run that passed, else an edit that landed.
fn delivery(messages: &[Message], config: &Config) -> Option<Delivery> {
    let calls = tool_calls_by_id(messages);
    let results = || messages.iter().flat_map(Message::tool_results).filter(|r| r.status == ToolStatus::Ok);
    let passed = results()
        .filter_map(|r| logs::recognise(&r.output))
        .any(|f| f.failed.unwrap_or(0) == 0 && f.passed.unwrap_or(0) > 0);
    let edited = results().any(|r| {
        calls.get(r.call_id.as_str()).is_some_and(|c| {
            let args = serde_json::from_str(&c.arguments).unwrap_or_default();
            family_of(&c.name, &args, &config.compress) == Family::Edit
        })
    });
    if passed {
        Some(Delivery::TestPassed)
    } else if edited {
        Some(Delivery::EditLanded)
    } else {
        None
    }
}

/// Act on what a plan change did: goals that ended close their spans, the newly focused goal
/// opens one at the next message. Returns the tool result.
fn apply_outcome(tree: &GoalTree, trace: &mut Trace, outcome: ToolOutcome) -> GoalToolResult {
    let ToolOutcome { mut text, completed, abandoned, replacing, current, branches, .. } = outcome;
    let summary = |id: &GoalId| tree.goal(id).and_then(|g| g.summary.clone()).unwrap_or_default();
    let mut ended: Vec<(String, String)> = completed.iter().map(|id| (span_of(id), summary(id))).collect();
    ended.extend(abandoned.iter().map(|id| (span_of(id), format!("abandoned: {}", summary(id)))));
    if let Some(replaced) = &replacing {
        text.push_str(&format!("\n\nWhat the abandoned goal found: {}", summary(replaced)));
    }
    let opening = current.and_then(|id| tree.goal(&id).map(|g| (span_of(&id), g.description.clone())));
    let messages = &trace.messages;
    for (id, outcome) in ended {
        close_span(&mut trace.spans, messages, &id, &outcome);
    }
    if let Some((id, goal)) = opening.filter(|(id, _)| !trace.spans.iter().any(|s| s.id.as_str() == id)) {
        let start = MessageId::for_sequence(messages.len() as u64);
        trace.spans.push(Span { id: id.as_str().into(), goal, start, end: None, outcome: None });
    }
    GoalToolResult { text, is_error: false, branches: branches.iter().map(ToString::to_string).collect() }
}

/// End an open span at the newest message; a span that holds no message is dropped.
fn close_span(spans: &mut Vec<Span>, messages: &[Message], id: &str, outcome: &str) {
    let Some(k) = spans.iter().position(|s| s.id.as_str() == id && s.end.is_none()) else { return };
    let started = messages.iter().position(|m| m.id == spans[k].start);
    match (started, messages.last()) {
        (Some(_), Some(last)) => {
            spans[k].end = Some(last.id.clone());
            spans[k].outcome = Some(outcome.to_owned());
        }
        _ => {
            spans.remove(k);
        }
    }
}

/// `message` to the focused goal (unless it names its own), with its stats up the chain.
fn attribute(tree: &mut GoalTree, message: &mut Message) {
    if message.goal_id.is_none() {
        message.goal_id = tree.current_id().cloned();
    }
    if message.goal_id.is_some() {
        // A message for a goal the tree does not know stays unattributed in the stats.
        let _ = tree.record(message);
    }
}

/// Claude Code's task list after every successful task call of `history` and `last`.
fn task_list(history: &[Message], last: &ToolResult) -> TaskList {
    let calls = tool_calls_by_id(history);
    let mut list = TaskList::default();
    let results = history.iter().flat_map(Message::tool_results).chain(std::iter::once(last));
    for result in results.filter(|r| r.status == ToolStatus::Ok) {
        if let Some(call) = calls.get(result.call_id.as_str()).filter(|c| is_task_tool(&c.name)) {
            list.apply(&call.name, &call.arguments, &result.output);
        }
    }
    list
}
