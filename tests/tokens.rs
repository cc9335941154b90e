//! Token counting against gpt-tokenizer's vectors and every shared trace (R10.1).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::path::Path;

use context_workbench::tokens::{self, Encoding, TokenCounter};

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
    let files = common::traces::files_under(Path::new("data/traces"));
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

/// The rank file tiktoken-rs ships for `encoding` (the bytes the npm package serves), found
/// through `cargo metadata` exactly as `bindings/scripts/build.mjs` finds it: from the locked
/// graph, which `.ci/setup` fetches (`cargo fetch --locked`); nothing depends on a warm cache.
fn shipped_rank_file(encoding: Encoding) -> Vec<u8> {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr));
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON");
    let manifest = metadata["packages"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == "tiktoken-rs"))
        .and_then(|p| p["manifest_path"].as_str())
        .expect("tiktoken-rs is a dependency");
    let file = Path::new(manifest).with_file_name("assets").join(tokens::rank_file_name(encoding));
    std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// Ranks loaded at run time (as the npm package does) count exactly like the embedded ones.
#[test]
fn loaded_ranks_count_like_the_embedded_ones() {
    let files = common::traces::files_under(Path::new("data/traces/claude-code"));
    for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let file = shipped_rank_file(encoding);
        tokens::load_ranks(encoding, &file).expect("the shipped file is the official one");
        let loaded = tokens::parse_ranks(encoding, &file).unwrap();
        for v in common::vectors().iter().filter(|v| v.encoding == encoding.name()) {
            assert_eq!(loaded.encode_ordinary(&v.sample), v.tokens, "{} {:?}", v.encoding, v.sample);
        }
        let embedded = TokenCounter::new(encoding);
        for path in &files {
            let text = std::fs::read_to_string(path).unwrap();
            assert_eq!(loaded.encode_ordinary(&text).len(), embedded.count(&text), "{}", path.display());
        }
        let mut damaged = file.clone();
        damaged[1000] ^= 1;
        let err = tokens::load_ranks(encoding, &damaged).unwrap_err();
        assert!(err.to_string().contains(&format!("not the official {} rank file", encoding.name())), "{err}");
    }
}

/// The binary form the npm package ships (compiled from the shipped text file) loads, and its
/// encoder gives tiktoken-rs's token ids on the shared traces; a truncated or altered binary file
/// is refused with what was found, never counted.
#[test]
fn binary_ranks_encode_like_tiktoken() {
    let files = common::traces::files_under(Path::new("data/traces/claude-code"));
    for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let binary = tokens::compile_ranks(encoding, &shipped_rank_file(encoding)).unwrap();
        assert!(binary.len() < shipped_rank_file(encoding).len() / 2, "{} bytes", binary.len());
        tokens::load_ranks(encoding, &binary).expect("the compiled file is the official one");
        let reference = match encoding {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        };
        for path in &files {
            let text = std::fs::read_to_string(path).unwrap();
            let text = &text[..text.floor_char_boundary(200_000)];
            assert_eq!(TokenCounter::new(encoding).encode(text), reference.encode_ordinary(text), "{}", path.display());
        }
        for damaged in [binary[..binary.len() - 1].to_vec(), {
            let mut b = binary.clone();
            b[5000] ^= 1;
            b
        }] {
            let err = tokens::load_ranks(encoding, &damaged).unwrap_err();
            assert!(err.to_string().contains(&format!("not the official {} rank file", encoding.name())), "{err}");
        }
    }
}
