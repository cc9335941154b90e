//! Team mode's sign-in (#49): who the members are (`team.json` at the store's root: each
//! member's name, the SHA-256 of their token, never the token, whether they are an admin, when
//! they were added and revoked), which member a request's token names, and where a request
//! carries its token (the `x-workbench-token` header, or a base URL's path prefix
//! `/t/<token>/`). Pure but for [`load`] and [`save`], which go through the host's files like
//! every trace file. The token's randomness is the shell's: the engine has no RNG.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::host::{Host, HostErrorKind};

/// The team file's name, at the store's root.
pub const TEAM_FILE: &str = "team.json";

/// The header an agent sends its token in (Claude Code: `ANTHROPIC_CUSTOM_HEADERS`).
pub const TOKEN_HEADER: &str = "x-workbench-token";

/// What every token starts with.
pub const TOKEN_PREFIX: &str = "wbt_";

/// The bytes of randomness in a token.
pub const TOKEN_BYTES: usize = 32;

/// The team file's format version.
const TEAM_VERSION: u32 = 1;

/// A token's path prefix in a base URL: `/t/<token>/…`.
const PATH_PREFIX: &str = "/t/";

/// One member of the team. A revoked member keeps their row (their sessions still name them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    pub name: String,
    /// The SHA-256 of the token, 64 lowercase hex digits.
    pub token_sha256: String,
    #[serde(default)]
    pub admin: bool,
    /// Milliseconds since the Unix epoch, from the host clock.
    pub created_at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<u64>,
}

impl Member {
    pub fn is_live(&self) -> bool {
        self.revoked_at.is_none()
    }
}

/// The members, in the order they were added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Team {
    pub version: u32,
    pub members: Vec<Member>,
}

impl Default for Team {
    fn default() -> Team {
        Team { version: TEAM_VERSION, members: Vec::new() }
    }
}

/// Why a request was not signed in; none of them says anything of the token presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignInError {
    Missing,
    Malformed,
    Unknown,
    Revoked,
}

impl SignInError {
    /// The words of the 401 (after `workbench proxy: `).
    pub fn message(self) -> String {
        let how = format!(
            "send the token `workbench team add NAME` printed in the `{TOKEN_HEADER}` header, or end the base URL with /t/<token>"
        );
        match self {
            SignInError::Missing => format!("team mode is on and the request carries no token: {how}"),
            SignInError::Malformed => {
                format!("the token is malformed (a token is `{TOKEN_PREFIX}` and 43 characters): {how}")
            }
            SignInError::Unknown => "the token is no team member's (`workbench team list` names them)".into(),
            SignInError::Revoked => {
                "the token was revoked (`workbench team add` makes a new member with a new token)".into()
            }
        }
    }

    /// A short reason for the log line.
    pub fn reason(self) -> &'static str {
        match self {
            SignInError::Missing => "no token",
            SignInError::Malformed => "a malformed token",
            SignInError::Unknown => "an unknown token",
            SignInError::Revoked => "a revoked token",
        }
    }
}

impl Team {
    /// A team file's text, checked: its version, each name, each hash, no name twice.
    pub fn parse(text: &str) -> Result<Team> {
        let team: Team = serde_json::from_str(text).map_err(|e| Error::InvalidInput(format!("{TEAM_FILE}: {e}")))?;
        if team.version > TEAM_VERSION {
            return Err(Error::UnsupportedVersion { found: team.version, supported: TEAM_VERSION });
        }
        for (i, member) in team.members.iter().enumerate() {
            check_name(&member.name).map_err(|e| Error::InvalidInput(format!("{TEAM_FILE}: {e}")))?;
            let hex = |c: char| c.is_ascii_digit() || ('a'..='f').contains(&c);
            if member.token_sha256.len() != 64 || !member.token_sha256.chars().all(hex) {
                return Err(Error::InvalidInput(format!(
                    "{TEAM_FILE}: member `{}`: token_sha256 is not 64 lowercase hex digits",
                    member.name
                )));
            }
            if team.members[..i].iter().any(|m| m.name == member.name) {
                return Err(Error::InvalidInput(format!("{TEAM_FILE}: member `{}` is listed twice", member.name)));
            }
        }
        Ok(team)
    }

    /// The file's text (pretty, a trailing newline).
    pub fn to_json(&self) -> String {
        let team = Team { version: TEAM_VERSION, members: self.members.clone() };
        serde_json::to_string_pretty(&team).unwrap_or_default() + "\n"
    }

    /// Team mode is on: the team has a member (revoked ones count: a team whose every member
    /// was revoked refuses everyone, it does not open up).
    pub fn is_on(&self) -> bool {
        !self.members.is_empty()
    }

    pub fn member(&self, name: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.name == name)
    }

    /// Add `name` with `token` (which the caller prints once; only its hash is kept).
    pub fn add(&mut self, name: &str, token: &str, admin: bool, now_ms: u64) -> Result<&Member> {
        check_name(name).map_err(Error::InvalidInput)?;
        if !is_token_shaped(token) {
            return Err(Error::InvalidInput("a token is `wbt_` and 43 base64url characters".into()));
        }
        if let Some(member) = self.member(name) {
            let state = if member.is_live() { "is a member" } else { "was revoked; a revoked name is kept" };
            return Err(Error::InvalidInput(format!("`{name}` {state}: choose another name")));
        }
        let member = Member {
            name: name.into(),
            token_sha256: token_sha256(token),
            admin,
            created_at: now_ms,
            revoked_at: None,
        };
        self.members.push(member);
        Ok(self.members.last().expect("just pushed"))
    }

    /// Revoke `name`'s token; the row stays.
    pub fn revoke(&mut self, name: &str, now_ms: u64) -> Result<()> {
        let Some(member) = self.members.iter_mut().find(|m| m.name == name) else {
            return Err(Error::InvalidInput(format!("`{name}` is no member (`workbench team list` names them)")));
        };
        if member.revoked_at.is_some() {
            return Err(Error::InvalidInput(format!("`{name}` was revoked already")));
        }
        member.revoked_at = Some(now_ms);
        Ok(())
    }

    /// The live member whose token `token` is.
    pub fn sign_in(&self, token: Option<&str>) -> std::result::Result<&Member, SignInError> {
        let token = token.map(str::trim).filter(|t| !t.is_empty()).ok_or(SignInError::Missing)?;
        if !is_token_shaped(token) {
            return Err(SignInError::Malformed);
        }
        let hash = token_sha256(token);
        let member = self.members.iter().find(|m| m.token_sha256 == hash).ok_or(SignInError::Unknown)?;
        if member.is_live() { Ok(member) } else { Err(SignInError::Revoked) }
    }
}

/// A member's name: 1 to 32 of lowercase letters, digits, `-` and `_`, starting with a letter
/// or digit (it becomes part of a trace's name).
pub fn check_name(name: &str) -> std::result::Result<(), String> {
    let plain = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_');
    let first = name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if first && name.len() <= 32 && name.chars().all(plain) {
        return Ok(());
    }
    Err(format!(
        "the name `{}` is not 1 to 32 lowercase letters, digits, `-` or `_` starting with a letter or digit",
        name.escape_debug()
    ))
}

/// A new token from `random`, bytes the shell took from the OS: `wbt_` and their base64url.
pub fn token_from(random: &[u8; TOKEN_BYTES]) -> String {
    format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(random))
}

/// Whether `token` has a token's shape (what [`token_from`] makes).
pub fn is_token_shaped(token: &str) -> bool {
    token.strip_prefix(TOKEN_PREFIX).is_some_and(|rest| {
        rest.len() == 43 && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    })
}

/// The SHA-256 of `token`, lowercase hex.
pub fn token_sha256(token: &str) -> String {
    Sha256::digest(token.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The token a request carries and its target without a token's path prefix: the prefix
/// `/t/<token>` is always taken off (`/t/x/v1/messages` is `/v1/messages`); the header's token
/// comes first, else the prefix's.
pub fn presented(target: &str, header: Option<&str>) -> (Option<String>, String) {
    let (from_path, target) = match target.strip_prefix(PATH_PREFIX) {
        Some(rest) => {
            let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            let rest_target = &rest[end..];
            let target = if rest_target.starts_with('/') { rest_target.to_owned() } else { format!("/{rest_target}") };
            (Some(rest[..end].to_owned()), target)
        }
        None => (None, target.to_owned()),
    };
    (header.map(str::to_owned).or(from_path), target)
}

/// The team file under the store root `root` (`.` for a host rooted at the store), `None`
/// when there is none.
pub async fn load<H: Host>(host: &H, root: &str) -> Result<Option<Team>> {
    match host.read_file(&under(root, TEAM_FILE)).await {
        Ok(file) => Team::parse(&file.text).map(Some),
        Err(e) if e.kind == HostErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Save `team` under the store root `root`: written under a temporary name, then renamed.
pub async fn save<H: Host>(host: &H, root: &str, team: &Team) -> Result<()> {
    let (path, temporary) = (under(root, TEAM_FILE), under(root, &format!(".{TEAM_FILE}.tmp")));
    host.write_file(&temporary, &team.to_json()).await?;
    host.rename(&temporary, &path).await?;
    Ok(())
}

/// The team file's path under `root`.
pub fn team_path(root: &str) -> String {
    under(root, TEAM_FILE)
}

fn under(root: &str, name: &str) -> String {
    match root.trim_end_matches('/') {
        "" | "." => name.to_owned(),
        root => format!("{root}/{name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: [u8; 32] = [7; 32];
    const B: [u8; 32] = [9; 32];

    fn team() -> (Team, String, String) {
        let (alice, bob) = (token_from(&A), token_from(&B));
        let mut team = Team::default();
        team.add("alice", &alice, true, 1_000).unwrap();
        team.add("bob", &bob, false, 2_000).unwrap();
        (team, alice, bob)
    }

    #[test]
    fn tokens_are_prefixed_base64url_and_only_their_hash_is_kept() {
        let token = token_from(&A);
        assert_eq!(token, "wbt_BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc");
        assert!(is_token_shaped(&token));
        assert_eq!(token_sha256("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        let (team, alice, _) = team();
        let json = team.to_json();
        assert!(!json.contains(&alice) && json.contains(&token_sha256(&alice)), "{json}");
        assert_eq!(Team::parse(&json).unwrap(), team);
    }

    #[test]
    fn a_token_names_its_live_member_and_nothing_else_passes() {
        let (mut team, alice, bob) = team();
        assert_eq!(team.sign_in(Some(&alice)).unwrap().name, "alice");
        assert_eq!(team.sign_in(Some(&format!(" {bob} "))).unwrap().name, "bob");
        assert_eq!(team.sign_in(None), Err(SignInError::Missing));
        assert_eq!(team.sign_in(Some(" ")), Err(SignInError::Missing));
        for malformed in ["sk-ant-api03-x", "wbt_short", &format!("{alice}x"), &alice.replace('B', "+")] {
            assert_eq!(team.sign_in(Some(malformed)), Err(SignInError::Malformed), "{malformed}");
        }
        assert_eq!(team.sign_in(Some(&token_from(&[1; 32]))), Err(SignInError::Unknown));
        team.revoke("bob", 3_000).unwrap();
        assert_eq!(team.sign_in(Some(&bob)), Err(SignInError::Revoked));
        assert_eq!(team.member("bob").unwrap().revoked_at, Some(3_000), "the row stays");
        assert!(team.revoke("bob", 4_000).unwrap_err().to_string().contains("revoked already"));
        assert!(team.revoke("carol", 4_000).unwrap_err().to_string().contains("no member"));
        for message in [SignInError::Missing, SignInError::Malformed].map(SignInError::message) {
            assert!(message.contains(TOKEN_HEADER) && message.contains("/t/<token>"), "{message}");
        }
    }

    #[test]
    fn names_are_plain_and_unique() {
        let (mut team, _, _) = team();
        let token = token_from(&[3; 32]);
        assert!(team.add("alice", &token, false, 5).unwrap_err().to_string().contains("is a member"));
        for bad in ["", "Alice", "a.b", "-a", "a/b", &"a".repeat(33), "a b", "ünï"] {
            assert!(team.add(bad, &token, false, 5).is_err(), "{bad:?}");
        }
        assert!(team.add("carol", "wbt_x", false, 5).is_err(), "a token of the wrong shape");
        let twice = r#"{"version":1,"members":[
            {"name":"a","token_sha256":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad","created_at":1},
            {"name":"a","token_sha256":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad","created_at":2}]}"#;
        assert!(Team::parse(twice).unwrap_err().to_string().contains("listed twice"));
        let short = r#"{"version":1,"members":[{"name":"a","token_sha256":"abc","created_at":1}]}"#;
        assert!(Team::parse(short).unwrap_err().to_string().contains("64 lowercase hex"));
        let newer = r#"{"version":2,"members":[]}"#;
        assert!(matches!(Team::parse(newer), Err(Error::UnsupportedVersion { found: 2, .. })));
        assert!(!Team::default().is_on());
    }

    #[test]
    fn the_path_prefix_is_taken_off_and_the_header_comes_first() {
        let p = |target: &str, header: Option<&str>| presented(target, header);
        assert_eq!(p("/t/wbt_x/v1/messages?beta=true", None), (Some("wbt_x".into()), "/v1/messages?beta=true".into()));
        assert_eq!(p("/t/wbt_x", None), (Some("wbt_x".into()), "/".into()));
        assert_eq!(p("/t/wbt_x?q=1", None), (Some("wbt_x".into()), "/?q=1".into()));
        assert_eq!(p("/t//v1/messages", None), (Some(String::new()), "/v1/messages".into()));
        assert_eq!(p("/v1/messages", Some("wbt_h")), (Some("wbt_h".into()), "/v1/messages".into()));
        assert_eq!(p("/t/wbt_p/v1/x", Some("wbt_h")), (Some("wbt_h".into()), "/v1/x".into()));
        assert_eq!(p("/tools/x", None), (None, "/tools/x".into()));
        assert_eq!(team_path("."), "team.json");
        assert_eq!(team_path(".trace"), ".trace/team.json");
    }
}
