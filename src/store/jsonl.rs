//! Append-only JSON-lines files: every record is one line ending in `\n`, so a record is either
//! whole or a torn last line. A torn or unreadable line is skipped with a note, never repaired
//! in place: what is on disk stays as it was written.

use serde::de::DeserializeOwned;

/// What the next append writes first when a file ends in a torn line: it closes that line so it
/// can never parse as a record, whatever was cut (a whole record, half a string, an escape): `#`
/// is not JSON outside a string, and an open string cannot close without a `"`.
pub const TORN_END: &str = "#torn\n";

/// The records of a JSON-lines file, and what was skipped.
#[derive(Debug, Clone, PartialEq)]
pub struct Lines<T> {
    pub records: Vec<T>,
    pub notes: Vec<String>,
    /// The file does not end with a newline (a torn write): the next append must start one.
    pub torn: bool,
}

/// Parse `text` (the content of `file`) line by line.
pub fn parse<T: DeserializeOwned>(file: &str, text: &str) -> Lines<T> {
    let torn = !text.is_empty() && !text.ends_with('\n');
    let mut lines: Vec<&str> = text.split('\n').collect();
    if !torn {
        lines.pop(); // the empty rest after the final newline
    }
    let last = lines.len().saturating_sub(1);
    let mut out = Lines { records: Vec::new(), notes: Vec::new(), torn };
    for (n, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(line) {
            Ok(record) if !(torn && n == last) => out.records.push(record),
            Ok(_) => out.notes.push(format!("{file}: line {} has no newline (a torn write); skipped", n + 1)),
            Err(e) if n == last => {
                out.notes.push(format!("{file}: line {} is torn (an interrupted write); skipped: {e}", n + 1))
            }
            Err(_) if line.ends_with(TORN_END.trim_end()) => {
                out.notes.push(format!("{file}: line {} was torn by an interrupted write; skipped", n + 1))
            }
            Err(e) => out.notes.push(format!("{file}: line {} is not a JSON record; skipped: {e}", n + 1)),
        }
    }
    out
}

/// Records as lines to append, each ending in a newline.
pub fn lines<T: serde::Serialize>(records: impl IntoIterator<Item = T>) -> String {
    let mut out = String::new();
    for record in records {
        // Records are made of strings, numbers and finite floats: they always serialize.
        if let Ok(line) = serde_json::to_string(&record) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn whole_lines_are_read_and_a_torn_tail_is_skipped() {
        let ok: Lines<Value> = parse("e.jsonl", "{\"id\":1}\n{\"id\":2}\n");
        assert_eq!((ok.records.len(), ok.notes.len(), ok.torn), (2, 0, false));
        let torn: Lines<Value> = parse("e.jsonl", "{\"id\":1}\n{\"id\":2}\n{\"id\":3,\"ty");
        assert_eq!((torn.records.len(), torn.torn), (2, true));
        assert!(torn.notes[0].contains("line 3 is torn"), "{:?}", torn.notes);
        // A last line that parses but lacks its newline was still cut short.
        let cut: Lines<Value> = parse("e.jsonl", "{\"id\":1}\n{\"id\":2}");
        assert_eq!((cut.records.len(), cut.torn), (1, true));
        let bad: Lines<Value> = parse("e.jsonl", "{\"id\":1}\nnot json\n{\"id\":3}\n");
        assert_eq!(bad.records.len(), 2);
        assert!(bad.notes[0].contains("line 2 is not a JSON record"));
        assert_eq!(lines([serde_json::json!({"a": 1}), serde_json::json!(2)]), "{\"a\":1}\n2\n");
    }
}
