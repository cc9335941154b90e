//! Real tool outputs read in place from `data/traces` through the importers.

use std::path::{Path, PathBuf};

use context_workbench::compress::ToolOutput;
use context_workbench::import::import;
use context_workbench::model::{ToolStatus, tool_calls_by_id};

/// One recorded tool call and its result.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub file: String,
    /// The name the tool ran under (the executor's, where a format records both).
    pub tool: String,
    pub args: String,
    pub output: String,
    pub stderr: Option<String>,
    pub exit_code: Option<i32>,
    pub is_error: bool,
}

impl Recorded {
    pub fn plain(tool: &str, args: &str, output: String) -> Self {
        Recorded {
            file: String::new(),
            tool: tool.into(),
            args: args.into(),
            output,
            stderr: None,
            exit_code: None,
            is_error: false,
        }
    }

    pub fn as_input<'a>(&'a self, tool: &'a str) -> ToolOutput<'a> {
        ToolOutput {
            tool,
            arguments: &self.args,
            output: &self.output,
            stderr: self.stderr.as_deref(),
            exit_code: self.exit_code,
            is_error: self.is_error,
            raw_id: "m000007",
            original: None,
            focus: &[],
        }
    }
}

/// Every file under `dir`, depth first, in sorted order.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir).expect("the shared traces beside the clone").map(|e| e.expect("entry").path()).collect();
    entries.sort();
    entries.into_iter().flat_map(|path| if path.is_dir() { files_under(&path) } else { vec![path] }).collect()
}

/// Every tool result of every trajectory under `data/traces/<dir>`, in file order.
pub fn recorded(dir: &str) -> Vec<Recorded> {
    let mut out = Vec::new();
    for file in files_under(&Path::new("data/traces").join(dir)) {
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        let Ok(trajectories) = import(&file.display().to_string(), &text) else { continue };
        for trajectory in trajectories {
            let calls = tool_calls_by_id(&trajectory.messages);
            for result in trajectory.messages.iter().flat_map(|m| m.tool_results()) {
                out.push(Recorded {
                    file: file.display().to_string(),
                    tool: result.name.clone(),
                    args: calls.get(result.call_id.as_str()).map_or("{}", |c| c.arguments.as_str()).to_owned(),
                    output: result.output.clone(),
                    stderr: result.stderr.clone(),
                    exit_code: result.exit_code,
                    is_error: result.status == ToolStatus::Error,
                });
            }
        }
    }
    out
}

pub fn vorflux() -> Vec<Recorded> {
    recorded("vorflux")
}

pub fn claude_code() -> Vec<Recorded> {
    recorded("claude-code")
}
