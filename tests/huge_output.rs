//! A tool output of 200 MB is recorded and bounded at first sight without holding several
//! copies of it (issue 16). Alone in its test binary because it measures the process's
//! allocations.
#![cfg(not(target_arch = "wasm32"))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use context_workbench::model::{ContentPart, Role, ToolCall, ToolResult, ToolStatus};
use context_workbench::testing::{TestHost, block_on};
use context_workbench::{Config, Engine, MessageDraft};

struct Peak;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Peak {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = CURRENT.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
        PEAK.fetch_max(now, Ordering::SeqCst);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        CURRENT.fetch_sub(layout.size(), Ordering::SeqCst);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let now = CURRENT.fetch_add(new_size, Ordering::SeqCst) + new_size;
        PEAK.fetch_max(now, Ordering::SeqCst);
        let moved = unsafe { System.realloc(ptr, layout, new_size) };
        CURRENT.fetch_sub(layout.size(), Ordering::SeqCst);
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Peak = Peak;

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

    let before = CURRENT.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    engine.record(draft).unwrap();
    let assembly = block_on(engine.prepare_call(&Default::default())).unwrap();
    let extra = PEAK.load(Ordering::SeqCst) - before;

    assert!(assembly.tokens <= 32_000, "{} tokens", assembly.tokens);
    assert!(engine.trace().messages[2].tokens.unwrap() > 10_000_000, "the raw trace keeps the whole output");
    // The output moves into the trace and is counted, cleaned and compressed without a copy:
    // only the lines that could be kept are drafted (measured: about 2 MB for these 200 MB).
    assert!(extra < size / 20, "recording and bounding {size} bytes allocated {extra} bytes at the peak");
}
