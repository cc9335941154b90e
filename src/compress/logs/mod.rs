//! Test and build logs turned into assertions (R3.4): pytest, unittest/Django, cargo test,
//! jest/vitest/node:test, go test, Maven/Gradle surefire, tsc/eslint/rustc/gcc diagnostics and
//! Python tracebacks.
//!
//! Each runner family has its own file: a cheap `detect` (a few whole-text regex searches) and a
//! one-pass `parse`. [`recognise`] tries them in a fixed order, test runners first, so pytest
//! output holding tracebacks is pytest, and a bare traceback is `python traceback`. Everything is
//! linear in the input, never panics, and keeps bounded data: at most 10,000 failing names, 50
//! diagnostics, 300-character messages.

mod cargo;
mod diagnostics;
mod go;
mod js;
mod jvm;
mod pytest;
mod sympy;
mod traceback;
mod unittest;
mod util;

/// What a recognised log says, in the few facts a model needs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LogFacts {
    /// Which runner or tool produced the log: `pytest`, `unittest`, `cargo test`, `jest`,
    /// `vitest`, `node:test`, `go test`, `surefire`, `gradle`, `tsc`, `eslint`, `rustc`, `gcc`,
    /// `python traceback`; also `sympy test` (SymPy's `bin/test`) and `mypy`.
    pub tool: &'static str,
    pub passed: Option<u64>,
    pub failed: Option<u64>,
    pub errors: Option<u64>,
    pub skipped: Option<u64>,
    /// Every failing (or erroring) test's name, in the order the log gives them, deduplicated.
    pub failing: Vec<String>,
    /// The first failure: where (`path:line` when the log says) and its message.
    pub first_failure: Option<Failure>,
    /// Compiler/linter diagnostics (errors first), for build logs.
    pub diagnostics: Vec<Diagnostic>,
    /// Total errors/warnings a build log reports (may exceed `diagnostics.len()`).
    pub error_count: Option<u64>,
    pub warning_count: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub location: Option<String>,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// `error` or `warning`.
    pub severity: String,
    /// `path:line[:col]`.
    pub location: String,
    /// `E0308`, `TS2345`, `no-unused-vars` …, when given.
    pub code: Option<String>,
    pub message: String,
}

/// A recogniser: a cheap test for its markers, then the full one-pass parse.
type Recogniser = (fn(&str) -> bool, fn(&str) -> Option<LogFacts>);

/// Test runners first (they win over the tracebacks and diagnostics they contain), then build
/// tools, then bare Python tracebacks.
const RECOGNISERS: [Recogniser; 15] = [
    (sympy::detect, sympy::parse),
    (pytest::detect, pytest::parse),
    (unittest::detect, unittest::parse),
    (cargo::detect, cargo::parse),
    (go::detect, go::parse),
    (jvm::detect, jvm::parse),
    (js::detect_vitest, js::parse_vitest),
    (js::detect_jest, js::parse_jest),
    (js::detect_node, js::parse_node),
    (diagnostics::detect_tsc, diagnostics::parse_tsc),
    (diagnostics::detect_eslint, diagnostics::parse_eslint),
    (diagnostics::detect_rustc, diagnostics::parse_rustc),
    (diagnostics::detect_mypy, diagnostics::parse_mypy),
    (diagnostics::detect_gcc, diagnostics::parse_gcc),
    (traceback::detect, traceback::parse),
];

/// Recognise the log of a known runner; `None` when nothing known matches.
pub fn recognise(log: &str) -> Option<LogFacts> {
    RECOGNISERS.iter().filter(|(detect, _)| detect(log)).find_map(|(_, parse)| parse(log))
}

/// At most this many diagnostics are rendered.
const RENDERED_DIAGNOSTICS: usize = 10;

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl LogFacts {
    /// The facts as short assertion lines, e.g.
    /// `pytest: 2 failed, 118 passed` / `failing (1): tests/a.py::test_x` /
    /// `first failure: tests/a.py:40: AssertionError: …`; for builds `rustc: 2 errors, 1 warning`
    /// then one line per diagnostic (errors first, at most 10, then `(+N more)`).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let mut parts: Vec<String> = Vec::new();
        let counts = [
            (self.failed, "failed", "failed"),
            (self.errors, "error", "errors"),
            (self.passed, "passed", "passed"),
            (self.skipped, "skipped", "skipped"),
        ];
        for (n, one, many) in counts {
            if let Some(n) = n.filter(|&n| n > 0) {
                parts.push(plural(n, one, many));
            }
        }
        if parts.is_empty() {
            if self.passed == Some(0) && self.failed == Some(0) && counts.iter().all(|(n, _, _)| n.unwrap_or(0) == 0) {
                parts.push("no tests ran".to_owned());
            } else if let Some((n, one, many)) = counts.iter().find(|(n, _, _)| n.is_some()) {
                parts.push(plural(n.unwrap_or(0), one, many));
            }
        }
        if let Some(n) = self.error_count {
            parts.push(plural(n, "error", "errors"));
        }
        if let Some(n) = self.warning_count {
            parts.push(plural(n, "warning", "warnings"));
        }
        out.push_str(self.tool);
        if self.tool == "python traceback" {
            if let Some(f) = &self.first_failure {
                out.push_str(": ");
                out.push_str(&failure_text(f));
            }
            return out;
        }
        if !parts.is_empty() {
            out.push_str(": ");
            out.push_str(&parts.join(", "));
        }
        if !self.failing.is_empty() {
            out.push_str(&format!("\nfailing ({}): {}", self.failing.len(), self.failing.join(", ")));
        }
        if let Some(f) = &self.first_failure {
            out.push_str("\nfirst failure: ");
            out.push_str(&failure_text(f));
        }
        for d in self.diagnostics.iter().take(RENDERED_DIAGNOSTICS) {
            out.push('\n');
            out.push_str(&d.severity);
            if let Some(code) = &d.code {
                out.push_str(&format!("[{code}]"));
            }
            if d.location.is_empty() {
                out.push_str(": ");
            } else {
                out.push_str(&format!(" {}: ", d.location));
            }
            out.push_str(&d.message);
        }
        let total = self.error_count.unwrap_or(0).saturating_add(self.warning_count.unwrap_or(0));
        let total = total.max(self.diagnostics.len() as u64);
        let shown = self.diagnostics.len().min(RENDERED_DIAGNOSTICS) as u64;
        if !self.diagnostics.is_empty() && total > shown {
            out.push_str(&format!("\n(+{} more)", total - shown));
        }
        out
    }
}

fn failure_text(f: &Failure) -> String {
    match &f.location {
        Some(loc) if f.message.is_empty() => loc.clone(),
        Some(loc) => format!("{loc}: {}", f.message),
        None => f.message.clone(),
    }
}
