//! `@file` mentions (R7.1) and file freshness (R7.2): only paths inside the workspace that the
//! host finds are mentions; the reminder rides on the user message and never holds content.
#![cfg(not(target_arch = "wasm32"))]

use context_workbench::history::mentions::{
    Freshness, append_mention_reminder, mention_candidates, mention_reminder, resolve_mentions,
};
use context_workbench::{Host, HostError, HostErrorKind};
use context_workbench_testing::{TestHost, block_on};

const SEED_TEMPLATE: &str = "<system-reminder>
The user mentioned @src/utils/auth.ts.
You MUST read this file with the Read tool before answering.
</system-reminder>";

fn strings(paths: &[&str]) -> Vec<String> {
    paths.iter().map(|p| (*p).to_owned()).collect()
}

#[test]
fn candidates_are_in_order_and_de_duplicated() {
    assert_eq!(
        mention_candidates("please look at @src/a.rs and @src/a.rs again and @docs/guide.md"),
        ["src/a.rs", "docs/guide.md"]
    );
}

#[test]
fn an_address_is_not_a_mention() {
    assert!(mention_candidates("mail me at bob@example.com").is_empty());
    assert!(mention_candidates("user2@host.org or first.last@x.io").is_empty());
}

#[test]
fn prose_matches_the_regex_but_not_the_host() {
    assert_eq!(mention_candidates("@property def x"), ["property"]);
    let host = TestHost::default().with_file("src/a.rs", "fn main() {}");
    assert!(block_on(resolve_mentions(&host, "@property def x")).is_empty());
    assert_eq!(block_on(resolve_mentions(&host, "@property on @src/a.rs for @user")), ["src/a.rs"]);
}

#[test]
fn paths_escaping_the_workspace_are_refused() {
    for text in ["@../../etc/passwd", "@/etc/passwd", "@~/.ssh/id_rsa", "@src/../../x", "@src/..", "@a/../b"] {
        assert!(mention_candidates(text).is_empty(), "{text}: {:?}", mention_candidates(text));
    }
    let host = TestHost::default().with_file("etc/passwd", "root").with_file("x", "x");
    assert!(block_on(resolve_mentions(&host, "@../../etc/passwd @/etc/passwd @src/../../x")).is_empty());
}

#[test]
fn punctuation_around_a_path_is_not_part_of_it() {
    assert_eq!(mention_candidates("(@src/a.rs)"), ["src/a.rs"]);
    assert_eq!(mention_candidates("see @src/a.rs."), ["src/a.rs"]);
    assert_eq!(mention_candidates("see @src/a.rs, then @b.md... and @c.toml:3"), ["src/a.rs", "b.md", "c.toml"]);
    assert_eq!(mention_candidates("`@./src/a.rs` or @src/a.rs?"), ["src/a.rs"]);
}

#[test]
fn one_mention_gives_the_seed_template_byte_for_byte() {
    assert_eq!(mention_reminder(&strings(&["src/utils/auth.ts"]), Some("Read")).as_deref(), Some(SEED_TEMPLATE));
    assert_eq!(mention_reminder(&[], Some("Read")), None);
}

#[test]
fn seven_mentions_list_five_then_count_the_rest() {
    let paths = ["a.rs", "b.rs", "c.rs", "d.rs", "e.rs", "f.rs", "g.rs"];
    let host = paths.iter().fold(TestHost::default(), |host, p| host.with_file(p, "x"));
    let text = paths.map(|p| format!("@{p}")).join(" ");
    let mentioned = block_on(resolve_mentions(&host, &text));
    assert_eq!(mentioned, paths);
    assert_eq!(
        mention_reminder(&mentioned, Some("Read")).as_deref(),
        Some(
            "<system-reminder>
The user mentioned @a.rs, @b.rs, @c.rs, @d.rs and @e.rs (and 2 more…).
You MUST read these files with the Read tool before answering.
</system-reminder>"
        )
    );
}

#[test]
fn three_mentions_are_listed_in_order() {
    assert_eq!(
        mention_reminder(&strings(&["c.rs", "a.rs", "b"]), Some("Read")).as_deref(),
        Some(
            "<system-reminder>
The user mentioned @c.rs, @a.rs and @b.
You MUST read these files with the Read tool before answering.
</system-reminder>"
        )
    );
}

#[test]
fn the_reminder_is_appended_to_the_user_message_without_content() {
    let host = TestHost::default()
        .with_file("src/utils/auth.ts", "export const SECRET_CONTENT = 42;")
        .with_file("docs/guide.md", "# guide body");
    let text = "Why does login fail? See @src/utils/auth.ts and @missing.ts, mail bob@example.com";
    let out = block_on(append_mention_reminder(&host, text, Some("Read")));
    assert_eq!(out, format!("{text}\n\n{SEED_TEMPLATE}"));
    assert!(!out.contains("SECRET_CONTENT"));

    let dirs = block_on(append_mention_reminder(&host, "look in @docs and @docs/guide.md\n", Some("Read")));
    assert_eq!(
        dirs,
        "look in @docs and @docs/guide.md\n\n<system-reminder>
The user mentioned @docs and @docs/guide.md.
You MUST read these files with the Read tool before answering.
</system-reminder>"
    );
    assert!(!dirs.contains("guide body"));
}

#[test]
fn without_mentions_the_message_is_unchanged() {
    let host = TestHost::default().with_file("src/a.rs", "x");
    for text in ["", "plain text\n", "@property def x", "bob@example.com", "@../src/a.rs", "@", "@@@ ..."] {
        assert_eq!(block_on(append_mention_reminder(&host, text, Some("Read"))), text);
    }
}

#[test]
fn odd_input_never_panics() {
    let host = TestHost::default().with_file("é", "x");
    let long = "@a".repeat(10_000);
    for text in ["é@é", "\u{0}@\u{0}", "@\u{10FFFF}", "日本@x.rs", long.as_str(), "@.\u{301}", "@a\r\n@b"] {
        let _ = mention_candidates(text);
        let _ = block_on(append_mention_reminder(&host, text, Some("Read")));
    }
    assert_eq!(mention_candidates(&long), ["a"]);
}

#[test]
fn freshness_notes_a_changed_mtime_once() {
    let mut fresh = Freshness::default();
    assert_eq!(fresh.observe_read("src/a.rs", 100), None);
    assert_eq!(fresh.observe_read("src/a.rs", 100), None);
    assert_eq!(fresh.observe_read("src/b.rs", 200), None);
    assert_eq!(fresh.observe_read("src/a.rs", 150).as_deref(), Some("Note: src/a.rs was modified externally."));
    assert_eq!(fresh.observe_read("src/a.rs", 150), None);
    assert_eq!(fresh.observe_read("src/b.rs", 200), None);
}

#[test]
fn freshness_follows_the_host_mtime() {
    let host = TestHost::default().with_file("notes.md", "v1");
    let mut fresh = Freshness::default();
    let read = |host: &TestHost| block_on(host.read_file("notes.md")).map(|f| f.mtime_ms);
    let first = read(&host).ok();
    assert_eq!(first.and_then(|m| fresh.observe_read("notes.md", m)), None);
    host.advance_clock(1_000);
    block_on(host.write_file("notes.md", "v2")).ok();
    let second = read(&host).ok();
    assert_ne!(first, second);
    assert_eq!(
        second.and_then(|m| fresh.observe_read("notes.md", m)).as_deref(),
        Some("Note: notes.md was modified externally.")
    );
}

/// A host whose `stat` fails for paths under `broken/` and otherwise is a [`TestHost`].
struct FlakyStat(TestHost);

impl Host for FlakyStat {
    async fn complete(
        &self,
        request: context_workbench::host::CompletionRequest,
    ) -> Result<context_workbench::host::Completion, HostError> {
        self.0.complete(request).await
    }
    async fn read_file(&self, path: &str) -> Result<context_workbench::host::FileContent, HostError> {
        self.0.read_file(path).await
    }
    async fn stat(&self, path: &str) -> Result<Option<context_workbench::host::FileStat>, HostError> {
        if path.starts_with("broken/") {
            return Err(HostError::new(HostErrorKind::Io, "disk on fire"));
        }
        self.0.stat(path).await
    }
    async fn write_file(&self, path: &str, data: &str) -> Result<(), HostError> {
        self.0.write_file(path, data).await
    }
    async fn append_file(&self, path: &str, data: &str) -> Result<(), HostError> {
        self.0.append_file(path, data).await
    }
    async fn rename(&self, from: &str, to: &str) -> Result<(), HostError> {
        self.0.rename(from, to).await
    }
    async fn remove(&self, path: &str) -> Result<(), HostError> {
        self.0.remove(path).await
    }
    async fn list_dir(&self, path: &str) -> Result<Vec<context_workbench::host::DirEntry>, HostError> {
        self.0.list_dir(path).await
    }
    fn now_ms(&self) -> u64 {
        self.0.now_ms()
    }
}

#[test]
fn a_host_error_drops_only_that_candidate() {
    let host = FlakyStat(TestHost::default().with_file("broken/a.rs", "x").with_file("ok.rs", "y"));
    assert_eq!(block_on(resolve_mentions(&host, "@broken/a.rs then @ok.rs")), ["ok.rs"]);
    assert_eq!(
        block_on(append_mention_reminder(&host, "@broken/a.rs", None)),
        "@broken/a.rs",
        "an error is not a mention"
    );
}
