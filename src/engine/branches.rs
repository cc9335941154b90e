//! Explore branches (R6.5): the host runs each branch of an `explore` call as a sub-agent; the
//! engine keeps the branch's context (its messages and its own goal tree) apart from the main
//! line, and when every branch has finished, the merge summary is all the main line keeps.

use std::collections::BTreeMap;

use super::{Engine, MessageDraft};
use crate::error::{Error, Result};
use crate::goals::{Branch, BranchStatus, GoalTree, call_tool};
use crate::history::HistoryView;
use crate::host::Host;
use crate::model::{BranchId, Message, MessageId, Role};
use crate::prompt::assemble::{self, Assembly, CallInput};

/// One branch's context.
#[derive(Debug, Clone)]
pub(super) struct BranchContext {
    pub(super) tree: GoalTree,
    pub(super) messages: Vec<Message>,
}

/// The branch contexts of a trace, by branch id.
pub(super) type Branches = BTreeMap<String, BranchContext>;

impl<H: Host> Engine<H> {
    /// Record a message into an exploring branch; its own goal tree attributes it, its
    /// exploration's goal counts it (R1.5), and the events join the trace's log.
    pub fn record_in_branch(&self, branch: &str, draft: MessageDraft) -> Result<MessageId> {
        let role = draft.role.ok_or_else(|| Error::InvalidInput("a message needs a role".into()))?;
        let now = self.host.now_ms();
        let mut guard = self.state.borrow_mut();
        let state = &mut *guard;
        let main = state.goals.as_mut().ok_or_else(|| no_branch(branch))?;
        let open = main.branch(&BranchId::from(branch)).is_some_and(|b| b.status == BranchStatus::Exploring);
        if !open {
            return Err(no_branch(branch));
        }
        let mission = main.branch(&BranchId::from(branch)).map(|b| b.description.clone()).unwrap_or_default();
        let context = state.branches.entry(branch.to_owned()).or_insert_with(|| BranchContext {
            tree: GoalTree::for_branch(branch.into(), mission),
            messages: Vec::new(),
        });
        let sequence = context.messages.len() as u64;
        let id = MessageId::from(format!("{branch}-{}", MessageId::for_sequence(sequence)));
        let goal_id = draft.goal_id.clone().or_else(|| context.tree.current_id().cloned());
        let draft = MessageDraft { branch_id: Some(branch.into()), goal_id, ..draft };
        let mut message = draft.into_message(role, id.clone(), state.trace.id.clone(), sequence, now);
        self.counter.cache_message_tokens(&mut message);
        if message.goal_id.is_some() {
            let _ = context.tree.record(&message);
        }
        main.events_mut().append_from(context.tree.events_mut());
        // The branch's work counts in its exploration's goal, as a sub-goal's counts in its parent.
        if let Some(start) = main.branch(&BranchId::from(branch)).map(|b| b.explore_start_id.clone()) {
            let _ = main.record_on(&start, &message);
        }
        context.messages.push(message);
        drop(guard);
        self.deliver_events();
        Ok(id)
    }

    /// Run a plan tool inside a branch, on the branch's own goal tree.
    pub fn call_branch_tool(&self, branch: &str, name: &str, arguments: &str) -> Result<String> {
        let mut guard = self.state.borrow_mut();
        let state = &mut *guard;
        let main = state.goals.as_mut().ok_or_else(|| no_branch(branch))?;
        let context = state.branches.get_mut(branch).ok_or_else(|| no_branch(branch))?;
        let outcome = call_tool(&mut context.tree, name, arguments).map_err(|e| Error::InvalidInput(e.message))?;
        main.events_mut().append_from(context.tree.events_mut());
        drop(guard);
        self.deliver_events();
        Ok(outcome.text)
    }

    /// A branch's messages, in order.
    pub fn branch_messages(&self, branch: &str) -> Vec<Message> {
        self.state.borrow().branches.get(branch).map_or_else(Vec::new, |c| c.messages.clone())
    }

    /// The prompt for a branch's next call: the call's system prompt and tools, the project's
    /// rules, the branch's mission (its description and background) as the opening user
    /// message, its messages, and its own plan in the tail. A branch that has recorded nothing
    /// yet is its mission alone.
    pub async fn prepare_branch_call(&self, branch: &str, input: &CallInput) -> Result<Assembly> {
        self.counter.require_exact()?;
        let rules = self.project_rules().await;
        let state = self.state.borrow();
        let found = state.goals.as_ref().and_then(|g| g.branch(&BranchId::from(branch)));
        let found = found.ok_or_else(|| no_branch(branch))?;
        let context = state.branches.get(branch);
        let mut messages = vec![opening(found, &state.trace.id)];
        messages.extend(context.iter().flat_map(|c| c.messages.iter().cloned()));
        let mut input = input.clone();
        if let Some(tree) = context.map(|c| &c.tree).filter(|t| !t.goals().is_empty()) {
            input.tail.insert(0, tree.to_prompt());
        }
        let history = HistoryView::default().render(&messages);
        let budget = self.config.dynamic_tail_budget as usize;
        let (view, notes) = assemble::assemble(&input, rules.as_ref(), history, budget, &self.counter);
        let tokens = assemble::count_view(&view, &self.counter);
        let window = self.config.window as usize;
        if tokens > window {
            let layer = "the branch's mission, messages and plan (branches are not compacted)".to_owned();
            return Err(Error::ContextOverflow { layer, needed: tokens, window });
        }
        Ok(Assembly {
            call: 0,
            view,
            tokens,
            tail_rewrite_tokens: 0,
            first_changed_byte: None,
            expected_cached_tokens: 0,
            rewrites: Vec::new(),
            notes,
            cost: Default::default(),
        })
    }

    /// Record that a branch finished with its summary. Returns true when every branch of the
    /// exploration has finished, so [`Engine::merge_explore`] can run.
    pub fn finish_branch(&self, branch: &str, summary: &str) -> Result<bool> {
        let mut state = self.state.borrow_mut();
        let main = state.goals.as_mut().ok_or_else(|| no_branch(branch))?;
        let id = BranchId::from(branch);
        main.finish_branch(&id, summary).map_err(|e| Error::InvalidInput(e.message))?;
        let start = main.branch(&id).map(|b| b.explore_start_id.clone());
        Ok(main
            .branches()
            .iter()
            .filter(|b| Some(&b.explore_start_id) == start.as_ref())
            .all(|b| b.status == BranchStatus::Completed))
    }

    /// Merge the finished exploration: the merge summary, which is what the main line keeps (the
    /// host returns it as the `explore` call's result); `selected` names the branch taken.
    pub fn merge_explore(&self, selected: Option<&str>) -> Result<String> {
        let mut state = self.state.borrow_mut();
        let main = state.goals.as_mut().ok_or_else(|| Error::InvalidInput("no exploration is running".into()))?;
        let selected = selected.map(BranchId::from);
        let merged = main.merge(selected.as_ref()).map_err(|e| Error::InvalidInput(e.message))?;
        drop(state);
        self.deliver_events();
        Ok(merged.merge_summary)
    }
}

fn no_branch(branch: &str) -> Error {
    Error::InvalidInput(format!("no exploring branch `{branch}`; start one with the explore tool"))
}

/// The branch's opening message: its mission, as the user of the sub-agent.
fn opening(branch: &Branch, trace: &crate::model::TraceId) -> Message {
    let text = match &branch.background {
        Some(background) => format!("{}\n\n{background}", branch.description),
        None => branch.description.clone(),
    };
    let content = vec![crate::model::ContentPart::Text { text }];
    Message {
        id: MessageId::from("branch-mission"),
        branch_id: Some(branch.id.clone()),
        ..Message::new(trace.clone(), 0, Role::User, content)
    }
}
