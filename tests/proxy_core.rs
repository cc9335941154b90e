//! The proxy's core against the in-memory host: reading requests of both formats, the
//! upstream's bodies, sessions call by call, and replies streamed in any pieces.

use serde_json::{Value, json};

use context_workbench::config::Config;
use context_workbench::engine::Engine;
use context_workbench::host::{
    Completion, CompletionRequest, DirEntry, FileContent, FileStat, Host, HostError, HostErrorKind, block_on,
};
use context_workbench::model::{ContentPart, Role, ToolStatus};
use context_workbench::proxy::*;
use context_workbench::tokens::{Encoding, TokenCounter};
use context_workbench_testing::TestHost;

fn counter() -> TokenCounter {
    TokenCounter::new(Encoding::O200kBase)
}

fn parse(format: Format, body: &Value) -> ClientRequest {
    ClientRequest::parse(format, body.to_string().as_bytes(), &counter()).unwrap()
}

fn refused(format: Format, body: &[u8]) -> String {
    ClientRequest::parse(format, body, &counter()).unwrap_err().message
}

/// A Claude Code request of `messages` (its shape as captured from Claude Code 2.1).
fn claude_code(messages: Value) -> Value {
    json!({
        "model": "claude-opus-5-5",
        "messages": messages,
        "system": [
            {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1"},
            {"type": "text", "text": "You are a Claude agent.", "cache_control": {"type": "ephemeral", "ttl": "1h"}},
        ],
        "tools": [{"name": "Bash", "description": "Run a command", "input_schema": {"type": "object"}}],
        "metadata": {"user_id": "{\"device_id\":\"d\",\"account_uuid\":\"\",\"session_id\":\"2e0bab17\"}"},
        "max_tokens": 128000,
        "thinking": {"type": "adaptive", "display": "omitted"},
        "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
        "stream": true,
    })
}

fn first_turns() -> Vec<Value> {
    vec![
        json!({"role": "user", "content": [{"type": "text", "text": "<system-reminder>git status</system-reminder>"}, {"type": "text", "text": "fix the test"}]}),
        json!({"role": "system", "content": [{"type": "text", "text": "# Environment", "cache_control": {"type": "ephemeral"}}]}),
    ]
}

fn tool_turn(n: usize) -> [Value; 2] {
    [
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "", "signature": format!("sig-{n}==")},
            {"type": "text", "text": format!("Step {n}.")},
            {"type": "tool_use", "id": format!("toolu_{n}"), "name": "Bash", "input": {"description": "run", "command": format!("echo {n}")}},
        ]}),
        json!({"role": "user", "content": [{"tool_use_id": format!("toolu_{n}"), "type": "tool_result", "content": format!("out {n}"), "is_error": n % 3 == 2}]}),
    ]
}

fn history(turns: usize) -> Value {
    let mut messages = first_turns();
    for n in 0..turns {
        messages.extend(tool_turn(n));
    }
    Value::Array(messages)
}

fn session() -> ProxySession<TestHost> {
    let (engine, _) =
        block_on(Engine::open(TestHost::default(), session_config(Config::default(), false), Some("s1"))).unwrap();
    ProxySession::new(engine, Format::Anthropic).unwrap()
}

#[test]
fn claude_code_requests_read_into_the_engines_model() {
    let mut messages = history(1).as_array().cloned().unwrap();
    messages.push(json!({"role": "assistant", "content": [
        {"type": "redacted_thinking", "data": "opaque=="},
        {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"query": "x"}},
        {"type": "text", "text": "Looking."},
    ]}));
    messages.push(json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_9", "content": [{"type": "text", "text": "a picture:"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}}]},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}, "cache_control": {"type": "ephemeral"}},
        {"type": "mystery_block", "payload": 1},
        {"type": "text", "text": "and this?"},
    ]}));
    let request = parse(Format::Anthropic, &claude_code(Value::Array(messages)));
    assert_eq!(request.agent_session.as_deref(), Some("2e0bab17"));
    assert_eq!(request.system_text, "x-anthropic-billing-header: cc_version=2.1\nYou are a Claude agent.");
    assert_eq!(request.cache_control, Some(json!({"type": "ephemeral", "ttl": "1h"})));
    assert!(request.system_messages);
    assert_eq!(request.tools.len(), 1);
    let roles: Vec<Vec<Role>> =
        request.messages.iter().map(|m| m.drafts.iter().filter_map(|d| d.role).collect()).collect();
    assert_eq!(
        roles,
        [
            vec![Role::User],
            vec![Role::System],
            vec![Role::Assistant],
            vec![Role::Tool],
            vec![Role::Assistant],
            vec![Role::Tool, Role::User]
        ]
    );
    let assistant = &request.messages[2].drafts[0].content;
    assert_eq!(assistant[0], ContentPart::Reasoning { text: String::new(), signature: Some("sig-0==".into()) });
    let ContentPart::ToolCall(call) = &assistant[2] else { panic!("{assistant:?}") };
    assert_eq!((call.name.as_str(), call.arguments.as_str()), ("Bash", r#"{"command":"echo 0","description":"run"}"#));
    let ContentPart::ToolResult(result) = &request.messages[3].drafts[0].content[0] else { panic!() };
    assert_eq!((result.name.as_str(), result.output.as_str(), result.status), ("Bash", "out 0", ToolStatus::Ok));
    assert_eq!(request.messages[3].drafts[0].tool_call_id.as_ref().map(|id| id.as_str()), Some("toolu_0"));
    let kinds = |content: &[ContentPart]| -> Vec<String> {
        content
            .iter()
            .map(|p| match p {
                ContentPart::Opaque(o) => o.kind.clone(),
                ContentPart::Text { .. } => "text".into(),
                ContentPart::ToolResult(_) => "result".into(),
                other => format!("{other:?}"),
            })
            .collect()
    };
    assert_eq!(kinds(&request.messages[4].drafts[0].content)[..2], ["redacted_thinking", "server_tool_use"]);
    assert_eq!(kinds(&request.messages[5].drafts[0].content), ["result", "image"]);
    assert_eq!(kinds(&request.messages[5].drafts[1].content), ["image", "mystery_block", "text"]);
    let ContentPart::Opaque(image) = &request.messages[5].drafts[1].content[0] else { panic!() };
    assert_eq!(image.tokens, 1_600);
    assert!(!image.json.contains("cache_control"), "{}", image.json);
}

#[test]
fn malformed_requests_are_refused_with_what_is_wrong() {
    let cases: [(&[u8], &str); 6] = [
        (b"{\"messages\": [", "the body is not JSON"),
        (b"[1, 2]", "the body is JSON but not an object"),
        (b"{\"model\": \"m\"}", "`messages` is missing"),
        (b"{\"messages\": []}", "`messages` is empty"),
        (br#"{"messages": [{"role": "user", "content": [{"text": "x"}]}]}"#, "messages[0].content[0] has no `type`"),
        (br#"{"messages": [{"role": "user", "content": [{"type": "tool_result"}]}]}"#, "needs a `tool_use_id`"),
    ];
    for (body, expected) in cases {
        let message = refused(Format::Anthropic, body);
        assert!(message.contains(expected), "{message}");
    }
    assert!(refused(Format::OpenAi, br#"{"messages": [{"role": "tool", "content": "x"}]}"#).contains("tool_call_id"));
    let legacy = ClientRequest::parse(
        Format::OpenAi,
        br#"{"messages": [{"role": "function", "name": "f", "content": "x"}]}"#,
        &counter(),
    );
    let legacy = legacy.unwrap_err();
    assert!(legacy.pass_through && legacy.message.contains("the role `function`"), "{legacy:?}");
    assert!(
        refused(Format::Anthropic, br#"{"messages": [{"role": "user", "content": "x"}], "stream": "yes"}"#)
            .starts_with("`stream`")
    );
}

#[test]
fn the_upstream_body_keeps_the_agents_fields_and_marks_the_stable_prefix() {
    let mut session = session();
    let body = claude_code(history(2));
    let request = parse(Format::Anthropic, &body);
    let prepared = block_on(session.prepare(&request));
    let sent: Value = serde_json::from_str(prepared.body.as_deref().unwrap()).unwrap();
    for field in ["model", "tools", "metadata", "max_tokens", "thinking", "context_management", "stream"] {
        assert_eq!(sent[field], body[field], "{field}");
    }
    let keys: Vec<&str> = sent.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys.len(), body.as_object().unwrap().len());
    // The agent's system blocks as they came, the breakpoint on the last one, with its TTL.
    assert_eq!(sent["system"][0], json!({"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1"}));
    assert_eq!(sent["system"][1]["cache_control"], json!({"type": "ephemeral", "ttl": "1h"}));
    // The system message stays a system message, signatures byte-exact, results paired.
    let roles: Vec<&str> = sent["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "system", "assistant", "user", "assistant", "user"]);
    assert_eq!(sent["messages"][2]["content"][0], json!({"type": "thinking", "thinking": "", "signature": "sig-0=="}));
    assert_eq!(sent["messages"][5]["content"][0]["is_error"], json!(null));
    let text = sent.to_string();
    assert!(text.matches("cache_control").count() <= MAX_BREAKPOINTS);
    assert_eq!(text.matches("\"ttl\":\"1h\"").count(), text.matches("cache_control").count());
    assert!(prepared.record.managed && prepared.record.prompt_tokens > 0);
}

#[test]
fn agent_breakpoints_on_tools_give_way_to_the_engines() {
    let mut body = claude_code(history(1));
    body["tools"] = json!([
        {"name": "A", "input_schema": {}, "cache_control": {"type": "ephemeral"}},
        {"name": "B", "input_schema": {}, "cache_control": {"type": "ephemeral"}},
        {"name": "C", "input_schema": {}, "cache_control": {"type": "ephemeral"}},
    ]);
    let request = parse(Format::Anthropic, &body);
    let sent: Value = serde_json::from_str(&block_on(session().prepare(&request)).body.unwrap()).unwrap();
    let on_tools: Vec<bool> =
        sent["tools"].as_array().unwrap().iter().map(|t| t.get("cache_control").is_some()).collect();
    assert_eq!(sent.to_string().matches("cache_control").count(), MAX_BREAKPOINTS);
    assert_eq!(on_tools, [false, true, true], "the agent's latest tool breakpoints stay while there is room");
}

#[test]
fn a_session_records_only_what_is_new_and_the_reply_the_agent_kept() {
    let mut session = session();
    let first = parse(Format::Anthropic, &claude_code(history(1)));
    let prepared = block_on(session.prepare(&first));
    assert_eq!((prepared.record.messages, prepared.record.new_messages), (4, 4));
    let reply = ReplyOutcome {
        completed: true,
        parts: vec![ContentPart::Text { text: "Step 1.".into() }],
        usage: Some(ProviderUsage {
            input_tokens: 10,
            cache_read_tokens: 90,
            cache_write_tokens: 5,
            cache_write_1h_tokens: 0,
            output_tokens: 3,
        }),
        ..ReplyOutcome::default()
    };
    let record = block_on(session.finish(200, reply));
    assert_eq!(record.usage.map(|u| u.prompt_tokens()), Some(105));
    assert_eq!(session.engine().last_usage().map(|u| (u.prompt_tokens, u.cached_tokens)), Some((105, 90)));
    assert_eq!(session.engine().trace().messages.len(), 4, "the reply waits for the agent's copy");

    // A retry of the same request records nothing.
    assert_eq!(session.extension(&first), Extension::Repeats);
    block_on(session.prepare(&first));
    block_on(session.finish(200, ReplyOutcome::default()));
    assert_eq!(session.engine().trace().messages.len(), 4);

    let second = parse(Format::Anthropic, &claude_code(history(3)));
    assert_eq!(session.extension(&second), Extension::Extends { from: 4 });
    let prepared = block_on(session.prepare(&second));
    assert_eq!(prepared.record.new_messages, 4);
    assert_eq!(session.engine().trace().messages.len(), 8);
    // A reply cut short is never recorded; a completed one is, when the session closes.
    block_on(session.finish(200, ReplyOutcome { completed: false, ..ReplyOutcome::default() }));
    block_on(session.close()).unwrap();
    assert_eq!(session.engine().trace().messages.len(), 8);
    // What a resume needs is in the trace's metadata, which crosses to JavaScript: no number
    // there may pass 2^53 (the message fingerprints are 64-bit hashes).
    let metadata = serde_json::to_value(&session.engine().trace().metadata).unwrap();
    assert!(js_safe(&metadata), "{metadata}");

    // The agent compacted its history: another session's.
    let compacted = parse(Format::Anthropic, &claude_code(json!([{"role": "user", "content": "summary of it all"}])));
    assert_eq!(session.extension(&compacted), Extension::Departs { at: 0 });
    let calls = block_on(session.engine().host().read_file(".trace/s1/calls.jsonl")).unwrap().text;
    let lines: Vec<Value> = calls.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["usage"]["cache_read_tokens"], json!(90));
    assert_eq!(lines[2]["completed"], json!(false));
}

#[test]
fn a_prepared_call_is_saved_once_it_is_on_its_way_or_at_its_reply() {
    // The calls the trace on disk counts (none before its first save).
    let saved_calls = |session: &ProxySession<TestHost>| {
        block_on(session.engine().host().read_file(".trace/s1/meta.json"))
            .map_or(0, |meta| serde_json::from_str::<Value>(&meta.text).unwrap()["calls"].as_u64().unwrap())
    };
    let mut session = session();
    block_on(session.prepare(&parse(Format::Anthropic, &claude_code(history(1)))));
    assert_eq!(saved_calls(&session), 0, "the prompt goes upstream before the session is saved");
    block_on(session.save());
    assert_eq!(saved_calls(&session), 1);
    block_on(session.prepare(&parse(Format::Anthropic, &claude_code(history(3)))));
    assert_eq!(saved_calls(&session), 1);
    // Not saved by the time its reply comes: the reply saves it before recording the call.
    let record = block_on(session.finish(200, ReplyOutcome::default()));
    assert_eq!(saved_calls(&session), 2);
    assert!(record.notes.iter().all(|n| !n.contains("not saved")), "{:?}", record.notes);
}

/// Whether every number in `value` is exact in JavaScript.
fn js_safe(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.as_u64().is_none_or(|n| n <= 1 << 53) && n.as_i64().is_none_or(|n| n.abs() <= 1 << 53),
        Value::Array(items) => items.iter().all(js_safe),
        Value::Object(map) => map.values().all(js_safe),
        _ => true,
    }
}

#[test]
fn the_last_completed_reply_is_recorded_when_the_session_closes() {
    let mut session = session();
    block_on(session.prepare(&parse(Format::Anthropic, &claude_code(history(0)))));
    let parts = vec![ContentPart::Text { text: "All done.".into() }];
    block_on(session.finish(200, ReplyOutcome { completed: true, parts, ..ReplyOutcome::default() }));
    block_on(session.close()).unwrap();
    let trace = session.engine().trace();
    assert_eq!(trace.messages.last().map(|m| (m.role, m.description.as_str())), Some((Role::Assistant, "All done.")));
}

#[test]
fn the_prefix_sent_upstream_stays_byte_identical_between_calls() {
    let mut session = session();
    let mut previous: Option<String> = None;
    for turns in 1..12 {
        let request = parse(Format::Anthropic, &claude_code(history(turns)));
        let prepared = block_on(session.prepare(&request));
        block_on(session.finish(200, ReplyOutcome::default()));
        let sent: Value = serde_json::from_str(&prepared.body.unwrap()).unwrap();
        let mut messages = sent["messages"].clone();
        strip_breakpoints(&mut messages);
        let messages = messages.as_array().unwrap().clone();
        // Everything but the last user turn (which carries the engine's tail) is the next prefix.
        let prefix = serde_json::to_string(&messages[..messages.len() - 1]).unwrap();
        if let Some(before) = &previous {
            assert!(prefix.starts_with(&before[..before.len() - 1]), "call {turns}");
        }
        previous = Some(prefix);
    }
}

fn strip_breakpoints(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            fields.remove("cache_control");
            fields.values_mut().for_each(strip_breakpoints);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_breakpoints),
        _ => {}
    }
}

#[test]
fn openai_requests_round_trip_through_the_engine() {
    let body = json!({
        "model": "gpt-5",
        "messages": [
            {"role": "developer", "content": "You are terse."},
            {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{\"path\": \"a.rs\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "fn main() {}"},
        ],
        "tools": [{"type": "function", "function": {"name": "read", "description": "Read a file", "parameters": {"type": "object"}}}],
        "stream": true,
        "stream_options": {"include_usage": true},
        "temperature": 0.2,
    });
    let request = parse(Format::OpenAi, &body);
    assert_eq!((request.system_text.as_str(), request.system_role.as_deref()), ("You are terse.", Some("developer")));
    assert!(!request.is_side_call());
    let (engine, _) = block_on(Engine::open(TestHost::default(), Config::default(), Some("o1"))).unwrap();
    let mut session = ProxySession::new(engine, Format::OpenAi).unwrap();
    let sent: Value = serde_json::from_str(&block_on(session.prepare(&request)).body.unwrap()).unwrap();
    for field in ["model", "tools", "stream", "stream_options", "temperature"] {
        assert_eq!(sent[field], body[field], "{field}");
    }
    assert_eq!(sent["messages"][0], json!({"role": "developer", "content": "You are terse."}));
    assert_eq!(sent["messages"][1]["content"][1], body["messages"][1]["content"][1]);
    assert_eq!(sent["messages"][2]["tool_calls"], body["messages"][2]["tool_calls"]);
    assert_eq!(sent["messages"][3], json!({"role": "tool", "tool_call_id": "call_1", "content": "fn main() {}"}));
}

#[test]
fn side_calls_are_one_shots_without_tools_whatever_their_size() {
    let title = json!({"model": "haiku", "messages": [{"role": "user", "content": "Title for: fix the test"}], "max_tokens": 50});
    assert!(parse(Format::Anthropic, &title).is_side_call());
    // Claude Code's auto-mode classifier: one large user turn holding a transcript, no tools.
    let transcript = format!("<transcript>{}</transcript>\nIs the next action safe?", "step ".repeat(30_000));
    let classifier =
        json!({"model": "m", "system": "You classify actions.", "messages": [{"role": "user", "content": transcript}]});
    assert!(parse(Format::Anthropic, &classifier).is_side_call(), "size alone never makes a session");
    // OpenCode's title call: a system prompt and two user messages, no tools.
    let opencode = json!({"model": "m", "messages": [
        {"role": "system", "content": "You are a title generator. You output ONLY a thread title."},
        {"role": "user", "content": "Generate a title for this conversation:\n"},
        {"role": "user", "content": "\"fix calc.py\""},
    ]});
    assert!(parse(Format::OpenAi, &opencode).is_side_call(), "a one-shot asked in two messages");
    // aider's first call: its edit format's examples are turns of the assistant.
    let aider = json!({"model": "m", "messages": [
        {"role": "system", "content": "Act as an expert software developer."},
        {"role": "user", "content": "Change get_factorial() to use math.factorial"},
        {"role": "assistant", "content": "mathweb/flask/app.py\n<<<<<<< SEARCH\nfrom flask import Flask\n=======\nimport math\n>>>>>>> REPLACE"},
        {"role": "user", "content": "fix calc.py"},
    ]});
    assert!(!parse(Format::OpenAi, &aider).is_side_call(), "a text-protocol agent is managed from its first call");
    // An agent that acts through text (aider): a conversation without tools is a session.
    let text_agent = json!({"model": "m", "messages": [
        {"role": "user", "content": "fix calc.py"},
        {"role": "assistant", "content": "calc.py\n<<<<<<< SEARCH\na-b\n=======\na+b\n>>>>>>> REPLACE"},
        {"role": "user", "content": "The edit applied. Run the tests."},
    ]});
    assert!(!parse(Format::Anthropic, &text_agent).is_side_call());
    let tools = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [{"name": "t", "input_schema": {}}]});
    assert!(!parse(Format::Anthropic, &tools).is_side_call());
}

/// An Anthropic stream: a thinking block with its signature in two pieces, text, a tool use
/// whose input comes in pieces, usage at the start and the end.
fn anthropic_stream() -> String {
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 12, "cache_read_input_tokens": 800, "cache_creation_input_tokens": 40, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me"}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQB+/ab"}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "cd=="}}),
        ),
        ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        ("ping", json!({"type": "ping"})),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Running "}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "it."}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_7", "name": "Bash", "input": {}}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"command\": \"ca"}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "rgo test\"}"}}),
        ),
        ("content_block_stop", json!({"type": "content_block_stop", "index": 2})),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 57}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    events.iter().map(|(name, data)| format!("event: {name}\ndata: {data}\n\n")).collect()
}

#[test]
fn a_streamed_anthropic_reply_is_read_in_any_pieces() {
    let stream = anthropic_stream();
    for size in [1, 7, 64, stream.len()] {
        let mut reader = ReplyReader::new((providers::api(Format::Anthropic).reply)(), true, 200, 1 << 20);
        for piece in stream.as_bytes().chunks(size) {
            reader.push(piece);
        }
        assert!(reader.is_complete());
        let outcome = reader.finish(&counter());
        assert!(outcome.completed, "{:?}", outcome.error);
        assert_eq!(
            outcome.parts[0],
            ContentPart::Reasoning { text: "Let me".into(), signature: Some("EqQB+/abcd==".into()) }
        );
        assert_eq!(outcome.parts[1], ContentPart::Text { text: "Running it.".into() });
        let ContentPart::ToolCall(call) = &outcome.parts[2] else { panic!() };
        assert_eq!(call.arguments, r#"{"command":"cargo test"}"#);
        let usage = outcome.usage.unwrap();
        assert_eq!(
            (usage.prompt_tokens(), usage.cache_read_tokens, usage.cache_write_tokens, usage.output_tokens),
            (852, 800, 40, 57)
        );
        assert_eq!(outcome.stop_reason.as_deref(), Some("tool_use"));
    }
}

#[test]
fn a_stream_cut_halfway_or_ended_by_an_error_is_not_a_reply() {
    let stream = anthropic_stream();
    let mut reader = ReplyReader::new((providers::api(Format::Anthropic).reply)(), true, 200, 1 << 20);
    reader.push(&stream.as_bytes()[..stream.len() / 2]);
    let outcome = reader.finish(&counter());
    assert!(!outcome.completed && outcome.parts.is_empty());
    assert_eq!(outcome.error.as_deref(), Some("the upstream's stream ended before the reply did"));

    let mut reader = ReplyReader::new((providers::api(Format::Anthropic).reply)(), true, 200, 1 << 20);
    reader.push(b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n");
    reader.push(b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n");
    let outcome = reader.finish(&counter());
    assert_eq!(outcome.error.as_deref(), Some("the upstream sent an error event (overloaded_error)"));

    let mut reader = ReplyReader::new((providers::api(Format::Anthropic).reply)(), false, 529, 1 << 20);
    reader.push(br#"{"type":"error","error":{"type":"overloaded_error","message":"sk-ant-secret"}}"#);
    let outcome = reader.finish(&counter());
    assert_eq!(outcome.error.as_deref(), Some("the upstream answered 529"));

    let mut reader = ReplyReader::new((providers::api(Format::Anthropic).reply)(), true, 200, 100);
    reader.push(stream.as_bytes());
    assert!(reader.finish(&counter()).error.unwrap().contains("larger than 100 bytes"));
}

#[test]
fn openai_replies_streamed_and_whole() {
    let chunks = [
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Reading"}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_9", "type": "function", "function": {"name": "read", "arguments": "{\"pa"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "th\": \"a\"}"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 768}}}),
    ];
    let mut stream: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    stream.push_str("data: [DONE]\n\n");
    let mut reader = ReplyReader::new((providers::api(Format::OpenAi).reply)(), true, 200, 1 << 20);
    stream.as_bytes().chunks(5).for_each(|c| reader.push(c));
    let outcome = reader.finish(&counter());
    assert!(outcome.completed);
    assert_eq!(outcome.parts[0], ContentPart::Text { text: "Reading".into() });
    let ContentPart::ToolCall(call) = &outcome.parts[1] else { panic!() };
    assert_eq!(
        (call.id.as_str(), call.name.as_str(), call.arguments.as_str()),
        ("call_9", "read", "{\"path\": \"a\"}")
    );
    let usage = outcome.usage.unwrap();
    assert_eq!((usage.prompt_tokens(), usage.cache_read_tokens, usage.input_tokens), (1000, 768, 232));

    let whole = json!({"choices": [{"message": {"role": "assistant", "content": "Done."}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 5, "completion_tokens": 2}});
    let mut reader = ReplyReader::new((providers::api(Format::OpenAi).reply)(), false, 200, 1 << 20);
    reader.push(whole.to_string().as_bytes());
    let outcome = reader.finish(&counter());
    assert_eq!((outcome.completed, outcome.parts.len()), (true, 1));
}

#[test]
fn the_same_requests_give_the_same_bytes() {
    let bodies = |_: ()| -> Vec<String> {
        let mut session = session();
        (1..6)
            .map(|turns| {
                let prepared = block_on(session.prepare(&parse(Format::Anthropic, &claude_code(history(turns)))));
                block_on(session.finish(200, ReplyOutcome::default()));
                prepared.body.unwrap()
            })
            .collect()
    };
    assert_eq!(bodies(()), bodies(()));
}

#[test]
fn json_nested_deeper_than_the_engine_reads_goes_upstream_as_it_came() {
    let gateway = Gateway::new(&Config::default(), Upstreams::default(), args::Shell::Native);
    let head = RequestHead { method: "POST".into(), target: "/v1/messages".into(), headers: Vec::new() };
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let tool_input = format!(
        r#"{{"model":"m","tools":[{{"name":"t","input_schema":{{}}}}],"messages":[{{"role":"user","content":"go"}},{{"role":"assistant","content":[{{"type":"tool_use","id":"a","name":"t","input":{{"x":{deep}}}}}]}}]}}"#
    );
    let metadata = format!(
        r#"{{"model":"m","tools":[{{"name":"t","input_schema":{{}}}}],"metadata":{{"user_id":"u","deep":{deep}}},"messages":[{{"role":"user","content":"go"}}]}}"#
    );
    for body in [tool_input, metadata] {
        assert!(serde_json::from_str::<serde_json::Value>(&body).is_err(), "deeper than serde_json's default");
        match gateway.read(&head, Route::Managed(Format::Anthropic), body.as_bytes()) {
            Decision::Forward { why, .. } => assert!(why.contains("deeper than the engine reads"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
}

/// A host whose renames panic while `panics` is set (an engine that panics in the middle of a
/// save), whose rename onto a `state.json` fails while `cut` is set (a save that a `kill -9`
/// cut after it wrote the messages, before the state a resume starts from), and that changes
/// no file once `lives` more changes were made (a `kill -9` at any write). Its [`FaultyHost::proxy`]s
/// are processes on one shared store, each lock a lease of one of them that expires once it dies.
#[derive(Clone, Default)]
struct FaultyHost {
    files: std::rc::Rc<TestHost>,
    panics: std::rc::Rc<std::cell::Cell<bool>>,
    cut: std::rc::Rc<std::cell::Cell<bool>>,
    lives: std::rc::Rc<std::cell::Cell<Option<usize>>>,
    /// Which process of a shared store this is (`None`: the store is no one else's).
    process: Option<u8>,
    leases: std::rc::Rc<std::cell::RefCell<std::collections::BTreeMap<String, u8>>>,
    dead: std::rc::Rc<std::cell::RefCell<Vec<u8>>>,
}

impl FaultyHost {
    /// Process `n` on this host's store, shared.
    fn proxy(&self, n: u8) -> FaultyHost {
        FaultyHost { process: Some(n), ..self.clone() }
    }

    /// Whether a change to the files may still be made (one life less).
    fn alive(&self) -> Result<(), HostError> {
        match self.lives.get() {
            Some(0) => Err(HostError::new(HostErrorKind::Io, "killed")),
            Some(n) => {
                self.lives.set(Some(n - 1));
                Ok(())
            }
            None => Ok(()),
        }
    }
}

impl Host for FaultyHost {
    async fn complete(&self, request: CompletionRequest) -> Result<Completion, HostError> {
        self.files.complete(request).await
    }
    async fn read_file(&self, path: &str) -> Result<FileContent, HostError> {
        self.files.read_file(path).await
    }
    async fn stat(&self, path: &str) -> Result<Option<FileStat>, HostError> {
        self.files.stat(path).await
    }
    async fn write_file(&self, path: &str, data: &str) -> Result<(), HostError> {
        self.alive()?;
        self.files.write_file(path, data).await
    }
    async fn append_file(&self, path: &str, data: &str) -> Result<(), HostError> {
        self.alive()?;
        self.files.append_file(path, data).await
    }
    async fn rename(&self, from: &str, to: &str) -> Result<(), HostError> {
        assert!(!self.panics.get(), "a save that panics");
        self.alive()?;
        if self.cut.get() && to.ends_with("/state.json") {
            return Err(HostError::new(HostErrorKind::Io, "killed"));
        }
        self.files.rename(from, to).await
    }
    async fn remove(&self, path: &str) -> Result<(), HostError> {
        self.alive()?;
        self.files.remove(path).await
    }
    async fn list_dir(&self, path: &str) -> Result<Vec<DirEntry>, HostError> {
        self.files.list_dir(path).await
    }
    fn now_ms(&self) -> u64 {
        self.files.now_ms()
    }
    async fn try_lock(&self, path: &str) -> Result<bool, HostError> {
        let Some(me) = self.process else { return Ok(true) };
        let mut leases = self.leases.borrow_mut();
        match leases.get(path) {
            Some(holder) if *holder != me && !self.dead.borrow().contains(holder) => Ok(false),
            _ => {
                leases.insert(path.to_owned(), me);
                Ok(true)
            }
        }
    }
    async fn unlock(&self, path: &str) -> Result<(), HostError> {
        let mut leases = self.leases.borrow_mut();
        if leases.get(path).is_some_and(|holder| Some(*holder) == self.process) {
            leases.remove(path);
        }
        Ok(())
    }
    fn store_is_shared(&self) -> bool {
        self.process.is_some()
    }
    /// A shared store here is a database's: its writes are whole.
    fn writes_whole(&self) -> bool {
        self.process.is_some()
    }
}

#[test]
fn a_panic_while_a_call_is_saved_drops_its_session_not_its_key() {
    let host = FaultyHost::default();
    let worker = Worker::new(host.clone(), Config::default(), false, Default::default());
    let gateway = Gateway::new(&Config::default(), Upstreams::default(), args::Shell::Native);
    let head = RequestHead { method: "POST".into(), target: "/v1/messages".into(), headers: Vec::new() };
    let body = claude_code(history(1)).to_string();
    let Decision::Manage { key, request } = gateway.read(&head, Route::Managed(Format::Anthropic), body.as_bytes())
    else {
        panic!("a managed call")
    };
    assert!(block_on(worker.prepare(&key, &request, Vec::new())).body.is_some());
    host.panics.set(true);
    let saved = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| block_on(worker.save_behind())));
    assert!(saved.is_err());
    host.panics.set(false);
    // The worker's answer to the panic, as a shell takes it: the session it hit is dropped; the
    // key is not left busy.
    assert_eq!(worker.save_panicked(Some(&key.name())), ["the engine panicked while saving"]);
    let prepared = block_on(worker.prepare(&key, &request, Vec::new()));
    assert!(prepared.body.is_some(), "{:?}", prepared.record.notes);
    // A panic while preparing: the request goes as it came, its record says why.
    let unmanaged = worker.prepare_panicked(&key.name());
    assert!(unmanaged.body.is_none());
    assert!(unmanaged.record.notes.iter().any(|n| n.contains("the engine panicked")), "{:?}", unmanaged.record.notes);
    let record = worker.finish_panicked(&key.name(), 200, None);
    assert_eq!(
        (record.status, record.notes.as_slice()),
        (Some(200), ["the engine panicked on the reply".to_owned()].as_slice())
    );
    // The panicked call's session was dropped, the key not: its next call is managed again.
    let prepared = block_on(worker.prepare(&key, &request, Vec::new()));
    assert!(prepared.body.is_some(), "{:?}", prepared.record.notes);
}

/// The key and request the gateway reads from a Claude Code request of `messages`.
fn managed(messages: Value) -> (SessionKey, ClientRequest) {
    let gateway = Gateway::new(&Config::default(), Upstreams::default(), args::Shell::Native);
    let head = RequestHead { method: "POST".into(), target: "/v1/messages".into(), headers: Vec::new() };
    let body = claude_code(messages).to_string();
    match gateway.read(&head, Route::Managed(Format::Anthropic), body.as_bytes()) {
        Decision::Manage { key, request } => (key, *request),
        _ => panic!("a managed call"),
    }
}

/// One call through a worker as a shell makes it: prepared, sent, saved behind, its reply
/// (`reply`'s content, completed) finished. Returns the body sent upstream, breakpoints removed.
fn call(worker: &Worker<FaultyHost>, messages: Value, reply: Option<Value>) -> Value {
    let (key, request) = managed(messages);
    let prepared = block_on(worker.prepare(&key, &request, Vec::new()));
    block_on(worker.save_behind());
    let parts = reply.map(|r| parse(Format::Anthropic, &claude_code(json!([r]))).messages[0].content());
    let outcome = ReplyOutcome { completed: parts.is_some(), parts: parts.unwrap_or_default(), ..Default::default() };
    block_on(worker.finish(&key.name(), 200, outcome));
    let mut sent: Value = serde_json::from_str(&prepared.body.expect("a managed call")).unwrap();
    strip_breakpoints(&mut sent);
    sent
}

/// The conversation's first call, then its second killed in the save behind it after the new
/// messages reached the disk and before the state did: the host with what the disk holds, the
/// second call's body, and how many messages the trace had.
fn killed_in_a_save() -> (FaultyHost, Value, usize) {
    let host = FaultyHost::default();
    let worker = Worker::new(host.clone(), Config::default(), false, Default::default());
    call(&worker, history(1), Some(history(2)[4].clone()));
    host.cut.set(true);
    let sent = call(&worker, history(2), None);
    host.cut.set(false);
    let messages = block_on(host.list_dir(".trace/2e0bab17/messages")).unwrap().len();
    (host, sent, messages)
}

#[test]
fn a_save_cut_after_the_messages_records_them_once_after_a_restart() {
    let (host, sent, on_disk) = killed_in_a_save();
    let state = block_on(host.read_file(".trace/2e0bab17/state.json")).unwrap().text;
    let saved: Value = serde_json::from_str(&state).unwrap();
    assert!(saved["messages"].as_u64().unwrap() < on_disk as u64, "the messages are newer than the state: {on_disk}");
    // The proxy restarts; the agent retries the call the kill cut.
    let worker = Worker::new(host.clone(), Config::default(), false, Default::default());
    let again = call(&worker, history(2), None);
    assert_eq!(again["messages"], sent["messages"], "the upstream gets the agent's messages, each once");
    assert_eq!(block_on(host.list_dir(".trace/2e0bab17/messages")).unwrap().len(), on_disk, "nothing recorded twice");
    // And the conversation goes on as if nothing had happened.
    let next = call(&worker, history(3), None);
    assert_eq!(next["messages"].as_array().unwrap().len(), sent["messages"].as_array().unwrap().len() + 2);
    let text = next["messages"].to_string();
    assert_eq!(text.matches("Step 1.").count(), 1, "{text}");
    assert_eq!(block_on(host.list_dir(".trace/2e0bab17/messages")).unwrap().len(), on_disk + 2);
}

#[test]
fn messages_saved_before_a_crash_that_the_agent_no_longer_holds_leave_the_prompt() {
    let (host, _, on_disk) = killed_in_a_save();
    let worker = Worker::new(host.clone(), Config::default(), false, Default::default());
    // The agent gave up on the call the kill cut and asks something else instead.
    let mut instead = history(1);
    instead.as_array_mut().unwrap().push(json!({"role": "assistant", "content": "Which test?"}));
    instead.as_array_mut().unwrap().push(json!({"role": "user", "content": "the parser's"}));
    let sent = call(&worker, instead.clone(), None);
    // What a proxy that was never killed sends for it.
    let unkilled = Worker::new(FaultyHost::default(), Config::default(), false, Default::default());
    call(&unkilled, history(1), Some(history(2)[4].clone()));
    assert_eq!(sent["messages"], call(&unkilled, instead, None)["messages"]);
    assert!(!sent["messages"].to_string().contains("Step 1."), "{sent}");
    assert!(sent["messages"].to_string().contains("the parser's"), "{sent}");
    assert_eq!(block_on(host.list_dir(".trace/2e0bab17/messages")).unwrap().len(), on_disk + 2);
}

#[test]
fn a_first_save_cut_before_the_state_is_resumed_not_started_again() {
    let host = FaultyHost::default();
    let worker = Worker::new(host.clone(), Config::default(), false, Default::default());
    host.cut.set(true);
    let sent = call(&worker, history(1), None);
    host.cut.set(false);
    let on_disk = block_on(host.list_dir(".trace/2e0bab17/messages")).unwrap().len();
    assert!(block_on(host.stat(".trace/2e0bab17/state.json")).unwrap().is_none());
    let worker = Worker::new(host.clone(), Config::default(), false, Default::default());
    assert!(block_on(worker.recover("proxy")).unwrap().is_some_and(|line| line.contains("2e0bab17")));
    assert_eq!(call(&worker, history(1), None)["messages"], sent["messages"]);
    let traces: Vec<String> = block_on(host.list_dir(".trace")).unwrap().into_iter().map(|e| e.name).collect();
    assert_eq!(traces, [".gitignore", "2e0bab17"], "the conversation's one trace");
    assert_eq!(block_on(host.list_dir(".trace/2e0bab17/messages")).unwrap().len(), on_disk, "nothing recorded twice");
}

/// The conversation's first `last` calls, call `t` through `proxies[t % proxies.len()]`, the
/// reply of each but the last completed; returns the bodies sent.
fn conversation(proxies: &[Worker<FaultyHost>], last: usize) -> Vec<Value> {
    let reply = |turn: usize| (turn < last).then(|| history(turn + 1)[2 * turn + 2].clone());
    (1..=last).map(|turn| call(&proxies[turn % proxies.len()], history(turn), reply(turn))).collect()
}

/// A proxy of its own on `host`'s store.
fn proxy(host: &FaultyHost) -> Worker<FaultyHost> {
    Worker::new(host.clone(), Config::default(), false, Default::default())
}

#[test]
fn one_conversation_over_proxies_on_a_shared_store_is_one_session_as_on_one_proxy() {
    let alone = FaultyHost::default();
    let expected = conversation(&[proxy(&alone)], 4);
    let store = FaultyHost::default();
    let sent = conversation(&[proxy(&store.proxy(0)), proxy(&store.proxy(1))], 4);
    assert_eq!(sent, expected, "each call sent as one proxy sends it: the cached prefix kept");
    let traces: Vec<String> = block_on(store.list_dir(".trace")).unwrap().into_iter().map(|e| e.name).collect();
    assert_eq!(traces, [".gitignore", "2e0bab17"], "one session");
    let listing = |host: &FaultyHost| block_on(host.list_dir(".trace/2e0bab17/messages")).unwrap().len();
    assert_eq!(listing(&store), listing(&alone), "nothing recorded twice");
    let calls = block_on(store.read_file(".trace/2e0bab17/calls.jsonl")).unwrap().text;
    let numbers: Vec<u64> =
        calls.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["call"].as_u64().unwrap()).collect();
    assert_eq!(numbers, [1, 2, 3, 4]);
    assert!(store.leases.borrow().is_empty(), "no proxy holds the session between calls");
    // The agent's answer, which no later request brings back, is in the store all the same.
    let answer = json!({"role": "assistant", "content": [{"type": "text", "text": "All fixed."}]});
    call(&proxy(&store.proxy(0)), history(5), Some(answer));
    let messages = block_on(store.list_dir(".trace/2e0bab17/messages")).unwrap();
    let last = messages.last().map(|m| format!(".trace/2e0bab17/messages/{}", m.name)).unwrap();
    assert!(block_on(store.read_file(&last)).unwrap().text.contains("All fixed."));
}

#[test]
fn a_reply_the_agent_copies_with_other_call_ids_is_recorded_from_its_copy_on_any_proxy() {
    // As Gemini CLI does: the model's calls carry no id, the agent names them in its copy.
    let renamed = |turn: usize| {
        let mut reply = history(turn + 1)[2 * turn + 2].clone();
        reply["content"][2]["id"] = json!(format!("model_call_{turn}"));
        reply
    };
    let run = |proxies: &[Worker<FaultyHost>]| -> Vec<Value> {
        (1..=3).map(|turn| call(&proxies[turn % proxies.len()], history(turn), Some(renamed(turn)))).collect()
    };
    let expected = run(&[proxy(&FaultyHost::default())]);
    let store = FaultyHost::default();
    let sent = run(&[proxy(&store.proxy(0)), proxy(&store.proxy(1))]);
    assert_eq!(sent, expected, "each result still answers its call as the agent named it");
}

#[test]
fn a_session_a_shared_store_could_not_save_stays_in_its_proxy_until_it_is_saved() {
    let store = FaultyHost::default();
    let proxies = [proxy(&store.proxy(0)), proxy(&store.proxy(1))];
    call(&proxies[0], history(1), Some(history(2)[4].clone()));
    // The database goes away for the second call: nothing can be written.
    store.lives.set(Some(0));
    call(&proxies[0], history(2), Some(history(3)[6].clone()));
    assert_eq!(store.leases.borrow().values().collect::<Vec<_>>(), [&0], "still held by the proxy that has it");
    store.lives.set(None);
    call(&proxies[0], history(3), Some(history(4)[8].clone()));
    call(&proxies[1], history(4), None);
    let alone = FaultyHost::default();
    conversation(&[proxy(&alone)], 4);
    let listing = |host: &FaultyHost| block_on(host.list_dir(".trace/2e0bab17/messages")).unwrap().len();
    assert_eq!(listing(&store), listing(&alone), "everything recorded once the store came back");
    assert_eq!(block_on(store.list_dir(".trace")).unwrap().len(), 2, "one session");
    let calls = block_on(store.read_file(".trace/2e0bab17/calls.jsonl")).unwrap().text;
    let numbers: Vec<u64> =
        calls.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["call"].as_u64().unwrap()).collect();
    assert_eq!(numbers, [1, 2, 3, 4], "the record of the call the store missed, written with the next");
}

#[test]
fn a_call_in_flight_in_a_proxy_that_died_is_taken_over_by_another() {
    let store = FaultyHost::default();
    let first = proxy(&store.proxy(0));
    call(&first, history(1), Some(history(2)[4].clone()));
    // The second call is on its way upstream when its proxy dies; the agent retries elsewhere.
    let (key, request) = managed(history(2));
    assert!(block_on(first.prepare(&key, &request, Vec::new())).body.is_some());
    block_on(first.save_behind());
    store.dead.borrow_mut().push(0);
    let again = call(&proxy(&store.proxy(1)), history(2), None);
    let alone = FaultyHost::default();
    assert_eq!(again, conversation(&[proxy(&alone)], 2)[1]);
    let listing = |host: &FaultyHost| block_on(host.list_dir(".trace/2e0bab17/messages")).unwrap().len();
    assert_eq!(listing(&store), listing(&alone), "nothing recorded twice");
    let traces = block_on(store.list_dir(".trace")).unwrap().len();
    assert_eq!(traces, 2, "one session and the store's .gitignore");
}

#[test]
fn a_conversation_busy_in_a_live_proxy_goes_unmanaged_rather_than_into_a_second_session() {
    let store = FaultyHost::default();
    let first = proxy(&store.proxy(0));
    call(&first, history(1), Some(history(2)[4].clone()));
    let (key, request) = managed(history(2));
    assert!(block_on(first.prepare(&key, &request, Vec::new())).body.is_some());
    let prepared = block_on(proxy(&store.proxy(1)).prepare(&key, &request, Vec::new()));
    assert!(prepared.body.is_none());
    let notes = prepared.record.notes.join("; ");
    assert!(notes.contains("2e0bab17 stayed busy in another proxy"), "{notes}");
    assert_eq!(block_on(store.list_dir(".trace")).unwrap().len(), 2, "no second session");
}

/// `kill -9` at any file change (proptest is a native dev-dependency).
#[cfg(not(target_arch = "wasm32"))]
mod kills {
    use super::*;

    /// The reply to a request of `history(turns)`: the assistant turn `history(turns + 1)` adds.
    fn reply_to(turns: usize) -> Value {
        history(turns + 1)[2 + 2 * turns].clone()
    }

    /// A conversation of `STEPS` calls on `host`, killed (`lives` file changes into call `killed`,
    /// if given) and restarted, the agent retrying the call the kill cut: the bodies sent upstream
    /// from that call on, and the messages on disk at the end.
    fn run_killed(killed: Option<(usize, usize)>) -> (Vec<Value>, usize) {
        const STEPS: usize = 5;
        let host = FaultyHost::default();
        let mut worker = Worker::new(host.clone(), Config::default(), false, Default::default());
        let from = killed.map_or(1, |(step, _)| step);
        for step in 1..from {
            call(&worker, history(step), Some(reply_to(step)));
        }
        if let Some((step, lives)) = killed {
            host.lives.set(Some(lives));
            call(&worker, history(step), Some(reply_to(step)));
            host.lives.set(None);
            worker = Worker::new(host.clone(), Config::default(), false, Default::default());
            block_on(worker.recover("proxy")).unwrap();
        }
        let sent = (from..=STEPS).map(|step| call(&worker, history(step), Some(reply_to(step)))).collect();
        (sent, block_on(host.list_dir(".trace/2e0bab17/messages")).unwrap().len())
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: std::env::var("FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(60),
            failure_persistence: None,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed),
            ..proptest::test_runner::Config::default()
        })]

        /// A `kill -9` at any file change of any call (a call makes 18-28), then a restart: the upstream gets exactly
        /// what a proxy never killed sends, and nothing is recorded twice (#47).
        #[test]
        fn a_kill_at_any_write_sends_and_records_each_message_once(step in 1..5usize, lives in 0..30usize) {
            let (unkilled, on_disk) = run_killed(None);
            let (sent, messages) = run_killed(Some((step, lives)));
            proptest::prop_assert_eq!(&sent[..], &unkilled[step - 1..], "killed {} changes into call {}", lives, step);
            proptest::prop_assert_eq!(messages, on_disk, "killed {} changes into call {}", lives, step);
        }
    }
}
