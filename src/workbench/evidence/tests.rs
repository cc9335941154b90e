//! Evidence checks on sessions shaped like real ones (Claude Code reads, pytest runs, vorflux
//! `sed -n` and grep). The helpers are shared with the compactor's tests.

use serde_json::{Value, json};

use super::*;
use crate::model::{ContentPart, ToolCall};
use crate::workbench::{Fact, Learned, Replaces};

pub(crate) fn call(id: &str, name: &str, args: Value) -> ContentPart {
    ContentPart::ToolCall(ToolCall { id: id.into(), name: name.into(), arguments: args.to_string() })
}

pub(crate) fn result(id: &str, name: &str, output: &str, exit_code: Option<i32>) -> ContentPart {
    let failed = exit_code.is_some_and(|c| c != 0);
    ContentPart::ToolResult(ToolResult {
        call_id: id.into(),
        name: name.into(),
        status: if failed { ToolStatus::Error } else { ToolStatus::Ok },
        output: output.into(),
        stderr: None,
        exit_code,
    })
}

/// Messages numbered as the engine numbers them (`m000000`, sequence = index).
pub(crate) fn messages(parts: Vec<(Role, Vec<ContentPart>)>) -> Vec<Message> {
    parts
        .into_iter()
        .enumerate()
        .map(|(i, (role, content))| Message::new("t".into(), i as u64, role, content))
        .collect()
}

pub(crate) const PYTEST_FAILED: &str = "F.                                                                       [100%]
=================================== FAILURES ===================================
__________________________________ test_tabs ___________________________________

    def test_tabs():
>       assert parse(\"a\\tb\") == [\"a\\tb\"]
E       AssertionError: assert ['a', 'b'] == ['a\\tb']

tests/test_parser.py:7: AssertionError
=========================== short test summary info ============================
FAILED tests/test_parser.py::test_tabs - AssertionError: assert ['a', 'b'] == ['a\\tb']
1 failed, 1 passed in 0.03s";

/// A small session: a Claude Code read (#2), a failing pytest (#4), an edit (#6), a vorflux-style
/// `sed -n` after `cd` (#8) and a grep (#10).
pub(crate) fn session() -> Vec<Message> {
    let read = "    38→import re\n    39→\n    40→def parse(x):\n    41→    return x.split(\"\\t\")\n    42→\n\n<system-reminder>\nWhenever you read a file, consider whether it is malware.\n</system-reminder>\n";
    messages(vec![
        (Role::User, vec![ContentPart::Text { text: "parse() splits on tabs; fix it".into() }]),
        (Role::Assistant, vec![call("c1", "Read", json!({"file_path": "/testbed/src/parser.py", "offset": 38}))]),
        (Role::Tool, vec![result("c1", "Read", read, None)]),
        (Role::Assistant, vec![call("c2", "Bash", json!({"command": "pytest -q tests/test_parser.py"}))]),
        (Role::Tool, vec![result("c2", "Bash", PYTEST_FAILED, Some(1))]),
        (
            Role::Assistant,
            vec![call(
                "c3",
                "Edit",
                json!({"file_path": "/testbed/src/parser.py", "old_string": "    return x.split(\"\\t\")", "new_string": "    return [x]"}),
            )],
        ),
        (Role::Tool, vec![result("c3", "Edit", "The file /testbed/src/parser.py has been updated.", None)]),
        (
            Role::Assistant,
            vec![call(
                "c4",
                "bash_execute",
                json!({"command": "cd /testbed && sed -n '1,3p' src/lexer.py 2>/dev/null"}),
            )],
        ),
        (Role::Tool, vec![result("c4", "bash_execute", "a = 1\nb = 2\nc = 3\n", Some(0))]),
        (Role::Assistant, vec![call("c5", "grep_search", json!({"pattern": "def lex", "dirPath": "/testbed/src"}))]),
        (Role::Tool, vec![result("c5", "grep_search", "/testbed/src/lexer.py:10:def lex(s):", None)]),
    ])
}

pub(crate) fn observations() -> Observations {
    Observations::from_messages(&session(), &CompressConfig::default())
}

fn anchor(path: &str, start_line: u32, end_line: u32, snippet: &str) -> Anchor {
    Anchor { path: path.into(), start_line, end_line, snippet: snippet.into() }
}

#[test]
fn line_number_prefixes_are_stripped() {
    assert_eq!(strip_line_number("   421→    def f(x):"), "    def f(x):");
    assert_eq!(strip_line_number("    12\tfn main() {"), "fn main() {");
    assert_eq!(strip_line_number("    12→"), "");
    assert_eq!(strip_line_number("x = 1\t# 2"), "x = 1\t# 2");
    assert_eq!(strip_line_number("12:30 meeting"), "12:30 meeting");
    assert_eq!(strip_line_number("1234567890→too long"), "1234567890→too long");
    assert_eq!(split_line_number("  7→é"), Some((7, "é")));
}

#[test]
fn a_forged_anchor_is_rejected() {
    let obs = observations();
    let err = obs.check_anchor(&anchor("src/parser.py", 40, 41, "def parse(x):\n    return x.strip()")).unwrap_err();
    assert_eq!(err, "snippet not found in what was observed of src/parser.py");
    let err = obs.check_anchor(&anchor("src/x.py", 1, 1, "x")).unwrap_err();
    assert_eq!(err, "no observation of src/x.py");
    assert_eq!(obs.check_anchor(&anchor("src/parser.py", 41, 40, "x")).unwrap_err(), "bad line range L41-L40");
}

#[test]
fn a_numbered_read_proves_its_lines_and_only_those() {
    let obs = observations();
    let copied = "    40→def parse(x):\n    41→    return x.split(\"\\t\")";
    assert_eq!(obs.check_anchor(&anchor("src/parser.py", 40, 41, copied)), Ok(()));
    assert_eq!(obs.check_anchor(&anchor("src/parser.py", 38, 55, "def parse(x):\n")), Ok(()), "overlap is enough");
    let err = obs.check_anchor(&anchor("src/parser.py", 90, 92, copied)).unwrap_err();
    assert_eq!(err, "snippet found at L40-L41, not L90-L92");
    // Trailing whitespace is ignored, leading whitespace is not.
    assert!(obs.check_anchor(&anchor("src/parser.py", 41, 41, "    return x.split(\"\\t\")   ")).is_ok());
    assert!(obs.check_anchor(&anchor("src/parser.py", 41, 41, "return x.split(\"\\t\")")).is_err());
    // Part of a line is not a line.
    assert!(obs.check_anchor(&anchor("src/parser.py", 40, 40, "def parse")).is_err());
}

#[test]
fn absolute_and_relative_paths_match_by_suffix() {
    let obs = observations();
    let snippet = "def parse(x):";
    for path in ["/testbed/src/parser.py", "src/parser.py", "./src/parser.py", "parser.py", "testbed/src/parser.py"] {
        assert_eq!(obs.check_anchor(&anchor(path, 40, 40, snippet)), Ok(()), "{path}");
    }
    for path in ["other/parser.py", "rc/parser.py", "/elsewhere/src/parser.py"] {
        assert!(obs.check_anchor(&anchor(path, 40, 40, snippet)).is_err(), "{path}");
    }
}

#[test]
fn commands_greps_and_edits_are_observations() {
    let obs = observations();
    // `cd /testbed && sed -n '1,3p' src/lexer.py`: lines 1-3 of /testbed/src/lexer.py.
    assert_eq!(obs.check_anchor(&anchor("src/lexer.py", 2, 3, "b = 2\nc = 3")), Ok(()));
    assert_eq!(
        obs.check_anchor(&anchor("src/lexer.py", 5, 6, "b = 2\nc = 3")).unwrap_err(),
        "snippet found at L2-L3, not L5-L6"
    );
    assert_eq!(obs.check_anchor(&anchor("/testbed/src/lexer.py", 10, 10, "def lex(s):")), Ok(()));
    // An edit's new text has no known lines: accepted at any range.
    assert_eq!(obs.check_anchor(&anchor("src/parser.py", 300, 300, "    return [x]")), Ok(()));
}

#[test]
fn pointers_resolve_to_real_messages_of_the_right_kind() {
    let obs = observations();
    for good in [
        "cmd#4 exit=1",
        "cmd#4",
        "cmd#3 exit=1",
        "`cmd#8 exit=0`",
        "test#4 failed: tests/test_parser.py::test_tabs",
        "test#4 exit=1 failed: test_tabs",
        "test#4 failed: test_tabs: tabs are split, tests/test_parser.py::test_tabs",
        "file:src/parser.py:L40-L41",
        "file:/testbed/src/parser.py:L38",
        "file:src/lexer.py",
        "msg#0",
        "#10",
        "m000004",
        "raw#m000002",
    ] {
        assert_eq!(obs.check_pointer(good), Ok(()), "{good}");
    }
    let bad = [
        ("cmd#4 exit=0", "#4 exited with 1, not exit=0"),
        ("cmd#2 exit=0", "#2 is not a command result"),
        ("cmd#0", "#0 is not a tool result"),
        ("test#8", "#8 is not a recognised test log"),
        ("test#4 passed", "the log of #4 reports failures"),
        ("test#4 failed: test_spaces", "`test_spaces` does not occur in the log of #4"),
        ("file:src/parser.py:L40-L60", "lines L40-L60 of src/parser.py were not observed"),
        ("file:src/nope.py:L1", "no observation of src/nope.py"),
        ("msg#99", "no message #99"),
        ("m999999", "unrecognised pointer `m999999`"),
        ("cmd#x", "no message number in `cmd#x`"),
        ("", "empty pointer"),
    ];
    for (pointer, reason) in bad {
        assert_eq!(obs.check_pointer(pointer).unwrap_err(), reason, "{pointer}");
    }
}

#[test]
fn facts_without_evidence_become_unknown_and_forged_anchors_go() {
    let obs = observations();
    let mut delta = StateDelta {
        confirmed_facts: vec![
            Fact { text: "parse() splits on tabs".into(), evidence: vec!["cmd#4 exit=1".into()] },
            Fact { text: "the lexer is fine".into(), evidence: vec![] },
            Fact { text: "tests pass".into(), evidence: vec!["cmd#4 exit=0".into()] },
        ],
        anchors: vec![
            anchor("src/parser.py", 40, 40, "def parse(x):"),
            anchor("src/parser.py", 40, 40, "def parse(y):"),
        ],
        ..Default::default()
    };
    let rejections = obs.check_delta(&mut delta);
    assert_eq!(delta.confirmed_facts.len(), 1);
    assert_eq!(delta.unknown, ["the lexer is fine", "tests pass"]);
    assert_eq!(delta.anchors.len(), 1);
    let items: Vec<&str> = rejections.iter().map(|r| r.item.as_str()).collect();
    assert_eq!(items, ["anchor src/parser.py:L40-L40", "fact \"the lexer is fine\"", "fact \"tests pass\""]);
    assert_eq!(rejections[1].reason, "no evidence");
    assert_eq!(rejections[2].reason, "cmd#4 exit=0: #4 exited with 1, not exit=0");
}

#[test]
fn a_conclusion_keeps_the_pointers_that_resolve() {
    let obs = observations();
    let mut block = CompressedTurns {
        version: 0,
        replaces: Replaces {
            start_turn: 0,
            end_turn: 3,
            first_message: "m000000".into(),
            last_message: "m000010".into(),
            span_id: None,
        },
        goal: "fix parse".into(),
        what_we_learned: vec![
            Learned {
                conclusion: "parse splits on tabs".into(),
                evidence: vec!["cmd#4 exit=1".into(), "cmd#4 exit=0".into()],
            },
            Learned { conclusion: "the lexer is broken".into(), evidence: vec!["test#8".into()] },
            Learned { conclusion: "a summary".into(), evidence: vec![] },
        ],
        anchors: vec![anchor("src/parser.py", 1, 2, "import os")],
        exec_assertions: vec![],
        open_questions: vec![],
        next_actions: vec![],
        files: Vec::new(),
        names: Vec::new(),
        originals: None,
    };
    let rejections = obs.check_block(&mut block);
    assert_eq!(rejections.len(), 3, "{rejections:?}");
    assert_eq!(block.what_we_learned[0].evidence, ["cmd#4 exit=1"]);
    assert_eq!(block.what_we_learned[1].conclusion, "unknown: the lexer is broken");
    assert_eq!(block.what_we_learned[2].conclusion, "a summary", "no pointers, nothing to check");
    assert!(block.anchors.is_empty());
}

#[test]
fn odd_input_never_panics() {
    let odd = ["é→", "4294967296→x", "  →", "\t", "→→", "1:2:3", "a:1:", ":1:x", "é:1:é", "\u{feff}12→x", ""];
    let output = odd.join("\n");
    let mut parts = Vec::new();
    for (i, command) in
        ["cat -n 'a.py", "sed -n '5,p' a.py", "\\", "cd", "grep -n x é.py", "nl", "a>", "|&;"].iter().enumerate()
    {
        let id = format!("b{i}");
        parts.push((Role::Assistant, vec![call(&id, "Bash", json!({"command": command}))]));
        parts.push((Role::Tool, vec![result(&id, "Bash", &output, Some(-1))]));
    }
    parts.push((Role::Assistant, vec![call("r", "Read", json!({"file_path": "é.py", "offset": u64::MAX}))]));
    parts.push((Role::Tool, vec![result("r", "Read", &output, None)]));
    parts.push((Role::Assistant, vec![call("g", "Grep", json!({"path": "é.py"}))]));
    parts.push((Role::Tool, vec![result("g", "Grep", &output, None)]));
    parts.push((Role::Tool, vec![result("orphan", "Edit", &output, None)]));
    let obs = Observations::from_messages(&messages(parts), &CompressConfig::default());
    for pointer in odd.iter().chain(&[
        "cmd#",
        "cmd#99999999999999999999",
        "test#1 exit=",
        "file:",
        "file::L",
        "file:é.py:L0-L1",
        "#",
    ]) {
        let _ = obs.check_pointer(pointer);
        let _ = obs.check_pointer(&format!("cmd#1 exit={pointer}"));
        let _ = obs.check_pointer(&format!("test#1 failed: {pointer}"));
        let _ = obs.check_pointer(&format!("file:é.py:{pointer}"));
    }
    for snippet in odd {
        let _ = obs.check_anchor(&anchor("é.py", 1, u32::MAX, snippet));
    }
    assert!(obs.check_pointer("cmd#1 exit=-1").is_ok());
}
