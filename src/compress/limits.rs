//! Every limit of the compressors (R3.2), with the defaults of the SPEC.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Family;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(default, deny_unknown_fields)]
pub struct CompressConfig {
    /// LS: entries listed after the counts.
    pub ls_entries: usize,
    /// Glob: hits listed after the count (R3.2: 5-10).
    pub glob_hits: usize,
    /// Grep: matching lines kept, with file and line number.
    pub grep_matches: usize,
    /// Read: lines of the read range kept at most …
    pub read_lines: usize,
    /// … within this share of the read's tokens (at least `summary_tokens`).
    pub read_share: f64,
    /// Edit: lines of the key snippet; a diff with more changed lines is summarised.
    pub edit_snippet_lines: usize,
    /// Write: first lines of a written file kept (R3.2: 20-50).
    pub write_lines: usize,
    /// Bash: last lines of stderr kept.
    pub stderr_tail_lines: usize,
    /// Bash stdout and unknown tools' outputs are summarised in about this many tokens of
    /// head, tail and error lines (beside the exit code, assertions and stderr tail).
    pub summary_tokens: usize,
    /// Lines longer than this many characters are cut in the middle.
    pub max_line_chars: usize,
    /// The history form is at most `max(share × input tokens, min_tokens)` tokens …
    pub budget_share: f64,
    pub min_tokens: usize,
    /// … and never more than this (failing test names excepted: they are always kept).
    pub max_tokens: usize,
    /// Tool name (case-insensitive) → family, on top of the built-in names.
    pub tool_families: BTreeMap<String, Family>,
}

impl Default for CompressConfig {
    fn default() -> Self {
        CompressConfig {
            ls_entries: 20,
            glob_hits: 10,
            grep_matches: 5,
            read_lines: 500,
            read_share: 0.2,
            edit_snippet_lines: 20,
            write_lines: 30,
            stderr_tail_lines: 20,
            summary_tokens: 120,
            max_line_chars: 400,
            budget_share: 1.0 / 3.0,
            min_tokens: 300,
            max_tokens: 4_000,
            tool_families: BTreeMap::new(),
        }
    }
}

impl CompressConfig {
    /// The token budget of the history form of an output of `tokens_in` tokens.
    pub fn budget(&self, tokens_in: usize) -> usize {
        let by_share = (tokens_in as f64 * self.budget_share).floor() as usize;
        by_share.max(self.min_tokens).min(self.max_tokens)
    }
}
