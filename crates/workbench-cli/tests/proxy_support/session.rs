//! The Claude Code session the end-to-end test plays: a scratch Python project with three bugs
//! and a large build log, and the scripted model's 32 steps (TodoWrite, Bash, Grep, Read, Edit)
//! that find and fix them. Claude Code runs the tools for real; the upstream only decides
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

fn todos(done: usize, all: &[&str]) -> Value {
    let items: Vec<Value> = all
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let status = if i < done {
                "completed"
            } else if i == done {
                "in_progress"
            } else {
                "pending"
            };
            json!({"content": text, "status": status, "activeForm": format!("Working on: {text}")})
        })
        .collect();
    json!({"todos": items})
}

/// The plan the session keeps with TodoWrite.
pub const PLAN: [&str; 5] =
    ["Find the failing tests", "Fix total_value", "Fix restock", "Fix the report header", "Run the whole suite"];

/// Step `n`'s tool call (name, input) in the workspace `dir`, or `None` past the last step.
pub fn step(n: usize, dir: &Path) -> Option<(&'static str, Value)> {
    let file = |path: &str| dir.join(path).display().to_string();
    let test = json!({"command": "python3 -m unittest discover -s tests -v 2>&1 | tail -n 40", "description": "Run the tests"});
    let call = match n {
        0 => ("TodoWrite", todos(0, &PLAN)),
        1 => ("Bash", json!({"command": "ls -R", "description": "List the files"})),
        2 => ("Bash", test.clone()),
        3 => (
            "Grep",
            json!({"pattern": "def total_value", "path": file("inventory"), "output_mode": "content", "-n": true}),
        ),
        4 => ("Read", json!({"file_path": file("inventory/stock.py")})),
        5 => {
            ("Grep", json!({"pattern": "ERROR", "path": file("logs/build.log"), "output_mode": "content", "-n": true}))
        }
        6 => {
            ("Bash", json!({"command": "head -n 700 logs/build.log", "description": "Read the start of the build log"}))
        }
        7 => ("TodoWrite", todos(1, &PLAN)),
        8 => (
            "Edit",
            json!({"file_path": file("inventory/stock.py"), "old_string": "    return sum(item.price for item in items)", "new_string": "    return sum(item.price * item.quantity for item in items)"}),
        ),
        9 => ("Bash", test.clone()),
        10 => ("Read", json!({"file_path": file("tests/test_stock.py")})),
        11 => {
            ("Grep", json!({"pattern": "def restock", "path": file("inventory"), "output_mode": "content", "-n": true}))
        }
        12 => ("TodoWrite", todos(2, &PLAN)),
        13 => (
            "Edit",
            json!({"file_path": file("inventory/stock.py"), "old_string": "    item.quantity = amount", "new_string": "    item.quantity += amount"}),
        ),
        14 => ("Bash", test.clone()),
        15 => ("TodoWrite", todos(3, &PLAN)),
        16 => ("Read", json!({"file_path": file("inventory/report.py")})),
        17 => {
            ("Bash", json!({"command": "sed -n 700,1500p logs/build.log", "description": "Read more of the build log"}))
        }
        18 => (
            "Edit",
            json!({"file_path": file("inventory/report.py"), "old_string": "    lines = [\"Inventory report\"]", "new_string": "    lines = [\"INVENTORY REPORT\"]"}),
        ),
        19 => ("Bash", test.clone()),
        20 => ("Bash", json!({"command": "grep -c ERROR logs/build.log", "description": "Count the errors"})),
        21 => ("Read", json!({"file_path": file("logs/build.log"), "offset": 1500, "limit": 600})),
        22 => ("Bash", json!({"command": "git status --short", "description": "What changed"})),
        23 => ("Bash", json!({"command": "git diff", "description": "The changes"})),
        24 => (
            "Grep",
            json!({"pattern": "discount_1[0-9]", "path": file("inventory"), "output_mode": "content", "-n": true}),
        ),
        25 => ("Read", json!({"file_path": file("inventory/stock.py"), "offset": 1, "limit": 40})),
        26 => (
            "Edit",
            json!({"file_path": file("inventory/stock.py"), "old_string": "def restock(item, amount):\n", "new_string": "def restock(item, amount):\n    \"\"\"Add `amount` to the item's stock.\"\"\"\n"}),
        ),
        27 => ("Bash", json!({"command": "wc -l inventory/*.py tests/*.py logs/build.log", "description": "Sizes"})),
        28 => (
            "Bash",
            json!({"command": "python3 -c \"from inventory.stock import Item, total_value; print(total_value([Item('x', 2.5, 4)]))\"", "description": "Check by hand"}),
        ),
        29 => ("TodoWrite", todos(4, &PLAN)),
        30 => ("Bash", test),
        31 => ("TodoWrite", todos(5, &PLAN)),
        _ => return None,
    };
    Some(call)
}

/// The number of scripted tool steps.
pub fn steps(dir: &Path) -> usize {
    (0..).take_while(|&n| step(n, dir).is_some()).count()
}
