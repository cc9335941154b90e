//! JavaScript runners: jest (`Tests: 1 failed, 5 passed, 6 total`, `● Suite › test`, `FAIL file`,
//! `✕ test`), vitest (`Test Files  1 failed | 2 passed`, `Tests  2 failed | 10 passed`,
//! `FAIL  file > suite > test`, `× test`, `❯ file:line:col`) and node:test (TAP `not ok 3 - name`
//! with `# pass 5` / `# fail 1`, or the spec reporter's `✖ name` and `ℹ fail 1`).

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

use super::util::{Names, Pending, add, indent, message, num, short, strip_file_url, with_failing};
use super::{Failure, LogFacts};

static JEST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)(?:^Tests:\s+(?:\d+ [a-z]+, )*\d+ total\r?$|^\s*● .+ › .+\r?$)").expect("static regex")
});
static VITEST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^\s*(?:Test Files|Tests)\s{2,}\d+ (?:failed|passed|skipped)(?: \| \d+ [a-z]+)* \(\d+\)\r?$")
        .expect("static regex")
});
static NODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)(?:^(?:#|ℹ) (?:tests|pass|fail) \d+\r?$|^\s*not ok \d+ - |^TAP version \d+)")
        .expect("static regex")
});

/// A JavaScript stack location: `at fn (path:l:c)`, `at path:l:c`, or `fn (file:///path:l:c)`.
static FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:^\s*at |\()((?:file://)?[^()\s]+):(\d+):(\d+)\)?$").expect("static regex"));
static JEST_FAIL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*FAIL\s+(.+?)(?: \([\d.]+ m?s\))?$").expect("static regex"));
static JEST_TESTS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^Tests:\s+(.+)$").expect("static regex"));
static CROSS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*[✕×✗] (.+?)(?: \(?\d+(?:\.\d+)? ?m?s\)?)?$").expect("static regex"));
static VITEST_FAIL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*FAIL\s+(.+?)(?: \[ [^\]]+ \])?$").expect("static regex"));
static VITEST_TESTS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*Tests\s{2,}(.+?)\s*\(\d+\)$").expect("static regex"));
static VITEST_LOC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*❯ ((?:file://)?\S+?):(\d+):(\d+)$").expect("static regex"));
static TAP_NOT_OK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*not ok \d+(?: - (.*?))?(\s+#\s*(?i:todo|skip)\b.*)?$").expect("static regex"));
static NODE_COUNT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:#|ℹ) (tests|pass|fail|skipped|todo|cancelled) (\d+)$").expect("static regex"));
static SPEC_CROSS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\s*)✖ (.+?)(?: \([\d.]+m?s\))?$").expect("static regex"));
static TAP_LOCATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*location: '(.+?):(\d+):(\d+)'$").expect("static regex"));

pub(crate) fn detect_jest(log: &str) -> bool {
    JEST.is_match(log)
}

pub(crate) fn detect_vitest(log: &str) -> bool {
    VITEST.is_match(log)
}

pub(crate) fn detect_node(log: &str) -> bool {
    NODE.is_match(log)
}

/// A stack location outside dependencies and node's internals, as `path:line:col`.
fn user_frame(line: &str) -> Option<String> {
    let c = FRAME.captures(line)?;
    let path = strip_file_url(c.get(1)?.as_str());
    if path.contains("node_modules") || path.starts_with("node:") || path.starts_with("internal/") {
        return None;
    }
    Some(short(&format!("{path}:{}:{}", &c[2], &c[3])))
}

/// The first failure block: its first text line and its first user frame.
#[derive(Default)]
struct Block {
    message: Option<String>,
    location: Option<String>,
}

impl Block {
    fn feed(&mut self, line: &str, loc: Option<String>) {
        if self.location.is_none()
            && let Some(l) = loc
        {
            self.location = Some(l);
            return;
        }
        let t = line.trim();
        if self.message.is_none() && !t.is_empty() && !t.starts_with("at ") {
            self.message = Some(message(t));
        }
    }

    fn failure(self) -> Option<Failure> {
        if self.message.is_none() && self.location.is_none() {
            return None;
        }
        Some(Failure { location: self.location, message: self.message.unwrap_or_default() })
    }
}

/// Tail keys of `a › b › c`-style names: `c`, `b › c`, … (the last few levels), and the whole.
fn tails(names: &Names, sep: &str) -> HashSet<String> {
    const MAX_TAIL: usize = 4;
    let mut out = HashSet::new();
    for n in names.iter() {
        out.insert(n.clone());
        let mut rest = n.as_str();
        for _ in 0..MAX_TAIL {
            let Some((head, _)) = rest.rsplit_once(sep) else { break };
            if let Some(tail) = n.get(head.len() + sep.len()..) {
                out.insert(tail.to_owned());
            }
            rest = head;
        }
    }
    out
}

fn counts(facts: &mut LogFacts, parts: &str, separator: &str) {
    add(&mut facts.passed, 0);
    add(&mut facts.failed, 0);
    add(&mut facts.skipped, 0);
    for part in parts.split(separator) {
        let Some((n, word)) = part.trim().split_once(' ') else { continue };
        let n = num(n);
        match word.trim() {
            "passed" => add(&mut facts.passed, n),
            "failed" => add(&mut facts.failed, n),
            "skipped" | "todo" | "pending" => add(&mut facts.skipped, n),
            _ => {}
        }
    }
}

pub(crate) fn parse_jest(log: &str) -> Option<LogFacts> {
    let mut facts = LogFacts { tool: "jest", ..LogFacts::default() };
    let mut names = Names::default();
    let mut crosses = Pending::default();
    let mut file: Option<String> = None;
    let mut block: Option<Block> = None;
    let mut block_open = false;
    for raw in log.lines() {
        let line = raw.trim_end();
        let t = line.trim_start();
        if let Some(name) = t.strip_prefix("● ") {
            let name = name.trim();
            if block.is_some() {
                block_open = false;
            }
            if name == "Test suite failed to run" {
                if let Some(f) = &file {
                    names.push(f);
                }
            } else if name.ends_with(':') || name.starts_with("Console") {
                continue;
            } else {
                names.push(name);
            }
            if block.is_none() {
                block = Some(Block::default());
                block_open = true;
            }
            continue;
        }
        if t.starts_with("FAIL") || t.starts_with("PASS") || t.starts_with("Test Suites:") {
            block_open = false;
            if let Some(c) = JEST_FAIL.captures(line) {
                file = Some(c[1].to_owned());
            }
        }
        if let Some(b) = block.as_mut().filter(|_| block_open) {
            b.feed(line, user_frame(line));
            continue;
        }
        if let Some(c) = CROSS.captures(line) {
            crosses.push(&c[1]);
            continue;
        }
        if let Some(c) = JEST_TESTS.captures(line) {
            counts(&mut facts, &c[1], ",");
        }
    }
    let keys = tails(&names, " › ");
    crosses.merge_into(&mut names, |n| keys.contains(n));
    facts.first_failure = block.and_then(Block::failure);
    with_failing(facts.passed.is_some(), facts, names)
}

pub(crate) fn parse_vitest(log: &str) -> Option<LogFacts> {
    let mut facts = LogFacts { tool: "vitest", ..LogFacts::default() };
    let mut names = Names::default();
    let mut crosses = Pending::default();
    let mut block: Option<Block> = None;
    let mut block_open = false;
    let mut arrow: Option<String> = None;
    for raw in log.lines() {
        let line = raw.trim_end();
        let t = line.trim_start();
        if t.starts_with("FAIL ")
            && let Some(c) = VITEST_FAIL.captures(line)
        {
            names.push(&c[1]);
            block_open = false;
            if block.is_none() {
                block = Some(Block::default());
                block_open = true;
            }
            continue;
        }
        if t.starts_with('⎯') {
            block_open = false;
            continue;
        }
        if let Some(b) = block.as_mut().filter(|_| block_open) {
            let loc = VITEST_LOC
                .captures(line)
                .map(|c| short(&format!("{}:{}:{}", strip_file_url(&c[1]), &c[2], &c[3])))
                .or_else(|| user_frame(line));
            b.feed(line, loc);
            continue;
        }
        if let Some(c) = CROSS.captures(line) {
            crosses.push(&c[1]);
            continue;
        }
        if arrow.is_none()
            && let Some(m) = t.strip_prefix("→ ")
        {
            arrow = Some(message(m));
            continue;
        }
        if t.starts_with("Tests ")
            && let Some(c) = VITEST_TESTS.captures(line)
        {
            counts(&mut facts, &c[1], "|");
        }
    }
    let keys = tails(&names, " > ");
    crosses.merge_into(&mut names, |n| keys.contains(n));
    facts.first_failure =
        block.and_then(Block::failure).or_else(|| arrow.map(|m| Failure { location: None, message: m }));
    with_failing(facts.passed.is_some(), facts, names)
}

/// TAP YAML keys that carry no message.
const YAML_KEYS: [&str; 9] =
    ["duration_ms:", "type:", "failureType:", "code:", "name:", "expected:", "actual:", "operator:", "stack:"];

/// The first failing node:test entry: its YAML block (TAP) or indented error (spec reporter).
#[derive(Default)]
struct NodeBlock {
    indent: usize,
    message: Option<String>,
    location: Option<String>,
    definition: Option<String>,
    /// The TAP YAML `error: |-` line was seen: the message is on the next line.
    error_next: bool,
}

impl NodeBlock {
    fn new(indent: usize) -> Self {
        NodeBlock { indent, ..NodeBlock::default() }
    }

    /// False once the block ended.
    fn feed(&mut self, line: &str) -> bool {
        let t = line.trim();
        if t.is_empty() {
            return true;
        }
        if indent(line) <= self.indent || t == "..." {
            return false;
        }
        if self.error_next {
            self.error_next = false;
            if self.message.is_none() {
                self.message = Some(message(t));
            }
            return true;
        }
        if let Some(e) = t.strip_prefix("error: ") {
            if e.starts_with('|') || e.starts_with('>') {
                self.error_next = true;
            } else if self.message.is_none() {
                self.message = Some(message(e.trim_matches(['\'', '"'])));
            }
            return true;
        }
        if let Some(c) = TAP_LOCATION.captures(line) {
            self.definition = Some(short(&format!("{}:{}:{}", strip_file_url(&c[1]), &c[2], &c[3])));
            return true;
        }
        if FRAME.is_match(line) {
            if self.location.is_none() {
                self.location = user_frame(line);
            }
            return true;
        }
        if t == "---" || YAML_KEYS.iter().any(|k| t.starts_with(k)) {
            return true;
        }
        if self.message.is_none() {
            self.message = Some(message(t));
        }
        true
    }

    fn failure(self) -> Failure {
        Failure { location: self.location.or(self.definition), message: self.message.unwrap_or_default() }
    }
}

pub(crate) fn parse_node(log: &str) -> Option<LogFacts> {
    let mut facts = LogFacts { tool: "node:test", ..LogFacts::default() };
    let mut names = Names::default();
    let mut block: Option<NodeBlock> = None;
    let mut block_open = false;
    let mut in_failing_summary = false;
    let mut seen_counts = false;
    for raw in log.lines() {
        let line = raw.trim_end();
        if block_open && let Some(b) = block.as_mut() {
            block_open = b.feed(line);
            if block_open {
                continue;
            }
        }
        if let Some(c) = TAP_NOT_OK.captures(line) {
            if c.get(2).is_some_and(|d| d.as_str().to_ascii_lowercase().contains("todo")) {
                continue;
            }
            names.push(c.get(1).map_or("", |m| m.as_str()));
            if block.is_none() {
                block = Some(NodeBlock::new(indent(line)));
                block_open = true;
            }
            continue;
        }
        if let Some(c) = SPEC_CROSS.captures(line) {
            let name = &c[2];
            if name == "failing tests:" {
                in_failing_summary = true;
                continue;
            }
            names.push(name);
            if block.is_none() && !in_failing_summary {
                block = Some(NodeBlock::new(c[1].len()));
                block_open = true;
            }
            continue;
        }
        if let Some(c) = NODE_COUNT.captures(line) {
            if !seen_counts {
                seen_counts = true;
                add(&mut facts.passed, 0);
                add(&mut facts.failed, 0);
                add(&mut facts.skipped, 0);
            }
            let n = num(&c[2]);
            match &c[1] {
                "pass" => add(&mut facts.passed, n),
                "fail" => add(&mut facts.failed, n),
                "skipped" | "todo" => add(&mut facts.skipped, n),
                _ => {}
            }
        }
    }
    facts.first_failure = block.map(NodeBlock::failure);
    with_failing(seen_counts, facts, names)
}
