//! A 50 MB input is counted without holding more than a few copies of it. Alone in its test
//! binary because it measures the process's allocations.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use context_workbench::tokens::{Encoding, TokenCounter};

#[global_allocator]
static ALLOCATOR: common::peak::Peak = common::peak::Peak;

#[test]
fn fifty_megabytes_in_bounded_memory() {
    let line = "2026-11-22T08:00:00Z test_parser.py::test_case_017 PASSED [ 42%] elapsed=0.031s\n";
    let text = line.repeat(50_000_000 / line.len());
    let counter = TokenCounter::new(Encoding::O200kBase);
    let per_line = counter.count(line);
    counter.count("warm up the BPE tables");

    let (extra, n) = common::peak::peak_of(|| counter.count(&text));

    assert_eq!(n, per_line * (text.len() / line.len()));
    assert!(extra < text.len() / 4, "counting 50 MB allocated {extra} bytes at its peak");
}
