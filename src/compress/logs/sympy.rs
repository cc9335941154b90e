//! SymPy's own runner (`bin/test`): `tests finished: 47 passed, 1 failed, in 7.51 seconds`, the
//! `___ path.py:test_name ___` failure headers, verbose `test_name F` lines and the tracebacks.

use std::sync::LazyLock;

use regex::Regex;

use super::LogFacts;
use super::traceback::TbScan;
use super::util::{Names, Pending, add, is_rule, num, with_failing};

static DETECT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)(?:tests finished: \d+ passed|^=+ test process starts =+\r?$)").expect("static regex")
});
static SUMMARY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"tests finished: (.+?),? in [\d.]+ seconds").expect("static regex"));
static HEADER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^_+ (\S+?\.py:\S+) _+$").expect("static regex"));
static VERBOSE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(test_\w+) +(?:F|E)$").expect("static regex"));

pub(crate) fn detect(log: &str) -> bool {
    DETECT.is_match(log)
}

pub(crate) fn parse(log: &str) -> Option<LogFacts> {
    let mut facts = LogFacts { tool: "sympy test", ..LogFacts::default() };
    let mut names = Names::default();
    let mut verbose = Pending::default();
    let mut tb: Option<TbScan> = None;
    let mut tb_done = false;
    let mut seen = false;
    for raw in log.lines() {
        let line = raw.trim_end();
        if line.contains("tests finished: ")
            && let Some(c) = SUMMARY.captures(line)
        {
            seen = true;
            for part in [&mut facts.passed, &mut facts.failed, &mut facts.errors, &mut facts.skipped] {
                add(part, 0);
            }
            for part in c[1].split(", ") {
                let Some((n, word)) = part.trim().split_once(' ') else { continue };
                let n = num(n);
                match word {
                    "passed" => add(&mut facts.passed, n),
                    "failed" => add(&mut facts.failed, n),
                    "exceptions" | "exception" => add(&mut facts.errors, n),
                    "skipped" => add(&mut facts.skipped, n),
                    _ => {}
                }
            }
            if tb.is_some() {
                tb_done = true;
            }
            continue;
        }
        if line.starts_with('_') {
            if let Some(c) = HEADER.captures(line) {
                names.push(&c[1]);
                if tb.is_some() {
                    tb_done = true;
                } else {
                    tb = Some(TbScan::default());
                }
                continue;
            }
            if is_rule(line, '_', 10) {
                if tb.is_some() {
                    tb_done = true;
                }
                continue;
            }
        }
        if let Some(t) = tb.as_mut().filter(|_| !tb_done) {
            t.feed(line);
            continue;
        }
        if let Some(c) = VERBOSE.captures(line) {
            verbose.push(&c[1]);
        }
    }
    let suffixes: std::collections::HashSet<String> =
        names.iter().filter_map(|n| n.rsplit_once(':').map(|(_, t)| t.to_owned())).collect();
    verbose.merge_into(&mut names, |v| suffixes.contains(v));
    facts.first_failure = tb.and_then(|t| t.failure());
    with_failing(seen, facts, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sympy_failure() {
        let log = "\
============================= test process starts ==============================
sympy/sets/tests/test_fancysets.py[49] ...F..f..                            [FAIL]

________________________________________________________________________________
_______ sympy/sets/tests/test_fancysets.py:test_imageset_intersect_real ________
Traceback (most recent call last):
  File \"/code/sympy/sets/tests/test_fancysets.py\", line 660, in test_imageset_intersect_real
    assert imageset(x) == y
AssertionError

=== tests finished: 47 passed, 1 failed, 1 expected to fail, in 7.51 seconds ===
DO *NOT* COMMIT!
";
        let f = parse(log).unwrap();
        assert_eq!((f.passed, f.failed, f.errors, f.skipped), (Some(47), Some(1), Some(0), Some(0)));
        assert_eq!(f.failing, vec!["sympy/sets/tests/test_fancysets.py:test_imageset_intersect_real"]);
        let first = f.first_failure.unwrap();
        assert_eq!(first.location.as_deref(), Some("/code/sympy/sets/tests/test_fancysets.py:660"));
        assert_eq!(first.message, "AssertionError");
    }
}
