//! Build and lint diagnostics: tsc (`src/a.ts(12,5): error TS2345: …`, the pretty
//! `src/a.ts:12:5 - error TS2345: …`, `Found 3 errors`), eslint's stylish output (a file line,
//! then `  12:5  error  message  rule`, `✖ 5 problems (3 errors, 2 warnings)`), rustc/cargo
//! (`error[E0308]: …` + ` --> src/main.rs:4:5`, lint names from `#[warn(…)]` notes, the
//! `could not compile … due to 2 previous errors` totals), mypy (`a.py:3: error: … [code]`) and
//! gcc/clang (`file.c:10:5: error: … [-Wflag]`).

use std::sync::LazyLock;

use regex::Regex;

use super::LogFacts;
use super::util::{Diags, Slot, num};

static TSC_DETECT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^\S.*?(?:\(\d+,\d+\): | - )error TS\d+: ").expect("static regex"));
static TSC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(.+?)(?:\((\d+),(\d+)\):|:(\d+):(\d+) -) (error|warning) (TS\d+): (.*)$").expect("static regex")
});
static TSC_FOUND: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:^|\] )Found (\d+) errors?\b").expect("static regex"));

static ESLINT_DETECT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)(?:^\s+\d+:\d+\s+(?:error|warning)\s{2,}\S|^✖ \d+ problems? \()").expect("static regex")
});
static ESLINT_ROW: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s+(\d+):(\d+)\s+(error|warning)\s+(.+)$").expect("static regex"));
static ESLINT_TOTAL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^✖ \d+ problems? \((\d+) errors?, (\d+) warnings?\)").expect("static regex"));
static ESLINT_RULE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^@?[a-z0-9][\w@/.-]*$").expect("static regex"));

static RUSTC_DETECT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^(?:error|warning)(?:\[[A-Z]\d{4}\])?: .+\r?\n\s*--> \S+:\d+:\d+").expect("static regex")
});
static RUSTC_HEAD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(error|warning)(?:\[([A-Za-z]\d+)\])?: (.+)$").expect("static regex"));
static RUSTC_ARROW: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*--> (\S+:\d+:\d+)$").expect("static regex"));
static RUSTC_LINT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"#\[(?:warn|deny|forbid)\(([\w:]+)\)\]|`-[DW] ([\w:-]+)` implied by").expect("static regex")
});
static RUSTC_COULD_NOT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^error: could not compile `[^`]+`.*? due to (\d+ )?previous errors?(?:; (\d+) warnings? emitted)?")
        .expect("static regex")
});
static RUSTC_ABORTING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^error: aborting due to (\d+ )?previous errors?(?:; (\d+) warnings? emitted)?").expect("static regex")
});
static RUSTC_GENERATED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^warning: .+ generated (\d+) warnings?").expect("static regex"));

static MYPY_DETECT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)(?:^\S+\.pyi?:\d+(?::\d+)?: error: |^Found \d+ errors? in \d+ files? \(checked )")
        .expect("static regex")
});
static MYPY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+\.pyi?:\d+(?::\d+)?): (error|warning): (.*?)(?:  \[([\w-]+)\])?$").expect("static regex")
});
static MYPY_FOUND: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^Found (\d+) errors? in \d+ files?").expect("static regex"));

static GCC_DETECT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^[^\s:]+:\d+:(?:\d+:)? (?:fatal error|error|warning): ").expect("static regex"));
static GCC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S.*?:\d+(?::\d+)?): (fatal error|error|warning): (.*?)(?: \[(-W[^\]]+|-fpermissive)\])?$")
        .expect("static regex")
});

pub(crate) fn detect_tsc(log: &str) -> bool {
    TSC_DETECT.is_match(log)
}

pub(crate) fn detect_eslint(log: &str) -> bool {
    ESLINT_DETECT.is_match(log)
}

pub(crate) fn detect_rustc(log: &str) -> bool {
    RUSTC_DETECT.is_match(log)
}

pub(crate) fn detect_mypy(log: &str) -> bool {
    MYPY_DETECT.is_match(log)
}

pub(crate) fn detect_gcc(log: &str) -> bool {
    GCC_DETECT.is_match(log)
}

fn finish(tool: &'static str, diags: Diags, errors: Option<u64>, warnings: Option<u64>) -> Option<LogFacts> {
    if diags.is_empty() && errors.unwrap_or(0) == 0 && warnings.unwrap_or(0) == 0 {
        return None;
    }
    let error_count = Some(errors.unwrap_or(diags.n_errors));
    let warning_count = Some(warnings.unwrap_or(diags.n_warnings));
    Some(LogFacts { tool, diagnostics: diags.into_vec(), error_count, warning_count, ..LogFacts::default() })
}

pub(crate) fn parse_tsc(log: &str) -> Option<LogFacts> {
    let mut diags = Diags::default();
    let mut found: Option<u64> = None;
    for raw in log.lines() {
        let line = raw.trim_end();
        if line.contains(" TS")
            && let Some(c) = TSC.captures(line)
        {
            let (l, col) = match (c.get(2), c.get(3)) {
                (Some(l), Some(col)) => (l.as_str(), col.as_str()),
                _ => (c.get(4).map_or("", |m| m.as_str()), c.get(5).map_or("", |m| m.as_str())),
            };
            let loc = format!("{}:{l}:{col}", c[1].trim());
            diags.push(&c[6], &loc, Some(&c[7]), &c[8]);
            continue;
        }
        if line.contains("Found ")
            && let Some(c) = TSC_FOUND.captures(line)
        {
            found = Some(found.unwrap_or(0).saturating_add(num(&c[1])));
        }
    }
    let mut facts = finish("tsc", diags, found, None)?;
    facts.warning_count = None;
    Some(facts)
}

pub(crate) fn parse_eslint(log: &str) -> Option<LogFacts> {
    let mut diags = Diags::default();
    let mut file = String::new();
    let (mut errors, mut warnings): (Option<u64>, Option<u64>) = (None, None);
    for raw in log.lines() {
        let line = raw.trim_end();
        if line.is_empty() {
            continue;
        }
        if !line.starts_with([' ', '\t']) {
            if let Some(c) = ESLINT_TOTAL.captures(line) {
                errors = Some(errors.unwrap_or(0).saturating_add(num(&c[1])));
                warnings = Some(warnings.unwrap_or(0).saturating_add(num(&c[2])));
            } else {
                file = line.to_owned();
            }
            continue;
        }
        if let Some(c) = ESLINT_ROW.captures(line) {
            let rest = c[4].trim();
            let mut fields: Vec<&str> = rest.split("  ").map(str::trim).filter(|f| !f.is_empty()).collect();
            let rule = match fields.last() {
                Some(last) if fields.len() > 1 && ESLINT_RULE.is_match(last) => fields.pop(),
                _ => None,
            };
            let msg = fields.join(" ");
            let loc = format!("{file}:{}:{}", &c[1], &c[2]);
            diags.push(&c[3], &loc, rule, &msg);
        }
    }
    finish("eslint", diags, errors, warnings)
}

pub(crate) fn parse_rustc(log: &str) -> Option<LogFacts> {
    let mut diags = Diags::default();
    let (mut could_not, mut could_not_w, mut aborting, mut aborting_w) = (None, None, None, None);
    let mut generated: Option<u64> = None;
    let mut last: Option<Slot> = None;
    let mut lines = log.lines();
    while let Some(raw) = lines.next() {
        let line = raw.trim_end();
        if line.starts_with("error") || line.starts_with("warning") {
            last = None;
            if let Some(c) = RUSTC_COULD_NOT.captures(line) {
                let n = c.get(1).map_or(1, |m| num(m.as_str()));
                could_not = Some(could_not.unwrap_or(0u64).saturating_add(n));
                could_not_w = Some(could_not_w.unwrap_or(0u64).saturating_add(c.get(2).map_or(0, |m| num(m.as_str()))));
                continue;
            }
            if let Some(c) = RUSTC_ABORTING.captures(line) {
                let n = c.get(1).map_or(1, |m| num(m.as_str()));
                aborting = Some(aborting.unwrap_or(0u64).saturating_add(n));
                aborting_w = Some(aborting_w.unwrap_or(0u64).saturating_add(c.get(2).map_or(0, |m| num(m.as_str()))));
                continue;
            }
            if let Some(c) = RUSTC_GENERATED.captures(line) {
                generated = Some(generated.unwrap_or(0).saturating_add(num(&c[1])));
                continue;
            }
            if let Some(c) = RUSTC_HEAD.captures(line) {
                let msg = &c[3];
                if msg.starts_with("build failed") || msg.starts_with("test failed") {
                    continue;
                }
                let loc = lines
                    .clone()
                    .next()
                    .and_then(|next| RUSTC_ARROW.captures(next.trim_end()).map(|a| a[1].to_owned()))
                    .unwrap_or_default();
                last = diags.push(&c[1], &loc, c.get(2).map(|m| m.as_str()), msg);
                continue;
            }
        }
        if let Some(slot) = last
            && line.contains("= note: ")
            && let Some(c) = RUSTC_LINT.captures(line)
            && let Some(lint) = c.get(1).or_else(|| c.get(2))
            && let Some(d) = diags.get_mut(slot)
            && d.code.is_none()
        {
            // `-D clippy::collapsible-if` names the lint `clippy::collapsible_if`.
            d.code = Some(lint.as_str().replace('-', "_"));
        }
    }
    let errors = could_not.or(aborting);
    let emitted = if could_not.is_some() { could_not_w } else { aborting_w };
    let warnings = match (generated, emitted) {
        (None, None) => None,
        (g, e) => Some(g.unwrap_or(0).saturating_add(e.unwrap_or(0))),
    };
    finish("rustc", diags, errors, warnings)
}

pub(crate) fn parse_mypy(log: &str) -> Option<LogFacts> {
    let mut diags = Diags::default();
    let mut found: Option<u64> = None;
    for raw in log.lines() {
        let line = raw.trim_end();
        if let Some(c) = MYPY.captures(line) {
            diags.push(&c[2], &c[1], c.get(4).map(|m| m.as_str()), &c[3]);
            continue;
        }
        if let Some(c) = MYPY_FOUND.captures(line) {
            found = Some(found.unwrap_or(0).saturating_add(num(&c[1])));
        }
    }
    finish("mypy", diags, found, None)
}

pub(crate) fn parse_gcc(log: &str) -> Option<LogFacts> {
    let mut diags = Diags::default();
    for raw in log.lines() {
        let line = raw.trim_end();
        if line.contains(" error: ") || line.contains(" warning: ") {
            if let Some(c) = GCC.captures(line) {
                diags.push(&c[2], &c[1], c.get(4).map(|m| m.as_str()), &c[3]);
            }
        } else if line.contains("undefined reference to") {
            diags.push("error", "", None, line);
        }
    }
    finish("gcc", diags, None, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clippy_lint_names() {
        let log = "error: this `if` statement can be collapsed\n   --> src/a.rs:179:9\n    |\n    = help: for further information visit https://rust-lang.github.io/rust-clippy/index.html#collapsible_if\n    = note: `-D clippy::collapsible-if` implied by `-D warnings`\n\nerror: could not compile `app` (lib) due to 1 previous error\n";
        let f = parse_rustc(log).unwrap();
        assert_eq!(f.diagnostics[0].code.as_deref(), Some("clippy::collapsible_if"));
        assert_eq!(f.diagnostics[0].location, "src/a.rs:179:9");
        assert_eq!((f.error_count, f.warning_count), (Some(1), Some(0)));
    }

    #[test]
    fn eslint_rows() {
        let log = "\n/app/src/a.js\n   1:10  error    'foo' is defined but never used  no-unused-vars\n   3:1   error    Parsing error: Unexpected token\n\n✖ 2 problems (2 errors, 0 warnings)\n";
        let f = parse_eslint(log).unwrap();
        assert_eq!(f.diagnostics[0].location, "/app/src/a.js:1:10");
        assert_eq!(f.diagnostics[0].code.as_deref(), Some("no-unused-vars"));
        assert_eq!(f.diagnostics[1].code, None);
        assert_eq!(f.diagnostics[1].message, "Parsing error: Unexpected token");
        assert_eq!((f.error_count, f.warning_count), (Some(2), Some(0)));
    }
}
