//! Test and build logs turned into assertions (R3.4): pytest, unittest/Django, cargo test,
//! jest/vitest/node:test, go test, Maven/Gradle surefire, tsc/eslint/rustc/gcc diagnostics and
//! Python tracebacks.

/// What a recognised log says, in the few facts a model needs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LogFacts {
    /// Which runner or tool produced the log: `pytest`, `unittest`, `cargo test`, `jest`,
    /// `vitest`, `node:test`, `go test`, `surefire`, `gradle`, `tsc`, `eslint`, `rustc`, `gcc`,
    /// `python traceback`.
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

/// Recognise the log of a known runner; `None` when nothing known matches.
pub fn recognise(log: &str) -> Option<LogFacts> {
    let _ = log;
    None
}

impl LogFacts {
    /// The facts as short assertion lines, e.g.
    /// `pytest: 2 failed, 118 passed` / `failing: tests/a.py::test_x, …` /
    /// `first failure: tests/a.py:40: AssertionError: …`.
    pub fn render(&self) -> String {
        String::new()
    }
}
