//! Claude Code's task tools (`TaskCreate`, `TaskUpdate`, `TaskList`; its default since 2.1)
//! read as a plan. Unlike `TodoWrite` they change one task at a time and the ids are Claude
//! Code's, given in the results: `Task #3 created successfully: Fix the parser`, `Updated task
//! #3 status`, and `TaskList`'s `#3 [in_progress] Fix the parser [blocked by #1]` lines. The
//! list is replayed from every successful call of a history into the items [`super::sync_plan`]
//! reconciles with the tree, so a call the agent refused or that failed changes nothing.

use std::collections::BTreeMap;

use serde_json::Value;

use super::import::{PlanItem, PlanStatus};

/// Whether `tool_name` is one of the task tools.
pub fn is_task_tool(tool_name: &str) -> bool {
    matches!(tool_name, "TaskCreate" | "TaskUpdate" | "TaskList")
}

/// The agent's task list, in creation order.
#[derive(Debug, Default, Clone)]
pub struct TaskList {
    /// Task id → its index in `items`.
    ids: BTreeMap<String, usize>,
    items: Vec<PlanItem>,
}

impl TaskList {
    /// Apply one successful call: `arguments` as the model wrote them, `output` the result the
    /// agent returned. Calls whose result the list cannot place (an id it never saw) change
    /// nothing.
    pub fn apply(&mut self, tool_name: &str, arguments: &str, output: &str) {
        let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
        match tool_name {
            "TaskCreate" => {
                let created = output.trim().strip_prefix("Task #").and_then(|rest| rest.split_once(' '));
                let subject = args.get("subject").and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
                if let (Some((id, rest)), Some(subject)) = (created, subject)
                    && rest.starts_with("created successfully")
                {
                    self.upsert(id, subject, PlanStatus::Pending);
                }
            }
            "TaskUpdate" => {
                let Some(id) = args.get("taskId").and_then(value_text) else { return };
                let Some(&index) = self.ids.get(&id) else { return };
                if !output.trim().starts_with("Updated task #") {
                    return;
                }
                let item = &mut self.items[index];
                if let Some(subject) = args.get("subject").and_then(Value::as_str).filter(|s| !s.trim().is_empty()) {
                    item.text = subject.trim().to_owned();
                }
                if let Some(status) = args.get("status").and_then(Value::as_str).and_then(status_of) {
                    item.status = status;
                }
            }
            "TaskList" => {
                for line in output.lines() {
                    if let Some((id, status, subject)) = list_line(line) {
                        self.upsert(&id, &subject, status);
                    }
                }
            }
            _ => {}
        }
    }

    /// The items for [`super::sync_plan`]: every task, deleted ones as cancelled.
    pub fn items(&self) -> &[PlanItem] {
        &self.items
    }

    fn upsert(&mut self, id: &str, subject: &str, status: PlanStatus) {
        match self.ids.get(id) {
            Some(&index) => self.items[index].status = status,
            None => {
                self.ids.insert(id.to_owned(), self.items.len());
                self.items.push(PlanItem { text: subject.to_owned(), status });
            }
        }
    }
}

fn value_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.trim().to_owned()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn status_of(status: &str) -> Option<PlanStatus> {
    match status {
        "pending" => Some(PlanStatus::Pending),
        "in_progress" => Some(PlanStatus::InProgress),
        "completed" => Some(PlanStatus::Completed),
        "deleted" => Some(PlanStatus::Cancelled),
        _ => None,
    }
}

/// `#3 [in_progress] Fix the parser [blocked by #1, #2]` → the id, the status, the subject.
fn list_line(line: &str) -> Option<(String, PlanStatus, String)> {
    let rest = line.trim().strip_prefix('#')?;
    let (id, rest) = rest.split_once(" [")?;
    let (status, subject) = rest.split_once("] ")?;
    let subject = subject.rsplit_once(" [blocked by ").map_or(subject, |(s, _)| s).trim();
    let status = status_of(status)?;
    (!subject.is_empty()).then(|| (id.to_owned(), status, subject.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use PlanStatus::{Cancelled, Completed, InProgress, Pending};

    fn items(list: &TaskList) -> Vec<(&str, PlanStatus)> {
        list.items().iter().map(|i| (i.text.as_str(), i.status)).collect()
    }

    #[test]
    fn created_updated_and_listed_tasks_make_the_plan() {
        let mut list = TaskList::default();
        list.apply(
            "TaskCreate",
            r#"{"subject":"Read the test","description":"d"}"#,
            "Task #1 created successfully: Read the test",
        );
        list.apply(
            "TaskCreate",
            r#"{"subject":"Fix calc.py","description":"d"}"#,
            "Task #2 created successfully: Fix calc.py",
        );
        list.apply("TaskUpdate", r#"{"taskId":"1","status":"in_progress"}"#, "Updated task #1 status");
        assert_eq!(items(&list), [("Read the test", InProgress), ("Fix calc.py", Pending)]);
        list.apply("TaskUpdate", r#"{"taskId":"1","status":"completed"}"#, "Updated task #1 status");
        list.apply("TaskUpdate", r#"{"taskId":"2","status":"deleted"}"#, "Updated task #2 status");
        assert_eq!(items(&list), [("Read the test", Completed), ("Fix calc.py", Cancelled)]);
        list.apply("TaskList", "{}", "#1 [completed] Read the test\n#3 [pending] Run the tests [blocked by #1]");
        assert_eq!(
            items(&list),
            [("Read the test", Completed), ("Fix calc.py", Cancelled), ("Run the tests", Pending)]
        );
    }

    #[test]
    fn what_did_not_happen_changes_nothing() {
        let mut list = TaskList::default();
        list.apply(
            "TaskCreate",
            r#"{"subject":"x"}"#,
            "<tool_use_error>No such tool available: TaskCreate</tool_use_error>",
        );
        list.apply("TaskUpdate", r#"{"taskId":"9","status":"completed"}"#, "Task #9 not found");
        list.apply("TaskCreate", r#"{"subject":"a"}"#, "Task #1 created successfully: a");
        list.apply("TaskUpdate", r#"{"taskId":"1","status":"completed"}"#, "Task #1 not found");
        list.apply("TaskUpdate", r#"{"taskId":"1","status":"done"}"#, "Updated task #1 status");
        assert_eq!(items(&list), [("a", Pending)]);
        list.apply("TaskList", "{}", "No tasks found");
        assert_eq!(items(&list), [("a", Pending)]);
    }
}
