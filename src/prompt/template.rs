//! `{{placeholder}}` templates: every prompt text lives in `prompts/`, filled here.

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

#[cfg(test)]
mod tests {
    use super::{body, render};

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
}
