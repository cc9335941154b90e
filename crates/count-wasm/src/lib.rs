//! Exact token counts alone (`crates/tokens`, nothing of the engine) as a WebAssembly module with
//! no imports: the npm package's `loadEncoding` instantiates it with a rank file, and from then on
//! `measureTokens` counts exactly, before the engine's .wasm (ten times larger) has arrived.
//! Built by `bindings/scripts/build.mjs` into `dist/count.wasm`; on other targets it is an
//! ordinary library (its tests).
//!
//! The exports take their bytes from one input buffer: `input(len)` gives the address where the
//! caller writes `len` bytes, then `load(encoding, len)` loads them as a rank file, or
//! `count(encoding, len)` counts them as UTF-8 text; a failed load leaves its message at
//! `message()`. An encoding is its index in [`ENCODINGS`].

use std::cell::RefCell;

use context_workbench_tokens::{Encoding, bpe, load_ranks, prepare_encoding};

/// The encodings by the index the exports take: the tokenizer's own order, which the npm
/// package's `ENCODINGS` repeats (its tests count with each).
pub const ENCODINGS: [Encoding; 2] = Encoding::ALL;

/// What `count` returns when the encoding's ranks are not loaded, or the index names none.
pub const NOT_LOADED: usize = usize::MAX;
/// What `count` returns when the input is not UTF-8.
pub const NOT_UTF8: usize = usize::MAX - 1;

thread_local! {
    /// The caller's bytes; after a failed `load`, the error's message.
    static BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The address of room for `len` bytes, valid until the next call; null when the memory cannot
/// grow that far.
#[cfg_attr(target_arch = "wasm32", unsafe(no_mangle))]
pub extern "C" fn input(len: usize) -> *mut u8 {
    BUFFER.with_borrow_mut(|buffer| {
        if buffer.len() < len {
            if buffer.try_reserve_exact(len - buffer.len()).is_err() {
                return std::ptr::null_mut();
            }
            buffer.resize(len, 0);
        }
        buffer.as_mut_ptr()
    })
}

/// The address of the message of the last failed `load`.
#[cfg_attr(target_arch = "wasm32", unsafe(no_mangle))]
pub extern "C" fn message() -> *const u8 {
    BUFFER.with_borrow(|buffer| buffer.as_ptr())
}

/// Get ready to load an encoding (the character classes its text is cut by), while its rank
/// file is on its way.
#[cfg_attr(target_arch = "wasm32", unsafe(no_mangle))]
pub extern "C" fn prepare(encoding: u32) {
    if let Some(&encoding) = ENCODINGS.get(encoding as usize) {
        let _ = prepare_encoding(encoding);
    }
}

/// Load the `len` bytes at `input(len)` as `encoding`'s rank file (binary or text, checked
/// against the official one). 0 when loaded; else the length of the error's message, which is
/// then at `message()`'s address (read it before the next call).
#[cfg_attr(target_arch = "wasm32", unsafe(no_mangle))]
pub extern "C" fn load(encoding: u32, len: usize) -> usize {
    BUFFER.with_borrow_mut(|buffer| {
        let file = &buffer[..len.min(buffer.len())];
        let loaded = match ENCODINGS.get(encoding as usize) {
            Some(&encoding) => load_ranks(encoding, file).map_err(|e| e.to_string()),
            None => Err(format!("invalid input: no encoding has the index {encoding}")),
        };
        // The file is in the table now (or refused): its 1.2 MB are not kept twice.
        *buffer = loaded.err().map(String::into_bytes).unwrap_or_default();
        buffer.len()
    })
}

/// The exact tokens of the `len` bytes of UTF-8 at `input(len)` in `encoding`; [`NOT_LOADED`]
/// while its ranks are not loaded, [`NOT_UTF8`] for bytes that are not UTF-8.
#[cfg_attr(target_arch = "wasm32", unsafe(no_mangle))]
pub extern "C" fn count(encoding: u32, len: usize) -> usize {
    let Some(bpe) = ENCODINGS.get(encoding as usize).and_then(|&e| bpe(e)) else { return NOT_LOADED };
    BUFFER.with_borrow(|buffer| match std::str::from_utf8(&buffer[..len.min(buffer.len())]) {
        Ok(text) => bpe.count(text),
        Err(_) => NOT_UTF8,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(bytes: &[u8]) {
        let at = input(bytes.len());
        // SAFETY: `input` made room for exactly these bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), at, bytes.len()) };
    }

    fn message_of(len: usize) -> String {
        // SAFETY: a failed `load` left `len` bytes of its message there.
        String::from_utf8(unsafe { std::slice::from_raw_parts(message(), len) }.to_vec()).unwrap()
    }

    /// Natively the workspace's tests build the tokenizer with its embedded ranks; the npm
    /// package's tests run the .wasm without them (`bindings/test/count.test.mjs`).
    #[test]
    fn room_that_cannot_be_had_is_null() {
        assert!(input(usize::MAX).is_null());
        assert!(!input(16).is_null());
    }

    #[test]
    fn counts_wait_for_the_ranks_and_bad_files_are_named() {
        let loaded = context_workbench_tokens::ranks_available(Encoding::O200kBase);
        write(b"hello world");
        assert_eq!(count(0, 11), if loaded { 2 } else { NOT_LOADED });
        assert_eq!(count(7, 11), NOT_LOADED);
        write(b"aGVsbG8= 0\n");
        let len = load(0, 11);
        assert!(
            message_of(len).starts_with("invalid input: not the official o200k_base rank file: 11 bytes"),
            "{}",
            message_of(len)
        );
        let len = load(9, 0);
        assert_eq!(message_of(len), "invalid input: no encoding has the index 9");
        write(&[0xff, 0xfe]);
        assert_eq!(count(0, 2), if loaded { NOT_UTF8 } else { NOT_LOADED });
    }
}
