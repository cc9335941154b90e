//! Exact token counts, tiktoken's byte for byte: o200k_base and cl100k_base. The encoder
//! ([`Bpe`]) searches a compact binary rank table in place (`bpe.rs`); the ranks are embedded
//! (feature `embedded-ranks`, from tiktoken-rs) or loaded at run time from a rank file the host
//! supplies ([`load_ranks`]). [`estimate`] gives a calibrated figure before the ranks are in.
//!
//! Context Workbench's engine counts with this crate, and the npm package builds it alone into a
//! small `.wasm` (`crates/count-wasm`), so that a page counts exactly before the engine arrives.
//!
//! Special-token strings such as `<|endoftext|>` are counted as the ordinary text they are
//! (tool outputs contain them). Long inputs are cut into chunks at *safe boundaries*, positions
//! where both encodings' pre-tokenizer always starts a new piece, so the chunked count equals
//! the unchunked one. Chunking keeps memory flat on a 50 MB input. The pieces are cut by
//! `pieces.rs`, tiktoken's patterns as scanners (no regex is compiled to count).

mod bpe;
mod estimate;
mod joins;
mod pieces;
mod ranks;

use serde::{Deserialize, Serialize};

pub use bpe::{Bpe, Rank};
pub use estimate::estimate;
pub use ranks::{
    binary_rank_file_name, bpe, compile_ranks, encoder, load_ranks, parse_ranks, prepare_encoding, rank_file_name,
    ranks_available, require_ranks,
};

/// The BPE encodings the engine can count with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// GPT-4o, GPT-4.1, GPT-5, o-series; a good proxy for Claude and Gemini prompt sizes.
    #[default]
    O200kBase,
    /// GPT-4, GPT-3.5.
    Cl100kBase,
}

impl Encoding {
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    /// Every encoding, in the order they are offered.
    pub const ALL: [Encoding; 2] = [Encoding::O200kBase, Encoding::Cl100kBase];

    pub fn from_name(name: &str) -> Option<Self> {
        Encoding::ALL.into_iter().find(|encoding| encoding.name() == name)
    }

    /// `name`'s encoding, or the error that names the encodings there are.
    pub fn parse(name: &str) -> Result<Self, String> {
        Encoding::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = Encoding::ALL.iter().map(|e| e.name()).collect();
            format!("unknown encoding `{name}`; use {}", names.join(" or "))
        })
    }
}

/// Why counting or loading failed. The messages are the engine's (it wraps this type), lowercase,
/// and name the file or encoding; [`Error::code`] is what JavaScript sees as `error.code`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The encoding's ranks are not in this build and were not loaded ([`load_ranks`]).
    #[error(
        "the {encoding} ranks are not loaded: this build does not embed them; load the rank file {encoding}.tiktoken first"
    )]
    RanksNotLoaded { encoding: &'static str },
    /// A rank file that is not the official one, or damaged.
    #[error("invalid input: {0}")]
    InvalidRanks(String),
}

impl Error {
    /// A stable identifier: `ranks_not_loaded` or `invalid_input`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::RanksNotLoaded { .. } => "ranks_not_loaded",
            Error::InvalidRanks(_) => "invalid_input",
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Bpe {
    /// The exact number of tokens of `text`, counted chunk by chunk (see the crate docs). A long
    /// run without a safe boundary (megabytes of one letter, of spaces) is cut into equal chunks,
    /// each one piece whose merges cost seconds: a long chunk met again is not counted again.
    pub fn count(&self, text: &str) -> usize {
        let mut counted: Vec<(&str, usize)> = Vec::new();
        let count = |chunk| match counted.iter().find(|(seen, _)| *seen == chunk) {
            Some((_, n)) => *n,
            None => {
                let n = self.encode_ordinary(chunk).len();
                if chunk.len() > 2 * TARGET_CHUNK {
                    counted.push((chunk, n));
                }
                n
            }
        };
        chunks(text).map(count).sum()
    }

    /// The token ids of `text` (special-token strings encoded as ordinary text), chunk by chunk.
    pub fn encode(&self, text: &str) -> Vec<Rank> {
        chunks(text).flat_map(|chunk| self.encode_ordinary(chunk)).collect()
    }
}

/// Preferred chunk size: chunks end at the last safe boundary before this many bytes.
const TARGET_CHUNK: usize = 64 * 1024;
/// A run of whitespace (no safe boundary inside) is cut after this many characters. tiktoken
/// cannot count such a run at all (its regex, `fancy-regex`, runs out of its backtracking stack
/// at 1,000,000 characters); the engine counts it as these cuts make it, as it always has.
const MAX_WHITESPACE_RUN: usize = 999_000;
/// A run of one repeated character (megabytes of `a` or `=` in a tool output) is one piece whose
/// merges grow faster than its length (1 MiB: a third of a second natively): it is cut here.
const MAX_REPEAT_RUN: usize = 1024 * 1024;
/// A stretch with no safe boundary and none of the runs above (one-line JSON) is cut here, so
/// one BPE call never holds more than a bounded piece.
const MAX_CHUNK: usize = 4 * 1024 * 1024;

/// Split `text` into consecutive chunks whose token counts add up to the count of `text`.
fn chunks(text: &str) -> impl Iterator<Item = &str> {
    chunks_of(text, TARGET_CHUNK)
}
fn chunks_of(text: &str, target: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = next_cut(rest, target);
        let (chunk, tail) = rest.split_at(cut);
        rest = tail;
        Some(chunk)
    })
}

/// Where the first chunk of `text` ends: the last safe boundary within `target` bytes, else
/// the first one after it, else a forced cut (see the limits above).
fn next_cut(text: &str, target: usize) -> usize {
    if text.len() <= target {
        return text.len();
    }
    let mut last_safe = None;
    let (mut whitespace_run, mut repeat_run) = (0usize, 0usize);
    let mut prev: Option<char> = None;
    for (i, c) in text.char_indices() {
        if i > target
            && let Some(safe) = last_safe
        {
            return safe;
        }
        if prev.is_some_and(|p| is_safe_boundary(p, c)) {
            if i > target {
                return i;
            }
            last_safe = Some(i);
        }
        let horizontal_space = c.is_whitespace() && c != '\n' && c != '\r';
        whitespace_run = if horizontal_space { whitespace_run + 1 } else { 0 };
        repeat_run = if prev == Some(c) { repeat_run + 1 } else { 1 };
        if whitespace_run > MAX_WHITESPACE_RUN || repeat_run > MAX_REPEAT_RUN || i >= MAX_CHUNK {
            return i;
        }
        prev = Some(c);
    }
    text.len()
}

/// True when the pre-tokenizer regex of o200k_base and cl100k_base always starts a new piece
/// between `prev` and `next`, whatever surrounds them:
/// - a space after a non-whitespace character: no piece of either pattern ends in a space
///   unless it is all whitespace;
/// - an ASCII letter or digit after `\n`: no piece continues past a newline into a word or
///   number (the optional prefix of a word piece excludes `\r` and `\n`).
pub fn is_safe_boundary(prev: char, next: char) -> bool {
    (next == ' ' && !prev.is_whitespace()) || (prev == '\n' && next.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counter() -> &'static Bpe {
        bpe(Encoding::O200kBase).unwrap()
    }

    #[test]
    fn special_token_text_is_ordinary_text() {
        let c = counter();
        assert_eq!(c.count("<|endoftext|>"), 7);
        assert_eq!(c.count("a <|endofprompt|> b"), c.encode("a <|endofprompt|> b").len());
        assert_eq!(c.count(""), 0);
    }

    #[test]
    fn chunked_equals_unchunked_on_mixed_text() {
        let c = counter();
        let sample = "fn main() {\n    println!(\"héllo wörld\");\n}\n  \t\n12345 x\r\nabc/def ==> 'll\n";
        let text = sample.repeat(5000);
        assert!(text.len() > 4 * TARGET_CHUNK);
        assert!(chunks(&text).count() > 4);
        assert_eq!(chunks(&text).collect::<String>(), text);
        assert_eq!(c.count(&text), c.encode_ordinary(&text).len());
    }

    #[test]
    fn long_space_runs_are_exact_up_to_the_regex_limit() {
        let c = counter();
        let spaces = " ".repeat(800_000);
        assert_eq!(c.count(&spaces), c.encode_ordinary(&spaces).len());
        let framed = format!("start{}end", " ".repeat(300_000));
        assert_eq!(c.count(&framed), c.encode_ordinary(&framed).len());
    }

    #[test]
    fn two_megabytes_of_spaces_are_counted() {
        let n = counter().count(&" ".repeat(2_000_000));
        // 128 spaces are one token in o200k_base; the forced cuts cost at most a few tokens.
        assert!((15_625..15_640).contains(&n), "{n}");
    }

    /// Cut every shared trace at nearly every safe boundary: the sums still match tiktoken.
    #[test]
    fn tiny_chunks_of_every_shared_trace_add_up() {
        let mut stack = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/traces")];
        let mut texts = Vec::new();
        while let Some(path) = stack.pop() {
            if path.is_dir() {
                stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            } else {
                texts.push(std::fs::read_to_string(&path).unwrap());
            }
        }
        assert!(texts.len() > 80, "expected the shared traces beside the clone");
        for encoding in Encoding::ALL {
            let bpe = bpe(encoding).unwrap();
            for text in &texts {
                let chunked: usize = chunks_of(text, 256).map(|c| bpe.encode_ordinary(c).len()).sum();
                assert_eq!(chunked, bpe.encode_ordinary(text).len());
            }
        }
    }

    #[test]
    fn a_long_run_of_one_character_is_cut_and_its_equal_chunks_counted_once() {
        let c = counter();
        let run = "a".repeat(3 * MAX_REPEAT_RUN + 5);
        let parts: Vec<&str> = chunks(&run).collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [MAX_REPEAT_RUN, MAX_REPEAT_RUN, MAX_REPEAT_RUN, 5]
        );
        assert_eq!(c.count(&run), c.encode(&run).len());
        // A run of spaces is cut as whitespace, not sooner.
        assert_eq!(chunks(&" ".repeat(MAX_REPEAT_RUN + 10)).count(), 2);
        assert_eq!(chunks(&" ".repeat(MAX_WHITESPACE_RUN)).count(), 1);
    }

    #[test]
    fn cuts_land_on_char_boundaries_and_respect_limits() {
        let text = "é".repeat(3 * MAX_CHUNK);
        let parts: Vec<&str> = chunks(&text).collect();
        assert!(parts.iter().all(|p| p.len() <= MAX_CHUNK + 4));
        assert_eq!(parts.concat(), text);
    }
}
