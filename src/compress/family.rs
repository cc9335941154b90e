//! Tool families and the registry that maps recorded tool names onto them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::CompressConfig;

/// The families of R3.2, each with its own history rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Ls,
    Glob,
    Grep,
    Read,
    Edit,
    Write,
    Bash,
    TodoWrite,
    /// Any other tool: truncate and summarise.
    Default,
}

impl Family {
    pub const ALL: [Family; 9] = [
        Family::Ls,
        Family::Glob,
        Family::Grep,
        Family::Read,
        Family::Edit,
        Family::Write,
        Family::Bash,
        Family::TodoWrite,
        Family::Default,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Family::Ls => "ls",
            Family::Glob => "glob",
            Family::Grep => "grep",
            Family::Read => "read",
            Family::Edit => "edit",
            Family::Write => "write",
            Family::Bash => "bash",
            Family::TodoWrite => "todo_write",
            Family::Default => "default",
        }
    }
}

/// Built-in names, lowercase, from the agents whose trajectories the project reads:
/// vorflux, Claude Code, OpenHands, SWE-agent, Codex and OpenCode.
const BUILT_IN: &[(&str, Family)] = &[
    ("ls", Family::Ls),
    ("list_dir", Family::Ls),
    ("list_directory", Family::Ls),
    ("list_files", Family::Ls),
    ("glob", Family::Glob),
    ("search_files", Family::Glob),
    ("find_file", Family::Glob),
    ("file_search", Family::Glob),
    ("grep", Family::Grep),
    ("grep_search", Family::Grep),
    ("search_dir", Family::Grep),
    ("search_file", Family::Grep),
    ("rg", Family::Grep),
    ("read", Family::Read),
    ("read_file", Family::Read),
    ("read_text_file", Family::Read),
    ("view", Family::Read),
    ("open", Family::Read),
    ("goto", Family::Read),
    ("scroll_down", Family::Read),
    ("scroll_up", Family::Read),
    ("edit", Family::Edit),
    ("multiedit", Family::Edit),
    ("edit_file", Family::Edit),
    ("str_replace", Family::Edit),
    ("str_replace_based_edit_tool", Family::Edit),
    ("apply_patch", Family::Edit),
    ("insert", Family::Edit),
    ("write", Family::Write),
    ("write_file", Family::Write),
    ("create", Family::Write),
    ("create_file", Family::Write),
    ("bash", Family::Bash),
    ("bash_execute", Family::Bash),
    ("execute_bash", Family::Bash),
    ("run", Family::Bash),
    ("shell", Family::Bash),
    ("run_command", Family::Bash),
    ("run_ipython", Family::Bash),
    ("execute_ipython_cell", Family::Bash),
    ("todowrite", Family::TodoWrite),
    ("todo_write", Family::TodoWrite),
    ("update_plan", Family::TodoWrite),
    ("write_todos", Family::TodoWrite),
    ("todo__write", Family::TodoWrite),
    ("task", Family::Default),
];

/// The family of a tool call. Host overrides win; editor tools with a `command` argument
/// (OpenHands' `str_replace_editor`) are dispatched on it: `view` reads, `create` writes,
/// anything else edits.
pub fn family_of(tool: &str, arguments: &Value, config: &CompressConfig) -> Family {
    let name = tool.trim().to_ascii_lowercase();
    let overridden = config.tool_families.iter().find(|(k, _)| k.eq_ignore_ascii_case(&name));
    if let Some((_, family)) = overridden {
        return *family;
    }
    if name == "str_replace_editor" || name == "str_replace_based_edit_tool" {
        return match arguments.get("command").and_then(Value::as_str) {
            Some("view") => Family::Read,
            Some("create") => Family::Write,
            _ => Family::Edit,
        };
    }
    BUILT_IN.iter().find(|(n, _)| *n == name).map_or(Family::Default, |(_, f)| *f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn real_tool_names_map_onto_families() {
        let c = CompressConfig::default();
        let none = Value::Null;
        let cases = [
            ("bash_execute", Family::Bash),
            ("read_text_file", Family::Read),
            ("grep_search", Family::Grep),
            ("search_files", Family::Glob),
            ("edit_file", Family::Edit),
            ("write_file", Family::Write),
            ("Bash", Family::Bash),
            ("Read", Family::Read),
            ("Glob", Family::Glob),
            ("Grep", Family::Grep),
            ("MultiEdit", Family::Edit),
            ("TodoWrite", Family::TodoWrite),
            ("Task", Family::Default),
            ("execute_bash", Family::Bash),
            ("search_dir", Family::Grep),
            ("find_file", Family::Glob),
            ("scroll_down", Family::Read),
            ("mystery_tool", Family::Default),
        ];
        for (name, family) in cases {
            assert_eq!(family_of(name, &none, &c), family, "{name}");
        }
        assert_eq!(family_of("str_replace_editor", &json!({"command": "view"}), &c), Family::Read);
        assert_eq!(family_of("str_replace_editor", &json!({"command": "create"}), &c), Family::Write);
        assert_eq!(family_of("str_replace_editor", &json!({"command": "str_replace"}), &c), Family::Edit);
    }

    #[test]
    fn hosts_can_map_their_own_names() {
        let mut c = CompressConfig::default();
        c.tool_families.insert("RunTests".into(), Family::Bash);
        c.tool_families.insert("bash".into(), Family::Default);
        assert_eq!(family_of("runtests", &Value::Null, &c), Family::Bash);
        assert_eq!(family_of("Bash", &Value::Null, &c), Family::Default);
    }
}
