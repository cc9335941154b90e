//! Maven surefire and Gradle: `Tests run: 10, Failures: 1, Errors: 0, Skipped: 0`,
//! `[ERROR] testFoo(com.x.FooTest)  Time elapsed: … <<< FAILURE!` (and surefire 3's
//! `com.x.FooTest.testFoo -- Time elapsed`), the `Results:` list, Gradle's
//! `FooTest > testFoo() FAILED` and `3 tests completed, 1 failed`, and the first failure's
//! exception with its `(FooTest.java:12)` frame.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

use super::util::{Names, Pending, add, message, num, short, with_failing};
use super::{Failure, LogFacts};

static DETECT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)(?:Tests run: \d+, Failures: \d+, Errors: \d+, Skipped: \d+|^\d+ tests? completed, \d+ failed|Time elapsed: [\d.,]+ s(?:ec)?\s*<<< (?:FAILURE|ERROR)!|^\S[^\n]* > [^\n]+ FAILED\r?\n\s+\S)")
        .expect("static regex")
});
static TESTS_RUN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)(.*)$").expect("static regex")
});
static DETAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\[ERROR\] )?(.+?)(?: --)?\s+Time elapsed: [\d.,]+ s(?:ec)?\s*<<< (?:FAILURE|ERROR)!$")
        .expect("static regex")
});
static FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s+at (?:\S+/)?([\w.$]+)\.[\w$<>-]+\(([^():]+):(\d+)\)$").expect("static regex"));
static GRADLE_SHORT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s+(\S.*?) at ([^\s:]+):(\d+)$").expect("static regex"));
static GRADLE_TOTAL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\d+) tests? completed, (\d+) failed(?:, (\d+) skipped)?$").expect("static regex"));

pub(crate) fn detect(log: &str) -> bool {
    DETECT.is_match(log)
}

const FRAMEWORK: [&str; 14] = [
    "org.junit.",
    "junit.",
    "java.",
    "javax.",
    "jdk.",
    "sun.",
    "org.apache.maven.",
    "org.opentest4j.",
    "org.assertj.",
    "org.hamcrest.",
    "org.mockito.",
    "kotlin.",
    "org.gradle.",
    "worker.org.gradle.",
];

/// `FooTest.testFoo` for `testFoo(com.x.FooTest)` or `com.x.FooTest.testFoo`.
fn key(name: &str) -> String {
    if let Some((method, rest)) = name.split_once('(')
        && let Some(class) = rest.strip_suffix(')')
    {
        let simple = class.rsplit('.').next().unwrap_or(class);
        return format!("{simple}.{method}");
    }
    let mut parts = name.rsplitn(3, '.');
    let method = parts.next().unwrap_or_default();
    match parts.next() {
        Some(class) => format!("{class}.{method}"),
        None => method.to_owned(),
    }
}

/// The class a detail name belongs to, to find its own frame.
fn class_of(name: &str) -> Option<&str> {
    if let Some((_, rest)) = name.split_once('(') {
        return rest.strip_suffix(')');
    }
    name.rsplit_once('.').map(|(c, _)| c)
}

/// The first failure: its message line, then its stack.
struct Detail {
    class: Option<String>,
    message: Option<String>,
    location: Option<String>,
    fallback: Option<String>,
    open: bool,
}

impl Detail {
    fn new(class: Option<&str>) -> Self {
        Detail { class: class.map(str::to_owned), message: None, location: None, fallback: None, open: true }
    }

    fn feed(&mut self, line: &str) {
        let t = line.trim();
        if t.is_empty() || line.starts_with('[') {
            if self.message.is_some() {
                self.open = false;
            }
            return;
        }
        if let Some(c) = FRAME.captures(line) {
            let loc = format!("{}:{}", &c[2], &c[3]);
            let class = &c[1];
            let own = self.class.as_deref().is_some_and(|k| {
                class == k || class.starts_with(&format!("{k}$")) || class.ends_with(&format!(".{k}"))
            });
            if own && self.location.is_none() {
                self.location = Some(short(&loc));
                self.open = false;
            } else if self.fallback.is_none() && !FRAMEWORK.iter().any(|p| class.starts_with(p)) {
                self.fallback = Some(short(&loc));
            }
            return;
        }
        if self.message.is_none() {
            if let Some(c) = GRADLE_SHORT.captures(line) {
                self.message = Some(message(&c[1]));
                self.location = Some(short(&format!("{}:{}", &c[2], &c[3])));
                self.open = false;
            } else {
                self.message = Some(message(t));
            }
        }
    }

    fn failure(self) -> Failure {
        Failure { location: self.location.or(self.fallback), message: self.message.unwrap_or_default() }
    }
}

pub(crate) fn parse(log: &str) -> Option<LogFacts> {
    let mut names = Names::default();
    let mut results = Pending::default();
    let mut surefire = false;
    let (mut agg, mut per_class) = ([0u64; 4], [0u64; 4]);
    let (mut seen_agg, mut seen_class) = (false, false);
    let mut gradle_total: Option<[u64; 3]> = None;
    let mut detail: Option<Detail> = None;
    let mut results_mode = false;
    let mut results_fallback: Option<Failure> = None;
    for raw in log.lines() {
        let line = raw.trim_end();
        if let Some(d) = detail.as_mut().filter(|d| d.open) {
            d.feed(line);
        }
        if results_mode {
            match line.strip_prefix("[ERROR]   ").or_else(|| line.strip_prefix("  ")) {
                Some(item) => {
                    let item = item.trim_start();
                    let token = item.split_whitespace().next().unwrap_or_default();
                    if token != "Run" && !token.is_empty() {
                        let name = match token.find(')') {
                            Some(i) if token.contains('(') => token.get(..=i).unwrap_or(token),
                            _ => token.split(':').next().unwrap_or(token),
                        };
                        results.push(name);
                        if results_fallback.is_none() {
                            let location = token.split_once(':').and_then(|(n, rest)| {
                                let line_no: String = rest.chars().take_while(char::is_ascii_digit).collect();
                                (!line_no.is_empty()).then(|| short(&format!("{n}:{line_no}")))
                            });
                            let msg = item.get(token.len()..).unwrap_or_default();
                            results_fallback = Some(Failure { location, message: message(msg) });
                        }
                    }
                    continue;
                }
                None => results_mode = false,
            }
        }
        let bare = line.strip_prefix("[ERROR] ").unwrap_or(line).trim();
        if matches!(bare, "Failures:" | "Errors:" | "Failed tests:" | "Tests in error:") {
            results_mode = true;
            surefire = true;
            continue;
        }
        if line.contains("Tests run: ")
            && let Some(c) = TESTS_RUN.captures(line)
        {
            surefire = true;
            let counts = [num(&c[1]), num(&c[2]), num(&c[3]), num(&c[4])];
            let target = if c[5].contains("Time elapsed") {
                seen_class = true;
                &mut per_class
            } else {
                seen_agg = true;
                &mut agg
            };
            for (t, n) in target.iter_mut().zip(counts) {
                *t = t.saturating_add(n);
            }
            continue;
        }
        if line.contains("<<< ")
            && let Some(c) = DETAIL.captures(line)
        {
            surefire = true;
            let name = c[1].trim();
            names.push(name);
            if detail.is_none() {
                detail = Some(Detail::new(class_of(name)));
            }
            continue;
        }
        if !line.starts_with(['>', ' ', '\t'])
            && line.contains(" > ")
            && let Some(name) = line.strip_suffix(" FAILED")
        {
            names.push(name);
            if detail.is_none() {
                let class = name.split(" > ").next().map(str::trim);
                detail = Some(Detail::new(class));
            }
            continue;
        }
        if let Some(c) = GRADLE_TOTAL.captures(line) {
            let prev = gradle_total.unwrap_or_default();
            let skipped = c.get(3).map_or(0, |m| num(m.as_str()));
            gradle_total = Some([
                prev[0].saturating_add(num(&c[1])),
                prev[1].saturating_add(num(&c[2])),
                prev[2].saturating_add(skipped),
            ]);
        }
    }
    let keys: HashSet<String> = names.iter().map(|n| key(n)).collect();
    results.merge_into(&mut names, |r| keys.contains(r) || keys.contains(&key(r)));

    let mut facts = LogFacts { tool: if surefire { "surefire" } else { "gradle" }, ..LogFacts::default() };
    let counts = if seen_agg {
        Some(agg)
    } else if seen_class {
        Some(per_class)
    } else {
        None
    };
    if let Some([run, failures, errors, skipped]) = counts {
        add(&mut facts.passed, run.saturating_sub(failures).saturating_sub(errors).saturating_sub(skipped));
        add(&mut facts.failed, failures);
        add(&mut facts.errors, errors);
        add(&mut facts.skipped, skipped);
    } else if let Some([completed, failed, skipped]) = gradle_total {
        add(&mut facts.passed, completed.saturating_sub(failed).saturating_sub(skipped));
        add(&mut facts.failed, failed);
        add(&mut facts.skipped, skipped);
    }
    facts.first_failure = detail.map(Detail::failure).or(results_fallback);
    with_failing(facts.passed.is_some(), facts, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        assert_eq!(key("testFoo(com.x.FooTest)"), "FooTest.testFoo");
        assert_eq!(key("com.x.FooTest.testFoo"), "FooTest.testFoo");
        assert_eq!(key("FooTest.testFoo"), "FooTest.testFoo");
        assert_eq!(class_of("com.x.FooTest.testFoo"), Some("com.x.FooTest"));
    }
}
