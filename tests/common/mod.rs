//! Shared by the native and the wasm test suites; each test crate uses a part of it.
#![allow(dead_code)]

#[cfg(not(target_arch = "wasm32"))]
pub mod peak;
#[cfg(not(target_arch = "wasm32"))]
pub mod traces;

/// gpt-tokenizer's test plan (MIT), read from `data/testvectors` at compile time so the same
/// bytes reach native and wasm tests.
pub const TEST_PLANS: &str = include_str!("../../data/testvectors/tokenizers/gpt-tokenizer-TestPlans.txt");

/// One case of the test plan.
pub struct Vector {
    pub encoding: String,
    pub sample: String,
    pub tokens: Vec<u32>,
}

/// Every case of the test plan: blocks of `EncodingName:`, `Sample:`, `Encoded: [..]`.
pub fn vectors() -> Vec<Vector> {
    TEST_PLANS
        .split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let field = |name: &str| {
                block
                    .lines()
                    .find_map(|l| l.strip_prefix(name))
                    .unwrap_or_else(|| panic!("test plan block without {name}: {block}"))
                    .strip_prefix(' ')
                    .unwrap_or("")
                    .to_owned()
            };
            let encoded = field("Encoded:");
            let tokens = encoded
                .trim_matches(|c| c == '[' || c == ']')
                .split(", ")
                .filter(|t| !t.is_empty())
                .map(|t| t.parse().expect("token id"))
                .collect();
            Vector { encoding: field("EncodingName:"), sample: field("Sample:"), tokens }
        })
        .collect()
}
