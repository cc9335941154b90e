//! `{{placeholder}}` templates: every prompt text lives in `prompts/`, filled here.

use std::collections::BTreeMap;

/// A prompt file without its leading `<!-- … -->` comment (which documents the placeholders)
/// and without its final newline.
pub fn body(file: &str) -> &str {
    let text = match file.strip_prefix("<!--").and_then(|rest| rest.split_once("-->")) {
        Some((_, after)) => after.strip_prefix('\n').unwrap_or(after),
        None => file,
    };
    text.strip_suffix('\n').unwrap_or(text)
}

/// Fill `{{name}}` placeholders from `values`. A placeholder with no value is left as it is,
/// so a missing value shows in tests instead of vanishing.
pub fn render(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}") {
            Some(end) => {
                let name = after[..end].trim();
                match values.iter().find(|(k, _)| *k == name) {
                    Some((_, value)) => out.push_str(value),
                    None => out.push_str(&rest[start..start + 2 + end + 2]),
                }
                rest = &after[end + 2..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// A prompt file cut into named sections: a section starts at a line holding only
/// `<!-- section: NAME -->` and runs to the next such line, its trailing newlines dropped.
/// Text before the first section (the file's documenting comment) belongs to none.
pub fn sections(text: &str) -> BTreeMap<&str, String> {
    let mut sections = BTreeMap::new();
    let mut current: Option<(&str, String)> = None;
    for line in text.lines() {
        let marker = line.trim().strip_prefix("<!-- section:").and_then(|rest| rest.strip_suffix("-->"));
        match (marker, current.as_mut()) {
            (Some(name), _) => {
                if let Some((done, body)) = current.take() {
                    sections.insert(done, body.trim_end_matches('\n').to_owned());
                }
                current = Some((name.trim(), String::new()));
            }
            (None, Some((_, body))) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    if let Some((done, body)) = current {
        sections.insert(done, body.trim_end_matches('\n').to_owned());
    }
    sections
}

/// `10000` as `10,000`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{body, render, sections, thousands};

    #[test]
    fn files_cut_into_named_sections() {
        let text = "<!-- doc -->\n<!-- section: a -->\none\ntwo\n\n<!-- section: b -->\nthree\n";
        let cut = sections(text);
        assert_eq!(cut.get("a").map(String::as_str), Some("one\ntwo"));
        assert_eq!(cut.get("b").map(String::as_str), Some("three"));
        assert_eq!(cut.len(), 2);
    }

    #[test]
    fn prompt_files_lose_their_comment() {
        assert_eq!(body("<!-- about {{x}} -->\nHello {{x}}\n"), "Hello {{x}}");
        assert_eq!(body("plain\n"), "plain");
    }

    #[test]
    fn fills_known_placeholders_and_keeps_unknown_ones() {
        assert_eq!(render("a {{x}} b {{ y }} c", &[("x", "1"), ("y", "2")]), "a 1 b 2 c");
        assert_eq!(render("{{missing}} {{x}}", &[("x", "{{x}}")]), "{{missing}} {{x}}");
        assert_eq!(render("open {{ never closed", &[]), "open {{ never closed");
        assert_eq!(render("é{{x}}é", &[("x", "ü")]), "éüé");
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(10_000), "10,000");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
