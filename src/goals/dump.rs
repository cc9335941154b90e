//! The debug dump of the step tree (R1.4, R9.2): seed 004's text format, and the same as JSON.
//! The clock is passed in (`generated_at_ms`); times are shown in UTC.

use serde_json::{Map, Value, json};

use super::GoalTree;
use super::steps::{Step, StepStatus, step_view};
use super::text::one_line;
use crate::model::Message;

const RULE: &str = "============================================================";
/// Characters of a value under `data:`.
const VALUE_CHARS: usize = 100;

/// Seed 004's text dump: a header, the trace's totals, then every step as a tree.
pub fn dump_tree(trace_id: &str, tree: &GoalTree, messages: &[Message], generated_at_ms: u64) -> String {
    let steps = step_view(messages, tree);
    let totals = Totals::of(&steps);
    let mut out = vec![
        RULE.to_owned(),
        " Step Tree Debug".to_owned(),
        format!(" Generated: {}", date_time(generated_at_ms)),
        RULE.to_owned(),
        String::new(),
        "## Trace".to_owned(),
        format!("  trace_id: {trace_id}"),
        format!("  task: {}", one_line(tree.mission(), VALUE_CHARS)),
        format!("  status: {}", status(tree)),
        format!("  total_steps: {}", steps.len()),
        format!("  total_tokens: {}", totals.tokens),
        format!("  total_cost: {:.4}", totals.cost),
        String::new(),
        "## Steps".to_owned(),
        String::new(),
    ];
    let children = children_of(&steps);
    // (step, prefix of its lines, whether it is the last of its siblings)
    let mut stack: Vec<(usize, String, bool)> = Vec::new();
    push_children(&mut stack, &children.roots, "");
    while let Some((i, prefix, last)) = stack.pop() {
        let Some(step) = steps.get(i) else { continue };
        let (connector, more) = if last { ("└── ", "    ") } else { ("├── ", "│   ") };
        out.push(format!("{prefix}{connector}[{}] {}: {}", icon(step.status), type_name(step), step.description));
        let body = format!("{prefix}{more}");
        for field in fields(step) {
            out.push(format!("{body}{field}"));
        }
        out.push(body.trim_end().to_owned());
        if let Some(list) = children.of.get(i) {
            push_children(&mut stack, list, &body);
        }
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// The same as JSON: `{"trace": {…}, "steps": [{…, "children": [...]}]}`.
pub fn dump_tree_json(trace_id: &str, tree: &GoalTree, messages: &[Message], generated_at_ms: u64) -> Value {
    let steps = step_view(messages, tree);
    let totals = Totals::of(&steps);
    let children = children_of(&steps);
    // Steps are in pre-order, so building from the end sees every child before its parent.
    let mut built: Vec<Option<Value>> = vec![None; steps.len()];
    for i in (0..steps.len()).rev() {
        let mut node = match serde_json::to_value(&steps[i]) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        let kids: Vec<Value> =
            children.of.get(i).into_iter().flatten().filter_map(|&c| built.get_mut(c).and_then(Option::take)).collect();
        node.insert("children".to_owned(), Value::Array(kids));
        built[i] = Some(Value::Object(node));
    }
    let roots: Vec<Value> = children.roots.iter().filter_map(|&r| built.get_mut(r).and_then(Option::take)).collect();
    json!({
        "trace": {
            "trace_id": trace_id,
            "task": tree.mission(),
            "status": status(tree),
            "generated_at_ms": generated_at_ms,
            "total_steps": steps.len(),
            "total_tokens": totals.tokens,
            "total_cost": totals.cost,
        },
        "steps": roots,
    })
}

struct Totals {
    tokens: u64,
    cost: f64,
}

impl Totals {
    /// Sums over message steps (a goal's stats already sum its messages).
    fn of(steps: &[Step]) -> Totals {
        let messages = steps.iter().filter(|s| s.sequence.is_some());
        let (tokens, cost) = messages
            .fold((0u64, 0.0), |(t, c), s| (t.saturating_add(s.tokens.unwrap_or(0)), c + s.cost.unwrap_or(0.0)));
        Totals { tokens, cost }
    }
}

struct Children {
    roots: Vec<usize>,
    of: Vec<Vec<usize>>,
}

/// Children by parent id, in the order of the (pre-order) list.
fn children_of(steps: &[Step]) -> Children {
    let index: std::collections::BTreeMap<&str, usize> =
        steps.iter().enumerate().map(|(i, s)| (s.step_id.as_str(), i)).collect();
    let mut children = Children { roots: Vec::new(), of: vec![Vec::new(); steps.len()] };
    for (i, step) in steps.iter().enumerate() {
        match step.parent_id.as_deref().and_then(|p| index.get(p)).copied().filter(|&p| p < i) {
            Some(p) => children.of[p].push(i),
            None => children.roots.push(i),
        }
    }
    children
}

fn push_children(stack: &mut Vec<(usize, String, bool)>, list: &[usize], prefix: &str) {
    for (k, &child) in list.iter().enumerate().rev() {
        stack.push((child, prefix.to_owned(), k + 1 == list.len()));
    }
}

fn fields(step: &Step) -> Vec<String> {
    let mut out = vec![format!("id: {}", short_id(&step.step_id))];
    if let Some(ms) = step.duration_ms {
        out.push(format!("duration: {ms}ms"));
    }
    if let Some(tokens) = step.tokens {
        out.push(format!("tokens: {tokens}"));
    }
    if let Some(cost) = step.cost {
        out.push(format!("cost: ${cost:.4}"));
    }
    if let Some(summary) = step.summary.as_deref() {
        out.push(format!("summary: {}", one_line(summary, VALUE_CHARS)));
    }
    if !step.data.is_empty() {
        out.push("data:".to_owned());
        for (key, value) in &step.data {
            let text = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            out.push(format!("  {key}: {}", one_line(&text, VALUE_CHARS)));
        }
    }
    if let Some(at) = step.created_at_ms {
        out.push(format!("time: {}", time_of_day(at)));
    }
    out
}

fn status(tree: &GoalTree) -> &'static str {
    if tree.is_completed() { "completed" } else { "running" }
}

fn icon(status: StepStatus) -> &'static str {
    match status {
        StepStatus::Completed => "✓",
        StepStatus::InProgress => "→",
        StepStatus::Planned => " ",
        StepStatus::Failed => "✗",
        StepStatus::Skipped => "-",
    }
}

fn type_name(step: &Step) -> String {
    serde_json::to_value(step.step_type).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

/// Seed 004 shows ids cut to 8 characters and `...`.
fn short_id(id: &str) -> String {
    if id.chars().count() <= 8 { id.to_owned() } else { format!("{}...", id.chars().take(8).collect::<String>()) }
}

/// `HH:MM:SS` (UTC).
fn time_of_day(ms: u64) -> String {
    let secs = ms / 1000 % 86_400;
    format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
}

/// `YYYY-MM-DD HH:MM:SS` (UTC).
pub fn date_time(ms: u64) -> String {
    format!("{} {}", utc_day(ms), time_of_day(ms))
}

/// Whether `text` is written as a day `YYYY-MM-DD`.
pub fn is_utc_day(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// `YYYY-MM-DD` (UTC), from the days since 1970 (Howard Hinnant's civil_from_days).
pub fn utc_day(ms: u64) -> String {
    let days = (ms / 86_400_000) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_civil_dates() {
        assert_eq!(date_time(0), "1970-01-01 00:00:00");
        // 2024-01-15 14:30:25 UTC, seed 004's example.
        assert_eq!(date_time(1_705_329_025_000), "2024-01-15 14:30:25");
        assert_eq!(date_time(951_782_400_000), "2000-02-29 00:00:00");
        assert_eq!(short_id("a1b2c3d4e5"), "a1b2c3d4...");
        assert_eq!(short_id("m000001"), "m000001");
    }
}

#[cfg(test)]
mod snapshot {
    use expect_test::expect;

    use super::*;
    use crate::goals::fixtures::conversation::{START_MS, seed_004};

    #[test]
    fn the_text_dump_follows_seed_004() {
        let (tree, messages) = seed_004();
        expect![[r#"
            ============================================================
             Step Tree Debug
             Generated: 2024-01-15 14:30:25
            ============================================================

            ## Trace
              trace_id: abc123
              task: 修改配置文件
              status: running
              total_steps: 11
              total_tokens: 836
              total_cost: 0.0080

            ## Steps

            ├── [✓] goal: 探索代码库
            │   id: goal-1
            │   duration: 4000ms
            │   tokens: 515
            │   cost: $0.0050
            │   data:
            │     description: 探索代码库
            │     number: 1
            │   time: 14:30:11
            │
            │   ├── [✓] thought: 需要先了解项目结构
            │   │   id: m000001
            │   │   tokens: 101
            │   │   cost: $0.0010
            │   │   data:
            │   │     content: 需要先了解项目结构
            │   │   time: 14:30:11
            │   │
            │   ├── [✓] action: glob_files(**/*.py)
            │   │   id: m000002
            │   │   duration: 1000ms
            │   │   tokens: 102
            │   │   cost: $0.0010
            │   │   data:
            │   │     arguments: {"pattern":"**/*.py"}
            │   │     tool_name: glob_files
            │   │   time: 14:30:12
            │   │
            │   │   └── [✓] result: glob_files: src/main.py
            │   │       id: m000003
            │   │       tokens: 103
            │   │       cost: $0.0010
            │   │       data:
            │   │         output: src/main.py…
            │   │       time: 14:30:13
            │   │
            │   └── [✓] evaluation: 主配置在 /src/config.yaml
            │       id: m000004
            │       duration: 1000ms
            │       tokens: 104
            │       cost: $0.0010
            │       summary: 主配置在 /src/config.yaml
            │       time: 14:30:14
            │
            │       └── [✓] result: step: completed 1 探索代码库
            │           id: m000005
            │           tokens: 105
            │           cost: $0.0010
            │           data:
            │             output: completed 1 探索代码库…
            │           time: 14:30:15
            │
            ├── [→] goal: 修改配置
            │   id: goal-2
            │   duration: 2000ms
            │   tokens: 321
            │   cost: $0.0030
            │   data:
            │     description: 修改配置
            │     number: 2
            │   time: 14:30:16
            │
            │   ├── [✓] action: read_file(config.yaml)
            │   │   id: m000006
            │   │   duration: 1000ms
            │   │   tokens: 106
            │   │   cost: $0.0010
            │   │   data:
            │   │     arguments: {"path":"config.yaml"}
            │   │     tool_name: read_file
            │   │   time: 14:30:16
            │   │
            │   │   └── [✓] result: read_file: db_host=prod.db.com
            │   │       id: m000007
            │   │       tokens: 107
            │   │       cost: $0.0010
            │   │       data:
            │   │         output: db_host=prod.db.com
            │   │       time: 14:30:17
            │   │
            │   └── [✓] response: 配置已读取,下一步修改 db_host。
            │       id: m000008
            │       tokens: 108
            │       cost: $0.0010
            │       data:
            │         content: 配置已读取,下一步修改 db_host。
            │       time: 14:30:18
            │
            └── [ ] goal: 运行测试
                id: goal-3
                data:
                  description: 运行测试
                  number: 3
        "#]]
        .assert_eq(&dump_tree("abc123", &tree, &messages, START_MS + 15_000));
    }

    #[test]
    fn the_json_dump_nests_children() {
        let (tree, messages) = seed_004();
        let json = dump_tree_json("abc123", &tree, &messages, START_MS);
        assert_eq!(json["trace"]["total_steps"], 11);
        assert_eq!(json["trace"]["total_tokens"], 836);
        let steps = json["steps"].as_array().unwrap();
        let ids: Vec<&str> = steps.iter().map(|s| s["step_id"].as_str().unwrap()).collect();
        assert_eq!(ids, vec!["goal-1", "goal-2", "goal-3"]);
        let action = &steps[0]["children"][1];
        assert_eq!(action["step_type"], "action");
        assert_eq!(action["children"][0]["step_type"], "result");
        assert_eq!(action["data"]["arguments"]["pattern"], "**/*.py");
    }
}
