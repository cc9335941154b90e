//! The `workbench` binary as a user runs it.
#![cfg(not(target_arch = "wasm32"))]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use context_workbench::testing::serve_once;

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
    let out = workbench(&["count", "../shared/traces"]);
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
    assert!(text.ends_with("full output: raw#stdin]"), "{text}");
    assert!(json["tokens_out"].as_u64().unwrap() < json["tokens_in"].as_u64().unwrap());
}
