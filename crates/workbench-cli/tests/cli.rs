//! The `workbench` binary as a user runs it.
#![cfg(not(target_arch = "wasm32"))]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use context_workbench_testing::serve_once;

fn workbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_workbench")).args(args).env_remove("WORKBENCH_LLM_URL").output().unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cw-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn count_walks_directories_in_sorted_order_and_totals() {
    let dir = scratch("sorted");
    std::fs::create_dir_all(dir.join("b")).unwrap();
    std::fs::write(dir.join("b/z.txt"), "hello world").unwrap();
    std::fs::write(dir.join("a.txt"), "hello").unwrap();
    let out = workbench(&["count", dir.to_str().unwrap()]);
    assert!(out.status.success());
    let expected = format!("1\t{0}/a.txt\n2\t{0}/b/z.txt\n3\ttotal\n", dir.display());
    assert_eq!(stdout(&out), expected);
    let out = workbench(&["count", "--encoding", "cl100k_base", dir.join("a.txt").to_str().unwrap()]);
    assert!(stdout(&out).ends_with("1\ttotal\n"));
}

#[test]
fn count_reports_non_utf8_files_and_counts_the_rest() {
    let dir = scratch("utf8");
    std::fs::write(dir.join("bad.bin"), b"ok \xff\xfe").unwrap();
    std::fs::write(dir.join("good.txt"), "hello world").unwrap();
    let out = workbench(&["count", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.bin") && stderr.contains("not valid UTF-8"), "{stderr}");
    assert_eq!(stdout(&out), format!("2\t{}/good.txt\n2\ttotal\n", dir.display()));
}

#[test]
fn count_reads_standard_input() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args(["count", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"hello world").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(stdout(&out), "2\t-\n2\ttotal\n");
}

#[test]
fn count_finishes_over_all_shared_traces() {
    let out = workbench(&["count", "../../data/traces"]);
    assert!(out.status.success());
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    let total: usize =
        lines[..lines.len() - 1].iter().map(|l| l.split('\t').next().unwrap().parse::<usize>().unwrap()).sum();
    assert!(lines.len() > 80);
    assert_eq!(*lines.last().unwrap(), format!("{total}\ttotal"));
}

#[test]
fn config_errors_name_the_file_and_key() {
    let dir = scratch("config");
    let file = dir.join("workbench.toml");
    std::fs::write(&file, "window = 100000\n[prune]\nminimun = 3\n").unwrap();
    let out = workbench(&["--config", file.to_str().unwrap(), "count", "-"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("workbench.toml") && stderr.contains("prune.minimun"), "{stderr}");
}

#[test]
fn llm_check_without_an_llm_says_how_to_configure_one() {
    let out = workbench(&["llm-check"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("no LLM configured") && stderr.contains("WORKBENCH_LLM_URL"), "{stderr}");
}

#[test]
fn llm_check_talks_to_an_openai_compatible_endpoint() {
    let body = r#"{"choices":[{"message":{"content":"ready"}}],"usage":{"prompt_tokens":12,"completion_tokens":1}}"#;
    let (url, server) = serve_once("200 OK", body);
    let out = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args(["llm-check", "--llm-url", &url, "--llm-model", "scripted"])
        .env("WORKBENCH_LLM_API_KEY", "sk-never-printed")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout(&out), "ready\nusage: 12 prompt, 1 completion, 0 cached\n");
    assert!(server.join().unwrap().contains("Bearer sk-never-printed"));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("sk-never"));
}

#[test]
fn compress_prints_the_history_form_of_standard_input() {
    use std::io::Write;
    let grep: String = (1..=40).map(|i| format!("src/lib.rs:{i}:fn item_{i}() {{}}\n")).collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args(["compress", "--tool", "Grep", "--args", r#"{"pattern":"fn item"}"#, "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(grep.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["family"], "grep");
    let text = json["text"].as_str().unwrap();
    assert!(text.starts_with("40 matches in 1 files: src/lib.rs (40)\nsrc/lib.rs:1:fn item_1() {}"), "{text}");
    // Standard input is the user's own: the trailer says what was dropped and names no original.
    assert!(text.ends_with("tokens dropped]") && !text.contains("raw#"), "{text}");
    assert!(json["tokens_out"].as_u64().unwrap() < json["tokens_in"].as_u64().unwrap());
}

/// A small real trajectory: 11 recorded calls.
const SMALL: &str = "../../data/traces/vorflux/django__django-14373.json";
const STRATEGIES: [&str; 5] = ["raw", "mask", "opencode", "codex", "workbench"];

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn recorded_calls(file: &str) -> usize {
    let text = std::fs::read_to_string(file).unwrap();
    context_workbench::import::import(file, &text).unwrap()[0].calls.len()
}

#[test]
fn replay_prints_one_row_per_strategy() {
    let out = workbench(&["replay", SMALL]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("strategy") && lines[0].contains("vs raw"), "{text}");
    let firsts: Vec<&str> = lines[1..].iter().map(|l| l.split_whitespace().next().unwrap()).collect();
    assert_eq!(firsts, STRATEGIES);
    let calls = recorded_calls(SMALL).to_string();
    assert!(lines[1..].iter().all(|l| l.split_whitespace().nth(1) == Some(calls.as_str())), "{text}");
    assert!(lines[1].contains("1.00x"), "{text}");
    assert!(
        stderr(&out).contains(&format!("1 trajectory, {calls} calls, from 1 file (0 skipped)")),
        "{}",
        stderr(&out)
    );
}

#[test]
fn replay_skips_files_that_are_not_trajectories() {
    let dir = scratch("replay-skip");
    std::fs::copy(SMALL, dir.join("run.json")).unwrap();
    std::fs::write(dir.join("NOTES.md"), "# not a trajectory\n").unwrap();
    let out = workbench(&["replay", "--strategy", "raw,workbench", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let notes = stderr(&out);
    let skip = notes.lines().find(|l| l.starts_with("workbench: skipped ")).unwrap_or_default();
    assert!(skip.contains("NOTES.md"), "{notes}");
    assert!(notes.contains("from 1 file (1 skipped)"), "{notes}");
    assert_eq!(stdout(&out).lines().count(), 3);

    std::fs::remove_file(dir.join("run.json")).unwrap();
    let out = workbench(&["replay", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no trajectory found"), "{}", stderr(&out));
}

#[test]
fn replay_emits_the_workbench_prompt_of_every_call() {
    let dir = scratch("replay-emit");
    let file = dir.join("prompts.jsonl");
    let out = workbench(&["replay", "--strategy", "workbench", "--emit-prompts", file.to_str().unwrap(), SMALL]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), recorded_calls(SMALL));
    for (k, line) in lines.iter().enumerate() {
        assert_eq!(line["call"], k);
        let messages = line["messages"].as_array().unwrap();
        assert!(!messages.is_empty());
        assert!(messages.iter().all(|m| m["role"].is_string() && m["content"].is_string()), "{line}");
        assert!(line["aux_output_tokens"].is_u64());
    }
}

#[test]
fn replay_refuses_bad_requests_naming_what_is_wrong() {
    let dir = scratch("replay-bad");
    let file = dir.join("prompts.jsonl");
    let two = "../../data/traces/vorflux/django__django-15104.json";
    let out = workbench(&["replay", "--emit-prompts", file.to_str().unwrap(), SMALL, two]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("exactly one trajectory, found 2"), "{}", stderr(&out));
    assert!(!file.exists());

    let out = workbench(&["replay", "--strategy", "raw,nope", SMALL]);
    assert_eq!(out.status.code(), Some(2));
    let message = stderr(&out);
    assert!(message.contains("nope") && STRATEGIES.iter().all(|s| message.contains(s)), "{message}");

    let missing = dir.join("no-such-dir");
    let out = workbench(&["replay", SMALL, missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(missing.to_str().unwrap()), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
}

#[test]
fn replay_writes_a_self_contained_report_with_the_same_bytes_every_time() {
    let dir = scratch("replay-report");
    let pages: Vec<Vec<u8>> = ["one", "two"]
        .iter()
        .map(|name| {
            let report = dir.join(name);
            let out = workbench(&["replay", "--report", report.to_str().unwrap(), SMALL]);
            assert!(out.status.success(), "{}", stderr(&out));
            std::fs::read(report.join("index.html")).unwrap()
        })
        .collect();
    assert!(pages[0] == pages[1], "two runs wrote different reports");
    let html = String::from_utf8(pages[0].clone()).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<svg"));
    assert!(STRATEGIES.iter().all(|s| html.contains(s)));
    assert!(!html.contains("http://") && !html.contains("https://") && !html.contains("<script"));
    assert!(html.contains("window 200k") && html.contains("80% 160k"));
}

#[test]
fn replay_sweep_prints_the_workbench_at_every_budget_scale_and_charts_it() {
    let report = scratch("replay-sweep");
    let out = workbench(&["replay", "--sweep", "--report", report.to_str().unwrap(), SMALL]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> =
        stdout.lines().skip_while(|l| !l.starts_with("sweep of")).skip(2).take_while(|l| !l.is_empty()).collect();
    let scales: Vec<&str> = rows.iter().filter_map(|r| r.split_whitespace().next()).collect();
    assert_eq!(scales, ["0x", "0.25x", "0.5x", "1x", "1.5x", "2x", "3x", "4x"], "{stdout}");
    assert!(rows[0].contains("800/0/0") && rows[3].contains("800/8000/2000"), "{stdout}");
    // The default scale's row is the workbench row of the main table.
    let workbench_row = stdout.lines().find(|l| l.starts_with("workbench")).unwrap();
    let recall = rows[3].split_whitespace().last().unwrap();
    assert!(workbench_row.contains(recall), "{workbench_row} vs {}", rows[3]);
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(
        html.contains("Cost and reference recall") && html.contains("aria-label=\"reference recall against cost\"")
    );
}

/// #28: `--folds K` picks a scale per fold on the others and reports it on the fold; the lost
/// references are tabled by cause, and `--verbose` lists them per trajectory.
#[test]
fn replay_folds_cross_validate_the_budgets_and_the_lost_references_are_named() {
    let other = "../../data/traces/vorflux/astropy__astropy-7606.json";
    let out = workbench(&["replay", "--folds", "2", "--verbose", SMALL, other]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> =
        stdout.lines().skip_while(|l| !l.starts_with("cross-validation over 2 folds")).skip(2).take(2).collect();
    assert_eq!(rows.iter().filter_map(|r| r.split_whitespace().next()).collect::<Vec<_>>(), ["1", "2"], "{stdout}");
    assert!(stdout.contains("on every run the rule picks "), "{stdout}");
    let table: Vec<&str> = stdout.lines().skip_while(|l| !l.starts_with("references lost")).skip(2).take(5).collect();
    let lost = |name: &str| -> u64 {
        let row = table.iter().find(|r| r.starts_with(name)).unwrap_or_else(|| panic!("{stdout}"));
        row.split_whitespace().nth(2).unwrap().parse().unwrap()
    };
    assert_eq!(lost("raw"), 0, "raw keeps every reference");
    assert!(lost("mask") > 0, "{stdout}");
    assert!(stdout.contains("  mask lost ") && stdout.contains("rewritten in place"), "{stdout}");
    let bad = workbench(&["replay", "--folds", "1", SMALL]);
    assert_eq!(bad.status.code(), Some(2), "one fold cross-validates nothing");
    let no_raw = workbench(&["replay", "--folds", "2", "--strategy", "workbench", SMALL]);
    assert_eq!(no_raw.status.code(), Some(2));
    assert!(stderr(&no_raw).contains("add raw to --strategy"), "{}", stderr(&no_raw));
}

#[test]
fn replay_store_saves_sessions_that_resume_and_never_overwrites_them() {
    let root = scratch("store");
    let trace = "../../data/traces/claude-code/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl";
    let args = ["replay", trace, "--strategy", "workbench", "--store", root.to_str().unwrap()];
    let out = workbench(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("6 sessions stored"), "the session and its 5 sub-agents");
    let dir = root.join("fe5e1c67-53e7-4862-81ae-d0e013e3270b");
    let meta = std::fs::read_to_string(dir.join("meta.json")).unwrap();
    assert!(meta.contains("\"trace_id\": \"fe5e1c67-53e7-4862-81ae-d0e013e3270b\""), "{meta}");
    let goals = std::fs::read_to_string(dir.join("goal.json")).unwrap();
    assert!(goals.contains("\"goals\""), "the session's todo list became its goal tree");

    let host = workbench_cli::native::NativeHost::new(workbench_cli::native::WorkspaceFs::new(&root).unwrap(), None);
    let mut config = context_workbench::Config::default();
    config.store.root = ".".into();
    let id = "fe5e1c67-53e7-4862-81ae-d0e013e3270b";
    let opened = context_workbench::host::block_on(context_workbench::Engine::open(host, config, Some(id)));
    let (engine, notes) = opened.unwrap();
    assert!(notes.iter().all(|n| !n.contains("restarts")), "{notes:?}");
    assert!(!engine.goal_tree().goals().is_empty());

    let before = std::fs::read(dir.join("events.jsonl")).unwrap();
    let again = workbench(&args);
    assert!(String::from_utf8_lossy(&again.stderr).contains("already holds"), "{again:?}");
    assert_eq!(std::fs::read(dir.join("events.jsonl")).unwrap(), before);

    // Deterministic: the same trajectory stored under another root gives the same bytes.
    let other = scratch("store-again");
    let args = ["replay", trace, "--strategy", "workbench", "--store", other.to_str().unwrap()];
    assert!(workbench(&args).status.success());
    let files = |root: &std::path::Path| -> Vec<(std::path::PathBuf, Vec<u8>)> {
        let all = context_workbench_testing::snapshot(root).into_iter();
        all.map(|(path, bytes)| (path.strip_prefix(root).unwrap().to_path_buf(), bytes)).collect()
    };
    assert!(files(&root) == files(&other), "two stores of one trajectory differ");
}
