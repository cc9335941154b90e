//! A 50 MB input is counted without holding more than a few copies of it. Alone in its test
//! binary because it measures the process's allocations.
#![cfg(not(target_arch = "wasm32"))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use context_workbench::tokens::{Encoding, TokenCounter};

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
}

#[global_allocator]
static ALLOCATOR: Peak = Peak;

#[test]
fn fifty_megabytes_in_bounded_memory() {
    let line = "2026-11-22T08:00:00Z test_parser.py::test_case_017 PASSED [ 42%] elapsed=0.031s\n";
    let text = line.repeat(50_000_000 / line.len());
    let counter = TokenCounter::new(Encoding::O200kBase);
    let per_line = counter.count(line);
    counter.count("warm up the BPE tables");

    let before = CURRENT.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    let n = counter.count(&text);
    let extra = PEAK.load(Ordering::SeqCst) - before;

    assert_eq!(n, per_line * (text.len() / line.len()));
    assert!(extra < text.len() / 4, "counting 50 MB allocated {extra} bytes at its peak");
}
