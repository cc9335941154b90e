//! The agent's conclusions in its own words: the sentences of its messages that name a cause, a
//! decision or a result, or the code they concern, rather than its first sentences ("Good,
//! Django is installed.", "Let me look at the tests."). Rule-based and deterministic (R3.5).

use super::extractive::one_line;
use crate::model::references_in;

/// A sentence with its salience: higher says more of what was found or decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conclusion {
    pub text: String,
    pub salience: u32,
}

/// Sentences shorter than this (in characters) say too little to keep.
const MIN_CHARS: usize = 16;
/// A kept sentence is cut to this many characters.
const MAX_CHARS: usize = 240;
/// At most this many conclusions per message.
const PER_MESSAGE: usize = 2;
/// A sentence needs this salience to be kept.
const THRESHOLD: u32 = 3;

/// Words of a sentence that states a finding, a cause, a decision or a result.
const FINDINGS: [&str; 44] = [
    "because",
    "cause",
    "the issue",
    "the problem",
    "the bug",
    "the fix",
    "fixed",
    "the reason",
    "this means",
    "which means",
    "means that",
    "therefore",
    "turns out",
    "found",
    "confirm",
    "is why",
    "due to",
    "instead of",
    "fails",
    "failed",
    "failing",
    "passes",
    "passed",
    "works",
    "succeed",
    "decide",
    "should be",
    "must ",
    "doesn't",
    "does not",
    "isn't",
    "is not",
    "wasn't",
    "never",
    "wrong",
    "missing",
    "incorrect",
    "expected",
    "returns",
    "raises",
    "error",
    "only when",
    "so that",
    "the solution",
];

/// Openings of sentences that announce the next step or acknowledge the last one.
const FILLER: [&str; 22] = [
    "let me",
    "now let me",
    "let's",
    "i'll",
    "i will",
    "i need to",
    "i'm going to",
    "now i",
    "next,",
    "first,",
    "good",
    "great",
    "perfect",
    "excellent",
    "ok",
    "okay",
    "alright",
    "now,",
    "now ",
    "looking at",
    "checking",
    "i see",
];

/// The conclusions of one assistant text, most salient first, at most [`PER_MESSAGE`].
pub fn conclusions(text: &str) -> Vec<Conclusion> {
    let mut found: Vec<(usize, Conclusion)> = sentences(text)
        .into_iter()
        .enumerate()
        .map(|(i, s)| (i, Conclusion { salience: salience(&s), text: one_line(&s, MAX_CHARS) }))
        .filter(|(_, c)| c.salience >= THRESHOLD && c.text.chars().count() >= MIN_CHARS)
        .collect();
    found.sort_by(|(i, a), (j, b)| b.salience.cmp(&a.salience).then(i.cmp(j)));
    found.truncate(PER_MESSAGE);
    found.sort_by_key(|(i, _)| *i);
    found.into_iter().map(|(_, c)| c).collect()
}

/// How much a sentence says: a finding's words, the code it names, minus filler openings.
pub fn salience(sentence: &str) -> u32 {
    let lower = sentence.to_lowercase();
    let trimmed = lower.trim_start_matches(|c: char| !c.is_alphanumeric());
    let findings = FINDINGS.iter().filter(|w| lower.contains(*w)).count().min(2) as u32;
    let code = (references_in(sentence).len() + sentence.matches('`').count() / 2).min(3) as u32;
    let filler = FILLER.iter().any(|f| trimmed.starts_with(f));
    let score = 3 * findings + code;
    if filler { score.saturating_sub(3) } else { score }
}

/// Sentences of `text`: its lines (list markers and headings stripped), split after `.`, `!`
/// or `?` followed by a space; code blocks are left out.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code || line.is_empty() {
            continue;
        }
        let line = line.trim_start_matches(['#', '-', '*', '>', ' ']);
        let mut start = 0;
        let bytes = line.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            if matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1) == Some(&b' ') {
                out.push(line[start..=i].trim().to_owned());
                start = i + 1;
            }
        }
        if start < line.len() {
            out.push(line[start..].trim().to_owned());
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(text: &str) -> Vec<String> {
        conclusions(text).into_iter().map(|c| c.text).collect()
    }

    #[test]
    fn findings_are_kept_and_announcements_are_not() {
        assert!(kept("Good, Django is installed.").is_empty());
        assert!(kept("Let me look at the tests now.").is_empty());
        assert_eq!(
            kept(
                "This is very revealing. The bug is in `_delete_composed_index`: it expects exactly one constraint. Let me fix it."
            ),
            ["The bug is in `_delete_composed_index`: it expects exactly one constraint."]
        );
        assert_eq!(
            kept(
                "Now I understand.\n- `alter_unique_together` calls `_delete_composed_index` because the unique field adds a second constraint.\n```python\nx = 1. y\n```"
            ),
            [
                "`alter_unique_together` calls `_delete_composed_index` because the unique field adds a second constraint."
            ]
        );
    }

    #[test]
    fn at_most_two_per_message_in_their_order() {
        let text = "The test fails because x is None. The fix is in src/a.py. It works now because of the guard. ok";
        assert_eq!(kept(text), ["The test fails because x is None.", "It works now because of the guard."]);
    }
}
