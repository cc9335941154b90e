//! R5.6's evidence checks on the real trajectories of `data/traces`: every line a real
//! Claude Code or vorflux read showed is accepted as an anchor at its own line numbers, under
//! its absolute and a relative path, and rejected 500 lines away.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::path::Path;

use common::traces::files_under;
use context_workbench::compress::{CompressConfig, Family, family_of};
use context_workbench::import::import;
use context_workbench::model::{ToolStatus, tool_calls_by_id};
use context_workbench::workbench::{Anchor, Observations};
use serde_json::Value;

/// `   421→text` → (421, text), parsed here independently of the library.
fn numbered(line: &str) -> Option<(u32, &str)> {
    let (number, text) = line.split_once('→')?;
    Some((number.trim_start().parse().ok()?, text))
}

/// The first 3 consecutive numbered lines of `output` with some substance (not only braces and
/// blanks, which a file repeats), as (first line, snippet).
fn three_lines(output: &str) -> Option<(u32, String)> {
    let lines: Vec<(u32, &str)> = output.lines().filter_map(numbered).collect();
    lines.windows(3).find_map(|w| {
        let consecutive = w[1].0 == w[0].0 + 1 && w[2].0 == w[1].0 + 1;
        let substance: usize = w.iter().map(|(_, t)| t.chars().filter(|c| c.is_alphanumeric()).count()).sum();
        (consecutive && substance >= 12).then(|| (w[0].0, w.iter().map(|(_, t)| *t).collect::<Vec<_>>().join("\n")))
    })
}

#[test]
fn real_reads_prove_their_own_lines_and_not_others() {
    let config = CompressConfig::default();
    let (mut checked, mut files) = (0, 0);
    for dir in ["claude-code", "vorflux"] {
        for file in files_under(&Path::new("data/traces").join(dir)) {
            let Ok(text) = std::fs::read_to_string(&file) else { continue };
            let Ok(trajectories) = import(&file.to_string_lossy(), &text) else { continue };
            files += 1;
            for trajectory in trajectories {
                let observations = Observations::from_messages(&trajectory.messages, &config);
                let calls = tool_calls_by_id(&trajectory.messages);
                for result in trajectory.messages.iter().flat_map(|m| m.tool_results()) {
                    let Some(call) = calls.get(result.call_id.as_str()) else { continue };
                    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
                    if family_of(&call.name, &args, &config) != Family::Read || result.status != ToolStatus::Ok {
                        continue;
                    }
                    let path = ["file_path", "filePath", "path"].iter().find_map(|k| args.get(*k)?.as_str());
                    let (Some(path), Some((first, snippet))) = (path, three_lines(&result.output)) else { continue };
                    let at = |path: &str, shift: u32| Anchor {
                        path: path.to_owned(),
                        start_line: first + shift,
                        end_line: first + shift + 2,
                        snippet: snippet.clone(),
                    };
                    let name = format!("{} {path}:L{first}", file.display());
                    assert_eq!(observations.check_anchor(&at(path, 0)), Ok(()), "{name}\n{snippet}");
                    let parts: Vec<&str> = path.rsplitn(3, '/').collect();
                    if parts.len() == 3 {
                        let relative = format!("{}/{}", parts[1], parts[0]);
                        assert_eq!(observations.check_anchor(&at(&relative, 0)), Ok(()), "{name} as {relative}");
                    }
                    let shifted = observations.check_anchor(&at(path, 500));
                    let reason = shifted.expect_err(&format!("{name} accepted 500 lines away\n{snippet}"));
                    assert!(reason.starts_with("snippet found at L"), "{name}: {reason}");
                    checked += 1;
                }
            }
        }
    }
    assert!(files >= 30, "trajectories read: {files}");
    assert!(checked >= 500, "reads checked: {checked}");
}

/// Every tool result of every trajectory (all formats): `cmd#N exit=K` resolves with its own
/// exit code and not with another, and indexing never panics.
#[test]
fn real_command_results_resolve_with_their_own_exit_codes() {
    let config = CompressConfig::default();
    let mut checked = 0;
    for file in files_under(Path::new("data/traces")) {
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        let Ok(trajectories) = import(&file.to_string_lossy(), &text) else { continue };
        for trajectory in trajectories {
            let observations = Observations::from_messages(&trajectory.messages, &config);
            let calls = tool_calls_by_id(&trajectory.messages);
            for (n, message) in trajectory.messages.iter().enumerate() {
                let results: Vec<_> = message.tool_results().collect();
                let [result] = results.as_slice() else { continue };
                let Some(call) = calls.get(result.call_id.as_str()) else { continue };
                let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
                if family_of(&call.name, &args, &config) != Family::Bash {
                    continue;
                }
                let code = result.exit_code.unwrap_or(if result.status == ToolStatus::Ok { 0 } else { 1 });
                let name = format!("{} #{n}", file.display());
                assert_eq!(observations.check_pointer(&format!("cmd#{n} exit={code}")), Ok(()), "{name}");
                let other = if code == 0 { 1 } else { 0 };
                assert!(observations.check_pointer(&format!("cmd#{n} exit={other}")).is_err(), "{name}");
                checked += 1;
            }
            assert!(observations.check_pointer(&format!("msg#{}", trajectory.messages.len())).is_err());
        }
    }
    assert!(checked >= 3_000, "commands checked: {checked}");
}
