//! The workbench of seed 000 (R5): the raw trace stays whole while the prompt view is tidied at
//! its tail. A window of recent turns is replaced by one COMPRESSED_TURNS block and a STATE_DELTA
//! is appended after it, so everything before the window stays byte-identical and the provider's
//! prefix cache keeps hitting. What goes into a block is checked against what was observed.
//!
//! - `board`: the state board and its versioned deltas (R5.2, R5.3).
//! - `block`: the COMPRESSED_TURNS block, its rendering, neutralisation and budget.
//! - `turns`: turns, and the triggers that nominate a compaction (R5.5).
//! - `cost`: the cache cost model that decides whether a rewrite pays.
//! - `files`: what the agent knows of each file, edits applied; anchors are cut from it.
//! - `extractive`: the embedded compactor that needs no LLM.
//! - `conclusions`: the sentences of the agent's messages that state a finding or a decision.
//! - `index`: the files and code names of a compacted window, listed by code in every block.
//! - `evidence`: what was observed, and the checks of anchors and evidence pointers (R5.6).
//! - `recall`: the `recall` tool, the originals of compressed forms back on request.
//! - `llm`: the STATE_UPDATE and TAIL_COMPACTION requests and their replies (R5.8).

pub(crate) mod block;
pub(crate) mod board;
pub(crate) mod conclusions;
pub(crate) mod cost;
pub(crate) mod evidence;
pub(crate) mod extractive;
pub(crate) mod files;
pub(crate) mod index;
pub(crate) mod llm;
pub mod recall;
pub(crate) mod turns;

pub use block::{CompressedTurns, Learned, Replaces};
pub use board::{Anchor, Fact, StateBoard, StateDelta};
pub use evidence::{Observations, Rejection};
