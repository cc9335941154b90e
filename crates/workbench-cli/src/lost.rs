//! What the replay's strategies lost: the counted references (of the reference recall) a
//! strategy's prompt did not hold, by what dropped them: a table per strategy for the replay's
//! output and report, and the listing `--verbose` gives per trajectory.

use std::fmt::Write;

use context_workbench::prompt::template::thousands;
use context_workbench::replay::{LossCause, StrategyRun};

use crate::report::esc;

/// One strategy's references: how many were counted, and how many were lost to each cause (in
/// [`LossCause::ALL`]'s order).
pub struct Losses {
    pub strategy: String,
    pub counted: u64,
    pub lost: [u64; 3],
}

/// The losses per strategy over `runs`, strategies in first-seen order.
pub fn by_cause<'a>(runs: impl IntoIterator<Item = &'a StrategyRun>) -> Vec<Losses> {
    let mut out: Vec<Losses> = Vec::new();
    for run in runs {
        let i = out.iter().position(|l| l.strategy == run.strategy).unwrap_or_else(|| {
            out.push(Losses { strategy: run.strategy.clone(), counted: 0, lost: [0; 3] });
            out.len() - 1
        });
        out[i].counted += run.totals.refs_counted;
        for lost in &run.lost {
            if let Some(cause) = LossCause::ALL.iter().position(|c| *c == lost.cause) {
                out[i].lost[cause] += 1;
            }
        }
    }
    out
}

/// The table of [`by_cause`] in plain text; empty when no strategy lost a reference.
pub fn table(rows: &[Losses]) -> String {
    if rows.iter().all(|l| l.lost.iter().sum::<u64>() == 0) {
        return String::new();
    }
    let mut out = String::from("\nreferences lost (counted, not in the prompt), by what dropped them\n");
    let _ = writeln!(
        out,
        "{:<10} {:>9} {:>7} {:>10} {:>10} {:>8}",
        "strategy", "counted", "lost", "compacted", "rewritten", "dropped"
    );
    for Losses { strategy, counted, lost } in rows {
        let total: u64 = lost.iter().sum();
        let _ = writeln!(out, "{strategy:<10} {counted:>9} {total:>7} {:>10} {:>10} {:>8}", lost[0], lost[1], lost[2]);
    }
    out.push_str("compacted: in a compaction block or summary; rewritten: in place in another form (compressed, masked, cleared); dropped: left out\n");
    out
}

/// The table of [`by_cause`] for the report; empty when no strategy lost a reference.
pub fn html(rows: &[Losses]) -> String {
    if rows.iter().all(|l| l.lost.iter().sum::<u64>() == 0) {
        return String::new();
    }
    let mut h = String::from("<h2>References lost, by what dropped them</h2>\n");
    h.push_str(
        "<p class=\"meta\">The counted references (those the agent learned from the history and used next) a \
         strategy's prompt did not hold, by what became of the last message that held each: folded into a \
         compaction block or summary, rewritten in place (a compressed, masked or cleared output), or dropped. \
         <code>workbench replay --verbose</code> lists them.</p>\n",
    );
    h.push_str("<table>\n<tr><th>strategy</th><th>counted</th><th>lost</th>");
    for cause in LossCause::ALL {
        let _ = write!(h, "<th>{}</th>", esc(cause.describe()));
    }
    h.push_str("</tr>\n");
    for Losses { strategy, counted, lost } in rows {
        let total: u64 = lost.iter().sum();
        let _ =
            write!(h, "<tr><td>{}</td><td>{}</td><td>{}</td>", esc(strategy), thousands(*counted), thousands(total));
        for n in lost {
            let _ = write!(h, "<td>{}</td>", thousands(*n));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
    h
}

/// One trajectory's lost references, per strategy and cause, one line per call and message: the
/// call, the message that last held them and the first call that saw it, the references.
pub fn listing(runs: &[StrategyRun]) -> String {
    let mut out = String::new();
    for run in runs.iter().filter(|r| !r.lost.is_empty()) {
        let _ = writeln!(
            out,
            "  {} lost {} of {} counted references:",
            run.strategy,
            run.lost.len(),
            run.totals.refs_counted
        );
        for cause in LossCause::ALL {
            let mut lost: Vec<_> = run.lost.iter().filter(|l| l.cause == cause).collect();
            if lost.is_empty() {
                continue;
            }
            let _ = writeln!(out, "    {} ({}):", cause.describe(), lost.len());
            lost.sort_by_key(|l| (l.call, l.message));
            for line in lost.chunk_by(|a, b| (a.call, a.message) == (b.call, b.message)) {
                let refs: Vec<&str> = line.iter().map(|l| l.reference.as_str()).collect();
                let (call, message, seen) = (line[0].call, line[0].message, line[0].seen_at);
                let _ = writeln!(
                    out,
                    "      call {call} (from message {message}, seen at call {seen}): {}",
                    refs.join(", ")
                );
            }
        }
    }
    out
}
