//! What counts as a code reference in text (paths, function, test and variable names): the
//! replay's reference recall measures them and the compactor's index lists them.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

/// `[\w.-]+/[\w./-]*\.\w{1,5}`: a file path with at least one `/` and an extension.
static PATH: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[\w.-]+/[\w./-]*\.\w{1,5}").expect("a valid pattern"));
/// `[A-Za-z_][A-Za-z0-9_]{5,}`: a word of at least 6 characters (kept when [`is_code_identifier`]).
static IDENTIFIER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z_][A-Za-z0-9_]{5,}").expect("a valid pattern"));

/// A word that looks like code rather than prose: it has `_`, a digit, `/`, or a lower-case
/// letter followed by an upper-case one (`camelCase`).
pub fn is_code_identifier(word: &str) -> bool {
    let bytes = word.as_bytes();
    word.contains(['_', '/'])
        || bytes.iter().any(u8::is_ascii_digit)
        || bytes.windows(2).any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
}

/// The references in `text`: every match of the path pattern, and every match of the
/// identifier pattern that [`is_code_identifier`], each once, sorted.
pub fn references_in(text: &str) -> BTreeSet<String> {
    let paths = PATH.find_iter(text).map(|m| m.as_str());
    let words = IDENTIFIER.find_iter(text).map(|m| m.as_str()).filter(|w| is_code_identifier(w));
    paths.chain(words).map(str::to_owned).collect()
}

/// The texts of a tool call's arguments: the string values of the JSON (escapes decoded, keys
/// left out), or, when the arguments are not JSON, their text with JSON-style escapes (`\n`,
/// `\"` …) turned into spaces.
pub fn argument_texts(arguments: &str) -> Vec<String> {
    static ESCAPE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#"\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt])"#).expect("a valid pattern"));
    fn strings(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::String(s) => out.push(s.clone()),
            Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
            Value::Object(fields) => fields.values().for_each(|v| strings(v, out)),
            _ => {}
        }
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(args) => {
            let mut out = Vec::new();
            strings(&args, &mut out);
            out
        }
        Err(_) => vec![ESCAPE.replace_all(arguments, " ").into_owned()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(text: &str) -> Vec<String> {
        references_in(text).into_iter().collect()
    }

    #[test]
    fn paths_and_code_identifiers_are_references_prose_is_not() {
        assert_eq!(refs("open src/app/models.py and check"), ["src/app/models.py"]);
        assert_eq!(refs("the function parse_args and getUserName"), ["getUserName", "parse_args"]);
        assert_eq!(refs("version2 of basic plain words like function"), ["version2"]);
        assert_eq!(refs("tests/test_views.py::test_login_ok"), ["test_login_ok", "test_views", "tests/test_views.py"]);
        assert!(refs("Django Models README.md x_y a1 Ab_c").is_empty(), "no path, code words under 6 characters");
    }

    #[test]
    fn argument_texts_are_the_json_string_values_or_the_text_with_escapes_as_spaces() {
        assert_eq!(
            argument_texts(r#"{"path": "a/b.py", "n": 3, "list": ["x\ny"]}"#),
            ["x\ny", "a/b.py"],
            "keys in order"
        );
        assert_eq!(argument_texts(r#"{"cmd": "cat a\nparse_line"#), [r#"{"cmd": "cat a parse_line"#]);
    }
}
