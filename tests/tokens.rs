//! Token counting against gpt-tokenizer's vectors and every shared trace (R10.1).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::path::Path;

use context_workbench::tokens::{Encoding, TokenCounter};

#[test]
fn reproduces_every_cl100k_and_o200k_vector() {
    let mut checked = 0;
    for v in common::vectors() {
        let Some(encoding) = Encoding::from_name(&v.encoding) else { continue };
        let counter = TokenCounter::new(encoding);
        assert_eq!(counter.encode(&v.sample), v.tokens, "{} {:?}", v.encoding, v.sample);
        assert_eq!(counter.count(&v.sample), v.tokens.len());
        checked += 1;
    }
    assert_eq!(checked, 64 + 57, "every cl100k_base and o200k_base case");
}

/// Chunking is invisible: on every shared trace the chunked count equals tiktoken's own.
#[test]
fn chunked_counts_equal_unchunked_on_every_shared_trace() {
    let files = common::traces::files_under(Path::new("../shared/traces"));
    assert!(files.len() > 80, "expected the shared traces beside the clone");
    for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let counter = TokenCounter::new(encoding);
        let bpe = match encoding {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        };
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap();
            assert_eq!(counter.count(&text), bpe.encode_ordinary(&text).len(), "{}", file.display());
        }
    }
}
