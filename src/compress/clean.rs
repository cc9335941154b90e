//! Making raw tool output safe to reason about: binary junk, ANSI colour codes, `\r` progress
//! bars, control characters and megabyte-long lines. Linear in the input.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// Output after cleaning, and what cleaning did (for the entry's notes). Output that needs no
/// cleaning (the common case) is borrowed, not copied: outputs can be hundreds of megabytes.
pub struct Cleaned<'a> {
    pub text: Cow<'a, str>,
    pub notes: Vec<String>,
}

static ANSI: LazyLock<Regex> = LazyLock::new(|| {
    // CSI sequences, OSC sequences (ended by BEL or ST), and two-byte escapes.
    Regex::new(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]").expect("valid regex")
});

/// Clean `raw`; lines longer than `max_line_chars` keep their head and tail.
pub fn clean(raw: &str, max_line_chars: usize) -> Cleaned<'_> {
    if looks_binary(raw) {
        let notes = vec![format!("binary output ({} bytes) not shown", raw.len())];
        return Cleaned { text: Cow::Borrowed(""), notes };
    }
    if is_clean(raw, max_line_chars) {
        return Cleaned { text: Cow::Borrowed(raw), notes: Vec::new() };
    }
    let mut notes = Vec::new();
    let stripped = ANSI.replace_all(raw, "");
    if stripped.len() != raw.len() {
        notes.push("ANSI escape codes removed".to_owned());
    }
    let (mut progress, mut long) = (0usize, 0usize);
    let mut text = String::with_capacity(stripped.len());
    for (i, line) in stripped.split('\n').enumerate() {
        if i > 0 {
            text.push('\n');
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        let line = match line.rfind('\r') {
            Some(at) => {
                progress += line.matches('\r').count();
                &line[at + 1..]
            }
            None => line,
        };
        let line = if line.chars().count() > max_line_chars {
            long += 1;
            cut_line(line, max_line_chars)
        } else {
            line.to_owned()
        };
        text.extend(line.chars().filter(|c| !c.is_control() || *c == '\t'));
    }
    if progress > 0 {
        notes.push(format!("{progress} progress updates (\\r) collapsed"));
    }
    if long > 0 {
        notes.push(format!("{long} lines over {max_line_chars} characters cut"));
    }
    Cleaned { text: Cow::Owned(text), notes }
}

/// Nothing to clean: no escape, `\r` or other control character than `\n` and `\t`, and no
/// line over `max_line_chars` bytes (so none over that many characters). One pass.
fn is_clean(raw: &str, max_line_chars: usize) -> bool {
    let mut line = 0;
    for c in raw.chars() {
        if c == '\n' {
            line = 0;
            continue;
        }
        if c.is_control() && c != '\t' {
            return false;
        }
        line += c.len_utf8();
        if line > max_line_chars {
            return false;
        }
    }
    true
}

/// Keep the head and tail of a long line: `head…[+N chars]…tail`.
pub(crate) fn cut_line(line: &str, max_chars: usize) -> String {
    let total = line.chars().count();
    let head = max_chars * 2 / 3;
    let tail = max_chars.saturating_sub(head) / 2;
    let dropped = total.saturating_sub(head + tail);
    let head_end = line.char_indices().nth(head).map_or(line.len(), |(i, _)| i);
    let tail_start = line.char_indices().nth(total - tail).map_or(line.len(), |(i, _)| i);
    format!("{}…[+{dropped} chars]…{}", &line[..head_end], &line[tail_start..])
}

/// More than 10% of the first 64 KiB is NUL, other C0 controls or replacement characters.
fn looks_binary(raw: &str) -> bool {
    let sample: Vec<char> = raw.chars().take(65_536).collect();
    if sample.len() < 16 {
        return sample.contains(&'\0');
    }
    let junk = sample
        .iter()
        .filter(|&&c| c == '\u{fffd}' || (c.is_control() && !matches!(c, '\n' | '\t' | '\r' | '\x1b')))
        .count();
    junk * 10 > sample.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_progress_bars_and_controls() {
        let raw = "\x1b[32mPASSED\x1b[0m ok\r\nDownloading 10%\rDownloading 50%\rDownloading 100%\nbell\x07!";
        let c = clean(raw, 400);
        assert_eq!(c.text, "PASSED ok\nDownloading 100%\nbell!");
        assert_eq!(c.notes.len(), 2, "{:?}", c.notes);
    }

    #[test]
    fn binary_is_not_shown() {
        let raw: String = (0u8..=255).map(char::from).cycle().take(4096).collect();
        let c = clean(&raw, 400);
        assert!(c.text.is_empty() && c.notes[0].contains("binary output"));
        assert!(clean("plain text, nothing odd", 400).notes.is_empty());
    }

    #[test]
    fn long_lines_keep_head_and_tail() {
        let line = format!("{}{}", "a".repeat(1_000_000), "END");
        let c = clean(&line, 400);
        assert!(c.text.starts_with("aaa") && c.text.ends_with("END"));
        assert!(c.text.contains("[+999670 chars]"), "{}", &c.text[..300]);
        assert!(c.text.chars().count() < 450);
        assert_eq!(cut_line("ééééééééééé", 6), "éééé…[+6 chars]…é");
    }
}
