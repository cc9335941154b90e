//! The proxy's core on Google's Gemini API, against the in-memory host: requests as Gemini CLI
//! sends them (the shape captured from the real CLI 0.61), the upstream's body, a session call by
//! call, replies streamed in any pieces, and bad input.

use serde_json::{Value, json};

use context_workbench::config::Config;
use context_workbench::engine::Engine;
use context_workbench::host::block_on;
use context_workbench::model::{ContentPart, Role, ToolStatus};
use context_workbench::proxy::*;
use context_workbench::tokens::{Encoding, TokenCounter};
use context_workbench_testing::TestHost;

fn counter() -> TokenCounter {
    TokenCounter::new(Encoding::O200kBase)
}

fn parse(body: &Value) -> ClientRequest {
    ClientRequest::parse(Format::Gemini, body.to_string().as_bytes(), &counter()).unwrap()
}

fn session() -> ProxySession<TestHost> {
    let (engine, _) =
        block_on(Engine::open(TestHost::default(), session_config(Config::default(), false), Some("g1"))).unwrap();
    ProxySession::new(engine, Format::Gemini).unwrap()
}

/// A Gemini CLI 0.61 request of `contents`.
fn gemini_cli(contents: Vec<Value>) -> Value {
    json!({
        "contents": contents,
        "systemInstruction": {"role": "user", "parts": [{"text": "You are a non-interactive CLI agent."}]},
        "tools": [{"functionDeclarations": [
            {"name": "run_shell_command", "description": "Runs a command", "parametersJsonSchema": {"type": "object", "properties": {"command": {"type": "string"}}}},
            {"name": "write_todos", "description": "Plan", "parametersJsonSchema": {"type": "object"}},
        ]}],
        "generationConfig": {"temperature": 1, "topP": 0.95, "topK": 64, "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 8192}},
    })
}

fn first() -> Value {
    json!({"role": "user", "parts": [{"text": "<session_context>\nThis is the Gemini CLI.\n</session_context>"}, {"text": "fix the typo in a.txt"}]})
}

/// Step `n` as the CLI sends it back: the model's call (with the CLI's id and the placeholder
/// signature it adds), then the call's response.
fn step(n: usize) -> [Value; 2] {
    let id = format!("run_shell_command_17957072441{n:02}_0");
    [
        json!({"role": "model", "parts": [
            {"text": format!("Step {n}.")},
            {"functionCall": {"id": id, "name": "run_shell_command", "args": {"command": format!("cat part{n}.txt")}}, "thoughtSignature": format!("sig-{n}")},
        ]}),
        json!({"role": "user", "parts": [{"functionResponse": {"id": id, "name": "run_shell_command", "response": {"output": format!("Output: {}", "line ".repeat(40 + n))}}}]}),
    ]
}

fn history(steps: usize) -> Vec<Value> {
    let mut contents = vec![first()];
    (0..steps).for_each(|n| contents.extend(step(n)));
    contents
}

#[test]
fn gemini_cli_requests_read_into_the_engines_model() {
    let request = parse(&gemini_cli(history(2)));
    assert_eq!(request.system_text, "You are a non-interactive CLI agent.");
    let roles: Vec<Role> = request.messages.iter().flat_map(|m| &m.drafts).map(|d| d.role.unwrap()).collect();
    use Role::*;
    assert_eq!(roles, [User, Assistant, Tool, Assistant, Tool]);
    let model = &request.messages[1].drafts[0].content;
    assert_eq!(model[0], ContentPart::Text { text: "Step 0.".into() });
    assert_eq!(model[1], ContentPart::Reasoning { text: String::new(), signature: Some("sig-0".into()) });
    let ContentPart::ToolCall(call) = &model[2] else { panic!("{model:?}") };
    assert_eq!((call.name.as_str(), call.arguments.as_str()), ("run_shell_command", "{\"command\":\"cat part0.txt\"}"));
    let ContentPart::ToolResult(result) = &request.messages[2].drafts[0].content[0] else { panic!() };
    assert_eq!((result.call_id.as_str(), result.status), (call.id.as_str(), ToolStatus::Ok));
    assert!(result.output.starts_with("Output: line"));
    let names: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["run_shell_command", "write_todos"]);
    assert!(!request.is_side_call());
}

#[test]
fn the_upstream_contents_are_the_agents_and_every_other_field_as_it_came() {
    let body = gemini_cli(history(2));
    let mut session = session();
    let sent: Value = serde_json::from_str(&block_on(session.prepare(&parse(&body))).body.unwrap()).unwrap();
    for field in ["systemInstruction", "tools", "generationConfig"] {
        assert_eq!(sent[field], body[field], "{field} as it came");
    }
    assert_eq!(sent["contents"], body["contents"], "nothing to compact yet: the agent's contents, part for part");
}

#[test]
fn calls_without_ids_errors_and_other_parts_are_kept() {
    // A model that calls without ids (Gemini 2.5 through an SDK), a failed call, an image.
    let contents = vec![
        json!({"role": "user", "parts": [{"text": "look"}, {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}]}),
        json!({"role": "model", "parts": [{"text": "thinking it over", "thought": true, "thoughtSignature": "t1"}, {"functionCall": {"name": "read", "args": {"path": "a"}}}, {"functionCall": {"name": "read", "args": {"path": "b"}}}]}),
        json!({"role": "user", "parts": [{"functionResponse": {"name": "read", "response": {"output": "A"}}}, {"functionResponse": {"name": "read", "response": {"error": "no such file: b"}}}]}),
    ];
    let body = json!({"contents": contents, "tools": [{"functionDeclarations": [{"name": "read", "parameters": {"type": "object"}}]}, {"googleSearch": {}}]});
    let request = parse(&body);
    let ContentPart::ToolResult(failed) = &request.messages[2].drafts[1].content[0] else { panic!() };
    assert_eq!((failed.status, failed.output.as_str()), (ToolStatus::Error, "no such file: b"));
    let mut session = session();
    let sent: Value = serde_json::from_str(&block_on(session.prepare(&request)).body.unwrap()).unwrap();
    assert_eq!(sent["contents"], body["contents"], "no id is invented, the image and the thought go back as they came");
    assert!(sent.get("systemInstruction").is_none());
}

#[test]
fn bad_gemini_requests_are_refused_or_passed_with_what_is_wrong() {
    let refused =
        |body: Value| ClientRequest::parse(Format::Gemini, body.to_string().as_bytes(), &counter()).unwrap_err();
    let e = refused(json!({"generationConfig": {}}));
    assert_eq!((e.status, e.pass_through, e.message.as_str()), (400, false, "`contents` is missing"));
    assert_eq!(refused(json!({"contents": []})).message, "`contents` is empty");
    assert_eq!(refused(json!({"contents": [{"role": "user"}]})).message, "contents[0] has no `parts`");
    assert_eq!(refused(json!({"contents": ["hi"]})).message, "contents[0] must be an object");
    assert_eq!(refused(json!({"contents": [{"parts": "hi"}]})).message, "contents[0].parts must be a list");
    assert_eq!(refused(json!({"contents": [{"parts": ["hi"]}]})).message, "contents[0]: every part must be an object");
    let call = refused(json!({"contents": [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}]}));
    assert_eq!(call.message, "contents[0].parts[0]: a functionCall needs a `name`");
    let response = refused(json!({"contents": [{"parts": [{"functionResponse": {"response": {}}}]}]}));
    assert_eq!(response.message, "contents[0].parts[0]: a functionResponse needs a `name`");
    assert_eq!(refused(json!({"contents": [first()], "tools": {}})).message, "`tools` must be a list");
    let declaration = refused(json!({"contents": [first()], "tools": [{"functionDeclarations": [{}]}]}));
    assert_eq!(declaration.message, "tools[0].functionDeclarations[0] has no `name`");
    let cached = refused(json!({"contents": [first()], "cachedContent": "cachedContents/1"}));
    assert!(cached.pass_through, "{cached:?}");
    assert!(refused(json!({"contents": [{"role": "critic", "parts": []}]})).pass_through);
}

/// Step `n`'s reply as the Gemini API streams it: text in pieces, then the call, then the end.
fn stream(n: usize) -> String {
    let chunks = [
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Step "}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": format!("{n}.")}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command", "args": {"command": format!("cat part{n}.txt")}}, "thoughtSignature": format!("sig-{n}")}]}, "finishReason": "STOP"}],
               "usageMetadata": {"promptTokenCount": 9000, "cachedContentTokenCount": 6000, "candidatesTokenCount": 20, "thoughtsTokenCount": 5}}),
    ];
    chunks.iter().map(|c| format!("data: {c}\r\n\r\n")).collect()
}

#[test]
fn a_streamed_gemini_reply_is_read_in_any_pieces_and_whole() {
    for size in [1, 9, 4096] {
        let mut reader = ReplyReader::new((providers::api(Format::Gemini).reply)(), true, 200, 1 << 20);
        stream(3).as_bytes().chunks(size).for_each(|c| reader.push(c));
        let outcome = reader.finish(&counter());
        assert!(outcome.completed, "{outcome:?}");
        assert_eq!(outcome.parts[0], ContentPart::Text { text: "Step 3.".into() }, "pieces joined");
        assert_eq!(outcome.parts[1], ContentPart::Reasoning { text: String::new(), signature: Some("sig-3".into()) });
        assert!(matches!(&outcome.parts[2], ContentPart::ToolCall(c) if c.name == "run_shell_command"));
        let usage = outcome.usage.unwrap();
        assert_eq!((usage.prompt_tokens(), usage.cache_read_tokens, usage.output_tokens), (9000, 6000, 25));
        assert_eq!(outcome.stop_reason.as_deref(), Some("STOP"));
    }
    let whole = stream(1);
    let mut reader = ReplyReader::new((providers::api(Format::Gemini).reply)(), true, 200, 1 << 20);
    reader.push(&whole.as_bytes()[..whole.rfind("data:").unwrap()]);
    let outcome = reader.finish(&counter());
    assert!(!outcome.completed && outcome.error.is_some(), "no finish reason: cut short");
    let body = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Done."}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 10}});
    let mut reader = ReplyReader::new((providers::api(Format::Gemini).reply)(), false, 200, 1 << 20);
    reader.push(body.to_string().as_bytes());
    let outcome = reader.finish(&counter());
    assert_eq!((outcome.completed, outcome.parts.len()), (true, 1));
    let mut reader = ReplyReader::new((providers::api(Format::Gemini).reply)(), false, 200, 1 << 20);
    reader.push(b"{\"promptFeedback\":{}}");
    assert_eq!(reader.finish(&counter()).error.as_deref(), Some("the upstream's reply has no `candidates`"));
}

#[test]
fn a_gemini_session_records_only_what_is_new_and_keeps_its_prefix_byte_identical() {
    let mut session = session();
    let mut previous: Option<String> = None;
    for steps in 0..10 {
        let request = parse(&gemini_cli(history(steps)));
        let prepared = block_on(session.prepare(&request));
        assert!(prepared.record.managed, "{:?}", prepared.record.notes);
        assert_eq!(prepared.record.new_messages, if steps == 0 { 1 } else { 2 }, "step {steps}");
        let mut reader = ReplyReader::new((providers::api(Format::Gemini).reply)(), true, 200, 1 << 20);
        reader.push(stream(steps).as_bytes());
        let record = block_on(session.finish(200, reader.finish(&counter())));
        assert!(record.completed);
        let sent: Value = serde_json::from_str(&prepared.body.unwrap()).unwrap();
        let contents = sent["contents"].as_array().unwrap();
        let prefix = serde_json::to_string(&contents[..contents.len() - 1]).unwrap();
        if let Some(before) = &previous {
            assert!(prefix.starts_with(&before[..before.len() - 1]), "step {steps}");
        }
        previous = Some(prefix);
    }
    assert_eq!(session.engine().trace().messages.len(), 1 + 2 * 9);
}
