//! Workspace-relative paths: the one rule every host applies before it touches a file (the
//! native file system, the npm package's hosts, the VS Code extension). A host adds only its own
//! check that links do not lead outside.
//!
//! What a path may be: `/`-separated and relative to the workspace root (`""` and `.` are the
//! root). A backslash is a separator too (agents on Windows write them); `.` segments and empty
//! ones drop out; `..` climbs, but never above the root. Refused: absolute paths (`/x`, `C:`,
//! `\\server`), URLs (`file://…`), NUL bytes, and a `..` that would leave the workspace.

use crate::host::{HostError, HostErrorKind};

/// `path` in its normal form (`a/./b/../c/` → `a/c`, the root is `""`), or why it is refused
/// (`outside_workspace`).
pub fn normalize_workspace_path(path: &str) -> Result<String, HostError> {
    let refused = |why: &str| HostError::new(HostErrorKind::OutsideWorkspace, format!("path `{path}` {why}"));
    if path.contains('\0') {
        return Err(refused("contains a NUL byte"));
    }
    let slashed = path.replace('\\', "/");
    let drive = slashed.len() >= 2 && slashed.as_bytes()[0].is_ascii_alphabetic() && slashed.as_bytes()[1] == b':';
    if slashed.starts_with('/') || drive || is_url(&slashed) {
        return Err(refused("is absolute; give a path relative to the workspace"));
    }
    let mut kept: Vec<&str> = Vec::new();
    for segment in slashed.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if kept.pop().is_none() {
                    return Err(refused("leaves the workspace"));
                }
            }
            name => kept.push(name),
        }
    }
    Ok(kept.join("/"))
}

/// `scheme://…` with a scheme of letters, digits, `+`, `-`, `.` (RFC 3986).
fn is_url(path: &str) -> bool {
    let Some((scheme, _)) = path.split_once("://") else { return false };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(path: &str) -> String {
        match normalize_workspace_path(path) {
            Ok(normal) => format!("ok {normal:?}"),
            Err(e) => format!("{}: {}", e.kind.code(), e.message),
        }
    }

    #[test]
    fn normal_forms() {
        assert_eq!(check(""), r#"ok """#);
        assert_eq!(check("."), r#"ok """#);
        assert_eq!(check("src/./lib.rs"), r#"ok "src/lib.rs""#);
        assert_eq!(check("a/../b/"), r#"ok "b""#);
        assert_eq!(check("a//b"), r#"ok "a/b""#);
        assert_eq!(check(r"src\engine\mod.rs"), r#"ok "src/engine/mod.rs""#);
        assert_eq!(check("weird name/with: colon"), r#"ok "weird name/with: colon""#);
    }

    #[test]
    fn escapes_and_absolute_paths_are_refused() {
        assert_eq!(check(".."), "host_outside_workspace: path `..` leaves the workspace");
        assert_eq!(check("a/../../b"), "host_outside_workspace: path `a/../../b` leaves the workspace");
        assert_eq!(check(r"a\..\..\b"), r"host_outside_workspace: path `a\..\..\b` leaves the workspace");
        for absolute in ["/etc/passwd", "C:/x", r"c:\x", r"\\server\share", "file:///etc/passwd", "https://h/x"] {
            assert!(check(absolute).ends_with("is absolute; give a path relative to the workspace"), "{absolute}");
        }
        assert_eq!(check("a\0b"), "host_outside_workspace: path `a\0b` contains a NUL byte");
    }
}
