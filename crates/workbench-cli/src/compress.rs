//! `workbench compress`: the history form of one tool output, or statistics over every tool
//! output of the trajectories under a directory.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use context_workbench::Config;
use context_workbench::compress::{Family, ToolOutput, compress_tool_output, is_error_message, logs};
use context_workbench::import::import;
use context_workbench::model::tool_calls_by_id;
use context_workbench::tokens::TokenCounter;

use crate::count::files_under;

pub struct One {
    pub tool: String,
    pub args: String,
    pub exit_code: Option<i32>,
    pub json: bool,
}

/// Compress standard input as the output of one `tool` call.
pub fn one(config: &Config, request: One) -> ExitCode {
    let mut bytes = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut bytes) {
        eprintln!("workbench: standard input: {e}");
        return ExitCode::FAILURE;
    }
    let output = String::from_utf8_lossy(&bytes);
    if matches!(output, std::borrow::Cow::Owned(_)) {
        eprintln!("workbench: standard input is not valid UTF-8; invalid bytes shown as U+FFFD");
    }
    let input = ToolOutput {
        tool: &request.tool,
        arguments: &request.args,
        output: &output,
        stderr: None,
        exit_code: request.exit_code,
        is_error: request.exit_code.is_some_and(|c| c != 0),
        raw_id: "",
        original: None,
        focus: &[],
    };
    let compressed = compress_tool_output(&input, &config.compress, &TokenCounter::new(config.encoding));
    if request.json {
        println!("{}", serde_json::to_string_pretty(&compressed).unwrap_or_default());
    } else {
        println!("{}", compressed.text);
    }
    ExitCode::SUCCESS
}

#[derive(Default)]
struct FamilyStats {
    outputs: usize,
    tokens_in: usize,
    tokens_out: usize,
}

#[derive(Default)]
struct Losses {
    failing_names: usize,
    edited_paths: usize,
    error_messages: usize,
}

/// Run every tool output of the trajectories under `dir` through the compressors and print,
/// per family, count, tokens in, tokens out and ratio, then what was lost (should be nothing).
pub fn stats(config: &Config, dir: &Path) -> ExitCode {
    let counter = TokenCounter::new(config.encoding);
    let mut table: BTreeMap<Family, FamilyStats> = BTreeMap::new();
    let mut losses = Losses::default();
    let mut files = Vec::new();
    let mut failed = false;
    files_under(dir, &mut files, &mut failed);
    for file in &files {
        let Some(text) = read_text(file) else { continue };
        let trajectories = match import(&file.display().to_string(), &text) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("workbench: skipped {e}");
                continue;
            }
        };
        for trajectory in trajectories {
            let calls = tool_calls_by_id(&trajectory.messages);
            for message in &trajectory.messages {
                for result in message.tool_results() {
                    let input =
                        ToolOutput::of(result, calls.get(result.call_id.as_str()).copied(), message.id.as_str());
                    let compressed = compress_tool_output(&input, &config.compress, &counter);
                    check_losses(&input, &compressed.text, &mut losses);
                    let row = table.entry(compressed.family).or_default();
                    row.outputs += 1;
                    row.tokens_in += compressed.tokens_in;
                    row.tokens_out += compressed.tokens_out;
                }
            }
        }
    }
    print_table(&table, &losses);
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}

fn read_text(file: &PathBuf) -> Option<String> {
    match std::fs::read(file).map(String::from_utf8) {
        Ok(Ok(text)) => Some(text),
        Ok(Err(_)) => {
            eprintln!("workbench: skipped {}: not valid UTF-8", file.display());
            None
        }
        Err(e) => {
            eprintln!("workbench: skipped {}: {e}", file.display());
            None
        }
    }
}

/// Failing test names the raw log names, and an edited file's path the raw output names, must
/// still be in the history form.
fn check_losses(input: &ToolOutput<'_>, compressed: &str, losses: &mut Losses) {
    if input.is_error
        && let Some(message) = last_error_message(input.output)
    {
        losses.error_messages += usize::from(!compressed.contains(message));
    }
    if let Some(facts) = logs::recognise(input.output) {
        losses.failing_names += facts.failing.iter().filter(|name| !compressed.contains(name.as_str())).count();
    }
    let args: serde_json::Value = serde_json::from_str(input.arguments).unwrap_or_default();
    let path = ["file_path", "filePath", "path"].iter().find_map(|k| args.get(*k).and_then(|v| v.as_str()));
    let family = context_workbench::compress::family_of(input.tool, &args, &Default::default());
    if let Some(path) = path.filter(|p| matches!(family, Family::Edit | Family::Write) && input.output.contains(*p)) {
        losses.edited_paths += usize::from(!compressed.contains(path));
    }
}

/// A failed output's error message: its last Python exception line (`ValueError: …`) or
/// compiler `error:` line (the first 100 characters, as long lines are cut in the middle).
fn last_error_message(output: &str) -> Option<&str> {
    let line = output.lines().rev().map(str::trim).find(|l| is_error_message(l))?;
    Some(line.char_indices().nth(100).map_or(line, |(i, _)| &line[..i]))
}

fn print_table(table: &BTreeMap<Family, FamilyStats>, losses: &Losses) {
    println!("{:<11} {:>8} {:>11} {:>11} {:>7}", "family", "outputs", "tokens in", "tokens out", "ratio");
    let mut total = FamilyStats::default();
    for (family, row) in table {
        println!(
            "{:<11} {:>8} {:>11} {:>11} {:>7}",
            family.name(),
            row.outputs,
            row.tokens_in,
            row.tokens_out,
            ratio(row)
        );
        total.outputs += row.outputs;
        total.tokens_in += row.tokens_in;
        total.tokens_out += row.tokens_out;
    }
    println!(
        "{:<11} {:>8} {:>11} {:>11} {:>7}",
        "all",
        total.outputs,
        total.tokens_in,
        total.tokens_out,
        ratio(&total)
    );
    println!(
        "lost: {} failing test names, {} error messages, {} edited file paths",
        losses.failing_names, losses.error_messages, losses.edited_paths
    );
}

fn ratio(row: &FamilyStats) -> String {
    if row.tokens_out == 0 { "-".to_owned() } else { format!("{:.1}x", row.tokens_in as f64 / row.tokens_out as f64) }
}
