//! The goal tree as text for the model: the plan block (R2.2), the brief todo list and the
//! history form with key results (R6.7, seed 004).

use super::text::{fill, one_line, text};
use super::{GoalStatus, GoalTree};
use crate::model::{Message, Role, tool_calls_by_id};

/// Characters of a summary line under a completed goal.
const SUMMARY_CHARS: usize = 200;
/// Key results listed per goal in the history form (the most recent ones).
const KEY_RESULTS: usize = 5;
/// Characters of one key result.
const RESULT_CHARS: usize = 100;
/// Arguments that say what a call was about, in order of preference.
const KEY_ARGUMENTS: &[&str] = &["path", "file_path", "filePath", "pattern", "command", "query", "url"];

impl GoalTree {
    /// The plan block (R2.2, seed 002): mission, current goal, and the tree with `[✓]`, `[→]`,
    /// `[ ]`, a one-line summary under each completed goal (whose sub-goals are folded into
    /// it), `← current`; abandoned goals hidden, numbers continuous.
    pub fn to_prompt(&self) -> String {
        let current = match self.current_id().and_then(|id| self.index_of(id)) {
            Some(index) => self.label(index),
            None => text("none").to_owned(),
        };
        let mut progress = self.tree_lines(true);
        if progress.is_empty() {
            progress = text("no_goals").to_owned();
        }
        fill("plan", &[("mission", self.mission().trim()), ("current", &current), ("progress", &progress)])
    }

    /// The brief todo list (seed 004, R6.6's `read_progress`): the tree lines without
    /// summaries; empty when there are no goals.
    pub fn to_todo_string(&self) -> String {
        self.tree_lines(false)
    }

    /// The history form (seed 004): every goal shown with its status, the key results of its
    /// own tool calls (the last few, plan tools left out) unless it is pending, and the
    /// summary of a completed goal. `messages` are the tree's line (main or branch).
    pub fn to_history_string(&self, messages: &[Message]) -> String {
        let calls = tool_calls_by_id(messages);
        let own = |m: &&Message| m.branch_id.as_ref() == self.branch_id() && m.role == Role::Tool;
        let mut blocks: Vec<String> = Vec::new();
        for n in self.numbered(false) {
            let Some(goal) = self.goals().get(n.index) else { continue };
            let indent = "  ".repeat(n.depth);
            let label = match goal.status {
                GoalStatus::Completed => text("history_completed"),
                GoalStatus::InProgress => text("history_in_progress"),
                _ => text("history_pending"),
            };
            let mut lines = vec![format!("{indent}{label} {} {}", n.number, goal.description)];
            if goal.status != GoalStatus::Pending {
                let results: Vec<String> = messages
                    .iter()
                    .filter(own)
                    .filter(|m| m.goal_id.as_ref() == Some(&goal.id))
                    .flat_map(|m| m.tool_results())
                    .filter(|r| !is_plan_tool(&r.name))
                    .map(|r| {
                        let call = calls.get(r.call_id.as_str());
                        let argument = call.and_then(|c| key_argument(&c.arguments));
                        let head = match argument {
                            Some(arg) => format!("{}({arg})", r.name),
                            None => r.name.clone(),
                        };
                        let output = r.output.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                        one_line(&format!("{head}: {}", output.trim()), RESULT_CHARS)
                    })
                    .collect();
                let skip = results.len().saturating_sub(KEY_RESULTS);
                lines.extend(results.into_iter().skip(skip).map(|r| format!("{indent}  → {r}")));
            }
            if goal.status == GoalStatus::Completed
                && let Some(summary) = goal.summary.as_deref()
            {
                let summary = one_line(summary, SUMMARY_CHARS);
                lines.push(format!("{indent}  {}", fill("history_summary", &[("summary", &summary)])));
            }
            if n.depth == 0 || blocks.is_empty() {
                blocks.push(lines.join("\n"));
            } else if let Some(last) = blocks.last_mut() {
                last.push('\n');
                last.push_str(&lines.join("\n"));
            }
        }
        blocks.join("\n\n")
    }

    /// One line per goal shown, children of completed goals folded, with summaries when asked.
    fn tree_lines(&self, summaries: bool) -> String {
        let mut lines = Vec::new();
        let mut folded_below: Option<usize> = None;
        for n in self.numbered(false) {
            if let Some(depth) = folded_below {
                if n.depth > depth {
                    continue;
                }
                folded_below = None;
            }
            let Some(goal) = self.goals().get(n.index) else { continue };
            let indent = "    ".repeat(n.depth);
            let mark = match goal.status {
                GoalStatus::Completed => "[✓]",
                GoalStatus::InProgress => "[→]",
                _ => "[ ]",
            };
            let number = if n.depth == 0 { format!("{}.", n.number) } else { n.number.clone() };
            let mut line = format!("{indent}{mark} {number} {}", goal.description);
            if self.current_id() == Some(&goal.id) {
                line.push_str("  ← current");
            }
            lines.push(line);
            if goal.status == GoalStatus::Completed {
                folded_below = Some(n.depth);
                if summaries && let Some(summary) = goal.summary.as_deref().filter(|s| !s.trim().is_empty()) {
                    lines.push(format!("{indent}    → {}", one_line(summary, SUMMARY_CHARS)));
                }
            }
        }
        lines.join("\n")
    }
}

/// Whether `name` is one of the plan tools, whose results are not key results.
fn is_plan_tool(name: &str) -> bool {
    use super::tool::{EXPLORE_TOOL, GOAL_TOOL, READ_PROGRESS_TOOL, STEP_TOOL};
    [GOAL_TOOL, STEP_TOOL, READ_PROGRESS_TOOL, EXPLORE_TOOL].contains(&name)
}

/// The argument that says what a call was about (`path`, `command` …), on one short line.
pub(crate) fn key_argument(arguments: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(arguments).ok()?;
    KEY_ARGUMENTS.iter().find_map(|k| value.get(*k)?.as_str().map(|s| one_line(s, 60)))
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::goals::fixtures::conversation::seed_004;
    use crate::goals::fixtures::test_support::{run, tree_after};

    #[test]
    fn the_plan_block_follows_seed_002() {
        let mut tree = tree_after(&[r#"{"add": "分析代码, 实现功能, 测试"}"#, r#"{"focus": "1"}"#]);
        run(&mut tree, r#"{"done": "用户模型在 models/user.py,使用 bcrypt 加密\nsecond line"}"#);
        run(&mut tree, r#"{"focus": "2"}"#);
        run(&mut tree, r#"{"add": "设计接口, 实现登录接口, 实现注册接口", "focus": "2.1"}"#);
        run(&mut tree, r#"{"done": "接口设计完成", "focus": "2.2"}"#);
        expect![[r#"
            ## Current Plan

            **Mission**: mission
            **Current**: 2.2 实现登录接口

            **Progress**:
            [✓] 1. 分析代码
                → 用户模型在 models/user.py,使用 bcrypt 加密…
            [→] 2. 实现功能
                [✓] 2.1 设计接口
                    → 接口设计完成
                [→] 2.2 实现登录接口  ← current
                [ ] 2.3 实现注册接口
            [ ] 3. 测试"#]]
        .assert_eq(&tree.to_prompt());
        expect![[r#"
            [✓] 1. 分析代码
            [→] 2. 实现功能
                [✓] 2.1 设计接口
                [→] 2.2 实现登录接口  ← current
                [ ] 2.3 实现注册接口
            [ ] 3. 测试"#]]
        .assert_eq(&tree.to_todo_string());
    }

    #[test]
    fn completed_goals_fold_their_sub_goals_and_an_empty_plan_says_so() {
        let mut tree = tree_after(&[r#"{"add": "a", "focus": "1"}"#, r#"{"add": "a1", "focus": "1.1"}"#]);
        run(&mut tree, r#"{"done": "a1 done"}"#);
        expect![[r#"
            [✓] 1. a
                → a1 done"#]]
        .assert_eq(tree.to_prompt().split("**Progress**:\n").nth(1).unwrap());
        expect![[r#"
            ## Current Plan

            **Mission**: mission
            **Current**: none

            **Progress**:
            (no goals yet)"#]]
        .assert_eq(&crate::goals::GoalTree::new("mission").to_prompt());
        assert_eq!(crate::goals::GoalTree::new("m").to_todo_string(), "");
    }

    #[test]
    fn the_history_form_lists_key_results_and_summaries() {
        let (tree, messages) = seed_004();
        expect![[r#"
            [done] 1 探索代码库
              → glob_files(**/*.py): src/main.py
              summary: 主配置在 /src/config.yaml

            [in progress] 2 修改配置
              → read_file(config.yaml): db_host=prod.db.com

            [todo] 3 运行测试"#]]
        .assert_eq(&tree.to_history_string(&messages));
    }
}
