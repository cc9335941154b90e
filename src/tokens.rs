//! Exact token counts (R10.1), tiktoken's byte for byte: o200k_base by default, cl100k_base
//! selectable. The tokenizer is a crate of its own (`crates/tokens`, re-exported here); this
//! module adds what the engine counts with it: [`TokenCounter`], the tokens of a message, and
//! the estimate's marking while the ranks are not loaded.

use serde::Serialize;

use crate::error::Result;
use crate::model::{ContentPart, Message};

pub use context_workbench_tokens::{
    Bpe, Encoding, binary_rank_file_name, compile_ranks, estimate, is_safe_boundary, load_ranks, parse_ranks,
    prepare_encoding, rank_file_name, ranks_available,
};

/// Tokens the chat format adds around each message: `<|start|>`, the role,
/// `<|message|>` (or the separator) and `<|end|>`. This is the figure OpenAI's
/// cookbook gives for current chat models (3) plus the role token; the replay metrics of
/// the project use the same 4 so every report can be recomputed by hand.
pub const MESSAGE_OVERHEAD: usize = 4;

/// `Ok` when `encoding` can count (its ranks are embedded in this build or were loaded), else the
/// error an embedder sees before anything counts.
pub fn require_ranks(encoding: Encoding) -> Result<()> {
    Ok(context_workbench_tokens::require_ranks(encoding)?)
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
        let bpe = context_workbench_tokens::encoder(encoding)?;
        Ok(TokenCounter { encoding, bpe: Some(bpe) })
    }

    /// A counter that never fails: exact when the ranks are available, the calibrated estimate
    /// until they are loaded (it looks again at every count).
    pub fn estimating_until_loaded(encoding: Encoding) -> Self {
        TokenCounter { encoding, bpe: context_workbench_tokens::bpe(encoding) }
    }

    fn bpe(&self) -> Option<&'static Bpe> {
        self.bpe.or_else(|| context_workbench_tokens::bpe(self.encoding))
    }

    /// True when counts are exact, false while they are estimates (ranks not loaded yet).
    pub fn is_exact(&self) -> bool {
        self.bpe().is_some()
    }

    /// `Ok` when counts are exact, else the `ranks_not_loaded` error: what must not rest on an
    /// estimate (a save, a prompt's fitting) asks this first.
    pub fn require_exact(&self) -> Result<()> {
        require_ranks(self.encoding)
    }

    /// The tokens of `text` and whether the figure is an estimate.
    pub fn measure(&self, text: &str) -> TokenCount {
        match self.bpe() {
            Some(bpe) => TokenCount { tokens: bpe.count(text), estimated: false },
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
        bpe.encode(text)
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
