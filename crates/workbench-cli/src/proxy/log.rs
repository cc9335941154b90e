//! The proxy's log on stderr: the gateway's lines, one per request, and on a terminal a live
//! progress line (the gateway's running totals) under them.

use std::io::{IsTerminal, Write};
use std::sync::Arc;

use context_workbench::proxy::{Gateway, ThreadTrouble};

pub struct Log {
    terminal: bool,
    gateway: Arc<Gateway>,
}

impl Log {
    pub fn new(gateway: Arc<Gateway>) -> Log {
        Log { terminal: std::io::stderr().is_terminal(), gateway }
    }

    pub fn line(&self, line: &str) {
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let _ = write!(err, "\r\x1b[K{line}\n{}", self.gateway.progress());
        } else {
            let _ = writeln!(err, "{line}");
        }
        let _ = err.flush();
    }

    /// What a session could not save.
    pub fn unsaved(&self, failures: &[String]) {
        for failure in failures {
            self.line(&self.gateway.unsaved_line(failure));
        }
    }

    /// A session thread's trouble outside any request.
    pub fn trouble(&self, trouble: &ThreadTrouble) {
        self.line(&self.gateway.thread_line(trouble));
    }

    /// Ends the progress line (at shutdown).
    pub fn finish(&self) {
        if self.terminal {
            let _ = writeln!(std::io::stderr());
        }
    }
}
