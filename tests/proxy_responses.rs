//! The proxy's core on OpenAI's Responses API, against the in-memory host: requests as Codex,
//! OpenCode and Qwen Code send them (shapes captured from the real CLIs), the upstream's body,
//! sessions call by call, replies streamed in any pieces, and bad input.

use serde_json::{Value, json};

use context_workbench::config::Config;
use context_workbench::engine::Engine;
use context_workbench::host::block_on;
use context_workbench::model::{ContentPart, Role};
use context_workbench::proxy::*;
use context_workbench::tokens::{Encoding, TokenCounter};
use context_workbench_testing::TestHost;

fn counter() -> TokenCounter {
    TokenCounter::new(Encoding::O200kBase)
}

fn parse(body: &Value) -> ClientRequest {
    ClientRequest::parse(Format::Responses, body.to_string().as_bytes(), &counter()).unwrap()
}

fn session() -> ProxySession<TestHost> {
    let (engine, _) =
        block_on(Engine::open(TestHost::default(), session_config(Config::default(), false), Some("r1"))).unwrap();
    ProxySession::new(engine, Format::Responses).unwrap()
}

/// A Codex 0.169 request of `input` (no `instructions`: its system prompt is the first
/// developer message; `apply_patch` is a custom tool; hosted tools have no name).
fn codex(input: Vec<Value>) -> Value {
    json!({
        "model": "gpt-5.5",
        "stream": true,
        "input": input,
        "tools": [
            {"type": "function", "name": "exec_command", "description": "Runs a command", "strict": false,
             "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}},
            {"type": "custom", "name": "apply_patch", "description": "Edit files", "format": {"type": "grammar", "syntax": "lark", "definition": "start: patch"}},
            {"type": "web_search"},
        ],
        "tool_choice": "auto",
        "parallel_tool_calls": true,
        "reasoning": {"effort": "medium"},
        "store": false,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "01a2187d-ab08",
        "client_metadata": {"turn_id": "t1"},
    })
}

fn first_items() -> Vec<Value> {
    vec![
        json!({"type": "message", "id": "msg_1", "role": "developer", "content": [{"type": "input_text", "text": "You are Codex, a coding agent."}]}),
        json!({"type": "message", "id": "msg_2", "role": "developer", "content": [{"type": "input_text", "text": "<permissions instructions>full access</permissions instructions>"}]}),
        json!({"type": "message", "id": "msg_3", "role": "user", "content": [{"type": "input_text", "text": "<environment_context><cwd>/w</cwd></environment_context>"}]}),
        json!({"type": "message", "id": "msg_4", "role": "user", "content": [{"type": "input_text", "text": "fix the typo in a.txt"}]}),
    ]
}

/// Step `n`'s output items as the upstream sends them (reasoning, a note, a call).
fn step_output(n: usize) -> Vec<Value> {
    let call = if n.is_multiple_of(2) {
        json!({"type": "function_call", "id": format!("fc_{n}"), "status": "completed", "call_id": format!("call_{n}"), "name": "exec_command", "arguments": format!("{{\"cmd\": \"cat part{n}.txt\"}}")})
    } else {
        json!({"type": "custom_tool_call", "id": format!("ctc_{n}"), "status": "completed", "call_id": format!("call_{n}"), "name": "apply_patch", "input": format!("*** Begin Patch\n*** Update File: a{n}.txt\n-Helo\n+Hello\n*** End Patch\n")})
    };
    vec![
        json!({"type": "reasoning", "id": format!("rs_{n}"), "summary": [], "encrypted_content": format!("gAAAA{n}encrypted==")}),
        json!({"type": "message", "id": format!("msg_o{n}"), "role": "assistant", "status": "completed", "content": [{"type": "output_text", "annotations": [], "text": format!("Step {n}.")}]}),
        call,
    ]
}

/// Step `n` as the agent sends it back: its output items, then the call's output.
fn step_items(n: usize) -> Vec<Value> {
    let mut items = step_output(n);
    let kind = if n.is_multiple_of(2) { "function_call_output" } else { "custom_tool_call_output" };
    let output = format!("Process exited with code 0\nOutput:\n{}", format!("part {n} ").repeat(50 + 10 * n));
    items.push(json!({"type": kind, "id": format!("fco_{n}"), "call_id": format!("call_{n}"), "output": output}));
    items
}

fn history(steps: usize) -> Vec<Value> {
    let mut items = first_items();
    (0..steps).for_each(|n| items.extend(step_items(n)));
    items
}

#[test]
fn codex_requests_read_into_the_engines_model() {
    let request = parse(&codex(history(2)));
    assert_eq!(request.format, Format::Responses);
    assert_eq!(
        request.system_text,
        "You are Codex, a coding agent.\n<permissions instructions>full access</permissions instructions>"
    );
    assert_eq!(request.system_role.as_deref(), Some("developer"));
    let roles: Vec<Role> = request.messages.iter().flat_map(|m| &m.drafts).map(|d| d.role.unwrap()).collect();
    use Role::*;
    assert_eq!(roles, [User, User, Assistant, Tool, Assistant, Tool], "an assistant turn's items are one message");
    let assistant = &request.messages[2].drafts[0].content;
    assert!(
        matches!(&assistant[0], ContentPart::Opaque(o) if o.kind == "reasoning" && o.json.contains("gAAAA0encrypted=="))
    );
    assert_eq!(assistant[1], ContentPart::Text { text: "Step 0.".into() });
    let ContentPart::ToolCall(call) = &assistant[2] else { panic!("{assistant:?}") };
    assert_eq!(
        (call.id.as_str(), call.name.as_str(), call.arguments.as_str()),
        ("call_0", "exec_command", "{\"cmd\": \"cat part0.txt\"}")
    );
    let ContentPart::ToolCall(patch) = &request.messages[4].drafts[0].content[2] else { panic!() };
    assert!(patch.arguments.starts_with("*** Begin Patch\n"), "a custom tool's input is its arguments");
    let ContentPart::ToolResult(result) = &request.messages[5].drafts[0].content[0] else { panic!() };
    assert_eq!((result.call_id.as_str(), result.name.as_str()), ("call_1", "apply_patch"));
    let names: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["exec_command", "apply_patch", "web_search"]);
    assert!(!request.is_side_call());
    // The agent's echo of a reply (with the items' ids and statuses) is the same message.
    let echo = parse(&codex(history(2)));
    assert_eq!(echo.fingerprints(), request.fingerprints());
}

#[test]
fn the_upstream_input_is_the_agents_items_and_every_other_field_as_it_came() {
    let body = codex(history(2));
    let request = parse(&body);
    let mut session = session();
    let sent: Value = serde_json::from_str(&block_on(session.prepare(&request)).body.unwrap()).unwrap();
    for field in [
        "model",
        "stream",
        "tools",
        "tool_choice",
        "reasoning",
        "store",
        "include",
        "prompt_cache_key",
        "client_metadata",
    ] {
        assert_eq!(sent[field], body[field], "{field}");
    }
    assert!(sent.get("instructions").is_none(), "Codex sends none, so none is added");
    let input = sent["input"].as_array().unwrap();
    assert_eq!(input[0]["role"], "developer");
    assert!(input[0]["content"][0]["text"].as_str().unwrap().starts_with("You are Codex"));
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        &kinds[..11],
        [
            "message",
            "message",
            "message",
            "reasoning",
            "message",
            "function_call",
            "function_call_output",
            "reasoning",
            "message",
            "custom_tool_call",
            "custom_tool_call_output"
        ]
    );
    assert_eq!(input[3], body["input"][4], "reasoning items go back byte for byte (their encrypted content)");
    assert_eq!(input[4]["content"][0], json!({"type": "output_text", "text": "Step 0."}));
    assert_eq!(input[5]["arguments"], body["input"][6]["arguments"]);
    assert_eq!(input[9]["input"], body["input"][10]["input"], "a custom tool's input, byte-exact");
    assert_eq!(input[10]["call_id"], "call_1");
    assert!(input[6]["output"].as_str().unwrap().contains("part 0"));
}

#[test]
fn instructions_and_message_items_without_a_type_are_read_and_kept() {
    // Qwen Code's form: `instructions`; OpenCode's: messages without `type`, string content.
    let body = json!({
        "model": "m",
        "instructions": "You are Qwen Code.",
        "input": [
            {"role": "developer", "content": "Project rules: be brief."},
            {"role": "user", "content": [{"type": "input_text", "text": "look at this"}, {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}]},
            {"type": "function_call", "call_id": "c1", "name": "read", "arguments": "{\"path\":\"a\"}"},
            {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "fn a() {}"}]},
        ],
        "tools": [{"type": "function", "name": "read", "parameters": {"type": "object"}}],
        "stream": false,
    });
    let request = parse(&body);
    assert_eq!(request.system_text, "You are Qwen Code.\nProject rules: be brief.");
    let mut session = session();
    let sent: Value = serde_json::from_str(&block_on(session.prepare(&request)).body.unwrap()).unwrap();
    assert_eq!(
        sent["instructions"], "You are Qwen Code.\nProject rules: be brief.",
        "the system prompt stays in `instructions`"
    );
    let input = sent["input"].as_array().unwrap();
    assert_eq!(input[0]["role"], "user");
    assert_eq!(input[0]["content"][1], body["input"][1]["content"][1], "an image goes back as it came");
    assert_eq!(
        input[1],
        json!({"type": "function_call", "call_id": "c1", "name": "read", "arguments": "{\"path\":\"a\"}"})
    );
    assert_eq!(input[2], json!({"type": "function_call_output", "call_id": "c1", "output": "fn a() {}"}));
    // A plain string input is one user message.
    let one = parse(&json!({"model": "m", "input": "Title for: fix it"}));
    assert!(one.is_side_call());
}

#[test]
fn bad_responses_requests_are_refused_or_passed_with_what_is_wrong() {
    let refused =
        |body: Value| ClientRequest::parse(Format::Responses, body.to_string().as_bytes(), &counter()).unwrap_err();
    let e = refused(json!({"model": "m"}));
    assert_eq!((e.status, e.pass_through, e.message.as_str()), (400, false, "`input` is missing"));
    assert_eq!(refused(json!({"input": []})).message, "`input` is empty");
    assert_eq!(refused(json!({"input": 7})).message, "`input` must be a string or a list of items");
    assert_eq!(refused(json!({"input": ["hi"]})).message, "input[0] is not an object");
    assert_eq!(refused(json!({"input": [{"content": "hi"}]})).message, "input[0] has no `type` or `role`");
    let no_id = refused(json!({"input": [{"type": "function_call", "name": "x", "arguments": "{}"}]}));
    assert_eq!(no_id.message, "input[0]: a call needs a `call_id`");
    let no_name = refused(json!({"input": [{"type": "function_call", "call_id": "c", "arguments": "{}"}]}));
    assert_eq!(no_name.message, "input[0]: call `c` needs a `name`");
    let output = refused(json!({"input": [{"type": "function_call_output", "output": "x"}]}));
    assert_eq!(output.message, "input[0]: a call's output needs a `call_id`");
    let part = refused(json!({"input": [{"role": "user", "content": [{"text": "x"}]}]}));
    assert_eq!(part.message, "input[0].content[0] has no `type`");
    assert_eq!(refused(json!({"input": "x", "tools": {}})).message, "`tools` must be a list");
    // Well formed, but the history is the server's, or a role the engine does not read: passed.
    let stored = refused(json!({"input": "next", "previous_response_id": "resp_1"}));
    assert!(stored.pass_through && stored.message.contains("`previous_response_id`"), "{stored:?}");
    let role = refused(json!({"input": [{"role": "critic", "content": "x"}]}));
    assert!(role.pass_through, "{role:?}");
    assert!(ClientRequest::parse(Format::Responses, b"{\"input\":", &counter()).is_err());
}

/// Step `n`'s reply as Responses server-sent events.
fn stream(n: usize) -> String {
    let output = step_output(n);
    let mut events =
        vec![json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "output": []}})];
    for (i, item) in output.iter().enumerate() {
        events.push(json!({"type": "response.output_item.added", "output_index": i, "item": item}));
        if item["type"] == "message" {
            events.push(
                json!({"type": "response.output_text.delta", "output_index": i, "delta": item["content"][0]["text"]}),
            );
        }
        events.push(json!({"type": "response.output_item.done", "output_index": i, "item": item}));
    }
    let usage = json!({"input_tokens": 12000, "input_tokens_details": {"cached_tokens": 11000}, "output_tokens": 80});
    events.push(json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "output": output, "usage": usage}}));
    events.iter().map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap())).collect()
}

#[test]
fn a_streamed_responses_reply_is_read_in_any_pieces_and_whole() {
    for size in [1, 7, 4096] {
        let mut reader = ReplyReader::new((providers::api(Format::Responses).reply)(), true, 200, 1 << 20);
        stream(0).as_bytes().chunks(size).for_each(|c| reader.push(c));
        assert!(reader.is_complete());
        let outcome = reader.finish(&counter());
        assert!(outcome.completed, "{outcome:?}");
        assert!(matches!(&outcome.parts[0], ContentPart::Opaque(o) if o.kind == "reasoning"));
        assert_eq!(outcome.parts[1], ContentPart::Text { text: "Step 0.".into() });
        assert!(matches!(&outcome.parts[2], ContentPart::ToolCall(c) if c.id.as_str() == "call_0"));
        let usage = outcome.usage.unwrap();
        assert_eq!((usage.prompt_tokens(), usage.cache_read_tokens, usage.output_tokens), (12000, 11000, 80));
        assert_eq!(outcome.stop_reason.as_deref(), Some("completed"));
    }
    // Cut before `response.completed`, or failed: not a reply.
    let whole = stream(1);
    let cut = &whole[..whole.find("response.completed").unwrap()];
    let mut reader = ReplyReader::new((providers::api(Format::Responses).reply)(), true, 200, 1 << 20);
    reader.push(cut.as_bytes());
    let outcome = reader.finish(&counter());
    assert!(!outcome.completed && outcome.parts.is_empty() && outcome.error.is_some());
    let failed = "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"x\"}}}\n\n";
    let mut reader = ReplyReader::new((providers::api(Format::Responses).reply)(), true, 200, 1 << 20);
    reader.push(failed.as_bytes());
    let outcome = reader.finish(&counter());
    assert_eq!(
        (outcome.completed, outcome.error.as_deref()),
        (false, Some("the upstream's response failed (server_error)"))
    );
    // Not streamed: the response object.
    let body = json!({"id": "resp_2", "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": step_output(2), "usage": {"input_tokens": 10, "output_tokens": 5}});
    let mut reader = ReplyReader::new((providers::api(Format::Responses).reply)(), false, 200, 1 << 20);
    reader.push(body.to_string().as_bytes());
    let outcome = reader.finish(&counter());
    assert_eq!((outcome.completed, outcome.parts.len()), (true, 3));
    assert_eq!(outcome.stop_reason.as_deref(), Some("incomplete: max_output_tokens"));
    let mut reader = ReplyReader::new((providers::api(Format::Responses).reply)(), false, 200, 1 << 20);
    reader.push(b"{\"id\":\"resp_3\"}");
    assert_eq!(reader.finish(&counter()).error.as_deref(), Some("the upstream's reply has no `output`"));
}

#[test]
fn a_codex_session_records_only_what_is_new_and_keeps_its_prefix_byte_identical() {
    let mut session = session();
    let mut previous: Option<String> = None;
    for steps in 0..10 {
        let request = parse(&codex(history(steps)));
        assert!(!matches!(session.extension(&request), Extension::Departs { .. }), "step {steps}");
        let prepared = block_on(session.prepare(&request));
        assert!(prepared.record.managed, "{:?}", prepared.record.notes);
        assert_eq!(prepared.record.new_messages, 2, "step {steps}");
        let reply = ReplyOutcome {
            completed: true,
            parts: {
                let mut reader = ReplyReader::new((providers::api(Format::Responses).reply)(), true, 200, 1 << 20);
                reader.push(stream(steps).as_bytes());
                reader.finish(&counter()).parts
            },
            ..ReplyOutcome::default()
        };
        block_on(session.finish(200, reply));
        let sent: Value = serde_json::from_str(&prepared.body.unwrap()).unwrap();
        let input = sent["input"].as_array().unwrap();
        // Everything but the last item (the engine's tail rides on it) is the next call's prefix.
        let prefix = serde_json::to_string(&input[..input.len() - 1]).unwrap();
        if let Some(before) = &previous {
            assert!(prefix.starts_with(&before[..before.len() - 1]), "step {steps}");
        }
        previous = Some(prefix);
    }
    assert_eq!(session.engine().trace().messages.len(), 2 + 2 * 9);
    block_on(session.close()).unwrap();
    assert_eq!(session.engine().trace().messages.len(), 2 + 2 * 9 + 1, "the last reply, kept at close");
}
