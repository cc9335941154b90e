//! The BPE ranks behind each encoding: embedded in the binary (feature `embedded-ranks`, on by
//! default: the CLI, the tests) or loaded at run time from a rank file the host supplies (the npm
//! package: browsers fetch the o200k_base ranks once and cache them, instead of downloading them
//! inside every `.wasm`).
//!
//! Two forms of a rank file are accepted, each checked byte for byte against the official one (by
//! size and checksum) before anything is built from it, so a loaded encoding counts exactly as the
//! embedded one:
//! - the binary form, `o200k_base.ranks` (what the npm package and the extension ship, built once
//!   at package time by [`compile_ranks`]): a header naming the encoding and the number of tokens,
//!   then each token as the two earlier tokens it joins (`joins.rs`). Loading expands it in one
//!   pass into the table [`Bpe`] searches in place: 1.2 MB (0.73 MB gzipped) for o200k_base,
//!   against 3.6 MB of text (1.69 MB).
//! - the text form, `o200k_base.tiktoken` (tiktoken's `openaipublic` file, also shipped in the
//!   tiktoken-rs crate): one `base64-token rank` line per token, compiled to the binary form first.

use std::sync::OnceLock;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use xxhash_rust::xxh3::xxh3_64;

use crate::Encoding;
use crate::bpe::{Bpe, Rank};
use crate::joins;
use crate::{Error, Result};

/// What identifies the official rank files of an encoding.
struct RankFile {
    /// The text file's size and FNV-1a 64.
    bytes: usize,
    checksum: u64,
    /// The binary form's size and xxh3-64.
    binary_bytes: usize,
    binary_checksum: u64,
    entries: usize,
}

const O200K_BASE: RankFile = RankFile {
    bytes: 3_613_922,
    checksum: 0xe9b0_d703_0f3d_eddc,
    binary_bytes: 1_200_011,
    binary_checksum: 0x67a1_e0a4_66e1_7524,
    entries: 199_998,
};

const CL100K_BASE: RankFile = RankFile {
    bytes: 1_681_126,
    checksum: 0x3565_51a9_06b1_fdee,
    binary_bytes: 601_560,
    binary_checksum: 0x4f84_ea43_6027_5319,
    entries: 100_256,
};

/// The first bytes of a binary rank file; the encoding's name follows (one length byte, the name).
const MAGIC: &[u8; 8] = b"cwranks2";

fn rank_file(encoding: Encoding) -> &'static RankFile {
    match encoding {
        Encoding::O200kBase => &O200K_BASE,
        Encoding::Cl100kBase => &CL100K_BASE,
    }
}

/// The text file's name: `o200k_base.tiktoken`.
pub fn rank_file_name(encoding: Encoding) -> String {
    format!("{}.tiktoken", encoding.name())
}

/// The binary file's name, what hosts serve: `o200k_base.ranks`.
pub fn binary_rank_file_name(encoding: Encoding) -> String {
    format!("{}.ranks", encoding.name())
}

/// Get ready to count `encoding` ahead of its rank file (the character classes its pieces are
/// cut by), so that a host can do it while the file downloads. Loading without it is as exact.
pub fn prepare_encoding(encoding: Encoding) -> Result<()> {
    let _ = encoding;
    crate::pieces::prepare();
    Ok(())
}

fn loaded(encoding: Encoding) -> &'static OnceLock<Bpe> {
    static O200K: OnceLock<Bpe> = OnceLock::new();
    static CL100K: OnceLock<Bpe> = OnceLock::new();
    match encoding {
        Encoding::O200kBase => &O200K,
        Encoding::Cl100kBase => &CL100K,
    }
}

/// The encoder of `encoding`, when its ranks are embedded or were loaded.
pub fn bpe(encoding: Encoding) -> Option<&'static Bpe> {
    #[cfg(feature = "embedded-ranks")]
    {
        Some(loaded(encoding).get_or_init(|| embedded(encoding)))
    }
    #[cfg(not(feature = "embedded-ranks"))]
    {
        loaded(encoding).get()
    }
}

/// The embedded encoder, from the ranks tiktoken-rs embeds (decoded token by token into the
/// binary form, once per process).
#[cfg(feature = "embedded-ranks")]
fn embedded(encoding: Encoding) -> Bpe {
    let core = match encoding {
        Encoding::O200kBase => tiktoken_rs::o200k_base(),
        Encoding::Cl100kBase => tiktoken_rs::cl100k_base(),
    }
    .expect("tiktoken-rs builds its own encodings");
    let entries = rank_file(encoding).entries;
    let tokens: Vec<Vec<u8>> =
        (0..entries as Rank).map(|r| core.decode_bytes(&[r]).expect("every rank below the count decodes")).collect();
    from_tokens(encoding, &tokens).expect("tiktoken-rs's ranks make a valid table")
}

/// True when `encoding` can count: its ranks are embedded in this build or were loaded.
pub fn ranks_available(encoding: Encoding) -> bool {
    #[cfg(feature = "embedded-ranks")]
    {
        let _ = encoding;
        true
    }
    #[cfg(not(feature = "embedded-ranks"))]
    {
        loaded(encoding).get().is_some()
    }
}

/// `Ok` when `encoding` can count, else the error an embedder sees before anything counts.
pub fn require_ranks(encoding: Encoding) -> Result<()> {
    if ranks_available(encoding) { Ok(()) } else { Err(missing(encoding)) }
}

fn missing(encoding: Encoding) -> Error {
    Error::RanksNotLoaded { encoding: encoding.name() }
}

/// The encoder of `encoding`, or the error saying its ranks must be loaded first.
pub fn encoder(encoding: Encoding) -> Result<&'static Bpe> {
    bpe(encoding).ok_or_else(|| missing(encoding))
}

/// Load the official rank file of `encoding`, binary (`o200k_base.ranks`) or text
/// (`o200k_base.tiktoken`); see the module docs. Loading an encoding that is already available
/// checks the file and changes nothing.
pub fn load_ranks(encoding: Encoding, file: &[u8]) -> Result<()> {
    let binary = file.starts_with(MAGIC);
    if binary {
        check_binary(encoding, file)?;
    } else {
        check_text(encoding, file)?;
    }
    if ranks_available(encoding) {
        return Ok(());
    }
    let bpe = if binary { from_binary(encoding, file)? } else { parse_ranks(encoding, file)? };
    // Single-threaded in wasm; natively a racing loader built the same table.
    let _ = loaded(encoding).set(bpe);
    Ok(())
}

/// The binary form of the official text rank file of `encoding` (what the npm package ships).
pub fn compile_ranks(encoding: Encoding, text: &[u8]) -> Result<Vec<u8>> {
    check_text(encoding, text)?;
    let tokens = text_tokens(encoding, text)?;
    let file = binary_file(encoding, &tokens, &from_tokens(encoding, &tokens)?)?;
    check_binary(encoding, &file)?;
    Ok(file)
}

fn refused(encoding: Encoding, len: usize, checksum: u64) -> Error {
    let want = rank_file(encoding);
    Error::InvalidRanks(format!(
        "not the official {} rank file: {len} bytes with checksum {checksum:016x}, expected {} bytes with checksum {:016x} ({}) or {} bytes with checksum {:016x} ({})",
        encoding.name(),
        want.bytes,
        want.checksum,
        rank_file_name(encoding),
        want.binary_bytes,
        want.binary_checksum,
        binary_rank_file_name(encoding),
    ))
}

/// Check `file` is the official text rank file of `encoding`, by size and FNV-1a 64.
fn check_text(encoding: Encoding, file: &[u8]) -> Result<()> {
    let want = rank_file(encoding);
    let checksum = fnv1a64(file);
    if file.len() == want.bytes && checksum == want.checksum {
        Ok(())
    } else {
        Err(refused(encoding, file.len(), checksum))
    }
}

/// Check `file` is the official binary rank file of `encoding`, by size and xxh3-64; a binary
/// file of another encoding says which it is.
fn check_binary(encoding: Encoding, file: &[u8]) -> Result<()> {
    let want = rank_file(encoding);
    let checksum = xxh3_64(file);
    if file.len() == want.binary_bytes && checksum == want.binary_checksum {
        return Ok(());
    }
    if let Some(other) = header(file).and_then(|(name, _)| Encoding::from_name(name)).filter(|e| *e != encoding) {
        return Err(Error::InvalidRanks(format!(
            "not the official {} rank file: this is {} (the {} ranks)",
            encoding.name(),
            binary_rank_file_name(other),
            other.name()
        )));
    }
    Err(refused(encoding, file.len(), checksum))
}

/// A binary file's encoding name and where its token lengths start.
fn header(file: &[u8]) -> Option<(&str, usize)> {
    let rest = file.strip_prefix(MAGIC)?;
    let (&len, rest) = rest.split_first()?;
    let name = std::str::from_utf8(rest.get(..usize::from(len))?).ok()?;
    Some((name, MAGIC.len() + 1 + usize::from(len)))
}

/// The binary file of `tokens` (in rank order), `bpe` their encoder.
fn binary_file(encoding: Encoding, tokens: &[Vec<u8>], bpe: &Bpe) -> Result<Vec<u8>> {
    let name = encoding.name().as_bytes();
    let body = joins::write(tokens, |bytes| bpe.rank(bytes))
        .map_err(|e| Error::InvalidRanks(format!("{} ranks: {e}", encoding.name())))?;
    let mut file = Vec::with_capacity(MAGIC.len() + 1 + name.len() + 4 + body.len());
    file.extend_from_slice(MAGIC);
    file.push(name.len() as u8);
    file.extend_from_slice(name);
    file.extend_from_slice(&(tokens.len() as u32).to_le_bytes());
    file.extend_from_slice(&body);
    Ok(file)
}

/// The encoder over a binary rank file (checked by the caller).
fn from_binary(encoding: Encoding, file: &[u8]) -> Result<Bpe> {
    let bad = |what: &str| Error::InvalidRanks(format!("{} binary rank file: {what}", encoding.name()));
    let (name, at) = header(file).ok_or_else(|| bad("no header"))?;
    if name != encoding.name() {
        return Err(bad(&format!("the header names {name}")));
    }
    let count = file
        .get(at..at + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or_else(|| bad("truncated"))?;
    if count != rank_file(encoding).entries {
        return Err(bad(&format!("{count} tokens, expected {}", rank_file(encoding).entries)));
    }
    let table = joins::expand(&file[at + 4..], count).map_err(|e| bad(&e))?;
    Bpe::new(table, count, encoding).map_err(|e| bad(&e.0))
}

/// The encoder of `tokens` (in rank order).
fn from_tokens(encoding: Encoding, tokens: &[Vec<u8>]) -> Result<Bpe> {
    Bpe::new(joins::table(tokens), tokens.len(), encoding)
        .map_err(|e| Error::InvalidRanks(format!("{} ranks: {}", encoding.name(), e.0)))
}

/// Build the encoder from a text rank file: one `base64-token rank` line per token, every rank
/// below the count exactly once (not checked against the official checksum: [`load_ranks`] does).
pub fn parse_ranks(encoding: Encoding, file: &[u8]) -> Result<Bpe> {
    from_tokens(encoding, &text_tokens(encoding, file)?)
}

/// The tokens of a text rank file, in rank order.
fn text_tokens(encoding: Encoding, file: &[u8]) -> Result<Vec<Vec<u8>>> {
    let want = rank_file(encoding);
    let text = std::str::from_utf8(file).map_err(|e| bad_line(encoding, 0, &format!("not UTF-8 ({e})")))?;
    let mut tokens: Vec<Vec<u8>> = vec![Vec::new(); want.entries];
    let mut found = 0;
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.is_empty()) {
        let (token, rank) = line.split_once(' ').ok_or_else(|| bad_line(encoding, i, "no space"))?;
        let rank: Rank = rank.parse().map_err(|_| bad_line(encoding, i, "the rank is not a number"))?;
        let token = STANDARD.decode(token).map_err(|_| bad_line(encoding, i, "the token is not base64"))?;
        if token.is_empty() || token.len() > usize::from(u8::MAX) {
            return Err(bad_line(encoding, i, "a token of 0 or more than 255 bytes"));
        }
        let slot = tokens.get_mut(rank as usize).ok_or_else(|| bad_line(encoding, i, "rank out of range"))?;
        if !slot.is_empty() {
            return Err(bad_line(encoding, i, "a token or rank repeats"));
        }
        *slot = token;
        found += 1;
    }
    if found != want.entries {
        return Err(bad_line(encoding, 0, &format!("{found} tokens, expected {}", want.entries)));
    }
    Ok(tokens)
}

fn bad_line(encoding: Encoding, index: usize, what: &str) -> Error {
    Error::InvalidRanks(format!("{} rank file, line {}: {what}", encoding.name(), index + 1))
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
            let err = parse_ranks(Encoding::Cl100kBase, file).expect_err("refused");
            assert!(err.to_string().contains(want), "{err} vs {want}");
        }
        let short = parse_ranks(Encoding::Cl100kBase, b"aGVsbG8= 0\n").expect_err("refused");
        assert!(short.to_string().contains("1 tokens, expected 100256"), "{short}");
    }

    /// The embedded encoder's binary form is the official one, and a binary file of one encoding
    /// offered as the other says which it is.
    #[cfg(feature = "embedded-ranks")]
    #[test]
    fn the_binary_forms_are_the_official_ones() {
        for encoding in Encoding::ALL {
            let core = match encoding {
                Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
                Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            };
            let tokens: Vec<Vec<u8>> =
                (0..rank_file(encoding).entries as Rank).map(|r| core.decode_bytes(&[r]).unwrap()).collect();
            let file = binary_file(encoding, &tokens, &from_tokens(encoding, &tokens).unwrap()).unwrap();
            println!("{}: {} bytes, xxh3 {:016x}", encoding.name(), file.len(), xxh3_64(&file));
            check_binary(encoding, &file).unwrap();
            load_ranks(encoding, &file).unwrap();
            let other = if encoding == Encoding::O200kBase { Encoding::Cl100kBase } else { Encoding::O200kBase };
            let err = load_ranks(other, &file).unwrap_err().to_string();
            assert!(err.contains(&format!("this is {}", binary_rank_file_name(encoding))), "{err}");
            let mut truncated = file.clone();
            truncated.truncate(file.len() - 1);
            let err = load_ranks(encoding, &truncated).unwrap_err().to_string();
            assert!(
                err.contains(&format!("not the official {} rank file: {} bytes", encoding.name(), file.len() - 1)),
                "{err}"
            );
            let mut altered = file;
            *altered.last_mut().unwrap() ^= 1;
            assert!(load_ranks(encoding, &altered).is_err());
        }
    }

    #[test]
    fn a_damaged_binary_table_is_refused_not_trusted() {
        let tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).chain([b"ab".to_vec(), b"ab".to_vec()]).collect();
        let err = from_tokens(Encoding::Cl100kBase, &tokens).unwrap_err().to_string();
        assert!(err.contains("token 257 repeats token 256"), "{err}");
        let missing_byte: Vec<Vec<u8>> = (1..=255u8).map(|b| vec![b]).collect();
        let err = from_tokens(Encoding::Cl100kBase, &missing_byte).unwrap_err().to_string();
        assert!(err.contains("the byte 0x00 is not a token"), "{err}");
    }

    #[test]
    fn the_checksum_is_fnv1a() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
