//! Exact token counts (R10.1), tiktoken's byte for byte: o200k_base by default, cl100k_base
//! selectable. The encoder ([`Bpe`]) searches a compact binary rank table in place (see `bpe.rs`).
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

use crate::error::Result;
use crate::model::{ContentPart, Message};

pub use estimate::estimate;
pub use ranks::{
    Bpe, Rank, binary_rank_file_name, compile_ranks, load_ranks, parse_ranks, prepare_encoding, rank_file_name,
    ranks_available, require_ranks,
};

/// Tokens the chat format adds around each message: `<|start|>`, the role,
/// `<|message|>` (or the separator) and `<|end|>`. This is the figure OpenAI's
/// cookbook gives for current chat models (3) plus the role token; the replay metrics of
/// the project use the same 4 so every report can be recomputed by hand.
pub const MESSAGE_OVERHEAD: usize = 4;

/// The BPE encodings the engine can count with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
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

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "o200k_base" => Some(Encoding::O200kBase),
            "cl100k_base" => Some(Encoding::Cl100kBase),
            _ => None,
        }
    }
}

/// Counts tokens in one encoding. Cheap to copy: the BPE tables are process-wide singletons,
/// built on first use from the embedded ranks, or loaded once with [`load_ranks`].
///
/// A counter made with [`TokenCounter::estimating_until_loaded`] counts with the calibrated
/// [`estimate`] until the encoding's ranks are loaded, then exactly: [`TokenCounter::is_exact`]
/// says which, and [`TokenCounter::cache_message_tokens`] caches nothing meanwhile.
#[derive(Clone, Copy)]
pub struct TokenCounter {
    encoding: Encoding,
    bpe: Option<&'static Bpe>,
}

impl std::fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenCounter").field("encoding", &self.encoding).finish()
    }
}

/// A count and whether it is the calibrated estimate rather than the exact figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TokenCount {
    pub tokens: usize,
    pub estimated: bool,
}

impl TokenCounter {
    /// A counter in `encoding`. Panics when the ranks are neither embedded (the default
    /// feature) nor loaded; code that may run without them (the wasm layer) calls
    /// [`TokenCounter::try_new`] or [`require_ranks`] first.
    pub fn new(encoding: Encoding) -> Self {
        Self::try_new(encoding).expect("the encoding's ranks are embedded or loaded")
    }

    /// A counter in `encoding`, or the error saying its ranks must be loaded first.
    pub fn try_new(encoding: Encoding) -> Result<Self> {
        let bpe = ranks::bpe(encoding).ok_or_else(|| ranks::missing(encoding))?;
        Ok(TokenCounter { encoding, bpe: Some(bpe) })
    }

    /// A counter that never fails: exact when the ranks are available, the calibrated estimate
    /// until they are loaded (it looks again at every count).
    pub fn estimating_until_loaded(encoding: Encoding) -> Self {
        TokenCounter { encoding, bpe: ranks::bpe(encoding) }
    }

    fn bpe(&self) -> Option<&'static Bpe> {
        self.bpe.or_else(|| ranks::bpe(self.encoding))
    }

    /// True when counts are exact, false while they are estimates (ranks not loaded yet).
    pub fn is_exact(&self) -> bool {
        self.bpe().is_some()
    }

    /// `Ok` when counts are exact, else the `ranks_not_loaded` error: what must not rest on an
    /// estimate (a save, a prompt's fitting) asks this first.
    pub fn require_exact(&self) -> Result<()> {
        if self.is_exact() { Ok(()) } else { Err(ranks::missing(self.encoding)) }
    }

    /// The tokens of `text` and whether the figure is an estimate.
    pub fn measure(&self, text: &str) -> TokenCount {
        match self.bpe() {
            Some(bpe) => TokenCount { tokens: exact_count(bpe, text), estimated: false },
            None => TokenCount { tokens: estimate(text), estimated: true },
        }
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The exact number of tokens of `text` (the estimate while the ranks are not loaded: see
    /// [`TokenCounter::measure`]).
    pub fn count(&self, text: &str) -> usize {
        self.measure(text).tokens
    }

    /// The token ids of `text` (special-token strings encoded as ordinary text); empty while
    /// the ranks are not loaded.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let Some(bpe) = self.bpe() else { return Vec::new() };
        chunks(text).flat_map(|chunk| bpe.encode_ordinary(chunk)).collect()
    }

    /// The tokens of a message's content plus [`MESSAGE_OVERHEAD`]; each part is counted
    /// on its own (text, reasoning, a call's name and arguments, a result's output and stderr).
    pub fn count_message_content(&self, content: &[ContentPart]) -> usize {
        let parts: usize = content
            .iter()
            .map(|part| match part {
                ContentPart::Text { text } | ContentPart::Reasoning { text, .. } => self.count(text),
                ContentPart::ToolCall(call) => self.count(&call.name) + self.count(&call.arguments),
                ContentPart::ToolResult(result) => {
                    self.count(&result.output) + result.stderr.as_deref().map_or(0, |s| self.count(s))
                }
                ContentPart::Opaque(opaque) => opaque.tokens as usize,
            })
            .sum();
        parts + MESSAGE_OVERHEAD
    }

    /// A message's tokens: its cached count when it has one, else counted now.
    pub fn message_tokens(&self, message: &Message) -> usize {
        message.tokens.map_or_else(|| self.count_message_content(&message.content), |t| t as usize)
    }

    /// Fill in `message.tokens` if it is not counted yet (the per-message cache of R10.1); an
    /// estimate is never cached, so a message recorded before the ranks is counted when it is
    /// next needed.
    pub fn cache_message_tokens(&self, message: &mut Message) {
        if message.tokens.is_none() && self.is_exact() {
            let n = self.count_message_content(&message.content);
            message.tokens = Some(u32::try_from(n).unwrap_or(u32::MAX));
        }
    }
}

/// A cheap estimate for text not yet sent (R10.1): a third of its bytes.
pub fn estimate_tokens(text: &str) -> usize {
    text.len() / 3
}

fn exact_count(bpe: &Bpe, text: &str) -> usize {
    chunks(text).map(|chunk| bpe.encode_ordinary(chunk).len()).sum()
}

/// Preferred chunk size: chunks end at the last safe boundary before this many bytes.
const TARGET_CHUNK: usize = 64 * 1024;
/// A run of whitespace (no safe boundary inside) is cut after this many characters. tiktoken
/// cannot count such a run at all (its regex, `fancy-regex`, runs out of its backtracking stack
/// at 1,000,000 characters); the engine counts it as these cuts make it, as it always has.
const MAX_WHITESPACE_RUN: usize = 999_000;
/// A stretch with no safe boundary and no long whitespace run (a 4 MB line of `=`, say) is cut
/// here, so one BPE call never holds more than a bounded piece.
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
    let mut whitespace_run = 0usize;
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
        if whitespace_run > MAX_WHITESPACE_RUN || i >= MAX_CHUNK {
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
pub(crate) fn is_safe_boundary(prev: char, next: char) -> bool {
    (next == ' ' && !prev.is_whitespace()) || (prev == '\n' && next.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counter() -> TokenCounter {
        TokenCounter::new(Encoding::O200kBase)
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
        assert_eq!(c.count(&text), c.bpe().unwrap().encode_ordinary(&text).len());
    }

    #[test]
    fn long_space_runs_are_exact_up_to_the_regex_limit() {
        let c = counter();
        let spaces = " ".repeat(800_000);
        assert_eq!(c.count(&spaces), c.bpe().unwrap().encode_ordinary(&spaces).len());
        let framed = format!("start{}end", " ".repeat(300_000));
        assert_eq!(c.count(&framed), c.bpe().unwrap().encode_ordinary(&framed).len());
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
        let mut stack = vec![std::path::PathBuf::from("data/traces")];
        let mut texts = Vec::new();
        while let Some(path) = stack.pop() {
            if path.is_dir() {
                stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            } else {
                texts.push(std::fs::read_to_string(&path).unwrap());
            }
        }
        assert!(texts.len() > 80, "expected the shared traces beside the clone");
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let bpe = TokenCounter::new(encoding).bpe().unwrap();
            for text in &texts {
                let chunked: usize = chunks_of(text, 256).map(|c| bpe.encode_ordinary(c).len()).sum();
                assert_eq!(chunked, bpe.encode_ordinary(text).len());
            }
        }
    }

    #[test]
    fn cuts_land_on_char_boundaries_and_respect_limits() {
        let text = "é".repeat(3 * MAX_CHUNK);
        let parts: Vec<&str> = chunks(&text).collect();
        assert!(parts.iter().all(|p| p.len() <= MAX_CHUNK + 4));
        assert_eq!(parts.concat(), text);
    }
}
