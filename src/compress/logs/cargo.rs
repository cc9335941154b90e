//! cargo test (libtest) and cargo-nextest: `test result: FAILED. 3 passed; 1 failed; …`,
//! `test x ... FAILED`, `---- x stdout ----`, the `failures:` list and the first
//! `panicked at src/lib.rs:10:5:` with its message.

use std::sync::LazyLock;

use regex::Regex;

use super::util::{Names, add, message, num, short, with_failing};
use super::{Failure, LogFacts};

static DETECT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)(?:^test result: (?:ok|FAILED)\. \d+ passed; \d+ failed|^test \S.* \.\.\. FAILED\r?$|^\s*Summary \[ *[\d.]+s\] \d+ tests? run: )")
        .expect("static regex")
});
static RESULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored").expect("static regex")
});
static TEST_LINE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^test (.+?) \.\.\. FAILED$").expect("static regex"));
static SECTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^---- (.+?) std(?:out|err) ----$").expect("static regex"));
static PANIC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^thread '.*?'(?: \(\d+\))? panicked at (.+)$").expect("static regex"));
static NEW_LOC: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(\S+?:\d+:\d+):$").expect("static regex"));
static OLD_LOC: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^'(.*)', (\S+?:\d+:\d+)$").expect("static regex"));
static NEXTEST_FAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:FAIL|SIGSEGV|SIGABRT|SIGKILL|TIMEOUT|LEAK-FAIL) \[ *[\d.]+s\] (.+)$").expect("static regex")
});
static NEXTEST_SUMMARY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*Summary \[ *[\d.]+s\] \d+ tests? run: (\d+) passed(?: \(\d+ [a-z]+\))?, (\d+) failed(?:, (\d+) skipped)?",
    )
    .expect("static regex")
});

pub(crate) fn detect(log: &str) -> bool {
    DETECT.is_match(log)
}

pub(crate) fn parse(log: &str) -> Option<LogFacts> {
    let mut facts = LogFacts { tool: "cargo test", ..LogFacts::default() };
    let mut names = Names::default();
    // After `failures:`: 0 = not in the list, 1 = before the first name, 2 = in the names.
    let mut list = 0u8;
    // The first panic: its location, and its message lines still to read.
    let mut panic: Option<(Option<String>, Vec<String>)> = None;
    let mut panic_lines_open = false;
    for raw in log.lines() {
        let line = raw.trim_end();
        if panic_lines_open {
            let t = line.trim();
            let stop = t.is_empty() || t.starts_with("note:") || t.starts_with("stack backtrace:");
            match panic.as_mut() {
                Some((_, msg)) if !stop && msg.len() < 4 => msg.push(message(t)),
                _ => panic_lines_open = false,
            }
        }
        if list > 0 {
            if line.is_empty() {
                if list == 2 {
                    list = 0;
                }
                continue;
            }
            if let Some(name) = line.strip_prefix("    ") {
                names.push(name);
                list = 2;
                continue;
            }
            list = 0;
        }
        if line == "failures:" {
            list = 1;
            continue;
        }
        if line.starts_with("test ") {
            if let Some(c) = RESULT.captures(line) {
                add(&mut facts.passed, num(&c[1]));
                add(&mut facts.failed, num(&c[2]));
                add(&mut facts.skipped, num(&c[3]));
                continue;
            }
            if let Some(c) = TEST_LINE.captures(line) {
                names.push(&c[1]);
                continue;
            }
        }
        if line.starts_with("---- ") {
            if let Some(c) = SECTION.captures(line) {
                names.push(&c[1]);
            }
            continue;
        }
        if panic.is_none()
            && line.starts_with("thread '")
            && let Some(c) = PANIC.captures(line)
        {
            let rest = &c[1];
            if let Some(l) = NEW_LOC.captures(rest) {
                panic = Some((Some(short(&l[1])), Vec::new()));
                panic_lines_open = true;
            } else if let Some(l) = OLD_LOC.captures(rest) {
                panic = Some((Some(short(&l[2])), vec![l[1].to_owned()]));
            } else {
                panic = Some((None, vec![rest.to_owned()]));
            }
            continue;
        }
        if let Some(c) = NEXTEST_FAIL.captures(line) {
            names.push(&c[1]);
            continue;
        }
        if let Some(c) = NEXTEST_SUMMARY.captures(line) {
            add(&mut facts.passed, num(&c[1]));
            add(&mut facts.failed, num(&c[2]));
            add(&mut facts.skipped, c.get(3).map_or(0, |m| num(m.as_str())));
        }
    }
    facts.first_failure = panic.map(|(location, msg)| Failure { location, message: message(&msg.join(" ")) });
    with_failing(facts.passed.is_some(), facts, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_panic_format() {
        let log = "running 1 test\ntest t ... FAILED\n\nfailures:\n\n---- t stdout ----\nthread 't' panicked at 'boom', src/lib.rs:3:9\n\nfailures:\n    t\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n";
        let f = parse(log).unwrap();
        assert_eq!(f.failing, vec!["t"]);
        let first = f.first_failure.unwrap();
        assert_eq!(first.location.as_deref(), Some("src/lib.rs:3:9"));
        assert_eq!(first.message, "boom");
    }
}
