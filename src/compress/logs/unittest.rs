//! unittest and Django's runner: `Ran 12 tests in 0.3s`, `FAILED (failures=2, errors=1)` / `OK`,
//! the `FAIL: name (module.Class)` / `ERROR: …` headers, verbose `… ... FAIL` lines, and the first
//! failure's innermost `File "…", line N` frame with its exception line.

use std::sync::LazyLock;

use regex::Regex;

use super::LogFacts;
use super::traceback::TbScan;
use super::util::{Names, add, is_rule, num, with_failing};

static DETECT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)(?:^Ran \d+ tests? in [\d.]+s\r?$|^(?:FAIL|ERROR): .+\r?\n(?:.*\n)?-{20,}\r?$|^(?:FAIL|ERROR): \w+ \([\w.]+\))").expect("static regex")
});
static RAN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^Ran (\d+) tests? in [\d.]+s$").expect("static regex"));
static RESULT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:FAILED|OK)(?: \(([a-z =0-9,]*)\))?$").expect("static regex"));
static HEADER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(?:FAIL|ERROR): (.+)$").expect("static regex"));
/// `test_x (module.Class.test_x)` alone on its line (verbose output with a docstring line next).
static NAME_ONLY: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\w+ \([\w.]+\)$").expect("static regex"));
static NAME_START: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\w+ \([\w.]+\)").expect("static regex"));

pub(crate) fn detect(log: &str) -> bool {
    DETECT.is_match(log)
}

#[derive(PartialEq, Eq)]
enum EntryState {
    None,
    AwaitingRule,
    Collecting,
    Done,
}

pub(crate) fn parse(log: &str) -> Option<LogFacts> {
    let mut facts = LogFacts { tool: "unittest", ..LogFacts::default() };
    let mut names = Names::default();
    let mut last_ran: Option<u64> = None;
    let mut state = EntryState::None;
    let mut tb = TbScan::default();
    let mut prev = "";
    let mut lines = log.lines();
    while let Some(raw) = lines.next() {
        let line = raw.trim_end();
        let p = prev;
        prev = line;

        if state == EntryState::Collecting {
            if is_rule(line, '=', 20)
                || is_rule(line, '-', 20)
                || line.starts_with("FAIL: ")
                || line.starts_with("ERROR: ")
            {
                state = EntryState::Done;
            } else {
                tb.feed(line);
                continue;
            }
        }
        if state == EntryState::AwaitingRule && is_rule(line, '-', 20) {
            state = EntryState::Collecting;
            continue;
        }

        if line.starts_with("FAIL: ") || line.starts_with("ERROR: ") {
            let mut ahead = lines.clone();
            let next_is_rule = (0..2).any(|_| ahead.next().is_some_and(|l| is_rule(l, '-', 20)));
            if let Some(c) = HEADER.captures(line)
                && (is_rule(p, '=', 20) || next_is_rule || NAME_START.is_match(&c[1]))
            {
                names.push(&c[1]);
                if state == EntryState::None {
                    state = EntryState::AwaitingRule;
                }
                continue;
            }
        }
        if let Some(before) = line.strip_suffix(" ... FAIL").or_else(|| line.strip_suffix(" ... ERROR")) {
            // `name ... FAIL`, or a docstring line `Doc ... FAIL` under a `name` line.
            if NAME_START.is_match(before) {
                names.push(before);
            } else if NAME_ONLY.is_match(p) {
                names.push(p);
            }
            continue;
        }
        if line.starts_with("Ran ") {
            if let Some(c) = RAN.captures(line) {
                last_ran = Some(num(&c[1]));
            }
            continue;
        }
        if (line.starts_with("FAILED (") || (line.starts_with("OK") && last_ran.is_some()))
            && let Some(c) = RESULT.captures(line)
        {
            let (mut failures, mut errors, mut skipped, mut other) = (0u64, 0u64, 0u64, 0u64);
            for part in c.get(1).map_or("", |m| m.as_str()).split(", ") {
                let Some((key, n)) = part.split_once('=') else { continue };
                let n = num(n);
                match key.trim() {
                    "failures" => failures = failures.saturating_add(n),
                    "errors" => errors = errors.saturating_add(n),
                    "skipped" => skipped = skipped.saturating_add(n),
                    _ => other = other.saturating_add(n),
                }
            }
            if let Some(ran) = last_ran.take() {
                let passed =
                    ran.saturating_sub(failures).saturating_sub(errors).saturating_sub(skipped).saturating_sub(other);
                add(&mut facts.passed, passed);
            }
            add(&mut facts.failed, failures);
            add(&mut facts.errors, errors);
            add(&mut facts.skipped, skipped);
        }
    }
    facts.first_failure = tb.failure();
    with_failing(facts.failed.is_some(), facts, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn django_style_run() {
        let log = "\
test_a (app.tests.T.test_a) ... ok
test_b (app.tests.T.test_b)
Docstring of b ... FAIL
test_c (app.tests.T.test_c) ... ERROR

======================================================================
ERROR: test_c (app.tests.T.test_c)
----------------------------------------------------------------------
Traceback (most recent call last):
  File \"/app/tests.py\", line 9, in test_c
    boom()
NameError: name 'boom' is not defined

======================================================================
FAIL: test_b (app.tests.T.test_b)
Docstring of b
----------------------------------------------------------------------
Traceback (most recent call last):
  File \"/app/tests.py\", line 5, in test_b
    self.assertEqual(1, 2)
AssertionError: 1 != 2

----------------------------------------------------------------------
Ran 4 tests in 0.010s

FAILED (failures=1, errors=1, skipped=1)
";
        let f = parse(log).unwrap();
        assert_eq!((f.passed, f.failed, f.errors, f.skipped), (Some(1), Some(1), Some(1), Some(1)));
        assert_eq!(f.failing, vec!["test_b (app.tests.T.test_b)", "test_c (app.tests.T.test_c)"]);
        let first = f.first_failure.unwrap();
        assert_eq!(first.location.as_deref(), Some("/app/tests.py:9"));
        assert_eq!(first.message, "NameError: name 'boom' is not defined");
    }
}
