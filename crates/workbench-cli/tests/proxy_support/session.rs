//! The Claude Code session the end-to-end test plays: a scratch Python project with three bugs
//! and a large build log, and the scripted model's steps (a plan with the task tools, Bash,
//! Grep, Read, Edit) that find and fix them. Claude Code runs the tools for real; the upstream only decides
//! which call comes next, from the id of the newest tool result it received.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

/// What the final answer says.
pub const DONE: &str = "All tests pass: total_value, restock and the report header are fixed.";

/// A git workspace with `inventory/` (the bugs), `tests/`, and `logs/build.log` (large).
pub fn workspace(dir: &Path) {
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let mut stock = String::from(
        "\"\"\"Stock keeping.\"\"\"\n\n\nclass Item:\n    def __init__(self, name, price, quantity):\n        self.name = name\n        self.price = price\n        self.quantity = quantity\n\n\n",
    );
    stock.push_str("def total_value(items):\n    return sum(item.price for item in items)\n\n\n");
    stock.push_str("def restock(item, amount):\n    item.quantity = amount\n    return item\n\n\n");
    for i in 0..120 {
        stock.push_str(&format!(
            "def discount_{i}(item):\n    \"\"\"Price of `item` with the {i}% discount of tier {i}.\"\"\"\n    return round(item.price * (100 - {i}) / 100, 2)\n\n\n"
        ));
    }
    write("inventory/__init__.py", "");
    write("inventory/stock.py", &stock);
    let mut report = String::from(
        "from inventory.stock import total_value\n\n\ndef format_report(items):\n    lines = [\"Inventory report\"]\n",
    );
    report.push_str("    for item in items:\n        lines.append(f\"{item.name}: {item.quantity} x {item.price}\")\n    lines.append(f\"total: {total_value(items)}\")\n    return \"\\n\".join(lines)\n\n\n");
    for i in 0..60 {
        report
            .push_str(&format!("def column_{i}(item):\n    return str(getattr(item, 'name')).ljust({})\n\n\n", 10 + i));
    }
    write("inventory/report.py", &report);
    write(
        "tests/test_stock.py",
        "import unittest\n\nfrom inventory.report import format_report\nfrom inventory.stock import Item, restock, total_value\n\n\nclass StockTest(unittest.TestCase):\n    def test_total_value_counts_quantities(self):\n        self.assertEqual(total_value([Item('a', 2.0, 3), Item('b', 1.5, 2)]), 9.0)\n\n    def test_restock_adds(self):\n        self.assertEqual(restock(Item('a', 1.0, 4), 6).quantity, 10)\n\n    def test_report_header(self):\n        self.assertTrue(format_report([]).startswith('INVENTORY REPORT'))\n\n\nif __name__ == '__main__':\n    unittest.main()\n",
    );
    let log: String = (0..2400)
        .map(|i| {
            if i % 97 == 13 {
                format!(
                    "[{i:05}] ERROR inventory.sync: stock level for sku-{i} could not be reconciled (warehouse {})\n",
                    i % 7
                )
            } else {
                format!(
                    "[{i:05}] INFO  inventory.sync: reconciled sku-{i} in warehouse {} after {} ms\n",
                    i % 7,
                    (i * 37) % 900
                )
            }
        })
        .collect();
    write("logs/build.log", &log);
    write(
        "README.md",
        "# inventory\n\nA small stock-keeping package. Run the tests with `python3 -m unittest discover -s tests`.\n",
    );
    for args in [
        &["init", "-q", "."][..],
        &["add", "."],
        &["-c", "user.email=t@e.st", "-c", "user.name=t", "commit", "-qm", "start"],
    ] {
        assert!(Command::new("git").args(args).current_dir(dir).status().unwrap().success());
    }
}

/// The plan the session keeps with Claude Code's task tools (loaded through `ToolSearch`, as
/// Claude Code 2.1 does by default): task `k + 1` is `PLAN[k]`.
pub const PLAN: [&str; 5] =
    ["Find the failing tests", "Fix total_value", "Fix restock", "Fix the report header", "Run the whole suite"];

/// A step of the work, or a point where the plan moves on.
enum Step {
    Call(&'static str, Value),
    /// Load the task tools, create the tasks, start the first.
    Plan,
    /// Task `k` (from 1) is done; the next one starts.
    Done(usize),
}

fn task_update(task: usize, status: &str) -> (&'static str, Value) {
    ("TaskUpdate", json!({"taskId": task.to_string(), "status": status}))
}

/// Every tool call of the session in order, in the workspace `dir`.
fn calls(dir: &Path) -> Vec<(&'static str, Value)> {
    let file = |path: &str| dir.join(path).display().to_string();
    let test = json!({"command": "python3 -m unittest discover -s tests -v 2>&1 | tail -n 40", "description": "Run the tests"});
    let work = vec![
        Step::Plan,
        Step::Call("Bash", json!({"command": "ls -R", "description": "List the files"})),
        Step::Call("Bash", test.clone()),
        Step::Call(
            "Grep",
            json!({"pattern": "def total_value", "path": file("inventory"), "output_mode": "content", "-n": true}),
        ),
        Step::Call("Read", json!({"file_path": file("inventory/stock.py")})),
        Step::Call(
            "Grep",
            json!({"pattern": "ERROR", "path": file("logs/build.log"), "output_mode": "content", "-n": true}),
        ),
        Step::Call(
            "Bash",
            json!({"command": "head -n 700 logs/build.log", "description": "Read the start of the build log"}),
        ),
        Step::Done(1),
        Step::Call(
            "Edit",
            json!({"file_path": file("inventory/stock.py"), "old_string": "    return sum(item.price for item in items)", "new_string": "    return sum(item.price * item.quantity for item in items)"}),
        ),
        Step::Call("Bash", test.clone()),
        Step::Call("Read", json!({"file_path": file("tests/test_stock.py")})),
        Step::Call(
            "Grep",
            json!({"pattern": "def restock", "path": file("inventory"), "output_mode": "content", "-n": true}),
        ),
        Step::Done(2),
        Step::Call(
            "Edit",
            json!({"file_path": file("inventory/stock.py"), "old_string": "    item.quantity = amount", "new_string": "    item.quantity += amount"}),
        ),
        Step::Call("Bash", test.clone()),
        Step::Done(3),
        Step::Call("Read", json!({"file_path": file("inventory/report.py")})),
        Step::Call(
            "Bash",
            json!({"command": "sed -n 700,1500p logs/build.log", "description": "Read more of the build log"}),
        ),
        Step::Call(
            "Edit",
            json!({"file_path": file("inventory/report.py"), "old_string": "    lines = [\"Inventory report\"]", "new_string": "    lines = [\"INVENTORY REPORT\"]"}),
        ),
        Step::Call("Bash", test.clone()),
        Step::Call("Bash", json!({"command": "grep -c ERROR logs/build.log", "description": "Count the errors"})),
        Step::Call("Read", json!({"file_path": file("logs/build.log"), "offset": 1500, "limit": 600})),
        Step::Call("Bash", json!({"command": "git status --short", "description": "What changed"})),
        Step::Call("Bash", json!({"command": "git diff", "description": "The changes"})),
        Step::Call(
            "Grep",
            json!({"pattern": "discount_1[0-9]", "path": file("inventory"), "output_mode": "content", "-n": true}),
        ),
        Step::Call("Read", json!({"file_path": file("inventory/stock.py"), "offset": 1, "limit": 40})),
        Step::Call(
            "Edit",
            json!({"file_path": file("inventory/stock.py"), "old_string": "def restock(item, amount):\n", "new_string": "def restock(item, amount):\n    \"\"\"Add `amount` to the item's stock.\"\"\"\n"}),
        ),
        Step::Call(
            "Bash",
            json!({"command": "wc -l inventory/*.py tests/*.py logs/build.log", "description": "Sizes"}),
        ),
        Step::Call(
            "Bash",
            json!({"command": "python3 -c \"from inventory.stock import Item, total_value; print(total_value([Item('x', 2.5, 4)]))\"", "description": "Check by hand"}),
        ),
        Step::Done(4),
        Step::Call("Bash", test),
        Step::Done(5),
    ];
    let mut calls = Vec::new();
    for step in work {
        match step {
            Step::Call(name, input) => calls.push((name, input)),
            Step::Plan => {
                calls.push(("ToolSearch", json!({"query": "select:TaskCreate,TaskUpdate,TaskList", "max_results": 3})));
                for subject in PLAN {
                    calls.push(("TaskCreate", json!({"subject": subject, "description": format!("{subject}, then check it"), "activeForm": format!("Working on: {subject}")})));
                }
                calls.push(task_update(1, "in_progress"));
            }
            Step::Done(task) => {
                calls.push(task_update(task, "completed"));
                if task < PLAN.len() {
                    calls.push(task_update(task + 1, "in_progress"));
                }
            }
        }
    }
    calls
}

/// The tools Claude Code is allowed to use in the session.
pub const ALLOWED_TOOLS: &str = "Read,Grep,Edit,Write,Bash,ToolSearch,TaskCreate,TaskUpdate,TaskList";

/// Step `n`'s tool call (name, input) in the workspace `dir`, or `None` past the last step.
pub fn step(n: usize, dir: &Path) -> Option<(&'static str, Value)> {
    calls(dir).into_iter().nth(n)
}

/// The number of scripted tool steps.
pub fn steps(dir: &Path) -> usize {
    calls(dir).len()
}
