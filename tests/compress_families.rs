//! Every tool family on real outputs from `data/traces` (R3.2-R3.4), with invariants
//! checked on every recorded output and snapshots of a few.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::traces::{Recorded, claude_code, vorflux};
use context_workbench::compress::{CompressConfig, Compressed, Family, compress_tool_output, is_error_message};
use context_workbench::tokens::{Encoding, TokenCounter};

fn compress_as(tool: &str, r: &Recorded) -> Compressed {
    compress_tool_output(&r.as_input(tool), &CompressConfig::default(), &TokenCounter::new(Encoding::O200kBase))
}

fn compress(r: &Recorded) -> Compressed {
    compress_as(&r.tool, r)
}

/// Every tool output of every trajectory format in `data/traces`.
fn all() -> Vec<Recorded> {
    ["vorflux", "claude-code", "swe-agent", "openhands"].into_iter().flat_map(common::traces::recorded).collect()
}

/// Failing test names as a plain scan of the raw log finds them (unittest/Django and pytest).
fn failing_names(log: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in log.lines() {
        let name = line
            .strip_prefix("FAIL: ")
            .or_else(|| line.strip_prefix("ERROR: "))
            .map(|rest| rest.split(" (").next().unwrap_or(rest))
            .or_else(|| line.strip_prefix("FAILED ").map(|rest| rest.split(" - ").next().unwrap_or(rest)));
        if let Some(name) = name.map(str::trim).filter(|n| !n.is_empty() && !n.starts_with('('))
            && !names.iter().any(|n| n == name)
        {
            names.push(name.to_owned());
        }
    }
    names
}

#[test]
fn every_real_output_is_bounded_deterministic_and_keeps_its_facts() {
    let config = CompressConfig::default();
    let records = all();
    assert!(records.len() > 4_000, "{}", records.len());
    let (mut tokens_in, mut tokens_out) = (0, 0);
    for r in &records {
        let c = compress(r);
        let names = failing_names(&r.output);
        // Every failing test name is kept even past the budget.
        let names_line = c.text.lines().find(|l| l.starts_with("failing (")).unwrap_or_default();
        let names_tokens = TokenCounter::new(Encoding::O200kBase).count(names_line);
        assert!(
            c.tokens_out <= config.budget(c.tokens_in) + names_tokens,
            "{} {}: {} > {}\n{}",
            r.file,
            r.tool,
            c.tokens_out,
            config.budget(c.tokens_in),
            c.text
        );
        assert_eq!(c, compress(r), "deterministic");
        for name in &names {
            assert!(c.text.contains(name.as_str()), "{}: failing test {name} lost:\n{}", r.file, c.text);
        }
        // A failed output's last error message (as the CLI's stats check it) survives.
        let error_line = r.output.lines().rev().map(str::trim).find(|l| is_error_message(l));
        if let Some(line) = error_line.filter(|_| r.is_error) {
            let head: String = line.chars().take(100).collect();
            assert!(c.text.contains(&head), "{}: error message {head:?} lost:\n{}", r.file, c.text);
        }
        if let (Family::Bash, Some(code)) = (c.family, r.exit_code) {
            assert!(c.text.starts_with(&format!("exit code: {code}")), "{}", c.text);
        }
        if !c.notes.is_empty() {
            assert!(c.text.ends_with("full output: raw#m000007]"), "{}", c.text);
        }
        tokens_in += c.tokens_in;
        tokens_out += c.tokens_out;
    }
    // Measured 3.4x over every format (README); this guards against regressions.
    assert!(tokens_in > 3 * tokens_out, "{tokens_in} in, {tokens_out} out");
}

fn pick(records: &[Recorded], tool: &str, n: usize) -> Vec<Recorded> {
    let picked: Vec<Recorded> = records.iter().filter(|r| r.tool == tool).take(n).cloned().collect();
    assert_eq!(picked.len(), n, "{n} real {tool} outputs");
    picked
}

fn longest(records: &[Recorded], tool: &str) -> Recorded {
    records.iter().filter(|r| r.tool == tool).max_by_key(|r| r.output.lines().count()).cloned().expect(tool)
}

#[test]
fn bash_runs_become_assertions() {
    let records = vorflux();
    let mut runs: Vec<&Recorded> =
        records.iter().filter(|r| r.tool == "bash_execute" && !failing_names(&r.output).is_empty()).collect();
    runs.truncate(8);
    assert!(runs.len() >= 5, "failing test runs in the traces");
    assert!(runs.iter().any(|r| r.output.contains("Ran ")), "a Django/unittest run");
    assert!(runs.iter().any(|r| r.output.contains("FAILED ")), "a pytest run");
    for r in runs {
        let c = compress(r);
        assert_eq!(c.family, Family::Bash);
        for name in failing_names(&r.output) {
            assert!(c.text.contains(&name), "{name} lost in\n{}", c.text);
        }
    }
    for r in pick(&records, "bash_execute", 5) {
        assert_eq!(compress(&r).family, Family::Bash);
    }
}

#[test]
fn reads_keep_numbered_lines_definitions_first() {
    let records = vorflux();
    let mut reads = pick(&records, "read_text_file", 5);
    reads.push(longest(&records, "read_text_file"));
    for r in &reads {
        let c = compress(r);
        assert_eq!(c.family, Family::Read);
        for line in c.text.lines().filter(|l| !l.starts_with('…') && !l.starts_with('[') && !l.is_empty()) {
            assert!(line.trim_start().chars().next().is_some_and(|ch| ch.is_ascii_digit()), "unnumbered line {line:?}");
        }
    }
    let big = compress(reads.last().unwrap());
    assert!(big.text.contains("def ") && big.text.contains(" lines omitted …"), "{}", big.text);
}

#[test]
fn a_two_thousand_line_read_is_limited() {
    let source = std::fs::read_to_string("data/traces/aider/chat-history.md").unwrap();
    let numbered: String = source.lines().take(2_000).enumerate().map(|(i, l)| format!("{:>6}→{l}\n", i + 1)).collect();
    let r = Recorded::plain("Read", r#"{"file_path":"chat-history.md"}"#, numbered);
    let c = compress(&r);
    assert!(c.notes.iter().any(|n| n == "read limited to 500 lines"), "{:?}", c.notes);
    assert!(c.tokens_out <= 4_000);
    let last_kept = c.text.lines().filter_map(|l| l.split('→').next()?.trim().parse::<usize>().ok()).max().unwrap();
    assert!(last_kept <= 500);
}

#[test]
fn greps_summarise_and_keep_five_matches() {
    let records = vorflux();
    let mut greps = pick(&records, "grep_search", 5);
    greps.push(longest(&records, "grep_search"));
    for r in &greps {
        let c = compress(r);
        assert_eq!(c.family, Family::Grep);
        let lines = r.output.lines().count();
        if lines > 5 {
            assert!(c.text.lines().next().unwrap().contains(" in "), "{}", c.text);
            assert!(c.text.contains(&format!("kept 5 of {lines} lines")), "{}", c.text);
        } else {
            assert_eq!(c.text, r.output.trim_end_matches('\n'));
        }
    }
}

#[test]
fn globs_and_listings_count_then_list() {
    let records = all();
    let mut globs = pick(&records, "search_files", 5);
    globs.extend(pick(&records, "Glob", 5));
    for r in &globs {
        let c = compress(r);
        assert_eq!(c.family, Family::Glob);
        let hits = r.output.lines().filter(|l| !l.is_empty()).count();
        if hits > 10 {
            assert!(
                c.text.starts_with(&format!(
                    "{}: {hits} hits",
                    serde_json::from_str::<serde_json::Value>(&r.args).unwrap()["pattern"].as_str().unwrap()
                )),
                "{}",
                c.text
            );
        }
    }
    let listings: Vec<&Recorded> = records
        .iter()
        .filter(|r| r.tool == "bash_execute" && r.args.contains(r#""command":"ls "#) && r.output.lines().count() > 3)
        .take(5)
        .collect();
    assert_eq!(listings.len(), 5, "real ls outputs");
    for r in listings {
        let c = compress_as("LS", r);
        assert_eq!(c.family, Family::Ls);
        let entries = r.output.lines().count();
        if entries > 20 {
            assert!(c.text.contains(&format!("{entries} entries")), "{}", c.text);
        }
    }
}

#[test]
fn edits_and_writes_keep_status_and_path() {
    let records = all();
    let mut edits = pick(&records, "edit_file", 5);
    edits.extend(pick(&records, "Edit", 5));
    edits.extend(pick(&records, "MultiEdit", 4));
    let mut writes = pick(&records, "write_file", 5);
    writes.extend(pick(&records, "Write", 5));
    for r in edits.iter().chain(&writes) {
        let c = compress(r);
        assert!(matches!(c.family, Family::Edit | Family::Write));
        let first = r.output.lines().next().unwrap_or_default();
        assert!(c.text.contains(first), "status line lost:\n{}", c.text);
    }
}

#[test]
fn a_big_diff_becomes_a_summary() {
    let records = vorflux();
    let diff = records
        .iter()
        .filter(|r| r.output.contains("\n@@ ") && r.output.lines().count() > 200)
        .max_by_key(|r| r.output.len())
        .expect("a big real diff");
    let c = compress_as("apply_patch", diff);
    let first = c.text.lines().take(3).collect::<Vec<_>>().join("\n");
    assert!(c.text.contains("diff: ") && c.text.contains(" hunks, +"), "{first}");
    let hunks_in = diff.output.lines().filter(|l| l.starts_with("@@ ")).count();
    let hunks_out = c.text.lines().filter(|l| l.starts_with("@@ ")).count();
    assert!(hunks_out > 0 && hunks_out <= hunks_in);
    assert!(c.tokens_out <= CompressConfig::default().budget(c.tokens_in));
}

#[test]
fn todo_writes_become_a_recap() {
    let records = claude_code();
    for r in pick(&records, "TodoWrite", 5) {
        let c = compress(&r);
        assert_eq!(c.family, Family::TodoWrite);
        assert!(c.text.starts_with("todos: "), "{}", c.text);
        assert!(!c.text.contains("Ensure that you continue"), "{}", c.text);
    }
}

#[test]
fn unknown_tools_are_truncated_and_summarised() {
    let records = all();
    let others: Vec<&Recorded> = records
        .iter()
        .filter(|r| ["Task", "BashOutput", "list-git-repositories", "job", "KillBash"].contains(&r.tool.as_str()))
        .collect();
    assert!(others.len() >= 5);
    for r in others {
        let c = compress(r);
        assert_eq!(c.family, Family::Default);
        assert!(c.tokens_out <= CompressConfig::default().budget(c.tokens_in));
    }
}
