//! Test fixtures of the goal module: trees built by tool calls, and seed 004's conversation.

pub(crate) mod test_support {
    use crate::goals::{GoalTree, ToolOutcome, call_tool};
    use crate::model::GoalId;

    /// A tree after these `goal` calls (JSON arguments), each of which must succeed.
    pub fn tree_after(calls: &[&str]) -> GoalTree {
        let mut tree = GoalTree::new("mission");
        for args in calls {
            run(&mut tree, args);
        }
        tree
    }

    /// One `goal` call that must succeed; the tree must stay valid.
    pub fn run(tree: &mut GoalTree, args: &str) -> ToolOutcome {
        let outcome = call_tool(tree, "goal", args).unwrap_or_else(|e| panic!("goal {args}: {e}"));
        tree.validate().unwrap_or_else(|e| panic!("after goal {args}: {e}"));
        outcome
    }

    pub fn id(n: u32) -> GoalId {
        GoalId(n.to_string())
    }

    /// `id:status` of every goal, in list order.
    pub fn statuses(tree: &GoalTree) -> Vec<String> {
        tree.goals()
            .iter()
            .map(|g| format!("{}:{}", g.id, serde_json::to_value(g.status).unwrap().as_str().unwrap()))
            .collect()
    }
}

pub(crate) mod conversation {
    use crate::goals::GoalTree;
    use crate::model::{ContentPart, GoalId, Message, Role, ToolCall, ToolResult};

    /// 2024-01-15 14:30:10 UTC, seed 004's example.
    pub const START_MS: u64 = 1_705_329_010_000;

    /// Seed 004's example run through the `step` tool: explore the code base (a thought, a
    /// glob, a completion with a summary), then modify the config (a read, a final reply),
    /// then run the tests (planned). Returns the tree and the messages.
    pub fn seed_004() -> (GoalTree, Vec<Message>) {
        let mut tree = GoalTree::new("修改配置文件");
        let mut messages = Vec::new();
        let mut push = |tree: &mut GoalTree, role: Role, goal: Option<u32>, content: Vec<ContentPart>| {
            let sequence = messages.len() as u64;
            let tool_call_id = content.iter().find_map(|p| match p {
                ContentPart::ToolResult(r) => Some(r.call_id.clone()),
                _ => None,
            });
            let message = Message {
                goal_id: goal.map(|g| GoalId(g.to_string())),
                tool_call_id,
                tokens: Some(100 + sequence as u32),
                cost: Some(0.001),
                created_at_ms: START_MS + 1000 * sequence,
                ..Message::new("abc123".into(), sequence, role, content)
            };
            if message.goal_id.is_some() {
                tree.record(&message).unwrap();
            }
            messages.push(message);
        };
        let text = |t: &str| ContentPart::Text { text: t.into() };
        let call = |id: &str, name: &str, args: &str| {
            ContentPart::ToolCall(ToolCall { id: id.into(), name: name.into(), arguments: args.into() })
        };
        let result = |id: &str, name: &str, output: &str| ContentPart::ToolResult(ToolResult::ok(id, name, output));
        crate::goals::call_tool(&mut tree, "step", r#"{"plan": ["探索代码库", "修改配置", "运行测试"], "focus": "1"}"#)
            .unwrap();
        push(&mut tree, Role::User, None, vec![text("修改配置文件")]);
        push(&mut tree, Role::Assistant, Some(1), vec![text("需要先了解项目结构")]);
        push(&mut tree, Role::Assistant, Some(1), vec![call("c1", "glob_files", r#"{"pattern": "**/*.py"}"#)]);
        push(&mut tree, Role::Tool, Some(1), vec![result("c1", "glob_files", "src/main.py\nsrc/config.py")]);
        let complete = r#"{"complete": true, "summary": "主配置在 /src/config.yaml", "focus": "修改配置"}"#;
        push(&mut tree, Role::Assistant, Some(1), vec![call("c2", "step", complete)]);
        let outcome = crate::goals::call_tool(&mut tree, "step", complete).unwrap();
        push(&mut tree, Role::Tool, Some(1), vec![result("c2", "step", &outcome.text)]);
        push(&mut tree, Role::Assistant, Some(2), vec![call("c3", "read_file", r#"{"path": "config.yaml"}"#)]);
        push(&mut tree, Role::Tool, Some(2), vec![result("c3", "read_file", "db_host=prod.db.com")]);
        push(&mut tree, Role::Assistant, Some(2), vec![text("配置已读取,下一步修改 db_host。")]);
        (tree, messages)
    }
}
