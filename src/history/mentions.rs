//! `@path` mentions (R7.1) and file freshness (R7.2), seed 001 A7/A8/C3/C4.
//!
//! A mention only asks the model to Read the file first: a `<system-reminder>` is appended to
//! the user message and the file's content is never injected. Only paths the host's `stat`
//! finds count, so `@property` or `@user` in prose stay prose.
//!
//! Rules of [`mention_candidates`], in the order they apply to each regex match:
//! 1. The seed's regex `@([a-zA-Z0-9/._-]+(?:\.[a-zA-Z0-9]+)?)` finds the match. A `,`, `:`,
//!    `)`, `~`, space and so on are outside its class, so they end a path (`(@a.rs)`,
//!    `@a.rs, @b.rs`, `@a.rs:12`) and `@~/x` never matches at all.
//! 2. The character before `@` must not be an ASCII letter or digit (`bob@example.com` is an
//!    address). ASCII, like the regex's own class: a non-ASCII letter before `@` does not block
//!    a mention, so Chinese written without spaces (`请看@src/a.rs`) still mentions, and `stat`
//!    filters anything that is not a file.
//! 3. Sentence punctuation: the dots ending the last component are dropped when something other
//!    than dots remains of it (`@src/a.rs.` → `src/a.rs`, `@v1.2...` → `v1.2`). A component that
//!    is only dots (`@.`, `@src/..`) is left to rule 4. So a file whose name really ends in `.`
//!    cannot be mentioned.
//! 4. Workspace-relative only: a leading `/` (absolute) or any `..` component refuses the path.
//!    Then `.` components and empty ones (`./x`, `a//b`, a trailing `/`) are removed:
//!    `./src/./a.rs` → `src/a.rs`, `@src/` → `src`. Nothing left (`@./`) → not a mention.
//! 5. In order of first appearance, de-duplicated after normalisation.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;

use crate::host::Host;
use crate::prompt::template::{render, sections};

/// How many mentions the reminder lists by name; the rest are counted (seed 001 A7).
pub const MAX_LISTED: usize = 5;

/// Every prompt text of this module, cut into sections (see the comment at the top of the file).
const PROMPTS: &str = include_str!("../../prompts/mention_reminder.md");

static SECTIONS: LazyLock<BTreeMap<&'static str, String>> = LazyLock::new(|| sections(PROMPTS));

/// `None` only if the pattern failed to compile, which a unit test rules out; never a panic.
static MENTION: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"@([a-zA-Z0-9/._-]+(?:\.[a-zA-Z0-9]+)?)").ok());

/// The `@path` mentions in `text` that could be files: rules 1–5 of the module documentation.
/// Pure; [`resolve_mentions`] keeps those the host finds.
pub fn mention_candidates(text: &str) -> Vec<String> {
    let Some(regex) = MENTION.as_ref() else { return Vec::new() };
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for captures in regex.captures_iter(text) {
        let (Some(whole), Some(path)) = (captures.get(0), captures.get(1)) else { continue };
        let before = text[..whole.start()].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric()) {
            continue;
        }
        let Some(path) = normalise(strip_sentence_dots(path.as_str())) else { continue };
        if seen.insert(path.clone()) {
            out.push(path);
        }
    }
    out
}

/// The candidates of `text` that the host's `stat` finds, files or directories, in order. A host
/// error on one candidate only means that candidate is not a mention.
pub async fn resolve_mentions<H: Host>(host: &H, text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for candidate in mention_candidates(text) {
        if let Ok(Some(_)) = host.stat(&candidate).await {
            found.push(candidate);
        }
    }
    found
}

/// The `<system-reminder>` asking the model to read the mentioned files with `read_tool` (the
/// host's read tool; no tool is named when it is not known), `None` when there are none. Lists
/// the first [`MAX_LISTED`] in order, then `(and N more…)`.
pub fn mention_reminder(mentioned: &[String], read_tool: Option<&str>) -> Option<String> {
    let listed = mentioned.get(..MAX_LISTED).unwrap_or(mentioned);
    let mut items = listed.iter().map(|path| render(section("mention"), &[("path", path)]));
    let mut list = items.next()?;
    let mut pending = items.next();
    while let Some(item) = pending {
        pending = items.next();
        let join = if pending.is_some() { "list_next" } else { "list_last" };
        list = render(section(join), &[("list", &list), ("item", &item)]);
    }
    if mentioned.len() > listed.len() {
        let count = (mentioned.len() - listed.len()).to_string();
        list = render(section("list_more"), &[("list", &list), ("count", &count)]);
    }
    let instruction = match (mentioned.len(), read_tool) {
        (1, Some(tool)) => render(section("read_one"), &[("tool", tool)]),
        (_, Some(tool)) => render(section("read_several"), &[("tool", tool)]),
        (1, None) => section("read_one_any").to_owned(),
        (_, None) => section("read_several_any").to_owned(),
    };
    Some(render(section("reminder"), &[("mentions", &list), ("instruction", &instruction)]))
}

/// The user message as the model should see it (R7.1): with the mention reminder appended
/// after exactly one blank line (the message's own trailing line breaks are dropped first), in
/// the same message; unchanged when nothing mentioned exists.
pub async fn append_mention_reminder<H: Host>(host: &H, user_text: &str, read_tool: Option<&str>) -> String {
    let mentioned = resolve_mentions(host, user_text).await;
    match mention_reminder(&mentioned, read_tool) {
        Some(reminder) => {
            let mut out = user_text.trim_end_matches(['\n', '\r']).to_owned();
            out.push_str("\n\n");
            out.push_str(&reminder);
            out
        }
        None => user_text.to_owned(),
    }
}

/// The last mtime each file was read at (R7.2, seed 001 C4): in memory, never persisted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Freshness {
    last_mtime_ms: BTreeMap<String, u64>,
}

impl Freshness {
    /// Record a read of `path` at `mtime_ms`. A later read of the same file with another mtime
    /// returns `Note: <path> was modified externally.` (seed 001 A8's exact wording); the first
    /// read, or an unchanged mtime, returns `None`. `./a.rs` and `a.rs` are the same file.
    pub fn observe_read(&mut self, path: &str, mtime_ms: u64) -> Option<String> {
        let key = normalise(path).unwrap_or_else(|| path.to_owned());
        let previous = self.last_mtime_ms.insert(key, mtime_ms)?;
        (previous != mtime_ms).then(|| render(section("modified_externally"), &[("path", path)]))
    }
}

/// Rule 3: drop the dots ending the last component unless it is only dots.
fn strip_sentence_dots(path: &str) -> &str {
    let stripped = path.trim_end_matches('.');
    if stripped.is_empty() || stripped.ends_with('/') { path } else { stripped }
}

/// Rule 4: a workspace-relative path without `.` or empty components, `None` when it is
/// absolute, has a `..` component or is empty.
fn normalise(path: &str) -> Option<String> {
    if path.starts_with('/') {
        return None;
    }
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            ".." => return None,
            "" | "." => {}
            _ => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// One section of [`PROMPTS`]; empty if missing, which a unit test rules out.
fn section(name: &str) -> &'static str {
    SECTIONS.get(name).map_or("", String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_regex_compiles_and_every_section_is_present() {
        assert!(MENTION.is_some());
        for name in [
            "reminder",
            "read_one",
            "read_several",
            "read_one_any",
            "read_several_any",
            "mention",
            "list_next",
            "list_last",
            "list_more",
            "modified_externally",
        ] {
            assert!(!section(name).is_empty(), "section `{name}` missing from prompts/mention_reminder.md");
        }
        assert_eq!(SECTIONS.len(), 10, "{:?}", SECTIONS.keys().collect::<Vec<_>>());
        assert!(!section("reminder").contains("section:"));
        assert!(section("reminder").ends_with("</system-reminder>"));
    }

    #[test]
    fn sentence_dots_are_stripped_only_when_a_name_remains() {
        assert_eq!(strip_sentence_dots("src/a.rs."), "src/a.rs");
        assert_eq!(strip_sentence_dots("v1.2..."), "v1.2");
        assert_eq!(strip_sentence_dots("."), ".");
        assert_eq!(strip_sentence_dots("src/.."), "src/..");
        assert_eq!(strip_sentence_dots(".env"), ".env");
    }

    #[test]
    fn normalise_keeps_paths_inside_the_workspace() {
        assert_eq!(normalise("./src/./a.rs").as_deref(), Some("src/a.rs"));
        assert_eq!(normalise("src//a.rs/").as_deref(), Some("src/a.rs"));
        assert_eq!(normalise("/etc/passwd"), None);
        assert_eq!(normalise("src/../a.rs"), None);
        assert_eq!(normalise("./"), None);
        assert_eq!(normalise(""), None);
    }

    #[test]
    fn candidates_follow_the_rules() {
        assert_eq!(mention_candidates("see @src/a.rs, @b.rs: and @c.md."), ["src/a.rs", "b.rs", "c.md"]);
        assert_eq!(mention_candidates("@./src/a.rs and @src/a.rs"), ["src/a.rs"]);
        assert_eq!(mention_candidates("请看@src/a.rs"), ["src/a.rs"]);
        assert_eq!(mention_candidates("a@b.rs 1@c.rs _@d.rs"), ["d.rs"]);
        assert_eq!(mention_candidates("@src/ @. @./ @src/.. @@x.rs"), ["src", "x.rs"]);
        assert!(mention_candidates("").is_empty());
        assert!(mention_candidates("@").is_empty());
    }

    #[test]
    fn two_mentions_are_joined_with_and() {
        let two = mention_reminder(&["a.rs".into(), "b.rs".into()], Some("Read"));
        assert_eq!(
            two.as_deref(),
            Some(
                "<system-reminder>\nThe user mentioned @a.rs and @b.rs.\n\
                 You MUST read these files with the Read tool before answering.\n</system-reminder>"
            )
        );
        assert_eq!(mention_reminder(&[], Some("Read")), None);
        let untooled = mention_reminder(&["a.rs".into(), "b.rs".into()], None);
        assert!(untooled.unwrap().contains("\nYou MUST read these files before answering.\n"));
    }

    #[test]
    fn freshness_treats_dot_slash_as_the_same_file() {
        let mut fresh = Freshness::default();
        assert_eq!(fresh.observe_read("./a.rs", 1), None);
        assert_eq!(fresh.observe_read("a.rs", 2).as_deref(), Some("Note: a.rs was modified externally."));
    }
}
