//! The replay per agent family (issue 45): the table of each family the trajectories came from,
//! the runs where the workbench cost more than raw (each named, with its figures), and the
//! edits whose old text a strategy's prompt did not show.

use std::fmt::Write;

use context_workbench::replay::{aggregate, format_table};

use crate::replay::Replayed;

/// One section per family, in first-seen order; empty when every trajectory is of one family.
pub fn sections(replayed: &[Replayed]) -> String {
    let mut families: Vec<&str> = Vec::new();
    for r in replayed {
        if !families.contains(&r.family) {
            families.push(r.family);
        }
    }
    if families.len() < 2 {
        return String::new();
    }
    let mut out = String::new();
    for family in families {
        let runs: Vec<&Replayed> = replayed.iter().filter(|r| r.family == family).collect();
        let calls: usize = runs.iter().map(|r| r.calls).sum();
        let _ = writeln!(out, "\n{family}: {} runs, {calls} calls", runs.len());
        out.push_str(&format_table(&aggregate(runs.iter().flat_map(|r| &r.runs))));
        out.push_str(&above_raw(&runs));
        out.push_str(&lost_edits(&runs));
    }
    out
}

/// The runs whose workbench cost more than raw's, each with its ratio, calls, rewrites and
/// peak beside raw's; "none" when there are none.
pub fn above_raw(runs: &[&Replayed]) -> String {
    let mut lines = String::new();
    for r in runs {
        let of = |name: &str| r.runs.iter().find(|s| s.strategy == name).map(|s| &s.totals);
        let (Some(raw), Some(workbench)) = (of("raw"), of("workbench")) else { continue };
        if workbench.cost > raw.cost {
            let _ = writeln!(
                lines,
                "  {} ({} calls): {:.3}x raw's cost, {} rewrites, peak {} against raw's {}",
                r.name,
                r.calls,
                workbench.cost / raw.cost,
                workbench.rewrites,
                workbench.peak_prompt_tokens,
                raw.peak_prompt_tokens
            );
        }
    }
    if lines.is_empty() {
        "runs above raw's cost: none\n".to_owned()
    } else {
        format!("runs above raw's cost:\n{lines}")
    }
}

/// Each strategy's lost edits: the call, what became of the message that last showed the old
/// text, and the text's first line.
pub fn lost_edits(runs: &[&Replayed]) -> String {
    let mut out = String::new();
    let strategies: Vec<&str> =
        runs.first().map(|r| r.runs.iter().map(|s| s.strategy.as_str()).collect()).unwrap_or_default();
    for strategy in strategies {
        let lost: Vec<(&str, _)> = runs
            .iter()
            .flat_map(|r| {
                r.runs
                    .iter()
                    .filter(|s| s.strategy == strategy)
                    .flat_map(|s| s.lost_edits.iter().map(|l| (r.name.as_str(), l)))
            })
            .collect();
        if lost.is_empty() {
            continue;
        }
        let _ = writeln!(out, "edits {strategy} lost ({}):", lost.len());
        for (name, l) in lost {
            let _ = writeln!(
                out,
                "  {name} call {} ({}, message {}): {}",
                l.call,
                l.cause.describe(),
                l.message,
                l.excerpt
            );
        }
    }
    out
}
