//! `workbench replay --folds K`: the workbench's default budgets checked on runs the choice never
//! saw. The trajectories are dealt into K folds (the i-th, in walk order, to fold i mod K); for
//! each fold the rule below picks a budget scale from the sweep on the other folds, and the fold
//! reports what that scale gave on it beside every peer. The same rule on every run picks the
//! default (see docs/replay-benchmark.md).

use std::fmt::Write;

use context_workbench::replay::{RECALL_MARGIN, Totals};

use crate::replay::Replayed;
use crate::sweep::SweepPoint;

/// The most the chosen budgets may cost, as a share of the unmanaged prompt's cost.
pub const MAX_COST: f64 = 0.5;

/// The rule: the cheapest scale whose reference recall clears every peer's by [`RECALL_MARGIN`]
/// at most [`MAX_COST`] × raw's cost; when none does, the best recall within that cost; when no
/// scale is that cheap, 1 (the configured budgets).
pub fn choose(points: &[(f64, Totals)], peers: &[(String, Totals)], raw: &Totals) -> f64 {
    let recall = |t: &Totals| t.reference_recall().unwrap_or(1.0);
    let best_peer = peers.iter().map(|(_, t)| recall(t)).fold(0.0, f64::max);
    let affordable = || points.iter().filter(|(_, t)| t.cost <= MAX_COST * raw.cost);
    let clearing = affordable().filter(|(_, t)| recall(t) >= best_peer + RECALL_MARGIN);
    let cheapest = clearing.min_by(|a, b| a.1.cost.total_cmp(&b.1.cost));
    let best = || affordable().max_by(|a, b| recall(&a.1).total_cmp(&recall(&b.1)));
    cheapest.or_else(best).map_or(1.0, |(scale, _)| *scale)
}

/// One fold: the scale chosen on the others and what it, raw and each peer gave on this one.
pub struct Fold {
    pub runs: usize,
    pub calls: usize,
    pub chosen: f64,
    pub workbench: Totals,
    pub raw: Totals,
    pub peers: Vec<(String, Totals)>,
}

/// The folds of `replayed` (each with its sweep totals in `points`, in the same order) and the
/// scale the rule picks on every run.
pub fn cross_validate(k: usize, replayed: &[Replayed], points: &[SweepPoint]) -> (Vec<Fold>, f64) {
    // Totals of `name` over the runs where `keep(i)`.
    let sum = |keep: &dyn Fn(usize) -> bool, name: &str| {
        let mut t = Totals::default();
        for (_, r) in replayed.iter().enumerate().filter(|(i, _)| keep(*i)) {
            r.runs.iter().filter(|run| run.strategy == name).for_each(|run| t.add(&run.totals));
        }
        t
    };
    let swept = |keep: &dyn Fn(usize) -> bool| -> Vec<(f64, Totals)> {
        let totals = |p: &SweepPoint| {
            let mut t = Totals::default();
            p.runs.iter().enumerate().filter(|(i, _)| keep(*i)).for_each(|(_, run)| t.add(run));
            t
        };
        points.iter().map(|p| (p.scale, totals(p))).collect()
    };
    let names: Vec<&str> =
        replayed.first().map_or(Vec::new(), |r| r.runs.iter().map(|run| run.strategy.as_str()).collect());
    let peers = |keep: &dyn Fn(usize) -> bool| -> Vec<(String, Totals)> {
        let peer_names = names.iter().filter(|n| !matches!(**n, "raw" | "workbench"));
        peer_names.map(|n| ((*n).to_owned(), sum(keep, n))).collect()
    };
    let pick = |keep: &dyn Fn(usize) -> bool| choose(&swept(keep), &peers(keep), &sum(keep, "raw"));
    let folds = (0..k)
        .map(|f| {
            let test = |i: usize| i % k == f;
            let chosen = pick(&|i| !test(i));
            let workbench = swept(&test).into_iter().find(|(s, _)| *s == chosen).map(|(_, t)| t).unwrap_or_default();
            let runs = (0..replayed.len()).filter(|&i| test(i)).count();
            let calls = replayed.iter().enumerate().filter(|(i, _)| test(*i)).map(|(_, r)| r.calls).sum();
            Fold { runs, calls, chosen, workbench, raw: sum(&test, "raw"), peers: peers(&test) }
        })
        .collect();
    (folds, pick(&|_| true))
}

/// The folds as a table: per fold the scale chosen on the others, its cost against raw and its
/// reference recall on the fold, each peer's recall and cost, and the workbench's lead in recall
/// over the best of them.
pub fn table(folds: &[Fold], all: f64) -> String {
    let Some(first) = folds.first() else { return String::new() };
    let mut out = format!(
        "\ncross-validation over {} folds: on the other folds, the cheapest budget scale whose reference recall \
         clears every peer's by {RECALL_MARGIN} at <= {MAX_COST}x raw's cost; reported on the fold\n",
        folds.len()
    );
    let _ = write!(out, "{:>4} {:>4} {:>6} {:>6} {:>6} {:>7}", "fold", "runs", "calls", "scale", "cost", "recall");
    for (name, _) in &first.peers {
        let _ = write!(out, " {name:>14}");
    }
    let _ = writeln!(out, " {:>7}", "lead");
    let recall = |t: &Totals| t.reference_recall().unwrap_or(1.0);
    for (f, fold) in folds.iter().enumerate() {
        let ratio = |t: &Totals| if fold.raw.cost > 0.0 { t.cost / fold.raw.cost } else { 0.0 };
        let _ = write!(
            out,
            "{:>4} {:>4} {:>6} {:>6} {:>5.2}x {:>7.3}",
            f + 1,
            fold.runs,
            fold.calls,
            format!("{}x", fold.chosen),
            ratio(&fold.workbench),
            recall(&fold.workbench)
        );
        for (_, t) in &fold.peers {
            let _ = write!(out, " {:>14}", format!("{:.3} @{:.2}x", recall(t), ratio(t)));
        }
        let best = fold.peers.iter().map(|(_, t)| recall(t)).fold(0.0, f64::max);
        let _ = writeln!(out, " {:>+7.3}", recall(&fold.workbench) - best);
    }
    let _ = writeln!(
        out,
        "on every run the rule picks {all}x{}",
        if all == 1.0 { " (the configured budgets)" } else { "" }
    );
    out
}
