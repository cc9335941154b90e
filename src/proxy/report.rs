//! What the proxy says about its calls: one line per request and a running total, the same
//! words from `workbench proxy` and from the npm package's proxy. Keys never reach them: a line
//! is built from a call's record, the route and numbers only.

use super::record::CallRecord;
use super::record::CostBasis;
use super::stats::{self, saving_words};

/// The running totals under the log lines.
#[derive(Debug, Default, Clone)]
pub struct Totals {
    requests: u64,
    managed: u64,
    client_tokens: u64,
    prompt_tokens: u64,
    /// Every recorded call's dollars, as `workbench stats` sums them.
    calls: stats::Totals,
}

impl Totals {
    /// Count a request the engine did not manage (a pass-through, a refusal).
    pub fn add_request(&mut self) {
        self.requests += 1;
    }

    /// Count a call with a record.
    pub fn add_call(&mut self, record: &CallRecord) {
        self.requests += 1;
        self.calls.add(&stats::Totals::of_calls([record]));
        if record.managed {
            self.managed += 1;
        }
        // Tokens as `workbench stats` counts them: a call no model answered counts none.
        if record.managed && record.answered() {
            self.client_tokens += record.client_tokens as u64;
            self.prompt_tokens += record.prompt_tokens as u64;
        }
    }

    /// `N requests, M managed: A prompt tokens from the agents, B sent (X% fewer); cost $S instead
    /// of $A: $D saved (P%)`.
    pub fn progress(&self) -> String {
        let saved = share(self.client_tokens.saturating_sub(self.prompt_tokens), self.client_tokens);
        format!(
            "{} requests, {} managed: {} prompt tokens from the agents, {} sent ({saved} fewer); cost {}",
            self.requests,
            self.managed,
            self.client_tokens,
            self.prompt_tokens,
            saving_words(&self.calls)
        )
    }
}

/// `session #call model (agent on the first call): A → B tokens (−N%), cached X% (expected Y%), rewrites, status, notes`.
/// The line starts with `who: ` (`workbench proxy: …`).
pub fn describe(who: &str, record: &CallRecord) -> String {
    let mut line = if record.trace_id.is_empty() {
        format!("{who}: (no session)")
    } else {
        format!("{who}: {} #{} {}", record.trace_id, record.call, record.model)
    };
    // A session's first call names its agent.
    if record.call == 1 && !record.agent.is_empty() {
        line.push_str(&format!(" ({})", record.agent));
    }
    if record.managed {
        let fewer =
            share(record.client_tokens.saturating_sub(record.prompt_tokens) as u64, record.client_tokens as u64);
        let s = if record.messages == 1 { "" } else { "s" };
        line.push_str(&format!(
            ": {} new of {} message{s}, {} → {} prompt tokens ({fewer} fewer)",
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
    match &record.dollars {
        Some(d) if d.basis == CostBasis::NoModel => line.push_str(", cost nothing (no model answered)"),
        Some(_) => line.push_str(&format!(", cost {}", saving_words(&stats::Totals::of_calls([record])))),
        None => {}
    }
    for note in &record.notes {
        line.push_str("; ");
        line.push_str(note);
    }
    one_line(&line)
}

/// `text` as one bounded line: control characters (a newline that would forge a log line among
/// them) escaped, at most [`LINE_LIMIT`] characters kept. Every log line and every message
/// echoing what an agent sent goes through it.
pub fn one_line(text: &str) -> String {
    let mut line = String::with_capacity(text.len().min(LINE_LIMIT));
    for (n, c) in text.chars().enumerate() {
        if n == LINE_LIMIT {
            line.push('…');
            break;
        }
        if c.is_control() {
            line.extend(c.escape_default());
        } else {
            line.push(c);
        }
    }
    line
}

/// The longest line [`one_line`] keeps, in characters.
pub const LINE_LIMIT: usize = 2_000;

fn share(part: u64, whole: u64) -> String {
    if whole == 0 { "0%".into() } else { format!("{:.0}%", part as f64 * 100.0 / whole as f64) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_one_line_and_bounded() {
        assert_eq!(one_line("role `a\nworkbench proxy: forged`"), "role `a\\nworkbench proxy: forged`");
        let long = one_line(&"x".repeat(200_000));
        assert_eq!(long.chars().count(), LINE_LIMIT + 1);
        assert!(long.ends_with('…'));
    }

    #[test]
    fn the_progress_counts_the_tokens_of_answered_calls_as_the_stats_do() {
        let mut totals = Totals::default();
        let call = |status| CallRecord {
            managed: true,
            client_tokens: 900,
            prompt_tokens: 300,
            status,
            ..CallRecord::default()
        };
        for status in [Some(200), Some(502), None] {
            totals.add_call(&call(status));
        }
        assert!(
            totals
                .progress()
                .starts_with("3 requests, 3 managed: 900 prompt tokens from the agents, 300 sent (67% fewer)"),
            "{}",
            totals.progress()
        );
    }
}
