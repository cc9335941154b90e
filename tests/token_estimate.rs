//! The estimate counted before the ranks arrive (#50), against exact o200k_base counts of every
//! string of 16 bytes or more in the shared traces (tool outputs, code, prose, JSON).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::path::Path;

use context_workbench::tokens::{Encoding, TokenCounter, estimate};

fn strings(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) if s.len() >= 16 => out.push(s.clone()),
        serde_json::Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        serde_json::Value::Object(fields) => fields.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// Every string of every trace (a JSON file, or JSON lines), or the whole file when it has none.
fn samples() -> Vec<String> {
    let mut out = Vec::new();
    for file in common::traces::files_under(Path::new("data/traces")) {
        let text = std::fs::read_to_string(&file).unwrap();
        let before = out.len();
        match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(value) => strings(&value, &mut out),
            Err(_) => text.lines().filter_map(|l| serde_json::from_str(l).ok()).for_each(|v| strings(&v, &mut out)),
        }
        if out.len() == before {
            out.push(text);
        }
    }
    out
}

#[test]
fn the_estimate_is_calibrated_on_the_shared_traces() {
    let counter = TokenCounter::new(Encoding::O200kBase);
    let (mut exact_total, mut estimate_total) = (0usize, 0usize);
    let mut errors = Vec::new();
    for text in samples() {
        let (exact, estimated) = (counter.count(&text), estimate(&text));
        exact_total += exact;
        estimate_total += estimated;
        if exact >= 50 {
            errors.push(estimated.abs_diff(exact) as f64 / exact as f64);
        }
    }
    errors.sort_by(f64::total_cmp);
    let at = |q: f64| errors[(errors.len() as f64 * q) as usize];
    let total = estimate_total as f64 / exact_total as f64 - 1.0;
    println!(
        "{} strings of 50+ tokens: total {:+.1}%, median {:.1}%, p90 {:.1}%, p99 {:.1}%",
        errors.len(),
        total * 100.0,
        at(0.5) * 100.0,
        at(0.9) * 100.0,
        at(0.99) * 100.0
    );
    assert!(errors.len() > 10_000, "expected the shared traces beside the clone");
    assert!(total.abs() < 0.02, "total off by {total}");
    assert!(at(0.5) < 0.07 && at(0.9) < 0.2, "median {} p90 {}", at(0.5), at(0.9));
}
