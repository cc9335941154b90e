//! An allocator that keeps the peak of the bytes allocated, for the tests that bound memory
//! (each alone in its test binary: the peak is the whole process's).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct Peak;

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

/// The peak extra allocation of `f` above what was allocated when it started, and its result.
pub fn peak_of<R>(f: impl FnOnce() -> R) -> (usize, R) {
    let before = CURRENT.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    let result = f();
    (PEAK.load(Ordering::SeqCst) - before, result)
}
