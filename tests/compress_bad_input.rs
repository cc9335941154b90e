//! Compressors never fail and never panic: every bad input gives a bounded, valid entry with a
//! note (R3, issue "never lose anything").
#![cfg(not(target_arch = "wasm32"))]

use context_workbench::compress::{CompressConfig, Family, ToolOutput, compress_tool_output};
use context_workbench::tokens::{Encoding, TokenCounter};

fn run(tool: &str, args: &str, output: &str) -> context_workbench::compress::Compressed {
    let input = ToolOutput {
        tool,
        arguments: args,
        output,
        stderr: None,
        exit_code: Some(1),
        is_error: true,
        raw_id: "m000042",
        original: None,
        focus: &[],
    };
    compress_tool_output(&input, &CompressConfig::default(), &TokenCounter::new(Encoding::O200kBase))
}

fn assert_bounded(c: &context_workbench::compress::Compressed) {
    let budget = CompressConfig::default().budget(c.tokens_in);
    assert!(c.tokens_out <= budget, "{} tokens for a budget of {budget}:\n{}", c.tokens_out, c.text);
    assert!(c.text.contains("raw#m000042"), "{}", c.text);
}

#[test]
fn binary_junk() {
    let junk: String = (0u32..20_000).map(|i| char::from_u32(i % 256).unwrap_or('\0')).collect();
    for tool in ["Bash", "Read", "Grep", "mystery"] {
        let c = run(tool, "{}", &junk);
        assert!(c.text.contains("binary output"), "{}", c.text);
        assert_bounded(&c);
    }
}

#[test]
fn invalid_utf8_decoded_lossily() {
    let bytes = b"ok line\n\xff\xfe\xfd broken \xc3\x28 bytes\nlast line\n".repeat(2_000);
    let text = String::from_utf8_lossy(&bytes);
    let c = run("Bash", r#"{"command":"cat blob"}"#, &text);
    assert!(c.text.starts_with("exit code: 1"));
    assert_bounded(&c);
}

#[test]
fn fifty_megabytes() {
    let line = "2026-11-22 08:00:00 INFO worker-3 processed batch 1234 in 12ms\n";
    let big = line.repeat(50_000_000 / line.len());
    let c = run("bash_execute", r#"{"command":"./run.sh"}"#, &big);
    assert_bounded(&c);
    assert!(c.tokens_out <= 4_000);
    assert!(c.text.contains("kept "), "{}", c.text);
}

#[test]
fn ansi_colours_and_progress_bars() {
    let mut out = String::new();
    for i in 0..=100 {
        out.push_str(&format!("\r\x1b[33mDownloading\x1b[0m {i}%"));
    }
    out.push_str("\n\x1b[1;31mERROR\x1b[0m: checksum mismatch\n");
    let c = run("Bash", "{}", &out);
    assert!(!c.text.contains('\x1b') && !c.text.contains('\r'));
    assert!(c.text.contains("Downloading 100%") && c.text.contains("ERROR: checksum mismatch"), "{}", c.text);
    assert!(c.notes.iter().any(|n| n.contains("progress")), "{:?}", c.notes);
}

#[test]
fn megabyte_lines() {
    let out = format!("start\n{}\nend\n", "x".repeat(1_000_000));
    for tool in ["Bash", "Read", "Grep", "Glob", "LS", "Edit", "Write", "TodoWrite", "other"] {
        let c = run(tool, "{}", &out);
        assert!(c.text.contains("chars]"), "{tool}: {}", c.text);
        assert_bounded(&c);
    }
}

#[test]
fn arguments_that_are_not_json_and_empty_outputs() {
    let c = run("Read", "not json {", "");
    assert_eq!(c.family, Family::Read);
    assert_eq!(c.text, "");
    let c = run("TodoWrite", "[1,2", "Todos updated");
    assert_eq!(c.text, "Todos updated");
}

#[test]
fn deterministic() {
    let out = "a.py:1:x\n".repeat(500);
    assert_eq!(run("Grep", r#"{"pattern":"x"}"#, &out), run("Grep", r#"{"pattern":"x"}"#, &out));
}
