//! Python tracebacks: the innermost `File "…", line N` frame and the final `Type: message` line,
//! also used inside the unittest, pytest (`--tb=native`) and sympy failure sections.

use std::sync::LazyLock;

use regex::Regex;

use super::util::{indent, message, short};
use super::{Failure, LogFacts};

static FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"^\s*File "([^"]+)", line (\d+)(?:, in (.+))?\s*$"#).expect("static regex"));

const HEADER: &str = "Traceback (most recent call last):";

/// Follows a traceback line by line: the last frame seen and the exception line after it.
#[derive(Default)]
pub(crate) struct TbScan {
    /// Indentation of the `Traceback` header (exception lines sit at it).
    base: Option<usize>,
    frame: Option<String>,
    exception: Option<String>,
    after_frame: bool,
}

impl TbScan {
    pub(crate) fn feed(&mut self, line: &str) {
        let trimmed = line.trim_start();
        if trimmed.starts_with(HEADER) {
            self.base = Some(indent(line));
            return;
        }
        if trimmed.starts_with("File \"")
            && let Some(c) = FRAME.captures(line)
        {
            self.frame = Some(short(&format!("{}:{}", &c[1], &c[2])));
            self.exception = None;
            self.after_frame = true;
            return;
        }
        if self.after_frame && !trimmed.is_empty() && indent(line) <= self.base.unwrap_or(0) {
            if is_exception_line(trimmed) {
                self.exception = Some(message(trimmed));
            }
            self.after_frame = false;
        }
    }

    /// `path:line` of the innermost frame seen.
    pub(crate) fn location(&self) -> Option<&str> {
        self.frame.as_deref()
    }

    /// The exception line after the last frame.
    pub(crate) fn exception(&self) -> Option<&str> {
        self.exception.as_deref()
    }

    pub(crate) fn failure(&self) -> Option<Failure> {
        match (&self.frame, &self.exception) {
            (None, None) => None,
            (location, exception) => {
                Some(Failure { location: location.clone(), message: exception.clone().unwrap_or_default() })
            }
        }
    }
}

/// `Type` or `pkg.Type: message` (a truncated traceback is followed by unrelated text).
fn is_exception_line(line: &str) -> bool {
    let name = match line.split_once(':') {
        Some((name, rest)) if rest.is_empty() || rest.starts_with(' ') => name,
        Some(_) => return false,
        None => line,
    };
    !name.is_empty()
        && !name.starts_with('.')
        && !name.ends_with('.')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.')
}

pub(crate) fn detect(log: &str) -> bool {
    log.contains(HEADER)
}

/// The first traceback of the log (with the exceptions chained to it): where it was raised and
/// what.
pub(crate) fn parse(log: &str) -> Option<LogFacts> {
    let mut lines = log.lines();
    let header = lines.by_ref().find(|l| l.trim_start().starts_with(HEADER))?;
    let mut tb = TbScan::default();
    tb.feed(header);
    let mut chained = false;
    for line in lines {
        let had_exception = tb.exception().is_some();
        if had_exception {
            let t = line.trim();
            if t.is_empty() {
                continue;
            }
            if t.starts_with("During handling of the above exception")
                || t.starts_with("The above exception was the direct cause")
            {
                chained = true;
                continue;
            }
            if chained && t.starts_with(HEADER) {
                chained = false;
                tb.feed(line);
                tb.exception = None;
                continue;
            }
            break;
        }
        tb.feed(line);
    }
    let failure = tb.failure()?;
    Some(LogFacts { tool: "python traceback", first_failure: Some(failure), ..LogFacts::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_frame_and_exception() {
        let log = "running\nTraceback (most recent call last):\n  File \"/app/run.py\", line 3, in <module>\n    main()\n  File \"/app/lib.py\", line 12, in main\n    raise ValueError(\"bad value\")\nValueError: bad value\nafter\n";
        let f = parse(log).unwrap().first_failure.unwrap();
        assert_eq!(f.location.as_deref(), Some("/app/lib.py:12"));
        assert_eq!(f.message, "ValueError: bad value");
    }

    #[test]
    fn chained_exceptions_end_at_the_last() {
        let log = "Traceback (most recent call last):\n  File \"a.py\", line 2, in f\n    x[1]\nKeyError: 1\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"a.py\", line 4, in f\n    raise RuntimeError('x')\nRuntimeError: x\n\nTraceback (most recent call last):\n  File \"b.py\", line 9, in g\nOSError: later\n";
        let f = parse(log).unwrap().first_failure.unwrap();
        assert_eq!(f.location.as_deref(), Some("a.py:4"));
        assert_eq!(f.message, "RuntimeError: x");
    }

    #[test]
    fn syntax_error_and_indented() {
        let log = "    Traceback (most recent call last):\n      File \"x.py\", line 3\n        def f(:\n              ^\n    SyntaxError: invalid syntax\n";
        let f = parse(log).unwrap().first_failure.unwrap();
        assert_eq!(f.location.as_deref(), Some("x.py:3"));
        assert_eq!(f.message, "SyntaxError: invalid syntax");
    }
}
