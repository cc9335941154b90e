//! The body of a binary rank file: every token as the two earlier tokens it joins.
//!
//! Byte-pair encoding builds every token of two or more bytes by joining two tokens of lower rank,
//! so a rank file need not spell out token bytes: token `r` is `(left, right)`, two ranks below
//! `r`, or a single byte. Stored as two planes of 3-byte ranks (low bytes, middle bytes, high
//! bytes, then the same for the right halves), which deflate compresses to 73% of what the
//! tokens' own bytes compress to (o200k_base: 0.73 MB against 0.99 MB gzipped). Loading expands it
//! in one pass, in rank order, into the table [`crate::Bpe`] searches in place: each token's
//! length byte, then all the tokens' bytes.

use crate::bpe::Rank;

/// A single-byte token's left half; its right half is the byte.
const BYTE: u32 = 0xFF_FFFF;

/// The table of `tokens` (in rank order): each token's length, then their bytes.
pub(crate) fn table(tokens: &[Vec<u8>]) -> Box<[u8]> {
    let lengths = tokens.iter().map(|t| t.len() as u8);
    lengths.chain(tokens.iter().flatten().copied()).collect()
}

/// The joins of `tokens`: for each, the first split of it into two tokens of lower rank (`rank`
/// finds a token's rank). Err names a token of two or more bytes that no split makes.
pub(crate) fn write(tokens: &[Vec<u8>], rank: impl Fn(&[u8]) -> Option<Rank>) -> Result<Vec<u8>, String> {
    let mut halves = Vec::with_capacity(tokens.len());
    for (r, token) in tokens.iter().enumerate() {
        let earlier = |bytes: &[u8]| rank(bytes).filter(|&h| (h as usize) < r);
        let join = match token.as_slice() {
            [byte] => Some((BYTE, u32::from(*byte))),
            _ => (1..token.len()).find_map(|k| Some((earlier(&token[..k])?, earlier(&token[k..])?))),
        };
        halves.push(join.ok_or_else(|| format!("token {r} is no join of two earlier tokens"))?);
    }
    let mut body = Vec::with_capacity(halves.len() * 6);
    for side in [|h: &(u32, u32)| h.0, |h: &(u32, u32)| h.1] {
        for shift in [0, 8, 16] {
            body.extend(halves.iter().map(|h| (side(h) >> shift) as u8));
        }
    }
    Ok(body)
}

/// The table of `count` tokens from their joins (`body`, as [`write`] makes it). Err says what
/// is wrong: a body of the wrong size, a join of a later token, a token over 255 bytes.
pub(crate) fn expand(body: &[u8], count: usize) -> Result<Box<[u8]>, String> {
    if body.len() != count * 6 {
        return Err(format!("{} bytes of joins for {count} tokens, expected {}", body.len(), count * 6));
    }
    let half = |side: usize, r: usize| {
        let plane = |i: usize| u32::from(body[(side * 3 + i) * count + r]);
        plane(0) | plane(1) << 8 | plane(2) << 16
    };
    let mut lengths = Vec::with_capacity(count);
    let mut offsets: Vec<u32> = Vec::with_capacity(count + 1);
    let mut bytes: Vec<u8> = Vec::with_capacity(count * 8);
    offsets.push(0);
    for r in 0..count {
        let (left, right) = (half(0, r), half(1, r));
        if left == BYTE {
            let byte = u8::try_from(right).map_err(|_| format!("token {r}: {right} is no byte"))?;
            bytes.push(byte);
        } else {
            for h in [left, right] {
                if h as usize >= r {
                    return Err(format!("token {r} joins token {h}, not an earlier one"));
                }
                bytes.extend_from_within(offsets[h as usize] as usize..offsets[h as usize + 1] as usize);
            }
        }
        let length = bytes.len() - *offsets.last().unwrap_or(&0) as usize;
        lengths.push(u8::try_from(length).map_err(|_| format!("token {r} is {length} bytes long, over 255"))?);
        offsets.push(u32::try_from(bytes.len()).map_err(|_| "the tokens are too large".to_owned())?);
    }
    lengths.extend_from_slice(&bytes);
    Ok(lengths.into_boxed_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens() -> Vec<Vec<u8>> {
        (0..=255u8).map(|b| vec![b]).chain([b"ab".to_vec(), b"abc".to_vec(), b"cab".to_vec()]).collect()
    }

    fn rank_in(tokens: &[Vec<u8>]) -> impl Fn(&[u8]) -> Option<Rank> + '_ {
        |bytes| tokens.iter().position(|t| t == bytes).map(|r| r as Rank)
    }

    #[test]
    fn joins_expand_to_the_tokens() {
        let tokens = tokens();
        let body = write(&tokens, rank_in(&tokens)).unwrap();
        assert_eq!(body.len(), tokens.len() * 6);
        assert_eq!(expand(&body, tokens.len()).unwrap(), table(&tokens));
    }

    #[test]
    fn a_token_that_joins_nothing_earlier_is_refused() {
        let mut tokens = tokens();
        tokens.swap(256, 257);
        assert_eq!(write(&tokens, rank_in(&tokens)).unwrap_err(), "token 256 is no join of two earlier tokens");
    }

    #[test]
    fn a_damaged_body_is_refused_with_what_is_wrong() {
        let tokens = tokens();
        let count = tokens.len();
        let body = write(&tokens, rank_in(&tokens)).unwrap();
        assert_eq!(expand(&body[1..], count).unwrap_err(), "1553 bytes of joins for 259 tokens, expected 1554");
        let mut later = body.clone();
        later[256] = 1; // token 256's left half: rank 257 (low byte 1, middle byte 1)
        later[count + 256] = 1;
        assert_eq!(expand(&later, count).unwrap_err(), "token 256 joins token 257, not an earlier one");
        let mut wide = body;
        wide[4 * count + 7] = 1; // token 7's byte: 7 + 256

        assert_eq!(expand(&wide, count).unwrap_err(), "token 7: 263 is no byte");
    }
}
