//! The BPE ranks behind each encoding: embedded in the binary (feature `embedded-ranks`, on by
//! default: the CLI, the tests) or loaded at run time from the `.tiktoken` rank file a host
//! supplies (the npm package: browsers fetch the 3.6 MB o200k_base file once and cache it,
//! instead of downloading it inside every `.wasm`).
//!
//! A loaded file must be byte for byte the official one (tiktoken's `openaipublic` file, also
//! shipped in the tiktoken-rs crate), checked by size and checksum before it is parsed, so a
//! loaded encoding counts exactly as the embedded one.

use std::sync::OnceLock;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rustc_hash::FxHashMap;
use tiktoken_rs::{CoreBPE, Rank};

use super::Encoding;
use crate::error::{Error, Result};

/// What identifies the official rank file of an encoding.
struct RankFile {
    bytes: usize,
    /// FNV-1a 64 of the whole file.
    checksum: u64,
    entries: usize,
    special_tokens: &'static [(&'static str, Rank)],
    pattern: &'static str,
}

const O200K_BASE: RankFile = RankFile {
    bytes: 3_613_922,
    checksum: 0xe9b0_d703_0f3d_eddc,
    entries: 199_998,
    special_tokens: &[("<|endoftext|>", 199_999), ("<|endofprompt|>", 200_018)],
    pattern: tiktoken_rs::O200K_BASE_PAT_STR,
};

const CL100K_BASE: RankFile = RankFile {
    bytes: 1_681_126,
    checksum: 0x3565_51a9_06b1_fdee,
    entries: 100_256,
    special_tokens: &[
        ("<|endoftext|>", 100_257),
        ("<|fim_prefix|>", 100_258),
        ("<|fim_middle|>", 100_259),
        ("<|fim_suffix|>", 100_260),
        ("<|endofprompt|>", 100_276),
    ],
    pattern: r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s",
};

fn rank_file(encoding: Encoding) -> &'static RankFile {
    match encoding {
        Encoding::O200kBase => &O200K_BASE,
        Encoding::Cl100kBase => &CL100K_BASE,
    }
}

/// The file name hosts serve the ranks under: `o200k_base.tiktoken`.
pub fn rank_file_name(encoding: Encoding) -> String {
    format!("{}.tiktoken", encoding.name())
}

fn loaded(encoding: Encoding) -> &'static OnceLock<CoreBPE> {
    static O200K: OnceLock<CoreBPE> = OnceLock::new();
    static CL100K: OnceLock<CoreBPE> = OnceLock::new();
    match encoding {
        Encoding::O200kBase => &O200K,
        Encoding::Cl100kBase => &CL100K,
    }
}

/// The BPE of `encoding`, when its ranks are embedded or were loaded.
pub fn bpe(encoding: Encoding) -> Option<&'static CoreBPE> {
    #[cfg(feature = "embedded-ranks")]
    {
        Some(match encoding {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        })
    }
    #[cfg(not(feature = "embedded-ranks"))]
    {
        loaded(encoding).get()
    }
}

/// True when `encoding` can count: its ranks are embedded in this build or were loaded.
pub fn ranks_available(encoding: Encoding) -> bool {
    bpe(encoding).is_some()
}

/// `Ok` when `encoding` can count, else the error an embedder sees before anything counts.
pub fn require_ranks(encoding: Encoding) -> Result<()> {
    if ranks_available(encoding) { Ok(()) } else { Err(missing(encoding)) }
}

pub(super) fn missing(encoding: Encoding) -> Error {
    Error::RanksNotLoaded { encoding: encoding.name() }
}

/// Load the official rank file of `encoding` (see the module docs). Loading an encoding that
/// is already available checks the file and changes nothing.
pub fn load_ranks(encoding: Encoding, file: &[u8]) -> Result<()> {
    check_file(encoding, file)?;
    if ranks_available(encoding) {
        return Ok(());
    }
    let bpe = parse_ranks(encoding, file)?;
    // Single-threaded in wasm; natively a racing loader built the same table.
    let _ = loaded(encoding).set(bpe);
    Ok(())
}

/// Check `file` is the official rank file of `encoding`, by size and checksum.
fn check_file(encoding: Encoding, file: &[u8]) -> Result<()> {
    let want = rank_file(encoding);
    let checksum = fnv1a64(file);
    if file.len() == want.bytes && checksum == want.checksum {
        return Ok(());
    }
    Err(Error::InvalidInput(format!(
        "not the official {} rank file: {} bytes with checksum {checksum:016x}, expected {} bytes with checksum {:016x}",
        encoding.name(),
        file.len(),
        want.bytes,
        want.checksum
    )))
}

/// Build the BPE from a rank file: one `base64-token rank` line per token. The checks keep
/// `CoreBPE::new` from ever seeing input it would panic on (repeated ranks).
pub fn parse_ranks(encoding: Encoding, file: &[u8]) -> Result<CoreBPE> {
    let want = rank_file(encoding);
    let text = std::str::from_utf8(file).map_err(|e| bad_line(encoding, 0, &format!("not UTF-8 ({e})")))?;
    let mut encoder: FxHashMap<Vec<u8>, Rank> = FxHashMap::default();
    encoder.reserve(want.entries);
    let mut seen = vec![false; want.entries];
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.is_empty()) {
        let (token, rank) = line.split_once(' ').ok_or_else(|| bad_line(encoding, i, "no space"))?;
        let rank: Rank = rank.parse().map_err(|_| bad_line(encoding, i, "the rank is not a number"))?;
        let token = STANDARD.decode(token).map_err(|_| bad_line(encoding, i, "the token is not base64"))?;
        let slot = seen.get_mut(rank as usize).ok_or_else(|| bad_line(encoding, i, "rank out of range"))?;
        if std::mem::replace(slot, true) || encoder.insert(token, rank).is_some() {
            return Err(bad_line(encoding, i, "a token or rank repeats"));
        }
    }
    if encoder.len() != want.entries {
        return Err(bad_line(encoding, 0, &format!("{} tokens, expected {}", encoder.len(), want.entries)));
    }
    let specials = want.special_tokens.iter().map(|(s, r)| ((*s).to_owned(), *r)).collect();
    CoreBPE::new(encoder, specials, want.pattern)
        .map_err(|e| Error::InvalidInput(format!("{} ranks: {e}", encoding.name())))
}

fn bad_line(encoding: Encoding, index: usize, what: &str) -> Error {
    Error::InvalidInput(format!("{} rank file, line {}: {what}", encoding.name(), index + 1))
}

/// FNV-1a, 64 bits: enough to tell the official file from any other, with no extra crate.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrong_file_is_refused_with_what_was_found() {
        let err = load_ranks(Encoding::O200kBase, b"aGVsbG8= 0\n").unwrap_err();
        assert_eq!(err.code(), "invalid_input");
        assert!(err.to_string().contains("not the official o200k_base rank file: 11 bytes"), "{err}");
        let cl100k_for_o200k = vec![b'x'; CL100K_BASE.bytes];
        assert!(load_ranks(Encoding::O200kBase, &cl100k_for_o200k).is_err());
    }

    #[test]
    fn malformed_lines_are_named_and_never_panic() {
        let cases: [(&[u8], &str); 5] = [
            (b"aGVsbG8=\n", "line 1: no space"),
            (b"aGVsbG8= x\n", "line 1: the rank is not a number"),
            (b"!!! 0\n", "line 1: the token is not base64"),
            (b"aGVsbG8= 0\nd29ybGQ= 0\n", "line 2: a token or rank repeats"),
            (b"aGVsbG8= 999999999\n", "line 1: rank out of range"),
        ];
        for (file, want) in cases {
            let err = parse_ranks(Encoding::Cl100kBase, file).err().expect("refused");
            assert!(err.to_string().contains(want), "{err} vs {want}");
        }
        let short = parse_ranks(Encoding::Cl100kBase, b"aGVsbG8= 0\n").err().expect("refused");
        assert!(short.to_string().contains("1 tokens, expected 100256"), "{short}");
    }

    #[test]
    fn the_checksum_is_fnv1a() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
