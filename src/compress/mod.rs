//! Tool-output compression for history (R3): every tool family's output becomes a short,
//! faithful entry that says what it dropped and where the original is.

pub mod logs;
