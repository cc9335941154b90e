//! `workbench replay --sweep`: the workbench replayed again at several scales of its main
//! budgets (a block's anchors, index and prose), so that a reader sees its cost-versus-recall
//! curve beside the other strategies' points: a table on stdout and a chart in the report.

use std::fmt::Write;

use context_workbench::Config;
use context_workbench::replay::Totals;

use crate::report::{colour, esc};

/// The budget scales of the sweep; 1 is the configuration as it is.
pub const SCALES: [f64; 8] = [0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0];

/// The workbench's totals at one scale of its budgets.
pub struct SweepPoint {
    pub scale: f64,
    pub totals: Totals,
    /// Per trajectory, in the replay's order.
    pub runs: Vec<Totals>,
}

/// `config` with the anchor and index budgets times `scale`. The block's own budget stays: R5.4
/// bounds it (800 tokens), and what a block keeps verbatim is in its anchors and index.
pub fn scaled(config: &Config, scale: f64) -> Config {
    let mut config = config.clone();
    let w = &mut config.workbench;
    let times = |v: u32| (f64::from(v) * scale).round() as u32;
    (w.anchor_tokens, w.index_tokens) = (times(w.anchor_tokens), times(w.index_tokens));
    config
}

/// One row per scale: the budgets (as capped for `window`), cost and prompt against `raw`,
/// cached share, rewrites and both recalls.
pub fn table(points: &[SweepPoint], config: &Config, window: usize, raw: &Totals) -> String {
    let mut out = format!(
        "\nsweep of the workbench's budgets (block, anchors, index tokens; capped by the window)\n\
         {:>6} {:>20} {:>8} {:>8} {:>7} {:>9} {:>12} {:>17}\n",
        "scale", "budgets", "prompt", "cost", "cached", "rewrites", "edit recall", "reference recall"
    );
    for p in points {
        let w = scaled(config, p.scale).workbench.for_window(u32::try_from(window).unwrap_or(u32::MAX));
        let t = &p.totals;
        let ratio = |of: f64, base: f64| if base > 0.0 { format!("{:.3}x", of / base) } else { "-".into() };
        let recall = |r: Option<f64>| r.map_or_else(|| "-".to_owned(), |r| format!("{r:.3}"));
        let _ = writeln!(
            out,
            "{:>6} {:>20} {:>8} {:>8} {:>6.1}% {:>9} {:>12} {:>17}",
            format!("{}x", p.scale),
            format!("{}/{}/{}", w.block_tokens, w.anchor_tokens, w.index_tokens),
            ratio(t.prompt_tokens as f64, raw.prompt_tokens as f64),
            ratio(t.cost, raw.cost),
            100.0 * t.cached_share(),
            t.rewrites,
            recall(t.edit_recall()),
            recall(t.reference_recall())
        );
    }
    out
}

/// An SVG chart: reference recall against cost relative to raw, each other strategy a point,
/// the workbench a curve through its sweep (its default budgets ringed).
pub fn chart(points: &[SweepPoint], peers: &[(String, Totals)], raw: &Totals) -> String {
    let (width, height) = (760.0, 380.0);
    let (left, right, top, bottom) = (64.0, 210.0, 20.0, 48.0);
    let (pw, ph) = (width - left - right, height - top - bottom);
    let cost = |t: &Totals| if raw.cost > 0.0 { t.cost / raw.cost } else { 0.0 };
    let recall = |t: &Totals| t.reference_recall().unwrap_or(0.0);
    let all: Vec<&Totals> = points.iter().map(|p| &p.totals).chain(peers.iter().map(|(_, t)| t)).collect();
    let x_max = (all.iter().map(|t| cost(t)).fold(0.0_f64, f64::max) * 10.0).ceil().max(1.0) / 10.0;
    let y_min = (all.iter().map(|t| recall(t)).fold(1.0_f64, f64::min) * 100.0 - 1.0).floor().clamp(0.0, 99.0) / 100.0;
    let x = |v: f64| left + pw * v / x_max;
    let y = |v: f64| top + ph - ph * (v - y_min) / (1.0 - y_min);
    let mut s = format!(
        "<svg width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" role=\"img\" \
         aria-label=\"reference recall against cost\">\n<rect x=\"{left:.0}\" y=\"{top:.0}\" width=\"{pw:.0}\" \
         height=\"{ph:.0}\" fill=\"none\" stroke=\"#ccc\"/>\n"
    );
    for k in 0..=((x_max * 10.0).round() as usize) {
        let v = k as f64 / 10.0;
        let _ = writeln!(
            s,
            "<line x1=\"{0:.1}\" y1=\"{top:.0}\" x2=\"{0:.1}\" y2=\"{1:.0}\" stroke=\"#eee\"/>\
             <text x=\"{0:.1}\" y=\"{2:.0}\" text-anchor=\"middle\">{v:.1}&times;</text>",
            x(v),
            top + ph,
            top + ph + 16.0
        );
    }
    let steps = ((1.0 - y_min) * 100.0).round() as usize;
    for k in 0..=steps {
        let v = y_min + k as f64 / 100.0;
        if steps > 10 && k % 2 == 1 {
            continue;
        }
        let _ = writeln!(
            s,
            "<line x1=\"{left:.0}\" y1=\"{0:.1}\" x2=\"{1:.0}\" y2=\"{0:.1}\" stroke=\"#eee\"/>\
             <text x=\"{2:.0}\" y=\"{3:.1}\" text-anchor=\"end\">{v:.2}</text>",
            y(v),
            left + pw,
            left - 6.0,
            y(v) + 4.0
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"middle\">cost relative to raw (lower is cheaper)</text>\
         <text transform=\"translate(14 {:.0}) rotate(-90)\" text-anchor=\"middle\">reference recall</text>",
        left + pw / 2.0,
        height - 8.0,
        top + ph / 2.0
    );
    let mut curve: Vec<&SweepPoint> = points.iter().collect();
    curve.sort_by(|a, b| cost(&a.totals).total_cmp(&cost(&b.totals)));
    let path: Vec<String> =
        curve.iter().map(|p| format!("{:.1},{:.1}", x(cost(&p.totals)), y(recall(&p.totals)))).collect();
    let green = colour("workbench", 0);
    let _ =
        writeln!(s, "<polyline points=\"{}\" fill=\"none\" stroke=\"{green}\" stroke-width=\"2\"/>", path.join(" "));
    let mut labelled: Vec<(f64, f64)> = Vec::new();
    for p in &curve {
        let (px, py) = (x(cost(&p.totals)), y(recall(&p.totals)));
        let ring = if p.scale == 1.0 {
            format!("<circle cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"7\" fill=\"none\" stroke=\"{green}\"/>")
        } else {
            String::new()
        };
        let _ = write!(s, "<circle cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"3.5\" fill=\"{green}\"/>{ring}");
        // A label only where it does not sit on an earlier one.
        if labelled.iter().all(|(lx, ly)| (lx - px).abs() > 22.0 || (ly - py).abs() > 12.0) {
            labelled.push((px, py));
            let (lx, ly, scale) = (px + 6.0, py + 14.0, p.scale);
            let _ = write!(s, "<text x=\"{lx:.1}\" y=\"{ly:.1}\" fill=\"{green}\">{scale}&times;</text>");
        }
        s.push('\n');
    }
    for (i, (name, t)) in peers.iter().enumerate().filter(|(_, (n, _))| n != "workbench") {
        let (px, py) = (x(cost(t)), y(recall(t)));
        let c = colour(name, i);
        let _ = writeln!(
            s,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"8\" height=\"8\" fill=\"{c}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            px - 4.0,
            py - 4.0,
            px + 8.0,
            py - 6.0,
            esc(name)
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{0:.0}\" y=\"{1:.0}\" fill=\"{green}\">workbench: budgets &times; scale</text>\
         <text x=\"{0:.0}\" y=\"{2:.0}\">ringed: as configured</text>\
         <text x=\"{0:.0}\" y=\"{3:.0}\">squares: other strategies</text>",
        left + pw + 44.0,
        top + 14.0,
        top + 30.0,
        top + 50.0
    );
    s.push_str("</svg>\n");
    s
}
