//! pytest: `== 2 failed, 118 passed in 1.2s ==` (and `-q`'s bare form), `FAILED`/`ERROR`
//! short-summary, verbose and xdist lines, the failure-section headers and the first failure's
//! crash line (`tests/a.py:40: AssertionError`) with its `E   …` message.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

use super::traceback::TbScan;
use super::util::{Names, Pending, add, message, num, short, with_failing};
use super::{Failure, LogFacts};

static DETECT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?m)^(?:=+ test session starts =+|=+ short test summary info =+|=+ (?:FAILURES|ERRORS) =+|=+ .*\d+ (?:passed|failed|errors?|skipped|deselected|xfailed|xpassed).* in [\d.]+ ?s(?:econds)?(?: \(\S+\))? =+|(?:FAILED|ERROR) \S+::\S.*|\S+::\S.* (?:PASSED|FAILED|ERROR)(?: +\[ *\d+%\])?|\d+ (?:passed|failed)(?:, \d+ [a-z]+)* in [\d.]+s(?: \(\S+\))?)\r?$",
    )
    .expect("static regex")
});
/// `=== body ===`: a section header or the summary.
static BANNER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^=+ (.+?) =+$").expect("static regex"));
/// The body of a summary: `2 failed, 3 passed in 0.12s (0:00:00)`.
static SUMMARY_BODY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^((?:\d+ [a-z]+(?: [a-z]+)?)(?:, \d+ [a-z]+(?: [a-z]+)?)*|no tests ran) in [\d.]+ ?s(?:econds)?(?: \(\S+\))?$")
        .expect("static regex")
});
static HEADER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^_{2,} (.+?) _{2,}$").expect("static regex"));
/// `path:line: text` (a traceback entry's location line).
static LOCATION: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(\S+?):(\d+):(?: (.*))?$").expect("static regex"));
static VERBOSE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+::.+?) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)(?: +\[ *\d+%\])?$").expect("static regex")
});
static XDIST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\[gw\d+\] \[ *\d+%\] (FAILED|ERROR|PASSED|SKIPPED|XFAIL|XPASS) (.+)$").expect("static regex")
});

/// How many trailing `::` levels of a node id a section header may name.
const MAX_TAIL: usize = 4;

pub(crate) fn detect(log: &str) -> bool {
    DETECT.is_match(log)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    /// Before the first `=== … ===` line: the start of a session, or of a log cut by `tail`
    /// inside the failure sections.
    Prelude,
    Other,
    Failures,
    Summary,
}

/// The first failure section, followed line by line.
#[derive(Default)]
struct Entry {
    location: Option<String>,
    /// The newest location outside installed packages and the standard library: where a warning
    /// raised as an error is placed, since warnings are never the first failure.
    project_location: Option<String>,
    /// What follows `path:line: ` on the last location line.
    tail: Option<String>,
    e_line: Option<String>,
    tb: TbScan,
}

impl Entry {
    fn feed(&mut self, line: &str) {
        if let Some(rest) = line.strip_prefix('E')
            && (rest.is_empty() || rest.starts_with(' '))
        {
            if self.e_line.is_none() && !rest.trim().is_empty() {
                self.e_line = Some(message(rest));
            }
            return;
        }
        if !line.starts_with([' ', '\t', '>'])
            && let Some(c) = LOCATION.captures(line)
        {
            let location = short(&format!("{}:{}", &c[1], &c[2]));
            if !is_installed(&c[1]) {
                self.project_location = Some(location.clone());
            }
            self.location = Some(location);
            self.tail = c.get(3).map(|m| message(m.as_str()));
            return;
        }
        self.tb.feed(line);
    }

    fn failure(self) -> Option<Failure> {
        if let Some(mut location) = self.location {
            let tail = self.tail.filter(|t| !t.is_empty() && !t.starts_with("in "));
            // A warning raised as an error in a package (`-W error`): the failure is where the
            // project's code called into it.
            if tail.as_deref().is_some_and(is_warning)
                && let Some(project) = self.project_location
            {
                location = project;
            }
            let msg = match (tail, self.e_line) {
                (Some(t), Some(e)) if e.starts_with(t.as_str()) => e,
                (Some(t), Some(e)) => message(&format!("{t}: {e}")),
                (Some(t), None) => t,
                (None, Some(e)) => e,
                (None, None) => self.tb.exception().unwrap_or_default().to_owned(),
            };
            return Some(Failure { location: Some(location), message: msg });
        }
        if self.tb.location().is_some() {
            return self.tb.failure();
        }
        self.e_line.map(|m| Failure { location: None, message: m })
    }
}

/// A path under installed packages or the standard library (`site-packages/`, `/usr/lib/python3.12/`).
fn is_installed(path: &str) -> bool {
    path.contains("site-packages/") || path.contains("dist-packages/") || path.starts_with("/usr/lib/python")
}

/// A warning category as a crash line names it: `DeprecationWarning`, `UserWarning: …`.
fn is_warning(tail: &str) -> bool {
    let category = tail.split(':').next().unwrap_or_default();
    category.ends_with("Warning") && category.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// Splits `name - message` where the name may hold ` - ` inside `[…]` parameters.
fn split_summary(rest: &str) -> (&str, Option<&str>) {
    let mut depth = 0i32;
    for (i, c) in rest.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ' ' if depth <= 0 && rest.get(i..).is_some_and(|r| r.starts_with(" - ")) => {
                return (rest.get(..i).unwrap_or(rest), rest.get(i + 3..));
            }
            _ => {}
        }
    }
    (rest, None)
}

fn add_counts(facts: &mut LogFacts, body: &str) {
    for part in [&mut facts.passed, &mut facts.failed, &mut facts.errors, &mut facts.skipped] {
        add(part, 0);
    }
    for part in body.split(", ") {
        let Some((n, word)) = part.split_once(' ') else { continue };
        let n = num(n);
        match word {
            "passed" => add(&mut facts.passed, n),
            "failed" => add(&mut facts.failed, n),
            "error" | "errors" => add(&mut facts.errors, n),
            "skipped" => add(&mut facts.skipped, n),
            _ => {}
        }
    }
}

const KNOWN_WORDS: [&str; 11] = [
    "passed",
    "failed",
    "error",
    "errors",
    "skipped",
    "deselected",
    "xfailed",
    "xpassed",
    "warning",
    "warnings",
    "rerun",
];

/// `-q`'s bare summary line, e.g. `2 failed, 118 passed in 1.20s`.
fn bare_summary(line: &str) -> Option<&str> {
    if !line.as_bytes().first().is_some_and(u8::is_ascii_digit) || !line.ends_with('s') && !line.ends_with(')') {
        return None;
    }
    let c = SUMMARY_BODY.captures(line)?;
    let body = c.get(1)?.as_str();
    let known = body.split(", ").all(|p| p.split_once(' ').is_some_and(|(_, w)| KNOWN_WORDS.contains(&w)));
    known.then_some(body)
}

pub(crate) fn parse(log: &str) -> Option<LogFacts> {
    let mut facts = LogFacts { tool: "pytest", ..LogFacts::default() };
    let mut names = Names::default();
    let mut headers = Pending::default();
    let mut section = Section::Prelude;
    let mut orphan = Entry::default();
    let mut entry: Option<Entry> = None;
    let mut entry_done = false;
    let mut line_mode: Option<Failure> = None;
    let mut section_has_header = false;
    let mut summary_failure: Option<Failure> = None;
    let mut summary_done = false;
    let mut seen_summary = false;

    for raw in log.lines() {
        let line = raw.trim_end();
        if let Some(body) = bare_summary(line) {
            add_counts(&mut facts, body);
            seen_summary = true;
            continue;
        }
        if line.starts_with('=')
            && let Some(c) = BANNER.captures(line)
        {
            let body = &c[1];
            if let Some(b) = SUMMARY_BODY.captures(body) {
                add_counts(&mut facts, &b[1]);
                seen_summary = true;
                section = Section::Other;
            } else {
                section = match body {
                    "FAILURES" | "ERRORS" => Section::Failures,
                    "short test summary info" => Section::Summary,
                    _ => Section::Other,
                };
                section_has_header = false;
            }
            if entry.is_some() {
                entry_done = true;
            }
            continue;
        }
        let in_failures = matches!(section, Section::Failures | Section::Prelude);
        if in_failures
            && line.starts_with("__")
            && let Some(c) = HEADER.captures(line)
        {
            let name = &c[1];
            let name = ["ERROR at setup of ", "ERROR at teardown of ", "ERROR collecting "]
                .iter()
                .find_map(|p| name.strip_prefix(p))
                .unwrap_or(name);
            headers.push(name);
            section_has_header = true;
            if entry.is_some() {
                entry_done = true;
            } else if !entry_done {
                entry = Some(Entry::default());
            }
            continue;
        }
        if in_failures && let Some(e) = entry.as_mut().filter(|_| !entry_done) {
            if line.starts_with("----") {
                entry_done = true;
            } else {
                e.feed(line);
            }
            continue;
        }
        if section == Section::Prelude {
            orphan.feed(line);
        }
        if section == Section::Failures {
            if !section_has_header
                && line_mode.is_none()
                && let Some(c) = LOCATION.captures(line)
            {
                line_mode = Some(Failure {
                    location: Some(short(&format!("{}:{}", &c[1], &c[2]))),
                    message: c.get(3).map(|m| message(m.as_str())).unwrap_or_default(),
                });
            }
            continue;
        }
        for prefix in ["FAILED ", "ERROR "] {
            if let Some(rest) = line.strip_prefix(prefix) {
                if rest.starts_with('(') {
                    continue;
                }
                let (name, msg) = split_summary(rest);
                let name = name.trim();
                if section == Section::Summary || name.contains("::") || name.contains(".py") {
                    names.push(name);
                    if !summary_done {
                        summary_done = true;
                        // pytest cuts these to the terminal width (`- Deprecat...`): keep only
                        // the ones that still say something.
                        summary_failure = msg
                            .filter(|m| m.trim_end_matches("...").trim().chars().count() >= 12)
                            .map(|m| Failure { location: None, message: message(m) });
                    }
                }
            }
        }
        if line.contains("::")
            && let Some(c) = VERBOSE.captures(line)
        {
            if matches!(&c[2], "FAILED" | "ERROR") {
                names.push(&c[1]);
            }
            continue;
        }
        if line.starts_with("[gw")
            && let Some(c) = XDIST.captures(line)
        {
            if matches!(&c[1], "FAILED" | "ERROR") {
                names.push(&c[2]);
            }
            continue;
        }
    }

    // A header stands for a full node id when it is that id's tail (`Class.test[p]`), or the id
    // itself (a collection error's path).
    let mut tails: HashSet<String> = HashSet::new();
    for id in names.iter() {
        tails.insert(id.clone());
        let mut parts: Vec<&str> = id.split("::").collect();
        if parts.len() > 1 {
            parts.remove(0);
        }
        // The last few levels only (`Class.Nested.test`): bounded work per name.
        for i in parts.len().saturating_sub(MAX_TAIL)..parts.len() {
            tails.insert(parts.get(i..).unwrap_or_default().join("."));
        }
    }
    headers.merge_into(&mut names, |h| tails.contains(h));

    // A log cut inside a failure section still shows its crash line and `E` message.
    let orphan = orphan.e_line.is_some().then(|| orphan.failure()).flatten();
    facts.first_failure = entry.and_then(Entry::failure).or(line_mode).or(orphan).or(summary_failure);
    with_failing(seen_summary || facts.first_failure.is_some(), facts, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_split_keeps_parameters() {
        assert_eq!(split_summary("a.py::t[x - y] - boom"), ("a.py::t[x - y]", Some("boom")));
        assert_eq!(split_summary("a.py::t"), ("a.py::t", None));
        assert_eq!(split_summary("a.py::t - "), ("a.py::t", Some("")));
    }

    #[test]
    fn bare_summary_needs_known_words() {
        assert_eq!(bare_summary("2 failed, 118 passed in 1.20s"), Some("2 failed, 118 passed"));
        assert_eq!(bare_summary("3 files in 1.2s"), None);
        assert_eq!(bare_summary("1 passed, 2 warnings in 0.5s (0:00:00)"), Some("1 passed, 2 warnings"));
    }

    #[test]
    fn long_failure_section() {
        let log = "\
============================= test session starts ==============================
collected 3 items

tests/test_a.py .F.                                                      [100%]

=================================== FAILURES ===================================
___________________________________ test_x ____________________________________

    def test_x():
>       assert 1 == 2
E       assert 1 == 2

tests/test_a.py:40: AssertionError
----------------------------- Captured stdout call -----------------------------
hello.py:3: not a location
=========================== short test summary info ============================
FAILED tests/test_a.py::test_x - assert 1 == 2
========================= 1 failed, 2 passed in 0.12s ==========================
";
        let f = parse(log).unwrap();
        assert_eq!(f.failed, Some(1));
        assert_eq!(f.passed, Some(2));
        assert_eq!(f.failing, vec!["tests/test_a.py::test_x"]);
        let first = f.first_failure.unwrap();
        assert_eq!(first.location.as_deref(), Some("tests/test_a.py:40"));
        assert_eq!(first.message, "AssertionError: assert 1 == 2");
    }
}
