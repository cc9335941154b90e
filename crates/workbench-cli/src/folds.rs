//! `workbench replay --folds K`: the workbench's default budgets checked on runs the choice never
//! saw. The trajectories are dealt into K folds (the i-th, in walk order, to fold i mod K); for
//! each fold the rule below picks a budget scale from the sweep on the other folds, and the fold
//! reports what that scale gave on it beside every peer. The same rule on every run picks the
//! default (see docs/replay-benchmark.md).

use std::fmt::Write;

use context_workbench::replay::Totals;

use crate::replay::Replayed;
use crate::sweep::SweepPoint;

/// The most the chosen budgets may cost, as a share of the unmanaged prompt's cost.
pub const MAX_COST: f64 = 0.5;

/// Runs replayed together: the workbench's totals at each scale of the sweep, each peer's, and
/// raw's.
pub struct Group {
    pub points: Vec<(f64, Totals)>,
    pub peers: Vec<(String, Totals)>,
    pub raw: Totals,
}

impl Group {
    fn at(&self, scale: f64) -> Totals {
        self.points.iter().find(|(s, _)| *s == scale).map(|(_, t)| t.clone()).unwrap_or_default()
    }
}

/// The rule: among the scales that cost at most [`MAX_COST`] × raw's cost over all `groups`,
/// the one whose worst group leads its best peer in reference recall by the most (the default
/// must hold up on every fold, not on average); among equals, the one that keeps the most
/// references over all groups, then the cheapest, then the smallest. When no scale is that
/// cheap, 1 (the configured budgets).
pub fn choose(groups: &[Group]) -> f64 {
    struct Judged {
        scale: f64,
        worst_lead: f64,
        recall: f64,
        cost: f64,
    }
    let recall = |t: &Totals| t.reference_recall().unwrap_or(1.0);
    let scales: Vec<f64> = groups.first().map_or(Vec::new(), |g| g.points.iter().map(|(s, _)| *s).collect());
    let raw: f64 = groups.iter().map(|g| g.raw.cost).sum();
    let judged = scales.into_iter().map(|scale| {
        let mut all = Totals::default();
        groups.iter().for_each(|g| all.add(&g.at(scale)));
        let lead = |g: &Group| recall(&g.at(scale)) - g.peers.iter().map(|(_, t)| recall(t)).fold(0.0, f64::max);
        let worst_lead = groups.iter().map(lead).fold(f64::INFINITY, f64::min);
        Judged { scale, worst_lead, recall: recall(&all), cost: all.cost }
    });
    let affordable: Vec<Judged> = judged.filter(|j| j.cost <= MAX_COST * raw).collect();
    // Leads and recalls are ratios of counts: equal counts give equal floats.
    let better = |a: &&Judged, b: &&Judged| {
        (a.worst_lead.total_cmp(&b.worst_lead))
            .then(a.recall.total_cmp(&b.recall))
            .then(b.cost.total_cmp(&a.cost))
            .then(b.scale.total_cmp(&a.scale))
    };
    affordable.iter().max_by(better).map_or(1.0, |j| j.scale)
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
    let group = |keep: &dyn Fn(usize) -> bool| Group { points: swept(keep), peers: peers(keep), raw: sum(keep, "raw") };
    // The scale the rule picks over the folds where `keep(fold)`.
    let pick = |keep: &dyn Fn(usize) -> bool| {
        let groups: Vec<Group> = (0..k).filter(|&f| keep(f)).map(|f| group(&|i| i % k == f)).collect();
        choose(&groups)
    };
    let folds = (0..k)
        .map(|f| {
            let test = |i: usize| i % k == f;
            let chosen = pick(&|other| other != f);
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
        "\ncross-validation over {} folds: on the other folds, the budget scale at <= {MAX_COST}x raw's cost whose \
         worst fold leads its best peer in reference recall by the most (among equals: the most recall, then the \
         cheapest); reported on the fold\n",
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

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(cost: f64, kept: u64, counted: u64) -> Totals {
        Totals { cost, refs_kept: kept, refs_counted: counted, ..Totals::default() }
    }

    /// Two folds: one where every peer keeps everything (its runs are too short for them to
    /// compact), one long. The rule weighs the worst fold, not the sum: the scale that keeps the
    /// short fold level with its peers wins though a cheaper one keeps more overall; of two
    /// equal scales the smaller is chosen, and a scale over the cost cap never is.
    #[test]
    fn the_rule_picks_the_scale_whose_worst_fold_leads_most() {
        // A fold from its points (scale, cost, references kept of `counted`) and its one peer.
        let fold = |points: &[(f64, f64, u64)], counted: u64, peer: Totals| Group {
            points: points.iter().map(|&(scale, cost, kept)| (scale, totals(cost, kept, counted))).collect(),
            peers: vec![("opencode".into(), peer)],
            raw: totals(100.0, 0, 0),
        };
        let scales =
            |kept: [u64; 4]| [(0.5, 30.0, kept[0]), (1.0, 31.0, kept[1]), (2.0, 31.0, kept[2]), (4.0, 60.0, kept[3])];
        let short = fold(&scales([99, 100, 100, 100]), 100, totals(100.0, 100, 100));
        let long = fold(&scales([1000, 990, 990, 1000]), 1000, totals(60.0, 900, 1000));
        assert_eq!(choose(&[short, long]), 1.0, "level on the short fold, the smaller of two equals, 4x over the cap");
        let unaffordable = fold(&[(2.0, 90.0, 1)], 1, totals(100.0, 1, 1));
        assert_eq!(choose(&[unaffordable]), 1.0);
        let only = fold(&[(0.25, 10.0, 5), (0.5, 20.0, 9)], 10, totals(100.0, 10, 10));
        assert_eq!(choose(&[only]), 0.5, "behind every peer, the least behind");
    }
}
