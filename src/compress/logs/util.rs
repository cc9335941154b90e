//! Shared helpers of the recognisers: bounded name lists, short messages, counters, line tests.

use std::collections::HashSet;

use super::{Diagnostic, LogFacts};

/// At most this many failing-test names are kept.
pub(crate) const MAX_FAILING: usize = 10_000;
/// At most this many diagnostics are kept.
pub(crate) const MAX_DIAGNOSTICS: usize = 50;
/// Messages are cut to this many characters.
pub(crate) const MAX_MESSAGE: usize = 300;
/// Names and locations are cut to this many characters (real ones are far shorter).
pub(crate) const MAX_NAME: usize = 1_000;

/// `s` trimmed, control characters turned into spaces, cut to at most `max` characters on a
/// character boundary with a trailing `…` when cut.
pub(crate) fn clip(s: &str, max: usize) -> String {
    let s = s.trim();
    let mut out = String::with_capacity(s.len().min(max.saturating_mul(4)).saturating_add(3));
    for (i, c) in s.chars().enumerate() {
        if i == max {
            out.push('…');
            return out;
        }
        out.push(if c.is_control() { ' ' } else { c });
    }
    out
}

/// A message: one short line.
pub(crate) fn message(s: &str) -> String {
    clip(s, MAX_MESSAGE)
}

/// A location or name: one line, bounded.
pub(crate) fn short(s: &str) -> String {
    clip(s, MAX_NAME)
}

/// Decimal digits to a number, saturating (a summary line never overflows in practice).
pub(crate) fn num(s: &str) -> u64 {
    let mut n: u64 = 0;
    for b in s.bytes() {
        if b.is_ascii_digit() {
            n = n.saturating_mul(10).saturating_add(u64::from(b - b'0'));
        }
    }
    n
}

/// Adds `n` to an optional counter.
pub(crate) fn add(slot: &mut Option<u64>, n: u64) {
    *slot = Some(slot.unwrap_or(0).saturating_add(n));
}

/// The number of leading spaces and tabs.
pub(crate) fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

/// A separator line made only of `c`, at least `min` long (`=====`, `-----`).
pub(crate) fn is_rule(line: &str, c: char, min: usize) -> bool {
    let t = line.trim_end();
    t.len() >= min && t.chars().all(|x| x == c)
}

/// Failing-test names in the order the log gives them, deduplicated and capped.
#[derive(Default)]
pub(crate) struct Names {
    list: Vec<String>,
    seen: HashSet<String>,
}

impl Names {
    pub(crate) fn push(&mut self, name: &str) {
        if self.list.len() >= MAX_FAILING {
            return;
        }
        let name = short(name);
        if name.is_empty() || self.seen.contains(&name) {
            return;
        }
        self.seen.insert(name.clone());
        self.list.push(name);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &String> {
        self.list.iter()
    }

    pub(crate) fn into_vec(self) -> Vec<String> {
        self.list
    }
}

/// `facts` with `names` as its failing tests; none when the log named no failing test and showed
/// no other sign of a run (`ran`: a summary line, counts, a failure).
pub(crate) fn with_failing(ran: bool, mut facts: LogFacts, names: Names) -> Option<LogFacts> {
    if names.is_empty() && !ran {
        return None;
    }
    facts.failing = names.into_vec();
    Some(facts)
}

/// Short names (section headers, `✕ name` lines) kept apart until the full names are known,
/// then added when no full name already stands for them.
#[derive(Default)]
pub(crate) struct Pending {
    list: Vec<String>,
}

impl Pending {
    pub(crate) fn push(&mut self, name: &str) {
        if self.list.len() < MAX_FAILING {
            let name = short(name);
            if !name.is_empty() {
                self.list.push(name);
            }
        }
    }

    /// Adds to `names` every pending name for which `covered` says no.
    pub(crate) fn merge_into(self, names: &mut Names, covered: impl Fn(&str) -> bool) {
        for name in self.list {
            if !covered(&name) {
                names.push(&name);
            }
        }
    }
}

/// Compiler/linter diagnostics: every one counted, the first few kept, errors first.
#[derive(Default)]
pub(crate) struct Diags {
    errors: Vec<Diagnostic>,
    warnings: Vec<Diagnostic>,
    pub(crate) n_errors: u64,
    pub(crate) n_warnings: u64,
}

/// Which list a pushed diagnostic went to, to amend it later (a rustc lint name).
#[derive(Clone, Copy)]
pub(crate) enum Slot {
    Error(usize),
    Warning(usize),
}

impl Diags {
    pub(crate) fn push(&mut self, severity: &str, location: &str, code: Option<&str>, msg: &str) -> Option<Slot> {
        let error = severity != "warning";
        let d = Diagnostic {
            severity: if error { "error".to_owned() } else { "warning".to_owned() },
            location: short(location),
            code: code.map(short).filter(|c| !c.is_empty()),
            message: message(msg),
        };
        if error {
            self.n_errors = self.n_errors.saturating_add(1);
            if self.errors.len() < MAX_DIAGNOSTICS {
                self.errors.push(d);
                return Some(Slot::Error(self.errors.len() - 1));
            }
        } else {
            self.n_warnings = self.n_warnings.saturating_add(1);
            if self.warnings.len() < MAX_DIAGNOSTICS {
                self.warnings.push(d);
                return Some(Slot::Warning(self.warnings.len() - 1));
            }
        }
        None
    }

    pub(crate) fn get_mut(&mut self, slot: Slot) -> Option<&mut Diagnostic> {
        match slot {
            Slot::Error(i) => self.errors.get_mut(i),
            Slot::Warning(i) => self.warnings.get_mut(i),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.n_errors == 0 && self.n_warnings == 0
    }

    /// Errors first, then warnings, at most [`MAX_DIAGNOSTICS`].
    pub(crate) fn into_vec(self) -> Vec<Diagnostic> {
        let mut all = self.errors;
        all.extend(self.warnings);
        all.truncate(MAX_DIAGNOSTICS);
        all
    }
}

/// Strips a `file://` scheme from a JavaScript stack location.
pub(crate) fn strip_file_url(s: &str) -> &str {
    s.strip_prefix("file://").unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_cuts_on_char_boundaries() {
        assert_eq!(clip("  héllo  ", 10), "héllo");
        assert_eq!(clip("ééééé", 3), "ééé…");
        assert_eq!(clip("a\tb\nc", 10), "a b c");
        assert_eq!(clip("", 3), "");
    }

    #[test]
    fn num_saturates() {
        assert_eq!(num("123"), 123);
        assert_eq!(num("99999999999999999999999999"), u64::MAX);
    }

    #[test]
    fn names_dedupe_and_cap() {
        let mut n = Names::default();
        n.push("a");
        n.push("a");
        n.push(" ");
        n.push("b");
        assert_eq!(n.into_vec(), vec!["a", "b"]);
        let mut n = Names::default();
        for i in 0..MAX_FAILING + 10 {
            n.push(&i.to_string());
        }
        assert_eq!(n.into_vec().len(), MAX_FAILING);
    }

    #[test]
    fn rules() {
        assert!(is_rule("==========", '=', 10));
        assert!(!is_rule("=====", '=', 10));
        assert!(!is_rule("=== x ===", '=', 3));
        assert_eq!(indent("  \tx"), 3);
    }
}
