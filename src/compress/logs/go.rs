//! go test: `--- FAIL: TestX (0.00s)` (subtests too), the `x_test.go:12: message` lines, panics,
//! `FAIL\tpkg\t0.01s` / `ok  \tpkg` package lines and `# pkg` build errors.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

use super::util::{Diags, MAX_FAILING, Names, message, short};
use super::{Failure, LogFacts};

static DETECT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?m)^(?:\s*--- (?:FAIL|PASS|SKIP): \S+ \([\d.]+s\)|(?:ok|FAIL)\s+\S+\s+(?:[\d.]+s|\(cached\)|\[[^\]]+\]))",
    )
    .expect("static regex")
});
static RESULT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*--- (FAIL|PASS|SKIP): (.+?) \([\d.]+s\)$").expect("static regex"));
static RUN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^=== (?:RUN|CONT|NAME)\s+(\S+)").expect("static regex"));
static PACKAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(ok|FAIL)\s+(\S+)(?:\s+(?:[\d.]+s|\(cached\)|\[([^\]]+)\]).*)?$").expect("static regex")
});
static MESSAGE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s+(\S+\.go):(\d+): (.*)$").expect("static regex"));
static FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s+(\S+\.go):(\d+)(?: \+0x[0-9a-f]+)?$").expect("static regex"));
static BUILD_ERROR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S+\.go):(\d+)(?::(\d+))?: (.+)$").expect("static regex"));

pub(crate) fn detect(log: &str) -> bool {
    DETECT.is_match(log)
}

pub(crate) fn parse(log: &str) -> Option<LogFacts> {
    let mut facts = LogFacts { tool: "go test", ..LogFacts::default() };
    let mut names = Names::default();
    let mut diags = Diags::default();
    let (mut passed, mut failed, mut skipped) = (0u64, 0u64, 0u64);
    let mut verbose = false;
    // The test that the next `file.go:N: message` line belongs to: the last `=== RUN` (verbose
    // output logs as it goes) or the last `--- FAIL` (plain output logs under the result).
    let mut current: Option<String> = None;
    let mut messages: HashMap<String, Failure> = HashMap::new();
    let mut in_panic: Option<String> = None;
    let mut panic_failure: Option<Failure> = None;
    let mut fails_in_package = 0u64;
    let mut in_build = false;
    for raw in log.lines() {
        let line = raw.trim_end();
        if line.starts_with("=== ") {
            if let Some(c) = RUN.captures(line) {
                verbose = true;
                current = Some(c[1].to_owned());
            }
            continue;
        }
        if line.starts_with("# ") {
            in_build = true;
            continue;
        }
        if in_build {
            if let Some(c) = BUILD_ERROR.captures(line) {
                let loc = match c.get(3) {
                    Some(col) => format!("{}:{}:{}", &c[1], &c[2], col.as_str()),
                    None => format!("{}:{}", &c[1], &c[2]),
                };
                diags.push("error", &loc, None, &c[4]);
                continue;
            }
            in_build = false;
        }
        if line.contains("--- ")
            && let Some(c) = RESULT.captures(line)
        {
            match &c[1] {
                "FAIL" => {
                    failed += 1;
                    fails_in_package += 1;
                    names.push(&c[2]);
                    current = Some(c[2].to_owned());
                }
                "PASS" => passed += 1,
                _ => skipped += 1,
            }
            continue;
        }
        if let Some(c) = MESSAGE.captures(line) {
            if let Some(test) = &current
                && messages.len() < MAX_FAILING
                && !messages.contains_key(test)
            {
                let f = Failure { location: Some(short(&format!("{}:{}", &c[1], &c[2]))), message: message(&c[3]) };
                messages.insert(test.clone(), f);
            }
            continue;
        }
        if let Some(p) = line.strip_prefix("panic: ") {
            if panic_failure.is_none() && in_panic.is_none() {
                in_panic = Some(message(p));
            }
            continue;
        }
        if let Some(msg) = in_panic.as_ref()
            && let Some(c) = FRAME.captures(line)
        {
            let file = &c[1];
            if file.ends_with("_test.go") || !(file.contains("/src/runtime/") || file.contains("/src/testing/")) {
                panic_failure =
                    Some(Failure { location: Some(short(&format!("{file}:{}", &c[2]))), message: msg.clone() });
                in_panic = None;
            }
            continue;
        }
        if (line.starts_with("ok") || line.starts_with("FAIL"))
            && let Some(c) = PACKAGE.captures(line)
        {
            if &c[1] == "FAIL" && fails_in_package == 0 {
                match c.get(3) {
                    Some(why) => names.push(&format!("{} [{}]", &c[2], why.as_str())),
                    None => names.push(&c[2]),
                }
            }
            fails_in_package = 0;
            current = None;
        }
    }
    if panic_failure.is_none()
        && let Some(msg) = in_panic
    {
        panic_failure = Some(Failure { location: None, message: msg });
    }
    facts.failed = Some(failed);
    if verbose || passed > 0 {
        facts.passed = Some(passed);
        facts.skipped = Some(skipped);
    }
    // The first failing test (in the log's order) that logged a location.
    facts.first_failure = names.iter().find_map(|n| messages.remove(n)).or(panic_failure);
    facts.failing = names.into_vec();
    if !diags.is_empty() {
        facts.error_count = Some(diags.n_errors);
        facts.diagnostics = diags.into_vec();
    }
    Some(facts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_failure() {
        let log = "# example.com/calc [example.com/calc.test]\n./calc_test.go:9:2: undefined: Mul\nFAIL\texample.com/calc [build failed]\nok  \texample.com/other\t0.002s\n";
        let f = parse(log).unwrap();
        assert_eq!(f.failing, vec!["example.com/calc [build failed]"]);
        assert_eq!(f.error_count, Some(1));
        assert_eq!(f.diagnostics[0].location, "./calc_test.go:9:2");
        assert_eq!(f.diagnostics[0].message, "undefined: Mul");
    }
}
