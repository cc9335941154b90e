//! The proxy's log on stderr: one line per request (session, prompt tokens the agent sent and
//! the engine sent, the provider's cached share next to the engine's expected one, rewrites,
//! notes) and, on a terminal, a live progress line under them. Keys never reach it: a line is
//! built from a call's record, the route and numbers only.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;

use context_workbench::proxy::CallRecord;

#[derive(Default)]
struct Totals {
    requests: u64,
    managed: u64,
    client_tokens: u64,
    prompt_tokens: u64,
}

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
        totals.requests += 1;
        self.print(&format!("workbench proxy: {text}"), &totals);
    }

    /// The line of a managed call.
    pub fn call(&self, record: &CallRecord) {
        let mut totals = self.totals.lock().unwrap_or_else(|e| e.into_inner());
        totals.requests += 1;
        if record.managed {
            totals.managed += 1;
            totals.client_tokens += record.client_tokens as u64;
            totals.prompt_tokens += record.prompt_tokens as u64;
        }
        self.print(&describe(record), &totals);
    }

    fn print(&self, line: &str, totals: &Totals) {
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let _ = write!(err, "\r\x1b[K{line}\n{}", progress(totals));
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

fn progress(totals: &Totals) -> String {
    let saved = share(totals.client_tokens.saturating_sub(totals.prompt_tokens), totals.client_tokens);
    format!(
        "{} requests, {} managed: {} prompt tokens from the agents, {} sent ({saved} fewer)",
        totals.requests, totals.managed, totals.client_tokens, totals.prompt_tokens
    )
}

/// `session #call model: A → B tokens (−N%), cached X% (expected Y%), rewrites, status, notes`.
pub fn describe(record: &CallRecord) -> String {
    let mut line = if record.trace_id.is_empty() {
        "workbench proxy: (no session)".to_owned()
    } else {
        format!("workbench proxy: {} #{} {}", record.trace_id, record.call, record.model)
    };
    if record.managed {
        let fewer =
            share(record.client_tokens.saturating_sub(record.prompt_tokens) as u64, record.client_tokens as u64);
        line.push_str(&format!(
            ": {} new of {} messages, {} → {} prompt tokens ({fewer} fewer)",
            record.new_messages, record.messages, record.client_tokens, record.prompt_tokens
        ));
        let expected = share(record.expected_cached_tokens as u64, record.prompt_tokens as u64);
        match record.usage {
            Some(usage) => line.push_str(&format!(
                ", cached {} of {} ({}; engine expected {expected})",
                usage.cache_read_tokens,
                usage.prompt_tokens(),
                share(usage.cache_read_tokens, usage.prompt_tokens())
            )),
            None => line.push_str(&format!(", no usage reported (engine expected {expected} cached)")),
        }
        if !record.rewrites.is_empty() {
            line.push_str(&format!(", rewrites: {}", record.rewrites.join(", ")));
        }
    } else {
        line.push_str(": unmanaged");
    }
    match record.status {
        Some(status) => {
            line.push_str(&format!(", status {status}{}", if record.completed { "" } else { " (incomplete)" }))
        }
        None => line.push_str(", no reply"),
    }
    for note in &record.notes {
        line.push_str("; ");
        line.push_str(note);
    }
    line
}

fn share(part: u64, whole: u64) -> String {
    if whole == 0 { "0%".into() } else { format!("{:.0}%", part as f64 * 100.0 / whole as f64) }
}
