//! A tool output of 200 MB is recorded and bounded at first sight without holding several
//! copies of it (issue 16). Alone in its test binary because it measures the process's
//! allocations.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use context_workbench::model::{ContentPart, Role, ToolCall, ToolResult, ToolStatus};
use context_workbench::{Config, Engine, MessageDraft};
use context_workbench_testing::{TestHost, block_on};

#[global_allocator]
static ALLOCATOR: common::peak::Peak = common::peak::Peak;

#[test]
fn two_hundred_megabytes_of_output_are_bounded_in_bounded_memory() {
    let engine = Engine::new(TestHost::default(), Config::from_json(r#"{"window": 32000}"#).unwrap());
    engine.record(MessageDraft::text(Role::User, "Run the whole test matrix.")).unwrap();
    let call = ToolCall { id: "c1".into(), name: "Bash".into(), arguments: r#"{"command":"./matrix.sh"}"#.into() };
    engine.record(MessageDraft::new(Role::Assistant, vec![ContentPart::ToolCall(call)])).unwrap();
    let line = "2026-11-24T08:00:00Z matrix cell 0042 python3.12 sqlite ok elapsed=0.031s\n";
    let output = line.repeat(200_000_000 / line.len());
    let size = output.len();
    let result = ToolResult {
        call_id: "c1".into(),
        name: "Bash".into(),
        status: ToolStatus::Ok,
        output,
        stderr: None,
        exit_code: Some(0),
    };
    let draft = MessageDraft::new(Role::Tool, vec![ContentPart::ToolResult(result)]);

    let (extra, assembly) = common::peak::peak_of(|| {
        engine.record(draft).unwrap();
        block_on(engine.prepare_call(&Default::default())).unwrap()
    });

    assert!(assembly.tokens <= 32_000, "{} tokens", assembly.tokens);
    assert!(engine.trace().messages[2].tokens.unwrap() > 10_000_000, "the raw trace keeps the whole output");
    // The output moves into the trace and is counted, cleaned and compressed without a copy:
    // only the lines that could be kept are drafted (measured: about 2 MB for these 200 MB).
    assert!(extra < size / 20, "recording and bounding {size} bytes allocated {extra} bytes at the peak");
}
