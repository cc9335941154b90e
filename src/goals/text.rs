//! The texts of `prompts/goals.md`, and small helpers shared by the renderers.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use crate::prompt::template::{render, sections};

const PROMPTS: &str = include_str!("../../prompts/goals.md");

static SECTIONS: LazyLock<BTreeMap<&'static str, String>> = LazyLock::new(|| sections(PROMPTS));

/// The section `name` of `prompts/goals.md`; empty when there is none (a unit test checks that
/// every name used exists).
pub(crate) fn text(name: &str) -> &'static str {
    SECTIONS.get(name).map_or("", String::as_str)
}

/// The section `name` with its placeholders filled.
pub(crate) fn fill(name: &str, values: &[(&str, &str)]) -> String {
    render(text(name), values)
}

/// The first line of `text`, trimmed and cut to `max` characters (`…` when cut).
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let trimmed = text.trim();
    let line = trimmed.lines().next().unwrap_or("").trim_end();
    if line.chars().count() <= max && line.len() == trimmed.len() {
        return line.to_owned();
    }
    let mut cut: String = line.chars().take(max).collect();
    cut.push('…');
    cut
}

/// `text` trimmed, cut to at most `max` characters (an ellipsis marks the cut).
pub(crate) fn clip(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every section the goal module names, so a renamed section fails here and not in a prompt.
    const USED: &[&str] = &[
        "tool_goal",
        "param_goal_add",
        "param_goal_done",
        "param_goal_abandon",
        "param_goal_focus",
        "param_goal_reason",
        "tool_step",
        "param_step_plan",
        "param_step_focus",
        "param_step_complete",
        "param_step_summary",
        "tool_read_progress",
        "tool_explore",
        "param_explore_branches",
        "param_explore_background",
        "plan",
        "none",
        "no_goals",
        "added",
        "focused",
        "completed",
        "cascaded",
        "abandoned",
        "removed",
        "next",
        "explore_started",
        "explore_start_description",
        "sub_agents_description",
        "sub_agent_no_result",
        "merge_description",
        "merge_description_none",
        "merged",
        "merge_header",
        "merge_branch",
        "merge_selected",
        "merge_choose",
        "probe",
        "open_goals",
        "probe_test_passed",
        "probe_edit_landed",
        "probe_sub_task",
        "history_completed",
        "history_in_progress",
        "history_pending",
        "history_summary",
    ];

    #[test]
    fn every_section_used_exists() {
        for name in USED {
            assert!(!text(name).is_empty(), "prompts/goals.md has no section `{name}`");
        }
        assert_eq!(SECTIONS.len(), USED.len(), "prompts/goals.md has sections no code uses");
    }

    #[test]
    fn helpers() {
        assert_eq!(one_line("  a\nb", 10), "a…");
        assert_eq!(one_line("abcdef", 3), "abc…");
        assert_eq!(one_line(" abc ", 3), "abc");
        assert_eq!(fill("focused", &[("goal", "2 fix")]), "focused 2 fix");
        assert_eq!(clip(" abcdef ", 4), "abc…");
        assert_eq!(clip("a\nb", 3), "a\nb");
    }
}
