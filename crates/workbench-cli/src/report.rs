//! `workbench replay --report DIR`: one self-contained HTML page (inline CSS and hand-written
//! SVG; no scripts, fonts or anything else fetched), the same bytes for the same replay.

use std::fmt::Write;

use context_workbench::prompt::template::thousands;
use context_workbench::replay::{Totals, aggregate};

use crate::lost;
use crate::replay::Replayed;
use crate::sweep::{self, SweepPoint};

/// Points per polyline at most: longer series keep each bucket's minimum and maximum.
const MAX_POINTS: usize = 400;

const STYLE: &str = "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#222;\
max-width:1100px;margin:2em auto;padding:0 1em}h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ddd}\
h3{margin:1.8em 0 .2em}table{border-collapse:collapse;margin:.6em 0;font-size:13px}th,td{padding:2px 7px;border-bottom:1px solid #eee;white-space:nowrap}\
th{text-align:right;font-weight:600}td{text-align:right;font-variant-numeric:tabular-nums}\
th:first-child,td:first-child{text-align:left}.sw{display:inline-block;width:10px;height:10px;margin-right:6px}\
.meta{color:#666;margin:0}svg{display:block;margin:.4em 0}svg text{font:11px system-ui,sans-serif;fill:#333}\
ol{columns:2}.wide{overflow-x:auto}";

/// The report of `replayed` (in input order) for a `window` and its compaction `threshold`,
/// with the workbench's cost-versus-recall curve when a sweep ran.
pub fn html(replayed: &[Replayed], window: usize, threshold: f64, sweep: &[SweepPoint]) -> String {
    let totals = aggregate(replayed.iter().flat_map(|r| &r.runs));
    let calls: usize = replayed.iter().map(|r| r.calls).sum();
    let names: Vec<&str> = totals.iter().map(|(n, _)| n.as_str()).collect();
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n");
    let _ = writeln!(h, "<title>Context Workbench replay</title>\n<style>{STYLE}</style>\n</head>\n<body>");
    h.push_str("<h1>Context Workbench replay</h1>\n");
    let _ = writeln!(
        h,
        "<p>{} {}, {} recorded calls, replayed through {} with a window of {} tokens. \
         Cost = cache read &times; cached + cache write &times; written + output &times; summary output tokens \
         (the configured prices).</p>",
        replayed.len(),
        if replayed.len() == 1 { "trajectory" } else { "trajectories" },
        thousands(calls as u64),
        esc(&names.join(", ")),
        thousands(window as u64)
    );

    h.push_str("<h2>Totals</h2>\n");
    h.push_str(&totals_table(&totals));
    if let Some((_, raw)) = totals.iter().find(|(n, _)| n == "raw").filter(|_| !sweep.is_empty()) {
        h.push_str("<h2>Cost and reference recall</h2>\n");
        h.push_str(
            "<p class=\"meta\">Each strategy at its cost relative to raw and the share of the code references \
             the agent went on to use that its prompt still held; the workbench as a curve over scales of its \
             budgets (<code>--sweep</code>). Above and to the left is better.</p>\n",
        );
        h.push_str(&sweep::chart(sweep, &totals, raw));
    }
    h.push_str(&lost::html(&lost::by_cause(replayed.iter().flat_map(|r| &r.runs))));
    h.push_str("<h2>Cached share of prompt tokens</h2>\n");
    h.push_str(&cached_bars(&totals));
    h.push_str("<h2>Cumulative cost over all calls, trajectory after trajectory</h2>\n");
    let cumulative: Vec<Series> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let mut sum = 0.0;
            let costs = replayed.iter().flat_map(|r| r.runs.iter().filter(|run| run.strategy == *name));
            let values = costs.flat_map(|run| &run.calls).map(|c| {
                sum += c.cost;
                sum
            });
            Series { name, colour: colour(name, i), values: values.collect() }
        })
        .collect();
    h.push_str(&line_chart(&cumulative, "call (all trajectories in order)", "cost", &[]));

    h.push_str("<h2>Trajectories</h2>\n<ol>\n");
    for (i, r) in replayed.iter().enumerate() {
        let _ = writeln!(h, "<li><a href=\"#t{i}\">{}</a> ({} calls)</li>", esc(&r.name), r.calls);
    }
    h.push_str("</ol>\n");
    let marks = [
        (window as f64, format!("window {}", compact(window as f64))),
        (threshold * window as f64, format!("{:.0}% {}", 100.0 * threshold, compact(threshold * window as f64))),
    ];
    for (i, r) in replayed.iter().enumerate() {
        let _ = writeln!(h, "<h3 id=\"t{i}\">{}</h3>", esc(&r.name));
        let _ = writeln!(h, "<p class=\"meta\">{}, {} calls</p>", esc(&r.file), r.calls);
        h.push_str(&totals_table(&aggregate(&r.runs)));
        if r.calls == 0 {
            h.push_str("<p>No recorded calls.</p>\n");
            continue;
        }
        let series: Vec<Series> = r
            .runs
            .iter()
            .enumerate()
            .map(|(k, run)| Series {
                name: &run.strategy,
                colour: colour(&run.strategy, k),
                values: run.calls.iter().map(|c| c.prompt_tokens as f64).collect(),
            })
            .collect();
        h.push_str(&line_chart(&series, "call", "prompt tokens", &marks));
    }
    h.push_str("</body>\n</html>\n");
    h
}

/// Totals, one row per strategy, with ratios to `raw` when it is there.
fn totals_table(rows: &[(String, Totals)]) -> String {
    let raw = rows.iter().find(|(n, _)| n == "raw").map(|(_, t)| t);
    let ratio = |of: f64, base: f64| if base > 0.0 { format!("{:.2}&times;", of / base) } else { "-".into() };
    let mut h = String::from("<div class=\"wide\"><table>\n<tr><th>strategy</th><th>calls</th><th>prompt tokens</th>");
    if raw.is_some() {
        h.push_str("<th>vs raw</th>");
    }
    h.push_str("<th>cached</th><th>written</th><th>aux out</th><th>cost</th>");
    if raw.is_some() {
        h.push_str("<th>vs raw</th>");
    }
    h.push_str(
        "<th>peak</th><th>&gt; window</th><th>rewrites</th><th>fallbacks</th><th>edit recall</th>\
         <th>reference recall</th></tr>\n",
    );
    for (i, (name, t)) in rows.iter().enumerate() {
        let _ = write!(
            h,
            "<tr><td><span class=\"sw\" style=\"background:{}\"></span>{}</td><td>{}</td><td>{}</td>",
            colour(name, i),
            esc(name),
            thousands(t.calls),
            thousands(t.prompt_tokens)
        );
        if let Some(r) = raw {
            let _ = write!(h, "<td>{}</td>", ratio(t.prompt_tokens as f64, r.prompt_tokens as f64));
        }
        let _ = write!(
            h,
            "<td>{:.1}%</td><td>{}</td><td>{}</td><td>{}</td>",
            100.0 * t.cached_share(),
            thousands(t.written),
            thousands(t.aux_output_tokens),
            thousands(t.cost.round() as u64)
        );
        if let Some(r) = raw {
            let _ = write!(h, "<td>{}</td>", ratio(t.cost, r.cost));
        }
        let recall = |r: Option<f64>, kept: u64, counted: u64| {
            r.map_or_else(|| "-".to_owned(), |r| format!("{r:.3} ({kept}/{counted})"))
        };
        let _ = writeln!(
            h,
            "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            thousands(t.peak_prompt_tokens),
            thousands(t.above_window),
            thousands(t.rewrites),
            thousands(t.fallbacks),
            recall(t.edit_recall(), t.edits_kept, t.edits_counted),
            recall(t.reference_recall(), t.refs_kept, t.refs_counted),
        );
    }
    h.push_str("</table></div>\n");
    h
}

/// Horizontal bars: each strategy's cached share of its prompt tokens.
fn cached_bars(rows: &[(String, Totals)]) -> String {
    let (label, bar, row) = (110.0, 560.0, 26.0);
    let height = row * rows.len() as f64 + 8.0;
    let mut s = format!(
        "<svg width=\"760\" height=\"{height:.0}\" viewBox=\"0 0 760 {height:.0}\" role=\"img\" \
         aria-label=\"cached share per strategy\">\n"
    );
    for (i, (name, t)) in rows.iter().enumerate() {
        let y = 4.0 + row * i as f64;
        let share = t.cached_share();
        let _ = writeln!(
            s,
            "<text x=\"{:.0}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{label:.0}\" y=\"{y:.1}\" width=\"{bar:.0}\" height=\"18\" fill=\"#f0f0f0\"/>\
             <rect x=\"{label:.0}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"18\" fill=\"{}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{:.1}%</text>",
            label - 8.0,
            y + 13.0,
            esc(name),
            bar * share,
            colour(name, i),
            label + bar + 6.0,
            y + 13.0,
            100.0 * share
        );
    }
    s.push_str("</svg>\n");
    s
}

/// One line of a chart: a value per call.
struct Series<'a> {
    name: &'a str,
    colour: &'static str,
    values: Vec<f64>,
}

/// A line chart of `series` against the call index, with a legend, labelled axes and `marks`
/// (value, label) drawn as dashed horizontal lines.
fn line_chart(series: &[Series], x_label: &str, y_label: &str, marks: &[(f64, String)]) -> String {
    let (width, height) = (760.0, 290.0);
    let (left, right, top, bottom) = (64.0, 96.0, 34.0, 44.0);
    let (pw, ph) = (width - left - right, height - top - bottom);
    let n = series.iter().map(|s| s.values.len()).max().unwrap_or(0);
    let highest =
        series.iter().flat_map(|s| &s.values).chain(marks.iter().map(|(v, _)| v)).fold(0.0_f64, |a, &b| a.max(b));
    let y_step = nice(highest / 5.0);
    let y_ticks = ((highest / y_step - 1e-9).ceil() as usize).max(1);
    let y_max = y_step * y_ticks as f64;
    let x = |i: usize| if n > 1 { left + pw * i as f64 / (n - 1) as f64 } else { left + pw / 2.0 };
    let y = |v: f64| top + ph - ph * v / y_max;

    let mut s = format!(
        "<svg width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" role=\"img\" \
         aria-label=\"{} per {}\">\n",
        esc(y_label),
        esc(x_label)
    );
    // Legend.
    let mut lx = left;
    for line in series {
        let _ = write!(
            s,
            "<rect x=\"{lx:.0}\" y=\"8\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.0}\" y=\"18\">{}</text>",
            line.colour,
            lx + 16.0,
            esc(line.name)
        );
        lx += 30.0 + 7.0 * line.name.chars().count() as f64;
    }
    s.push('\n');
    // Grid, y ticks and axes.
    for k in 0..=y_ticks {
        let v = y_step * k as f64;
        let _ = write!(
            s,
            "<line x1=\"{left:.0}\" y1=\"{0:.1}\" x2=\"{1:.0}\" y2=\"{0:.1}\" stroke=\"#eee\"/>\
             <text x=\"{2:.0}\" y=\"{3:.1}\" text-anchor=\"end\">{4}</text>",
            y(v),
            left + pw,
            left - 6.0,
            y(v) + 4.0,
            compact(v)
        );
    }
    let x_step = nice((n.saturating_sub(1)) as f64 / 6.0).max(1.0) as usize;
    for i in (0..n).step_by(x_step) {
        let _ = write!(
            s,
            "<line x1=\"{0:.1}\" y1=\"{1:.1}\" x2=\"{0:.1}\" y2=\"{2:.1}\" stroke=\"#999\"/>\
             <text x=\"{0:.1}\" y=\"{3:.1}\" text-anchor=\"middle\">{i}</text>",
            x(i),
            top + ph,
            top + ph + 4.0,
            top + ph + 16.0
        );
    }
    let _ = writeln!(
        s,
        "\n<polyline fill=\"none\" stroke=\"#999\" points=\"{left:.0},{top:.0} {left:.0},{0:.0} {1:.0},{0:.0}\"/>\
         <text x=\"{2:.0}\" y=\"{3:.0}\" text-anchor=\"middle\">{4}</text>\
         <text transform=\"translate(14 {5:.0}) rotate(-90)\" text-anchor=\"middle\">{6}</text>",
        top + ph,
        left + pw,
        left + pw / 2.0,
        height - 8.0,
        esc(x_label),
        top + ph / 2.0,
        esc(y_label)
    );
    for (v, label) in marks {
        let _ = writeln!(
            s,
            "<line x1=\"{left:.0}\" y1=\"{0:.1}\" x2=\"{1:.0}\" y2=\"{0:.1}\" stroke=\"#555\" stroke-dasharray=\"6 4\"/>\
             <text x=\"{2:.0}\" y=\"{3:.1}\">{4}</text>",
            y(*v),
            left + pw,
            left + pw + 6.0,
            y(*v) + 4.0,
            esc(label)
        );
    }
    for line in series {
        let mut points = String::new();
        let mut last = String::new();
        for (i, v) in downsample(&line.values) {
            let point = format!("{:.1},{:.1}", x(i), y(v));
            if point != last {
                if !points.is_empty() {
                    points.push(' ');
                }
                points.push_str(&point);
                last = point;
            }
        }
        let _ = writeln!(
            s,
            "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{points}\"><title>{}</title></polyline>",
            line.colour,
            esc(line.name)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// At most [`MAX_POINTS`] (index, value) pairs of `values`: each bucket's minimum and maximum in
/// index order, so peaks and drops stay visible.
fn downsample(values: &[f64]) -> Vec<(usize, f64)> {
    if values.len() <= MAX_POINTS {
        return values.iter().copied().enumerate().collect();
    }
    let buckets = MAX_POINTS / 2;
    let mut out = Vec::with_capacity(MAX_POINTS);
    for b in 0..buckets {
        let (start, end) = (b * values.len() / buckets, (b + 1) * values.len() / buckets);
        let bucket = values[start..end].iter().copied().enumerate().map(|(i, v)| (start + i, v));
        let low = bucket.clone().fold((start, f64::INFINITY), |a, p| if p.1 < a.1 { p } else { a });
        let high = bucket.fold((start, f64::NEG_INFINITY), |a, p| if p.1 > a.1 { p } else { a });
        if low.0 == high.0 {
            out.push(low);
        } else {
            out.extend(if low.0 < high.0 { [low, high] } else { [high, low] });
        }
    }
    out
}

/// The smallest of 1, 2, 2.5, 5 × 10^k at least `v` (1 for anything not positive).
fn nice(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let magnitude = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|&c| c >= v * (1.0 - 1e-12))
        .unwrap_or(10.0 * magnitude)
}

/// `200k`, `1.5M`, `2.5k`, `40`.
fn compact(v: f64) -> String {
    let (unit, suffix) = if v >= 1e6 {
        (1e6, "M")
    } else if v >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let x = v / unit;
    if (x - x.round()).abs() < 1e-9 { format!("{x:.0}{suffix}") } else { format!("{x:.1}{suffix}") }
}

/// The strategy's colour: fixed for the five known ones.
pub(crate) fn colour(name: &str, i: usize) -> &'static str {
    const OTHERS: [&str; 4] = ["#9467bd", "#8c564b", "#e377c2", "#17becf"];
    match name {
        "raw" => "#7f7f7f",
        "mask" => "#d62728",
        "opencode" => "#1f77b4",
        "codex" => "#ff7f0e",
        "workbench" => "#2ca02c",
        _ => OTHERS[i % OTHERS.len()],
    }
}

/// Text for HTML content and attribute values.
pub(crate) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(thousands(396_144_938), "396,144,938");
        assert_eq!(thousands(12), "12");
        assert_eq!(
            (compact(200_000.0), compact(2_500.0), compact(1_500_000.0)),
            ("200k".into(), "2.5k".into(), "1.5M".into())
        );
        assert_eq!((nice(37_000.0), nice(50_000.0), nice(0.0)), (50_000.0, 50_000.0, 1.0));
        assert_eq!(esc("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
        let values: Vec<f64> = (0..1000).map(|i| (i % 7) as f64).collect();
        let points = downsample(&values);
        assert!(points.len() <= MAX_POINTS && points.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(points.iter().map(|p| p.1).fold(0.0, f64::max), 6.0);
    }
}
