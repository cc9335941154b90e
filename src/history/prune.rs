//! The prune stage (R4.7, OpenCode's): old tool outputs behind a protected window are replaced
//! by a placeholder that points back to the raw trace.

use super::view::HistoryView;
use crate::config::PruneConfig;
use crate::model::{Message, Role};

/// Tool messages to prune, oldest first. Walking back from the newest message: the last two
/// turns (rounds opened by a user message), messages a summary covers and withdrawn messages are
/// skipped; tool outputs are collected, and once more than `protect` tokens of them lie behind,
/// every older one is marked. Nothing is marked unless at least `minimum` tokens would be freed.
/// Outputs of protected tools and outputs already pruned are left alone.
pub fn plan_prune(
    messages: &[Message],
    view: &HistoryView,
    config: &PruneConfig,
    tokens_of: impl Fn(usize) -> usize,
) -> Vec<usize> {
    let mut turns = 0;
    let mut behind = 0usize;
    let mut marked = Vec::new();
    let mut freed = 0usize;
    for (i, message) in messages.iter().enumerate().rev() {
        if view.is_withdrawn(i) {
            continue;
        }
        if message.role == Role::User {
            turns += 1;
        }
        let summarised = view.summary.as_ref().is_some_and(|s| (s.start..s.end).contains(&i));
        if turns < 2 || summarised || message.role != Role::Tool || view.pruned.contains(&i) {
            continue;
        }
        let protected =
            message.tool_results().any(|r| config.protected_tools.iter().any(|t| t.eq_ignore_ascii_case(&r.name)));
        if protected {
            continue;
        }
        let tokens = tokens_of(i);
        if behind > config.protect as usize {
            marked.push(i);
            freed += tokens;
        }
        behind += tokens;
    }
    if freed < config.minimum as usize {
        return Vec::new();
    }
    marked.reverse();
    marked
}
