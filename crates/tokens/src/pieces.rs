//! tiktoken's pre-tokenizers, the patterns of o200k_base and cl100k_base (`ranks.rs` keeps them
//! as tiktoken-rs writes them), as hand-written scanners that cut a text into the same pieces.
//!
//! The patterns are ordered alternations with backtracking (`fancy-regex`, one lookahead). Each
//! alternative is matched here the way backtracking would: greedy runs of character classes,
//! given back only where a pattern needs it (`A*B+` ends at the last `B`, `\s+(?!\S)` leaves a
//! run's last space to the next piece). The character classes are regex's own Unicode tables,
//! read from `regex-syntax` once. This replaces compiling the patterns with `fancy-regex` (a
//! third of loading an encoding, and its code in every `.wasm`); the tests compare both cuts on
//! every shared trace and on random texts of the characters each class tells apart.

use std::sync::OnceLock;

use regex_syntax::hir::{Class, Hir, HirKind};

use crate::Encoding;

/// What the patterns tell apart about a character: its general category, or whitespace.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// `\p{Lu}`, `\p{Lt}`.
    Upper,
    /// `\p{Ll}`.
    Lower,
    /// `\p{Lm}`, `\p{Lo}`.
    OtherLetter,
    /// `\p{M}`.
    Mark,
    /// `\p{N}`.
    Number,
    /// `\s` (Unicode White_Space).
    Space,
    Other,
}

use Kind::*;

impl Kind {
    fn letter(self) -> bool {
        matches!(self, Upper | Lower | OtherLetter)
    }
    /// o200k_base's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
    fn cased_upper(self) -> bool {
        matches!(self, Upper | OtherLetter | Mark)
    }
    /// o200k_base's `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
    fn cased_lower(self) -> bool {
        matches!(self, Lower | OtherLetter | Mark)
    }
    /// `[^\s\p{L}\p{N}]`.
    fn punctuation(self) -> bool {
        matches!(self, Mark | Other)
    }
}

/// `[^\r\n\p{L}\p{N}]`: what may open a word piece.
fn opens_word(c: char, kind: Kind) -> bool {
    !is_line_break(c) && !kind.letter() && kind != Number
}

fn is_line_break(c: char) -> bool {
    c == '\r' || c == '\n'
}

/// The classes, from regex's tables: ASCII in a table, the rest as sorted disjoint ranges.
struct Classes {
    ascii: [Kind; 128],
    ranges: Vec<(u32, u32, Kind)>,
    /// Non-ASCII letters that `(?i)` matches to an ASCII one (`ſ` for `s`).
    folds: Vec<(char, u8)>,
}

fn class_ranges(pattern: &str) -> Vec<(u32, u32)> {
    let hir: Hir = regex_syntax::parse(pattern).expect("a valid class");
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => {
            class.iter().map(|r| (u32::from(r.start()), u32::from(r.end()))).collect()
        }
        other => unreachable!("{pattern} is a Unicode class, not {other:?}"),
    }
}

fn classes() -> &'static Classes {
    static CLASSES: OnceLock<Classes> = OnceLock::new();
    CLASSES.get_or_init(|| {
        let mut ranges: Vec<(u32, u32, Kind)> = [
            (r"[\p{Lu}\p{Lt}]", Upper),
            (r"\p{Ll}", Lower),
            (r"[\p{Lm}\p{Lo}]", OtherLetter),
            (r"\p{M}", Mark),
            (r"\p{N}", Number),
            (r"\s", Space),
        ]
        .into_iter()
        .flat_map(|(pattern, kind)| class_ranges(pattern).into_iter().map(move |(start, end)| (start, end, kind)))
        .collect();
        ranges.sort_unstable_by_key(|r| r.0);
        let mut ascii = [Other; 128];
        for (start, end, kind) in ranges.iter().filter(|r| r.0 < 128) {
            for c in *start..=(*end).min(127) {
                ascii[c as usize] = *kind;
            }
        }
        let folds = b"stremvld"
            .iter()
            .flat_map(|&letter| {
                class_ranges(&format!("(?i:{})", letter as char))
                    .into_iter()
                    .flat_map(|(start, end)| start..=end)
                    .filter(|&c| c >= 128)
                    .filter_map(char::from_u32)
                    .map(move |c| (c, letter))
                    .collect::<Vec<_>>()
            })
            .collect();
        Classes { ascii, ranges, folds }
    })
}

impl Classes {
    fn kind(&self, c: char) -> Kind {
        let code = u32::from(c);
        if code < 128 {
            return self.ascii[code as usize];
        }
        let after = self.ranges.partition_point(|r| r.0 <= code);
        match after.checked_sub(1).map(|i| self.ranges[i]) {
            Some((_, end, kind)) if code <= end => kind,
            _ => Other,
        }
    }

    /// True when `(?i)` matches `c` to the ASCII letter `letter`.
    fn same_letter(&self, c: char, letter: u8) -> bool {
        c.to_ascii_lowercase() == char::from(letter) || self.folds.contains(&(c, letter))
    }
}

/// Build the classes ahead of the first count (what `prepare_encoding` does).
pub(crate) fn prepare() {
    classes();
}

/// The pieces of `text` in `encoding`: what tiktoken's `find_iter` over its pattern yields.
pub(crate) fn pieces(encoding: Encoding, text: &str) -> impl Iterator<Item = &str> {
    let scan = Scan { text, classes: classes() };
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= text.len() {
            return None;
        }
        let end = match encoding {
            Encoding::O200kBase => scan.o200k(at),
            Encoding::Cl100kBase => scan.cl100k(at),
        };
        // Every character starts a piece of both patterns; one character at least, whatever.
        let end = if end > at { end } else { at + scan.char_at(at).map_or(1, char::len_utf8) };
        let piece = &text[at..end];
        at = end;
        Some(piece)
    })
}

struct Scan<'a> {
    text: &'a str,
    classes: &'static Classes,
}

impl Scan<'_> {
    fn char_at(&self, at: usize) -> Option<char> {
        self.text[at..].chars().next()
    }

    fn kind_at(&self, at: usize) -> Option<(char, Kind)> {
        self.char_at(at).map(|c| (c, self.classes.kind(c)))
    }

    /// The end of the run of characters from `at` that `keep` accepts.
    fn run(&self, at: usize, keep: impl Fn(char, Kind) -> bool) -> usize {
        let mut end = at;
        while let Some((c, _)) = self.kind_at(end).filter(|&(c, kind)| keep(c, kind)) {
            end += c.len_utf8();
        }
        end
    }

    /// The end of at most `most` characters from `at` that `keep` accepts.
    fn run_of_at_most(&self, at: usize, most: usize, keep: impl Fn(Kind) -> bool) -> usize {
        self.text[at..]
            .chars()
            .take(most)
            .take_while(|&c| keep(self.classes.kind(c)))
            .map(char::len_utf8)
            .sum::<usize>()
            + at
    }

    fn nonempty(at: usize, end: usize) -> Option<usize> {
        (end > at).then_some(end)
    }

    /// o200k_base, its seven alternatives in order.
    fn o200k(&self, at: usize) -> usize {
        self.word_opened(at, |from| self.lower_word(from))
            .or_else(|| self.word_opened(at, |from| self.upper_word(from)))
            .or_else(|| Self::nonempty(at, self.run_of_at_most(at, 3, |k| k == Number)))
            .or_else(|| self.punctuation(at, |c| is_line_break(c) || c == '/'))
            .unwrap_or_else(|| self.whitespace(at, false))
    }

    /// cl100k_base, its eight alternatives in order.
    fn cl100k(&self, at: usize) -> usize {
        self.contraction(at)
            .or_else(|| {
                // `[^\r\n\p{L}\p{N}]?+\p{L}++`: possessive, an opener is never given back.
                let from = self.kind_at(at).filter(|&(c, k)| opens_word(c, k)).map_or(at, |(c, _)| at + c.len_utf8());
                Self::nonempty(from, self.run(from, |_, k| k.letter()))
            })
            .or_else(|| Self::nonempty(at, self.run_of_at_most(at, 3, |k| k == Number)))
            .or_else(|| self.punctuation(at, is_line_break))
            .unwrap_or_else(|| self.whitespace(at, true))
    }

    /// `[^\r\n\p{L}\p{N}]?` then `word`: with the opener if that matches, else without.
    fn word_opened(&self, at: usize, word: impl Fn(usize) -> Option<usize>) -> Option<usize> {
        self.kind_at(at)
            .filter(|&(c, k)| opens_word(c, k))
            .and_then(|(c, _)| word(at + c.len_utf8()))
            .or_else(|| word(at))
    }

    /// o200k_base's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+` and a
    /// contraction: the first run is given back down to its last lower-case character.
    fn lower_word(&self, at: usize) -> Option<usize> {
        let mut end = at;
        let mut after_last_lower = None;
        while let Some((c, kind)) = self.kind_at(end).filter(|(_, k)| k.cased_upper()) {
            end += c.len_utf8();
            if kind.cased_lower() {
                after_last_lower = Some(end);
            }
        }
        let word = match self.kind_at(end) {
            Some((_, kind)) if kind.cased_lower() => self.run(end, |_, k| k.cased_lower()),
            _ => after_last_lower?,
        };
        Some(self.contraction(word).unwrap_or(word))
    }

    /// o200k_base's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*` and a contraction.
    fn upper_word(&self, at: usize) -> Option<usize> {
        let upper = Self::nonempty(at, self.run(at, |_, k| k.cased_upper()))?;
        let word = self.run(upper, |_, k| k.cased_lower());
        Some(self.contraction(word).unwrap_or(word))
    }

    /// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` (cl100k_base orders them otherwise; they exclude each other).
    fn contraction(&self, at: usize) -> Option<usize> {
        let rest = self.text[at..].strip_prefix('\'')?;
        let mut chars = rest.chars();
        let first = chars.next()?;
        let second = chars.next();
        let same = |c: Option<char>, letter: u8| c.is_some_and(|c| self.classes.same_letter(c, letter));
        let length = if b"stmd".iter().any(|&l| same(Some(first), l)) {
            first.len_utf8()
        } else if [(b'r', b'e'), (b'v', b'e'), (b'l', b'l')]
            .iter()
            .any(|&(a, b)| same(Some(first), a) && same(second, b))
        {
            first.len_utf8() + second.map_or(0, char::len_utf8)
        } else {
            return None;
        };
        Some(at + 1 + length)
    }

    /// ` ?[^\s\p{L}\p{N}]+` then the run of `tail` characters.
    fn punctuation(&self, at: usize, tail: impl Fn(char) -> bool) -> Option<usize> {
        let from = if self.text[at..].starts_with(' ') { at + 1 } else { at };
        let marks = Self::nonempty(from, self.run(from, |_, k| k.punctuation()))?;
        Some(self.run(marks, |c, _| tail(c)))
    }

    /// The whitespace alternatives, from one scan of the run at `at`, in their order: cl100k_base's
    /// `\s++$` first when `to_text_end_first`; `\s*[\r\n]+` (o200k_base) or `\s*[\r\n]`
    /// (cl100k_base), alike: the run up to and including its last line break; `\s+(?!\S)`: the
    /// whole run at the end of the text, else the run but its last character; then `\s+` or `\s`,
    /// alike here: the run, one character long by then.
    fn whitespace(&self, at: usize, to_text_end_first: bool) -> usize {
        let (mut end, mut last, mut after_break) = (at, at, None);
        while let Some((c, _)) = self.kind_at(end).filter(|(_, k)| *k == Space) {
            last = end;
            end += c.len_utf8();
            if is_line_break(c) {
                after_break = Some(end);
            }
        }
        let at_text_end = (end > at && end == self.text.len()).then_some(end);
        if to_text_end_first && let Some(end) = at_text_end {
            return end;
        }
        after_break.or(at_text_end).or(Self::nonempty(at, last)).unwrap_or(end)
    }
}

#[cfg(test)]
mod tests {
    use fancy_regex::Regex;

    use super::*;

    /// The patterns as tiktoken-rs compiles them (o200k_base's is checked against its constant).
    const O200K_PATTERN: &str = concat!(
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        "|",
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        "|",
        r"\p{N}{1,3}",
        "|",
        r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
        "|",
        r"\s*[\r\n]+",
        "|",
        r"\s+(?!\S)",
        "|",
        r"\s+",
    );
    const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

    fn reference(pattern: &Regex, text: &str) -> Vec<String> {
        pattern.find_iter(text).map(|m| m.expect("no backtracking limit on short texts").as_str().to_owned()).collect()
    }

    fn ours(encoding: Encoding, text: &str) -> Vec<String> {
        pieces(encoding, text).map(str::to_owned).collect()
    }

    #[test]
    fn the_patterns_are_tiktoken_rs_ones() {
        assert_eq!(O200K_PATTERN, tiktoken_rs::O200K_BASE_PAT_STR);
    }

    /// Every code point is of the kind regex's classes give it.
    #[test]
    fn every_character_is_classed_as_regex_classes_it() {
        let classes = classes();
        let kinds = [
            (r"^[\p{Lu}\p{Lt}]$", Upper),
            (r"^\p{Ll}$", Lower),
            (r"^[\p{Lm}\p{Lo}]$", OtherLetter),
            (r"^\p{M}$", Mark),
            (r"^\p{N}$", Number),
            (r"^\s$", Space),
        ]
        .map(|(pattern, kind)| (regex::Regex::new(pattern).unwrap(), kind));
        let mut buffer = [0; 4];
        for c in (0..=0x10_FFFF).filter_map(char::from_u32) {
            let text = c.encode_utf8(&mut buffer);
            let want = kinds.iter().find(|(class, _)| class.is_match(text)).map_or(Other, |(_, kind)| *kind);
            assert_eq!(classes.kind(c), want, "{c:?} U+{:04X}", u32::from(c));
        }
    }

    /// Texts of characters of every kind, in runs, cut exactly as the patterns cut them.
    #[test]
    fn random_texts_are_cut_as_the_patterns_cut_them() {
        let alphabet: Vec<char> =
            "aZzéǅʰ中\u{301}\u{903}٣Ⅻ½5 \t\r\n\u{a0}\u{2028}\u{85}\u{3000}'sSſtTrReEvVlLmMdDK\u{212a}/.!_-😀\0"
                .chars()
                .collect();
        let patterns = [(Encoding::O200kBase, O200K_PATTERN), (Encoding::Cl100kBase, CL100K_PATTERN)]
            .map(|(encoding, pattern)| (encoding, Regex::new(pattern).unwrap()));
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |below: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % below as u64) as usize
        };
        for _ in 0..40_000 {
            let mut text = String::new();
            for _ in 0..next(10) {
                let c = alphabet[next(alphabet.len())];
                for _ in 0..1 + next(4) * next(2) {
                    text.push(c);
                }
            }
            for (encoding, pattern) in &patterns {
                assert_eq!(ours(*encoding, &text), reference(pattern, &text), "{encoding:?} {text:?}");
            }
        }
    }

    #[test]
    fn contractions_words_and_spaces() {
        let cases = [
            ("He's  here\n\n  now", vec!["He's", " ", " here", "\n\n", " ", " now"]),
            ("DON'T stop", vec!["DON'T", " stop"]),
            ("x  \n  ", vec!["x", "  \n", "  "]),
            ("1234567 ab/c//\n", vec!["123", "456", "7", " ab", "/c", "//\n"]),
        ];
        let o200k = Regex::new(O200K_PATTERN).unwrap();
        for (text, want) in cases {
            assert_eq!(ours(Encoding::O200kBase, text), want, "{text:?}");
            assert_eq!(reference(&o200k, text), want, "{text:?}");
        }
    }
}
