//! A long history arriving at once, as a resume after a restart sends it: an engine records N
//! messages (a user task, then assistant tool calls and their results, ~40 tokens each) and
//! prepares one call over them, at a 200,000-token window. Prints the time to record and to
//! prepare for several N. Not a test: numbers of one run.
//!
//! `cargo bench --bench long_history` (release build).

use std::time::Instant;

use context_workbench::host::block_on;
use context_workbench::model::{ContentPart, Role, ToolCall, ToolResult, ToolStatus};
use context_workbench::prompt::CallInput;
use context_workbench::replay::ReplayHost;
use context_workbench::{Config, Engine, MessageDraft};

fn session(messages: usize) -> Engine<ReplayHost> {
    let mut config = Config { window: 200_000, ..Config::default() };
    config.workbench.llm_compactor = false;
    let engine = Engine::new(ReplayHost::default(), config);
    engine.record(MessageDraft::text(Role::User, "Fix the failing parser tests in src/parse.rs")).unwrap();
    for n in 0..(messages - 1) / 2 {
        let id = format!("call_{n}");
        let call = ToolCall {
            id: id.as_str().into(),
            name: "Bash".into(),
            arguments: format!(r#"{{"command":"sed -n {n},{}p src/parse.rs"}}"#, n + 3),
        };
        engine.record(MessageDraft::new(Role::Assistant, vec![ContentPart::ToolCall(call)])).unwrap();
        let output = format!("{n}: fn parse_{n}(input: &str) -> Result<Token, Error> {{ lex(input, {n}) }}\n");
        let result = ToolResult {
            call_id: id.as_str().into(),
            name: "Bash".into(),
            status: ToolStatus::Ok,
            output,
            stderr: None,
            exit_code: Some(0),
        };
        let mut draft = MessageDraft::new(Role::Tool, vec![ContentPart::ToolResult(result)]);
        draft.tool_call_id = Some(id.as_str().into());
        engine.record(draft).unwrap();
    }
    engine
}

fn main() {
    let input = CallInput { system_prompt: "You are a coding agent.".into(), ..CallInput::default() };
    for messages in [1_000, 2_000, 4_000, 8_000, 10_000] {
        let start = Instant::now();
        let engine = session(messages);
        let recorded = start.elapsed();
        let start = Instant::now();
        let assembly = block_on(engine.prepare_call(&input)).expect("a prompt");
        let prepared = start.elapsed();
        let tokens: usize = engine.trace().messages.iter().filter_map(|m| m.tokens).map(|t| t as usize).sum();
        println!(
            "{messages:>6} messages, {tokens:>7} tokens recorded in {:>7.2} s; first call prepared in {:>7.2} s ({} prompt tokens, {} rewrites)",
            recorded.as_secs_f64(),
            prepared.as_secs_f64(),
            assembly.tokens,
            assembly.rewrites.len()
        );
    }
}
