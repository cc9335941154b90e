//! Secrets never reach the disk: before anything is persisted, common secret shapes are
//! replaced by `[REDACTED:kind]`. Only the persisted copy changes; the prompt in memory does not.

use regex::{Captures, Regex};
use serde_json::Value;

use crate::error::{Error, Result};

/// The built-in shapes: provider keys and tokens, credentials in headers and environment lines,
/// private key blocks. Each is `(kind, pattern)`; the kinds in [`KEEPS_NAME`] keep group 1 (the
/// header or variable name, at the start of the match) and replace the rest.
const BUILT_IN: &[(&str, &str)] = &[
    ("private_key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----"),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ("stripe_key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("gitlab_token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    ("aws_access_key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("slack_token", r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    ("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}"),
    ("groq_key", r"\bgsk_[A-Za-z0-9]{20,}"),
    ("xai_key", r"\bxai-[A-Za-z0-9]{20,}"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
    ("authorization", r"(?i)(\b(?:proxy-)?authorization\s*[:=]\s*(?:(?:bearer|basic|token|digest)\s+)?)[^\s\x22',;]+"),
    (
        "secret_variable",
        r"(?m)((?:^|[\s;])(?:export\s+)?(?:[A-Za-z_][A-Za-z0-9_]*)?(?:PASSWORD|PASSWD|SECRET|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY|password|secret|token|api_key)[A-Za-z0-9_]*\s*=\s*)(\x22[^\x22\n]*\x22|'[^'\n]*'|[^\s#;]+)",
    ),
];

/// The built-in kinds whose group 1 is a name to keep; every other match is replaced whole.
const KEEPS_NAME: &[&str] = &["authorization", "secret_variable"];

/// Values of a secret-looking variable that are not secrets: numbers, booleans, empty quotes,
/// references to other variables.
fn harmless_value(value: &str) -> bool {
    let v = value.trim_matches(|c| c == '"' || c == '\'');
    v.len() < 6
        || v.chars().all(|c| c.is_ascii_digit() || c == '.' || c == '_')
        || v.starts_with('$')
        || v.starts_with('<')
        || matches!(v.to_ascii_lowercase().as_str(), "true" | "false" | "none" | "null" | "undefined")
        || v.contains(['(', '[', '{'])
}

/// The compiled patterns.
#[derive(Debug, Clone)]
pub struct Redactor {
    patterns: Vec<Pattern>,
}

#[derive(Debug, Clone)]
struct Pattern {
    kind: String,
    regex: Regex,
    keeps_name: bool,
}

impl Redactor {
    /// The built-in patterns (unless `built_in` is off) and the extra ones, each a regex whose
    /// whole match is replaced.
    pub fn new(built_in: bool, extra: &[String]) -> Result<Self> {
        let mut patterns = Vec::new();
        if built_in {
            for (kind, pattern) in BUILT_IN {
                // The built-in patterns are constants; a failure here is a bug caught by the tests.
                let regex = Regex::new(pattern).map_err(|e| Error::Config(format!("built-in pattern {kind}: {e}")))?;
                patterns.push(Pattern { kind: (*kind).to_owned(), regex, keeps_name: KEEPS_NAME.contains(kind) });
            }
        }
        for (k, pattern) in extra.iter().enumerate() {
            let regex = Regex::new(pattern)
                .map_err(|e| Error::Config(format!("`store.redact_patterns[{k}]` is not a valid regex: {e}")))?;
            patterns.push(Pattern { kind: "custom".to_owned(), regex, keeps_name: false });
        }
        Ok(Redactor { patterns })
    }

    /// No redaction at all.
    pub fn none() -> Self {
        Redactor { patterns: Vec::new() }
    }

    /// `text` with every secret replaced, and how many were.
    pub fn redact_text(&self, text: &str) -> (String, usize) {
        let mut out = text.to_owned();
        let mut count = 0;
        for Pattern { kind, regex, keeps_name } in &self.patterns {
            if !regex.is_match(&out) {
                continue;
            }
            let replaced = regex.replace_all(&out, |caps: &Captures| {
                let whole = caps.get_match();
                // The kept name ends where group 1 ends (a match boundary, so a char boundary).
                let name_end = match caps.get(1) {
                    Some(name) if *keeps_name && name.start() == whole.start() => name.end() - whole.start(),
                    _ => 0,
                };
                let (keep, value) = whole.as_str().split_at(name_end);
                if kind == "secret_variable" && harmless_value(value) {
                    return whole.as_str().to_owned();
                }
                count += 1;
                format!("{keep}[REDACTED:{kind}]")
            });
            out = replaced.into_owned();
        }
        (out, count)
    }

    /// Every string of a JSON value (keys are names, left alone) redacted in place.
    pub fn redact_value(&self, value: &mut Value) -> usize {
        if self.patterns.is_empty() {
            return 0;
        }
        match value {
            Value::String(s) => {
                let (text, n) = self.redact_text(s);
                if n > 0 {
                    *s = text;
                }
                n
            }
            Value::Array(items) => items.iter_mut().map(|v| self.redact_value(v)).sum(),
            Value::Object(map) => map.values_mut().map(|v| self.redact_value(v)).sum(),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redact(text: &str) -> String {
        Redactor::new(true, &[]).unwrap().redact_text(text).0
    }

    #[test]
    fn provider_keys_and_tokens() {
        let cases = [
            ("key sk-proj-abcdefghijklmnopqrstuvwxyz0123 end", "key [REDACTED:openai_key] end"),
            ("sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAA", "[REDACTED:anthropic_key]"),
            ("ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "[REDACTED:github_token]"),
            ("id AKIAIOSFODNN7EXAMPLE x", "id [REDACTED:aws_access_key] x"),
            ("AIzaSyA-1234567890abcdefghijklmnopqrstu", "[REDACTED:google_api_key]"),
            ("xoxb-1234567890-abcdef", "[REDACTED:slack_token]"),
            ("hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "[REDACTED:huggingface_token]"),
            ("gsk_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ", "[REDACTED:groq_key]"),
            ("xai-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ", "[REDACTED:xai_key]"),
        ];
        for (input, want) in cases {
            assert_eq!(redact(input), want, "{input}");
        }
    }

    #[test]
    fn headers_variables_and_key_blocks() {
        assert_eq!(
            redact("curl -H 'Authorization: Bearer abc.def-123' x"),
            "curl -H 'Authorization: Bearer [REDACTED:authorization]' x"
        );
        assert_eq!(
            redact("export DB_PASSWORD=hunter22\nPATH=/bin"),
            "export DB_PASSWORD=[REDACTED:secret_variable]\nPATH=/bin"
        );
        assert_eq!(redact("GITHUB_TOKEN=\"abcdef123456\""), "GITHUB_TOKEN=[REDACTED:secret_variable]");
        assert_eq!(
            redact("PASSWORD=swordfish1 TOKEN=abc123def"),
            "PASSWORD=[REDACTED:secret_variable] TOKEN=[REDACTED:secret_variable]"
        );
        let key = "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nxyz\n-----END RSA PRIVATE KEY-----\nb";
        assert_eq!(redact(key), "a\n[REDACTED:private_key]\nb");
    }

    #[test]
    fn code_that_only_looks_like_a_secret_is_kept() {
        for text in [
            "MAX_TOKENS = 4096",
            "max_tokens=100",
            "TOKEN_LIMIT = None",
            "api_key = os.environ['KEY']",
            "password = getpass()",
            "SECRET_KEY=$SECRET",
            "tokens = count(text)",
            "the sk-learn docs",
        ] {
            assert_eq!(redact(text), text);
        }
    }

    #[test]
    fn json_strings_are_redacted_and_counted() {
        let r = Redactor::new(true, &["internal-[0-9]{4}".to_owned()]).unwrap();
        let mut v = serde_json::json!({"a": ["token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", 3], "internal-1234": "internal-9999"});
        assert_eq!(r.redact_value(&mut v), 2);
        assert_eq!(v["a"][0], "token [REDACTED:github_token]");
        assert_eq!(v["internal-1234"], "[REDACTED:custom]");
        let err = Redactor::new(true, &["(".to_owned()]).unwrap_err().to_string();
        assert!(err.contains("store.redact_patterns[0]"), "{err}");
    }

    #[test]
    fn a_custom_pattern_replaces_its_whole_match_whatever_its_groups() {
        let r = Redactor::new(false, &[r"token=(\w+)".to_owned(), "é(x)".to_owned(), "(b)c".to_owned()]).unwrap();
        assert_eq!(r.redact_text("token=s3cr3tVALUE end").0, "[REDACTED:custom] end", "group 1 is not kept");
        assert_eq!(r.redact_text("aéxb").0, "a[REDACTED:custom]b", "a group after a multibyte character");
        assert_eq!(r.redact_text("abc").0, "a[REDACTED:custom]");
    }
}
