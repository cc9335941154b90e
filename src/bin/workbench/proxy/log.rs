//! The proxy's log on stderr: the library's line per request (`proxy::report`) and, on a
//! terminal, a live progress line under them.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;

use context_workbench::proxy::CallRecord;
use context_workbench::proxy::report::{Totals, describe};

pub struct Log {
    terminal: bool,
    totals: Mutex<Totals>,
}

impl Log {
    pub fn new() -> Log {
        Log { terminal: std::io::stderr().is_terminal(), totals: Mutex::new(Totals::default()) }
    }

    /// A line about a request the engine did not manage (a pass-through, a refusal).
    pub fn line(&self, text: &str) {
        let mut totals = self.totals.lock().unwrap_or_else(|e| e.into_inner());
        totals.add_request();
        self.print(&format!("workbench proxy: {text}"), &totals);
    }

    /// The line of a managed call.
    pub fn call(&self, record: &CallRecord) {
        let mut totals = self.totals.lock().unwrap_or_else(|e| e.into_inner());
        totals.add_call(record);
        self.print(&describe(record), &totals);
    }

    fn print(&self, line: &str, totals: &Totals) {
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let _ = write!(err, "\r\x1b[K{line}\n{}", totals.progress());
        } else {
            let _ = writeln!(err, "{line}");
        }
        let _ = err.flush();
    }

    /// Ends the progress line (at shutdown).
    pub fn finish(&self) {
        if self.terminal {
            let _ = writeln!(std::io::stderr());
        }
    }
}
