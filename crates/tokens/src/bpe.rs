//! Byte-pair encoding over a compact binary rank table, searched in place.
//!
//! The table (built from a rank file by [`crate::load_ranks`]): one byte per token giving its length,
//! then every token's bytes, in rank order. Loading it builds no map of owned tokens: one pass
//! computes each token's offset into the table and fills a flat open-addressing index (`u32`
//! slots, a rank each, keyed by the xxh3 of the token's bytes) that lookups probe and then
//! compare against the table's bytes. That is what makes ranks load in milliseconds where building
//! tiktoken-rs's `CoreBPE` (three hash maps and a sorted copy of 200,000 owned tokens) takes
//! hundreds in wasm.
//!
//! The encoding itself is tiktoken's, line for line: the same pieces as its pre-tokenizer regex
//! (cut by `pieces.rs`), a whole piece that is a token is that token, otherwise
//! the pieces are merged lowest rank first with tiktoken's two merge loops (the quadratic one below
//! 100 bytes, the heap one above). The tests compare every shared trace and the test vectors
//! against tiktoken-rs token for token.

use std::collections::BinaryHeap;

use xxhash_rust::xxh3::xxh3_64;

use crate::Encoding;
use crate::pieces::pieces;

/// A token's id.
pub type Rank = u32;

/// The encoder of one encoding: its binary rank file and the index over it.
pub struct Bpe {
    file: Box<[u8]>,
    /// `offsets[r]..offsets[r + 1]` are token `r`'s bytes in `file`.
    offsets: Box<[u32]>,
    /// Open addressing, linear probing: `rank + 1`, or 0 for an empty slot.
    slots: Box<[u32]>,
    mask: usize,
    encoding: Encoding,
}

impl std::fmt::Debug for Bpe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bpe").field("tokens", &self.tokens()).finish()
    }
}

/// Why a binary table was refused (the caller names the file).
#[derive(Debug)]
pub(crate) struct TableError(pub String);

impl Bpe {
    /// The encoder over a table of `count` tokens: their lengths, then their bytes. Refuses a
    /// table whose lengths do not add up to it, with a repeated or empty token, or missing a
    /// single byte (every byte must be a token, or some text could not be encoded). `encoding`
    /// says how text is cut into pieces.
    pub(crate) fn new(file: Box<[u8]>, count: usize, encoding: Encoding) -> Result<Self, TableError> {
        let lengths =
            file.get(..count).ok_or_else(|| TableError(format!("truncated: {count} token lengths expected")))?;
        let mut offsets = Vec::with_capacity(count + 1);
        let mut at = count;
        for &len in lengths {
            if len == 0 {
                return Err(TableError("an empty token".into()));
            }
            offsets.push(u32::try_from(at).map_err(|_| TableError("too large".into()))?);
            at += usize::from(len);
        }
        offsets.push(u32::try_from(at).map_err(|_| TableError("too large".into()))?);
        if at != file.len() {
            return Err(TableError(format!(
                "the tokens take {} bytes, the file holds {}",
                at - count,
                file.len() - count
            )));
        }
        let size = (count * 2).next_power_of_two().max(2);
        let mut bpe = Bpe {
            file,
            offsets: offsets.into_boxed_slice(),
            slots: vec![0; size].into_boxed_slice(),
            mask: size - 1,
            encoding,
        };
        for rank in 0..count {
            bpe.index(rank)?;
        }
        if let Some(byte) = (0..=255u8).find(|b| bpe.rank(&[*b]).is_none()) {
            return Err(TableError(format!("the byte {byte:#04x} is not a token")));
        }
        Ok(bpe)
    }

    #[inline]
    fn index(&mut self, rank: usize) -> Result<(), TableError> {
        let token = self.token(rank as Rank);
        let mut i = slot_of(token, self.mask);
        loop {
            match self.slots[i] {
                0 => break,
                taken if self.token(taken - 1) == token => {
                    return Err(TableError(format!("token {rank} repeats token {}", taken - 1)));
                }
                _ => i = (i + 1) & self.mask,
            }
        }
        self.slots[i] = rank as Rank + 1;
        Ok(())
    }

    /// How many tokens the table holds.
    pub fn tokens(&self) -> usize {
        self.offsets.len() - 1
    }

    fn token(&self, rank: Rank) -> &[u8] {
        let r = rank as usize;
        &self.file[self.offsets[r] as usize..self.offsets[r + 1] as usize]
    }

    /// The rank of the token whose bytes are `bytes`, if there is one.
    #[inline]
    pub fn rank(&self, bytes: &[u8]) -> Option<Rank> {
        let mut i = slot_of(bytes, self.mask);
        loop {
            match self.slots[i] {
                0 => return None,
                slot if self.token(slot - 1) == bytes => return Some(slot - 1),
                _ => i = (i + 1) & self.mask,
            }
        }
    }

    /// The tokens of `text`, special-token strings as ordinary text: tiktoken's `encode_ordinary`.
    pub fn encode_ordinary(&self, text: &str) -> Vec<Rank> {
        let mut out = Vec::new();
        for piece in pieces(self.encoding, text) {
            self.encode_piece(piece.as_bytes(), &mut out);
        }
        out
    }

    fn encode_piece(&self, piece: &[u8], out: &mut Vec<Rank>) {
        if let Some(rank) = self.rank(piece) {
            out.push(rank);
        } else if piece.len() < 100 {
            let parts = self.merge(piece);
            out.extend(parts.windows(2).map(|w| self.known(&piece[w[0].0..w[1].0])));
        } else {
            self.merge_large(piece, out);
        }
    }

    /// The rank of bytes the merge found to be a token (every byte is one, checked on load).
    fn known(&self, bytes: &[u8]) -> Rank {
        self.rank(bytes).unwrap_or(Rank::MAX)
    }

    /// tiktoken's `_byte_pair_merge`: the boundaries of the piece's tokens.
    fn merge(&self, piece: &[u8]) -> Vec<(usize, Rank)> {
        let mut parts = Vec::with_capacity(piece.len() + 1);
        let mut min_rank: (Rank, usize) = (Rank::MAX, usize::MAX);
        for i in 0..piece.len() - 1 {
            let rank = self.rank(&piece[i..i + 2]).unwrap_or(Rank::MAX);
            if rank < min_rank.0 {
                min_rank = (rank, i);
            }
            parts.push((i, rank));
        }
        parts.push((piece.len() - 1, Rank::MAX));
        parts.push((piece.len(), Rank::MAX));

        let get_rank = |parts: &Vec<(usize, Rank)>, i: usize| {
            if (i + 3) < parts.len() {
                self.rank(&piece[parts[i].0..parts[i + 3].0]).unwrap_or(Rank::MAX)
            } else {
                Rank::MAX
            }
        };

        while min_rank.0 != Rank::MAX {
            let i = min_rank.1;
            if i > 0 {
                parts[i - 1].1 = get_rank(&parts, i - 1);
            }
            parts[i].1 = get_rank(&parts, i);
            parts.remove(i + 1);

            min_rank = (Rank::MAX, usize::MAX);
            for (i, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
                if rank < min_rank.0 {
                    min_rank = (rank, i);
                }
            }
        }
        parts
    }

    /// tiktoken's `_byte_pair_merge_large`: the same merges with a heap, for long pieces.
    fn merge_large(&self, piece: &[u8], out: &mut Vec<Rank>) {
        let mut state = Vec::with_capacity(piece.len());
        state.push(State { prev: usize::MAX, end: 1, next_end: 2, next_rank: Rank::MAX, cur_rank: Rank::MAX });
        let mut heap = BinaryHeap::with_capacity(piece.len());
        for i in 0..piece.len() - 1 {
            if let Some(rank) = self.rank(&piece[i..i + 2]) {
                heap.push(Merge { start: i, rank });
                state[i].next_rank = rank;
            }
            state.push(State { prev: i, end: i + 2, next_end: i + 3, next_rank: Rank::MAX, cur_rank: Rank::MAX });
        }

        let potential_merge = |state: &mut Vec<State>, heap: &mut BinaryHeap<Merge>, start: usize, next_end: usize| {
            state[start].next_end = next_end;
            state[start].next_rank = Rank::MAX;
            if next_end <= piece.len()
                && let Some(rank) = self.rank(&piece[start..next_end])
            {
                heap.push(Merge { start, rank });
                state[start].next_rank = rank;
            }
        };

        while let Some(left) = heap.pop() {
            if left.rank == Rank::MAX {
                break;
            }
            if left.rank != state[left.start].next_rank {
                continue;
            }
            let left_start = left.start;
            let right_start = state[left_start].end;
            let right_end = state[left_start].next_end;
            let right_next_end = state[right_start].next_end;
            state[left_start].cur_rank = state[left_start].next_rank;
            state[left_start].end = right_end;
            potential_merge(&mut state, &mut heap, left_start, right_next_end);
            if right_end < state.len() {
                state[right_end].prev = left_start;
            }
            if left_start > 0 {
                let prev_start = state[left_start].prev;
                potential_merge(&mut state, &mut heap, prev_start, right_end);
            }
            state[right_start].next_rank = Rank::MAX;
        }

        let mut i = 0;
        while i < state.len() {
            if state[i].cur_rank != Rank::MAX {
                out.push(state[i].cur_rank);
            } else {
                out.push(self.known(&piece[i..state[i].end]));
            }
            i = state[i].end;
        }
    }
}

#[inline]
fn slot_of(bytes: &[u8], mask: usize) -> usize {
    (xxh3_64(bytes) as usize) & mask
}

#[derive(Eq, PartialEq, Clone, Copy)]
struct Merge {
    start: usize,
    rank: Rank,
}

impl Ord for Merge {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.rank.cmp(&self.rank).then_with(|| other.start.cmp(&self.start))
    }
}

impl PartialOrd for Merge {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

struct State {
    prev: usize,
    end: usize,
    next_end: usize,
    next_rank: Rank,
    cur_rank: Rank,
}
