//! The engine's token estimate (`crates/tokens/src/estimate.rs`, the same file) as a WebAssembly module
//! of a few KB with no imports, which the npm package instantiates synchronously: a page counts
//! its first tokens before the engine's .wasm and the rank files arrive. Two exports: `input(len)`
//! gives the address where the caller writes `len` bytes of UTF-8, `estimate(len)` counts them.
//! Built by `bindings/scripts/build.mjs`; on other targets it is an ordinary library (its tests).
#![cfg_attr(target_arch = "wasm32", no_std)]

#[path = "../../tokens/src/estimate.rs"]
mod estimate;

pub use estimate::estimate;

#[cfg(target_arch = "wasm32")]
mod exports {
    use core::arch::wasm32::{memory_grow, memory_size};
    use core::sync::atomic::{AtomicUsize, Ordering};

    const PAGE: usize = 65_536;
    /// Where inputs go: the module's memory as it was instantiated ends there, and the module
    /// allocates nothing, so what lies past it is the caller's.
    static INPUT: AtomicUsize = AtomicUsize::new(0);

    fn input_at() -> usize {
        match INPUT.load(Ordering::Relaxed) {
            0 => {
                let at = memory_size(0) * PAGE;
                INPUT.store(at, Ordering::Relaxed);
                at
            }
            at => at,
        }
    }

    /// The address of room for `len` bytes (the memory grows as needed; 0 when it cannot).
    #[unsafe(no_mangle)]
    pub extern "C" fn input(len: usize) -> usize {
        let at = input_at();
        let pages = (at + len).div_ceil(PAGE);
        let have = memory_size(0);
        if pages > have && memory_grow(0, pages - have) == usize::MAX {
            return 0;
        }
        at
    }

    /// The estimated tokens of the `len` bytes written at `input(len)`'s address; `usize::MAX`
    /// when they are not UTF-8.
    #[unsafe(no_mangle)]
    pub extern "C" fn estimate(len: usize) -> usize {
        // SAFETY: `input(len)` made these bytes part of the memory, and nothing else uses them.
        let bytes = unsafe { core::slice::from_raw_parts(input_at() as *const u8, len) };
        core::str::from_utf8(bytes).map_or(usize::MAX, super::estimate)
    }

    #[panic_handler]
    fn panic(_: &core::panic::PanicInfo) -> ! {
        core::arch::wasm32::unreachable()
    }
}
