//! The three serializations of a prompt view (R2.3): snapshots of each format read by hand,
//! Anthropic's shape and cache breakpoints, pairing of calls and results in every format on
//! random views, robustness on malformed views, determinism.
#![cfg(not(target_arch = "wasm32"))]

use context_workbench::model::{ContentPart, OpaquePart, Role, ToolCall, ToolResult, ToolStatus};
use context_workbench::prompt::serialize::{
    AnthropicOptions, CONTINUED, check_pairing, to_anthropic, to_anthropic_with, to_openai_chat, to_react, tool_input,
    tool_result_text,
};
use context_workbench::prompt::{Layer, PromptMessage, PromptView, ToolSpec};
use expect_test::expect;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Building views

fn msg(role: Role, layer: Layer, content: Vec<ContentPart>) -> PromptMessage {
    PromptMessage { role, content, layer, source: None, replaces: None }
}

fn text(text: &str) -> ContentPart {
    ContentPart::Text { text: text.into() }
}

fn reasoning(text: &str, signature: Option<&str>) -> ContentPart {
    ContentPart::Reasoning { text: text.into(), signature: signature.map(str::to_owned) }
}

fn call(id: &str, name: &str, arguments: &str) -> ContentPart {
    ContentPart::ToolCall(ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() })
}

fn result(id: &str, name: &str, status: ToolStatus, output: &str) -> ToolResult {
    ToolResult { call_id: id.into(), name: name.into(), status, output: output.into(), stderr: None, exit_code: None }
}

fn opaque(block: Value) -> ContentPart {
    let kind = block["type"].as_str().unwrap_or_default().to_owned();
    ContentPart::Opaque(OpaquePart { kind, json: block.to_string(), tokens: 1_600 })
}

fn ok(id: &str, name: &str, output: &str) -> ContentPart {
    ContentPart::ToolResult(result(id, name, ToolStatus::Ok, output))
}

const SIGNATURE: &str = "ErUBCkYIAxgCIkD0n3+/kQ==\\u00e9\u{e9}";

/// System + rules + user + assistant (text, signed reasoning, two parallel calls) + two results
/// (one an error with stderr and an exit code) + a summary in history + a tail user message.
fn sample() -> PromptView {
    let failed = ToolResult {
        stderr: Some("thread 'parser::empty' panicked at src/parser.rs:2:39".into()),
        exit_code: Some(101),
        ..result("c2", "bash", ToolStatus::Error, "test parser::empty ... FAILED")
    };
    PromptView {
        messages: vec![
            msg(Role::System, Layer::System, vec![text("You are a coding agent.")]),
            msg(Role::System, Layer::Rules, vec![text("CODE_LAW.md: run the tests before you finish.")]),
            msg(Role::User, Layer::History, vec![text("The parser fails on empty input; fix it.")]),
            msg(
                Role::Assistant,
                Layer::History,
                vec![
                    reasoning("The empty-input test fails; read the parser and run it.", Some(SIGNATURE)),
                    text("Let me read the parser and run the failing test."),
                    call("c1", "read_file", r#"{"path": "src/parser.rs"}"#),
                    call("c2", "bash", r#"{"command":"cargo test parser::empty"}"#),
                ],
            ),
            msg(Role::Tool, Layer::History, vec![ok("c1", "read_file", "1 fn parse(input: &str) -> Ast {")]),
            msg(Role::Tool, Layer::History, vec![ContentPart::ToolResult(failed)]),
            msg(Role::Summary, Layer::History, vec![text("Earlier: tokenizer.rs was already fixed.")]),
            msg(Role::User, Layer::Tail, vec![text("Plan: [x] read the parser [ ] fix empty input")]),
        ],
        tools: vec![
            ToolSpec {
                name: "read_file".into(),
                description: "Read a file.".into(),
                parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            },
            ToolSpec {
                name: "bash".into(),
                description: "Run a command.".into(),
                parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
            },
        ],
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Snapshots

#[test]
fn openai_snapshot() {
    expect![[r#"
        {
          "messages": [
            {
              "content": "You are a coding agent.",
              "role": "system"
            },
            {
              "content": "CODE_LAW.md: run the tests before you finish.",
              "role": "system"
            },
            {
              "content": "The parser fails on empty input; fix it.",
              "role": "user"
            },
            {
              "content": "Let me read the parser and run the failing test.",
              "role": "assistant",
              "tool_calls": [
                {
                  "function": {
                    "arguments": "{\"path\": \"src/parser.rs\"}",
                    "name": "read_file"
                  },
                  "id": "c1",
                  "type": "function"
                },
                {
                  "function": {
                    "arguments": "{\"command\":\"cargo test parser::empty\"}",
                    "name": "bash"
                  },
                  "id": "c2",
                  "type": "function"
                }
              ]
            },
            {
              "content": "1 fn parse(input: &str) -> Ast {",
              "role": "tool",
              "tool_call_id": "c1"
            },
            {
              "content": "exit code: 101\ntest parser::empty ... FAILED\nstderr:\nthread 'parser::empty' panicked at src/parser.rs:2:39",
              "role": "tool",
              "tool_call_id": "c2"
            },
            {
              "content": "[summary]\nEarlier: tokenizer.rs was already fixed.",
              "role": "user"
            },
            {
              "content": "Plan: [x] read the parser [ ] fix empty input",
              "role": "user"
            }
          ],
          "tools": [
            {
              "function": {
                "description": "Read a file.",
                "name": "read_file",
                "parameters": {
                  "properties": {
                    "path": {
                      "type": "string"
                    }
                  },
                  "type": "object"
                }
              },
              "type": "function"
            },
            {
              "function": {
                "description": "Run a command.",
                "name": "bash",
                "parameters": {
                  "properties": {
                    "command": {
                      "type": "string"
                    }
                  },
                  "type": "object"
                }
              },
              "type": "function"
            }
          ]
        }"#]].assert_eq(&pretty(&to_openai_chat(&sample())));
}

#[test]
fn anthropic_snapshot() {
    expect![[r#"
        {
          "messages": [
            {
              "content": [
                {
                  "text": "The parser fails on empty input; fix it.",
                  "type": "text"
                }
              ],
              "role": "user"
            },
            {
              "content": [
                {
                  "signature": "ErUBCkYIAxgCIkD0n3+/kQ==\\u00e9é",
                  "thinking": "The empty-input test fails; read the parser and run it.",
                  "type": "thinking"
                },
                {
                  "text": "Let me read the parser and run the failing test.",
                  "type": "text"
                },
                {
                  "id": "c1",
                  "input": {
                    "path": "src/parser.rs"
                  },
                  "name": "read_file",
                  "type": "tool_use"
                },
                {
                  "id": "c2",
                  "input": {
                    "command": "cargo test parser::empty"
                  },
                  "name": "bash",
                  "type": "tool_use"
                }
              ],
              "role": "assistant"
            },
            {
              "content": [
                {
                  "content": "1 fn parse(input: &str) -> Ast {",
                  "tool_use_id": "c1",
                  "type": "tool_result"
                },
                {
                  "content": "exit code: 101\ntest parser::empty ... FAILED\nstderr:\nthread 'parser::empty' panicked at src/parser.rs:2:39",
                  "is_error": true,
                  "tool_use_id": "c2",
                  "type": "tool_result"
                },
                {
                  "cache_control": {
                    "type": "ephemeral"
                  },
                  "text": "[summary]\nEarlier: tokenizer.rs was already fixed.",
                  "type": "text"
                },
                {
                  "text": "Plan: [x] read the parser [ ] fix empty input",
                  "type": "text"
                }
              ],
              "role": "user"
            }
          ],
          "system": [
            {
              "cache_control": {
                "type": "ephemeral"
              },
              "text": "You are a coding agent.",
              "type": "text"
            },
            {
              "cache_control": {
                "type": "ephemeral"
              },
              "text": "CODE_LAW.md: run the tests before you finish.",
              "type": "text"
            }
          ],
          "tools": [
            {
              "description": "Read a file.",
              "input_schema": {
                "properties": {
                  "path": {
                    "type": "string"
                  }
                },
                "type": "object"
              },
              "name": "read_file"
            },
            {
              "description": "Run a command.",
              "input_schema": {
                "properties": {
                  "command": {
                    "type": "string"
                  }
                },
                "type": "object"
              },
              "name": "bash"
            }
          ]
        }"#]].assert_eq(&pretty(&to_anthropic(&sample())));
}

#[test]
fn react_snapshot() {
    expect![[r#"
        [system] You are a coding agent.

        [system] CODE_LAW.md: run the tests before you finish.

        [user] The parser fails on empty input; fix it.

        [assistant] Thought: Let me read the parser and run the failing test.
        Action: read_file[{"path": "src/parser.rs"}]
        Action: bash[{"command":"cargo test parser::empty"}]

        [tool] 1 fn parse(input: &str) -> Ast {

        [tool] exit code: 101
        test parser::empty ... FAILED
        stderr:
        thread 'parser::empty' panicked at src/parser.rs:2:39

        [summary] Earlier: tokenizer.rs was already fixed.

        [user] Plan: [x] read the parser [ ] fix empty input"#]]
    .assert_eq(&to_react(&sample()));
}

// ---------------------------------------------------------------------------------------------
// The shared tool-result text

#[test]
fn tool_result_text_rules() {
    let plain = result("c", "t", ToolStatus::Ok, "out");
    assert_eq!(tool_result_text(&plain), "out");
    let with_code = ToolResult { exit_code: Some(2), ..plain.clone() };
    assert_eq!(tool_result_text(&with_code), "exit code: 2\nout");
    let already = ToolResult { output: "exit code: 2\nout".into(), ..with_code.clone() };
    assert_eq!(tool_result_text(&already), "exit code: 2\nout");
    let with_stderr = ToolResult { stderr: Some("boom".into()), ..with_code.clone() };
    assert_eq!(tool_result_text(&with_stderr), "exit code: 2\nout\nstderr:\nboom");
    let empty_stderr = ToolResult { stderr: Some(String::new()), ..plain.clone() };
    assert_eq!(tool_result_text(&empty_stderr), "out");
    let no_output = ToolResult { output: String::new(), stderr: Some("boom".into()), exit_code: Some(-1), ..plain };
    assert_eq!(tool_result_text(&no_output), "exit code: -1\nstderr:\nboom");
}

// ---------------------------------------------------------------------------------------------
// Checking the outputs

fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn array_of<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

/// Every block of the Anthropic form, system first, then messages in order.
fn anthropic_blocks(out: &Value) -> Vec<&Value> {
    let mut blocks: Vec<&Value> = array_of(out, "system").iter().collect();
    for message in array_of(out, "messages") {
        blocks.extend(array_of(message, "content"));
    }
    blocks
}

/// What holds for any view, valid or not: only user/assistant, alternating, user first, no
/// empty content, no blank text block, tool results first in a user message, at most 4 cache
/// breakpoints and none on a thinking block, every thinking block signed.
fn check_anthropic_shape(out: &Value) {
    let messages = array_of(out, "messages");
    if let Some(first) = messages.first() {
        assert_eq!(str_of(first, "role"), "user", "{out}");
    }
    for pair in messages.windows(2) {
        assert_ne!(str_of(&pair[0], "role"), str_of(&pair[1], "role"), "{out}");
    }
    for message in messages {
        let role = str_of(message, "role");
        assert!(role == "user" || role == "assistant", "{out}");
        let content = array_of(message, "content");
        assert!(!content.is_empty(), "{out}");
        let first_other = content.iter().position(|b| str_of(b, "type") != "tool_result").unwrap_or(content.len());
        assert!(content[first_other..].iter().all(|b| str_of(b, "type") != "tool_result"), "{out}");
        for block in content {
            let kind = str_of(block, "type");
            match role {
                "user" => assert!(kind == "text" || kind == "tool_result" || kind == "image", "{out}"),
                _ => assert!(kind == "text" || kind == "thinking" || kind == "tool_use" || kind == "image", "{out}"),
            }
        }
    }
    for block in array_of(out, "system") {
        assert_eq!(str_of(block, "type"), "text", "{out}");
    }
    let blocks = anthropic_blocks(out);
    for block in &blocks {
        match str_of(block, "type") {
            "text" => assert!(!str_of(block, "text").trim().is_empty(), "blank text block in {out}"),
            "thinking" => {
                assert!(!str_of(block, "signature").is_empty(), "{out}");
                assert!(block.get("cache_control").is_none(), "{out}");
            }
            "tool_use" => assert!(block.get("input").is_some_and(Value::is_object), "{out}"),
            _ => {}
        }
    }
    let breakpoints = blocks.iter().filter(|b| b.get("cache_control").is_some()).count();
    assert!(breakpoints <= 4, "{breakpoints} breakpoints in {out}");
}

/// Every tool_use id has its tool_result in the immediately next user message, and every
/// tool_result answers a tool_use of the message right before it.
fn check_anthropic_pairing(out: &Value) {
    let messages = array_of(out, "messages");
    let ids = |message: &Value, kind: &str, key: &str| -> Vec<String> {
        array_of(message, "content")
            .iter()
            .filter(|b| str_of(b, "type") == kind)
            .map(|b| str_of(b, key).to_owned())
            .collect()
    };
    for (index, message) in messages.iter().enumerate() {
        let uses = ids(message, "tool_use", "id");
        let next = messages.get(index + 1);
        for id in &uses {
            let answers = next.map(|n| ids(n, "tool_result", "tool_use_id")).unwrap_or_default();
            assert_eq!(answers.iter().filter(|a| *a == id).count(), 1, "tool_use {id} in {out}");
        }
        let previous = index.checked_sub(1).and_then(|i| messages.get(i));
        for id in ids(message, "tool_result", "tool_use_id") {
            let calls = previous.map(|p| ids(p, "tool_use", "id")).unwrap_or_default();
            assert!(calls.contains(&id), "orphan tool_result {id} in {out}");
        }
    }
}

/// Each thinking block is a signed reasoning part of the view, byte for byte, in order.
fn check_signatures(view: &PromptView, out: &Value) {
    let expected: Vec<(&str, &str)> = view
        .messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(|m| &m.content)
        .filter_map(|p| match p {
            ContentPart::Reasoning { text, signature: Some(s) } if !s.is_empty() => Some((text.as_str(), s.as_str())),
            _ => None,
        })
        .collect();
    let sent: Vec<(&str, &str)> = anthropic_blocks(out)
        .into_iter()
        .filter(|b| str_of(b, "type") == "thinking")
        .map(|b| (str_of(b, "thinking"), str_of(b, "signature")))
        .collect();
    assert_eq!(sent, expected);
}

/// Every `tool_calls[].id` is answered by exactly one of the `tool` messages right after its
/// assistant message, and every `tool` message is in such a run and answers a call of it.
fn check_openai_pairing(out: &Value) {
    let messages = array_of(out, "messages");
    let mut open: Option<Vec<(String, usize)>> = None;
    for message in messages {
        if str_of(message, "role") == "tool" {
            let id = str_of(message, "tool_call_id");
            let calls = open.as_mut().unwrap_or_else(|| panic!("tool message {id} after no call in {out}"));
            let answers = calls.iter_mut().find(|(c, _)| c == id);
            let (_, n) = answers.unwrap_or_else(|| panic!("tool message {id} answers no call in {out}"));
            *n += 1;
            continue;
        }
        if let Some(calls) = open.take() {
            assert!(calls.iter().all(|(_, n)| *n == 1), "{calls:?} in {out}");
        }
        if str_of(message, "role") == "assistant" {
            open = Some(array_of(message, "tool_calls").iter().map(|c| (str_of(c, "id").to_owned(), 0)).collect());
        }
    }
    if let Some(calls) = open {
        assert!(calls.iter().all(|(_, n)| *n == 1), "{calls:?} in {out}");
    }
}

/// The k-th `Action:` of an assistant block is answered by the k-th block after it, a `[tool]`
/// block carrying the call's reference (the random views put `ref-<id>` in both).
fn check_react_pairing(out: &str) {
    let blocks: Vec<&str> = out.split("\n\n").collect();
    let mut actions_seen = 0;
    for (index, block) in blocks.iter().enumerate() {
        let Some(body) = block.strip_prefix("[assistant] ") else { continue };
        let actions: Vec<&str> = body.lines().filter_map(|l| l.strip_prefix("Action: ")).collect();
        for (k, action) in actions.iter().enumerate() {
            actions_seen += 1;
            let answer = blocks.get(index + 1 + k).unwrap_or_else(|| panic!("no answer to {action} in {out}"));
            assert!(answer.starts_with("[tool] "), "{action} answered by {answer} in {out}");
            let reference = action.split('"').find(|s| s.starts_with("ref-")).unwrap_or("no reference");
            assert!(answer.contains(&format!("\"{reference}\"")), "{action} answered by {answer} in {out}");
        }
    }
    let tool_blocks = blocks.iter().filter(|b| b.starts_with("[tool]")).count();
    assert_eq!(tool_blocks, actions_seen, "{out}");
}

// ---------------------------------------------------------------------------------------------
// Anthropic

#[test]
fn anthropic_sample_shape_and_breakpoints() {
    let view = sample();
    let out = to_anthropic(&view);
    check_anthropic_shape(&out);
    check_anthropic_pairing(&out);
    check_signatures(&view, &out);
    // The signature went through byte for byte, escapes and non-ASCII included.
    let thinking = anthropic_blocks(&out).into_iter().find(|b| str_of(b, "type") == "thinking").cloned();
    assert_eq!(str_of(&thinking.unwrap_or_default(), "signature"), SIGNATURE);
    // Breakpoints: end of the System layer, end of the Rules (the last system block), and the
    // summary, the last block before the tail.
    let marked: Vec<String> = anthropic_blocks(&out)
        .into_iter()
        .filter(|b| b.get("cache_control") == Some(&json!({"type": "ephemeral"})))
        .map(|b| str_of(b, "text").to_owned())
        .collect();
    assert_eq!(
        marked,
        [
            "You are a coding agent.",
            "CODE_LAW.md: run the tests before you finish.",
            "[summary]\nEarlier: tokenizer.rs was already fixed."
        ]
    );
}

#[test]
fn anthropic_breakpoints_without_rules_or_tail() {
    let view = PromptView {
        messages: vec![
            msg(Role::System, Layer::System, vec![text("one"), text("two")]),
            msg(Role::User, Layer::Input, vec![text("hi")]),
            msg(Role::Assistant, Layer::History, vec![text("Checking."), call("c1", "ls", "{}")]),
            msg(Role::Tool, Layer::History, vec![ok("c1", "ls", "a.rs")]),
        ],
        tools: Vec::new(),
    };
    let out = to_anthropic(&view);
    check_anthropic_shape(&out);
    let marked: Vec<&Value> = anthropic_blocks(&out).into_iter().filter(|b| b.get("cache_control").is_some()).collect();
    assert_eq!(marked.len(), 2, "{out}");
    assert_eq!(str_of(marked[0], "text"), "two");
    assert_eq!(str_of(marked[1], "tool_use_id"), "c1");
    assert!(out.get("tools").is_none());

    // A tail right after the system: no conversation breakpoint; a thinking block is skipped.
    let view = PromptView {
        messages: vec![
            msg(Role::User, Layer::History, vec![text("go")]),
            msg(Role::Assistant, Layer::History, vec![text("ok"), reasoning("hm", Some("sig"))]),
            msg(Role::System, Layer::Tail, vec![text("Todo: 1 left")]),
        ],
        tools: Vec::new(),
    };
    let out = to_anthropic(&view);
    check_anthropic_shape(&out);
    assert!(out.get("system").is_none());
    let marked: Vec<&Value> = anthropic_blocks(&out).into_iter().filter(|b| b.get("cache_control").is_some()).collect();
    assert_eq!(marked.len(), 1, "{out}");
    assert_eq!(str_of(marked[0], "text"), "ok");
    let last = array_of(&out, "messages").last().cloned().unwrap_or_default();
    assert_eq!(last, json!({"role": "user", "content": [{"type": "text", "text": "[system]\nTodo: 1 left"}]}));
}

#[test]
fn anthropic_edge_cases() {
    let view = PromptView {
        messages: vec![
            msg(
                Role::Assistant,
                Layer::History,
                vec![
                    reasoning("unsigned", None),
                    reasoning("empty signature", Some("")),
                    text("  \n"),
                    call("a", "t", "[1, 2]"),
                    call("b", "t", "not json"),
                    call("c", "t", " "),
                ],
            ),
            msg(Role::Tool, Layer::History, vec![ok("a", "t", ""), ok("b", "t", "x"), ok("c", "t", "y")]),
            // An archived summary sent as a system message (R4.1) in history.
            msg(Role::System, Layer::History, vec![text("Summary of rounds 1-9.")]),
            // An orphan result: still sent.
            msg(Role::Tool, Layer::History, vec![ok("zz", "t", "late")]),
            msg(Role::User, Layer::Input, vec![text(""), text("next")]),
        ],
        tools: Vec::new(),
    };
    assert!(check_pairing(&view).is_err());
    let out = to_anthropic(&view);
    check_anthropic_shape(&out);
    expect![[r#"
        [
          {
            "content": [
              {
                "text": "(continued)",
                "type": "text"
              }
            ],
            "role": "user"
          },
          {
            "content": [
              {
                "id": "a",
                "input": {
                  "_raw": "[1, 2]"
                },
                "name": "t",
                "type": "tool_use"
              },
              {
                "id": "b",
                "input": {
                  "_raw": "not json"
                },
                "name": "t",
                "type": "tool_use"
              },
              {
                "id": "c",
                "input": {},
                "name": "t",
                "type": "tool_use"
              }
            ],
            "role": "assistant"
          },
          {
            "content": [
              {
                "tool_use_id": "a",
                "type": "tool_result"
              },
              {
                "content": "x",
                "tool_use_id": "b",
                "type": "tool_result"
              },
              {
                "content": "y",
                "tool_use_id": "c",
                "type": "tool_result"
              },
              {
                "content": "late",
                "tool_use_id": "zz",
                "type": "tool_result"
              },
              {
                "text": "[system]\nSummary of rounds 1-9.",
                "type": "text"
              },
              {
                "cache_control": {
                  "type": "ephemeral"
                },
                "text": "next",
                "type": "text"
              }
            ],
            "role": "user"
          }
        ]"#]]
    .assert_eq(&pretty(&out["messages"]));
    assert_eq!(array_of(&out, "messages")[0]["content"][0]["text"], CONTINUED);
}

#[test]
fn tool_input_forms() {
    assert_eq!(tool_input(r#"{"a": [1, {"b": null}]}"#), json!({"a": [1, {"b": null}]}));
    assert_eq!(tool_input(""), json!({}));
    assert_eq!(tool_input("\"s\""), json!({"_raw": "\"s\""}));
    assert_eq!(tool_input("{"), json!({"_raw": "{"}));
    let deep = "[".repeat(100_000);
    assert_eq!(tool_input(&deep), json!({"_raw": deep}));
}

// ---------------------------------------------------------------------------------------------
// OpenAI and ReAct details

#[test]
fn openai_details() {
    let view = PromptView {
        messages: vec![
            msg(Role::User, Layer::Input, vec![text("a"), text(" "), text("b")]),
            msg(Role::Assistant, Layer::History, vec![reasoning("only thinking", Some("s"))]),
            msg(Role::Assistant, Layer::History, vec![reasoning("why", None), call("c1", "ls", "")]),
            msg(Role::Tool, Layer::History, vec![ok("c1", "ls", "a.rs"), text("note")]),
            msg(Role::Tool, Layer::History, vec![text("stray")]),
        ],
        tools: Vec::new(),
    };
    expect![[r#"
        {
          "messages": [
            {
              "content": "a\nb",
              "role": "user"
            },
            {
              "content": null,
              "role": "assistant",
              "tool_calls": [
                {
                  "function": {
                    "arguments": "",
                    "name": "ls"
                  },
                  "id": "c1",
                  "type": "function"
                }
              ]
            },
            {
              "content": "a.rs\nnote",
              "role": "tool",
              "tool_call_id": "c1"
            },
            {
              "content": "stray",
              "role": "user"
            }
          ]
        }"#]]
    .assert_eq(&pretty(&to_openai_chat(&view)));
}

#[test]
fn react_details() {
    // Results in another order than the calls are written in call order; the reasoning is the
    // thought when there is no text; an orphan result comes after the answered ones.
    let view = PromptView {
        messages: vec![
            msg(
                Role::Assistant,
                Layer::History,
                vec![reasoning("think", None), call("1", "A", "{}"), call("2", "B", "")],
            ),
            msg(Role::Tool, Layer::History, vec![ok("x", "C", "orphan"), ok("2", "B", "bee")]),
            msg(Role::Tool, Layer::History, vec![ok("1", "A", "ay")]),
            msg(Role::Assistant, Layer::History, vec![call("3", "Finish", "done")]),
            msg(Role::Tool, Layer::History, vec![ok("3", "Finish", "")]),
        ],
        tools: Vec::new(),
    };
    expect![[r#"
        [assistant] Thought: think
        Action: A[{}]
        Action: B[]

        [tool] ay

        [tool] bee

        [tool] orphan

        [assistant] Action: Finish[done]

        [tool]"#]]
    .assert_eq(&to_react(&view));
}

// ---------------------------------------------------------------------------------------------
// check_pairing

#[test]
fn check_pairing_finds_each_violation() {
    let assistant = |calls: Vec<ContentPart>| msg(Role::Assistant, Layer::History, calls);
    let tool = |parts: Vec<ContentPart>| msg(Role::Tool, Layer::History, parts);
    let user = msg(Role::User, Layer::History, vec![text("u")]);
    let view = |messages: Vec<PromptMessage>| PromptView { messages, tools: Vec::new() };
    assert_eq!(check_pairing(&sample()), Ok(()));
    assert_eq!(check_pairing(&PromptView::default()), Ok(()));
    let cases = [
        (vec![assistant(vec![call("a", "t", "")])], "message 0: call `a` has no result in the tool messages after it"),
        (
            vec![assistant(vec![call("a", "t", "")]), user.clone(), tool(vec![ok("a", "t", "")])],
            "message 0: call `a` has no result in the tool messages after it",
        ),
        (
            vec![user.clone(), tool(vec![ok("a", "t", "")])],
            "message 1: result for call `a` follows no assistant message",
        ),
        (
            vec![assistant(vec![call("a", "t", "")]), tool(vec![ok("a", "t", ""), ok("b", "t", "")])],
            "message 1: result for call `b` answers no call of message 0",
        ),
        (
            vec![assistant(vec![call("a", "t", "")]), tool(vec![ok("a", "t", "")]), tool(vec![ok("a", "t", "")])],
            "message 2: second result for call `a`",
        ),
        (
            vec![assistant(vec![call("a", "t", ""), call("a", "t", "")]), tool(vec![ok("a", "t", "")])],
            "message 0: call id `a` used twice",
        ),
        (
            vec![msg(Role::User, Layer::Input, vec![ok("a", "t", "")])],
            "message 0: result for call `a` in a user message",
        ),
        (
            vec![msg(Role::System, Layer::Tail, vec![call("a", "t", "")])],
            "message 0: tool call `a` in a system message",
        ),
        (vec![tool(vec![call("a", "t", "")])], "message 0: tool call `a` in a tool message"),
    ];
    for (messages, error) in cases {
        assert_eq!(check_pairing(&view(messages)), Err(error.to_owned()));
    }
}

// ---------------------------------------------------------------------------------------------
// Random views

/// A small seeded generator (64-bit LCG, high bits), so every run sees the same views.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

const WORDS: &[&str] = &["fix", "the parser", "  ", "", "line one\nline two", "é ü ∑", "Action: not one", "{\"a\":1}"];

/// A random valid view: system and rules, rounds of a user message and assistant steps with
/// parallel calls whose results come back in any order, spread over tool messages, archived
/// summaries (as `Summary` or `System`), an input and a tail.
fn random_valid(rng: &mut Rng) -> PromptView {
    let mut messages = Vec::new();
    for _ in 0..rng.below(3) {
        messages.push(msg(Role::System, Layer::System, vec![text(&format!("system {}", rng.next()))]));
    }
    if rng.chance(50) {
        messages.push(msg(Role::System, Layer::Rules, vec![text("rules"), text(rng.pick(WORDS))]));
    }
    let mut next_id = 0;
    for _ in 0..rng.below(7) {
        if rng.chance(15) {
            let role = if rng.chance(50) { Role::Summary } else { Role::System };
            messages.push(msg(role, Layer::History, vec![text(&format!("summary {}", rng.next()))]));
        }
        if rng.chance(75) {
            messages.push(msg(Role::User, Layer::History, vec![text(rng.pick(WORDS))]));
        }
        for _ in 0..1 + rng.below(3) {
            let mut content = Vec::new();
            if rng.chance(40) {
                let signature = match rng.below(3) {
                    0 => None,
                    1 => Some(format!("sig+/={}\u{1F600}", rng.next())),
                    _ => Some(String::new()),
                };
                content.push(ContentPart::Reasoning { text: rng.pick(WORDS).into(), signature });
            }
            if rng.chance(60) {
                content.push(text(rng.pick(WORDS)));
            }
            let mut results = Vec::new();
            for _ in 0..rng.below(4) {
                next_id += 1;
                let id = format!("call{next_id}");
                let arguments = match rng.below(3) {
                    0 => format!("{{\"ref\": \"ref-{id}\"}}"),
                    1 => format!("{{\"ref\":\"ref-{id}\",\"n\":[1,2]}}"),
                    _ => format!("\"ref-{id}\""),
                };
                content.push(call(&id, rng.pick(&["bash", "read_file", "grep"]), &arguments));
                let mut r = result(
                    &id,
                    "t",
                    if rng.chance(30) { ToolStatus::Error } else { ToolStatus::Ok },
                    &format!("{{\"status\": \"success\", \"data\": \"ref-{id}\"}}"),
                );
                if rng.chance(30) {
                    r.stderr = Some(rng.pick(WORDS).into());
                }
                if rng.chance(30) {
                    r.exit_code = Some(rng.below(3) as i32 - 1);
                }
                results.push(ContentPart::ToolResult(r));
            }
            messages.push(msg(Role::Assistant, Layer::History, content));
            rng.shuffle(&mut results);
            let mut parts = Vec::new();
            for r in results {
                parts.push(r);
                if rng.chance(50) {
                    messages.push(msg(Role::Tool, Layer::History, std::mem::take(&mut parts)));
                }
            }
            if !parts.is_empty() {
                messages.push(msg(Role::Tool, Layer::History, parts));
            }
        }
    }
    if rng.chance(50) {
        messages.push(msg(Role::User, Layer::Input, vec![text(rng.pick(WORDS))]));
    }
    for _ in 0..rng.below(3) {
        let role = if rng.chance(50) { Role::User } else { Role::System };
        messages.push(msg(role, Layer::Tail, vec![text(&format!("tail {}", rng.next()))]));
    }
    PromptView { messages, tools: Vec::new() }
}

#[test]
fn every_format_keeps_pairing_on_random_views() {
    let mut rng = Rng(0x5eed_0001);
    let mut calls_seen = 0;
    for _ in 0..500 {
        let view = random_valid(&mut rng);
        assert_eq!(check_pairing(&view), Ok(()), "{view:?}");
        let calls = view.messages.iter().flat_map(|m| &m.content).filter(|p| matches!(p, ContentPart::ToolCall(_)));
        let calls = calls.count();
        calls_seen += calls;

        let openai = to_openai_chat(&view);
        check_openai_pairing(&openai);
        let tool_messages = array_of(&openai, "messages").iter().filter(|m| str_of(m, "role") == "tool").count();
        assert_eq!(tool_messages, calls);
        // System messages only lead: many servers' chat templates refuse one later on.
        let roles: Vec<&str> = array_of(&openai, "messages").iter().map(|m| str_of(m, "role")).collect();
        let leading = roles.iter().take_while(|&&r| r == "system").count();
        assert!(!roles[leading..].contains(&"system"), "{roles:?}");

        let anthropic = to_anthropic(&view);
        check_anthropic_shape(&anthropic);
        check_anthropic_pairing(&anthropic);
        check_signatures(&view, &anthropic);
        let blocks = anthropic_blocks(&anthropic);
        assert_eq!(blocks.iter().filter(|b| str_of(b, "type") == "tool_use").count(), calls);
        assert_eq!(blocks.iter().filter(|b| str_of(b, "type") == "tool_result").count(), calls);

        check_react_pairing(&to_react(&view));
    }
    assert!(calls_seen > 1000, "{calls_seen} calls");
}

/// A random view with no regard for the invariant: any role, layer and parts, ids reused.
fn random_malformed(rng: &mut Rng) -> PromptView {
    let roles = [Role::System, Role::User, Role::Assistant, Role::Tool, Role::Summary];
    let layers = [Layer::System, Layer::Rules, Layer::History, Layer::Input, Layer::Tail];
    let mut messages = Vec::new();
    for _ in 0..rng.below(12) {
        let role = roles[rng.below(5) as usize];
        let layer = layers[rng.below(5) as usize];
        let mut content = Vec::new();
        for _ in 0..rng.below(5) {
            let id = rng.pick(&["a", "b", "c", ""]);
            content.push(match rng.below(6) {
                5 => opaque(json!({"type": "image", "source": {"data": rng.pick(WORDS)}})),
                0 => text(rng.pick(WORDS)),
                1 => reasoning(rng.pick(WORDS), if rng.chance(50) { Some("s") } else { None }),
                2 => call(id, rng.pick(WORDS), rng.pick(WORDS)),
                3 => ok(id, "t", rng.pick(WORDS)),
                _ => ContentPart::ToolResult(ToolResult {
                    stderr: Some(rng.pick(WORDS).into()),
                    exit_code: Some(i32::MIN),
                    ..result(id, "t", ToolStatus::Error, rng.pick(WORDS))
                }),
            });
        }
        messages.push(msg(role, layer, content));
    }
    PromptView { messages, tools: Vec::new() }
}

#[test]
fn malformed_views_never_panic_and_stay_well_formed() {
    let mut rng = Rng(42);
    for _ in 0..2000 {
        let view = random_malformed(&mut rng);
        let _ = check_pairing(&view);
        let openai = to_openai_chat(&view);
        for message in array_of(&openai, "messages") {
            let role = str_of(message, "role");
            assert!(["system", "user", "assistant", "tool"].contains(&role), "{openai}");
            if role == "assistant" {
                let content = &message["content"];
                assert!(content.is_string() || content.is_array() || message.get("tool_calls").is_some(), "{openai}");
            }
        }
        let anthropic = to_anthropic(&view);
        check_anthropic_shape(&anthropic);
        check_signatures(&view, &anthropic);
        let in_place = to_anthropic_with(&view, AnthropicOptions { system_messages: true });
        let roles: Vec<&str> = array_of(&in_place, "messages").iter().map(|m| str_of(m, "role")).collect();
        assert!(roles.first().is_none_or(|r| *r == "user") && roles.windows(2).all(|w| w[0] != w[1]), "{in_place}");
        let _ = to_react(&view);
        if check_pairing(&view).is_ok() {
            check_openai_pairing(&openai);
            check_anthropic_pairing(&anthropic);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Determinism

#[test]
fn same_view_same_bytes() {
    let mut rng = Rng(7);
    let mut views = vec![sample()];
    views.extend((0..50).map(|_| random_valid(&mut rng)));
    for view in views {
        let copy = view.clone();
        assert_eq!(to_openai_chat(&view).to_string(), to_openai_chat(&copy).to_string());
        assert_eq!(to_anthropic(&view).to_string(), to_anthropic(&copy).to_string());
        assert_eq!(to_react(&view), to_react(&copy));
        let round_trip: PromptView =
            serde_json::from_str(&serde_json::to_string(&view).unwrap_or_default()).unwrap_or_default();
        assert_eq!(to_anthropic(&round_trip).to_string(), to_anthropic(&view).to_string());
    }
}

// ---------------------------------------------------------------------------------------------
// Opaque parts and system messages in place (what the proxy sends)

#[test]
fn opaque_parts_go_back_as_they_came() {
    let image = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}});
    let redacted = json!({"type": "redacted_thinking", "data": "EmwKAhgB"});
    let view = PromptView {
        messages: vec![
            msg(Role::System, Layer::System, vec![text("sys")]),
            msg(Role::User, Layer::History, vec![text("look"), opaque(image.clone())]),
            msg(Role::System, Layer::History, vec![text("# Environment")]),
            msg(Role::Assistant, Layer::History, vec![opaque(redacted.clone()), call("c1", "Read", "{}")]),
            msg(Role::Tool, Layer::History, vec![ok("c1", "Read", "a picture:"), opaque(image.clone())]),
        ],
        tools: Vec::new(),
    };
    let out = to_anthropic(&view);
    let messages = array_of(&out, "messages");
    assert_eq!(messages[0]["content"][1], image);
    assert_eq!(messages[0]["content"][2], json!({"type": "text", "text": "[system]\n# Environment"}));
    assert_eq!(messages[1]["content"][0], redacted);
    assert_eq!(
        messages[2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "c1", "content": [{"type": "text", "text": "a picture:"}, image], "cache_control": {"type": "ephemeral"}})
    );
    let in_place = to_anthropic_with(&view, AnthropicOptions { system_messages: true });
    let roles: Vec<&str> = array_of(&in_place, "messages").iter().map(|m| str_of(m, "role")).collect();
    assert_eq!(roles, ["user", "system", "assistant", "user"]);
    assert_eq!(in_place["messages"][1]["content"], json!([{"type": "text", "text": "# Environment"}]));

    let openai = to_openai_chat(&view);
    let messages = array_of(&openai, "messages");
    assert_eq!(messages[1]["content"], json!([{"type": "text", "text": "look"}, image]));
    assert_eq!(messages[3]["content"], json!([redacted]));
    assert_eq!(messages[4]["content"], json!([{"type": "text", "text": "a picture:"}, image]));
    assert!(to_react(&view).contains("[tool] a picture:"));
}
