//! What a shell command shows of a file: `cat -n F`, `nl F`, `sed -n 'A,Bp' F`, `head F`,
//! `cat F`, or a grep, after any `cd DIR`. A small quote-aware splitter, best effort.

/// A file name with an extension (`a.py`), not a directory or a dotfile.
pub(super) fn looks_like_file(path: &str) -> bool {
    path.rsplit('/').next().is_some_and(|name| name.contains('.') && !name.starts_with('.'))
}

/// `path` relative to `cwd`, when it is relative and there is one.
pub(crate) fn join(cwd: Option<&str>, path: &str) -> String {
    match cwd {
        Some(dir) if !path.starts_with('/') => format!("{dir}/{path}"),
        _ => path.to_owned(),
    }
}

/// What a shell command shows of a file.
#[derive(Debug, PartialEq)]
pub(crate) struct FileView {
    pub(crate) path: Option<String>,
    pub(crate) cwd: Option<String>,
    pub(crate) kind: ViewKind,
}

#[derive(Debug, PartialEq)]
pub(crate) enum ViewKind {
    /// `cat -n`, `nl`: numbered lines.
    Numbered,
    /// Plain lines from this number: `sed -n 'A,Bp'`, `cat`, `head`.
    From(u32),
    /// grep hits; `path` is the one file searched, when there is only one (relative to `cwd`).
    Grep,
}

/// The file view of a command: after any `cd DIR`, exactly one pipeline whose first stage is
/// `cat`, `nl`, `sed -n`, `head` or a grep (plain views may only be followed by `head`).
pub(crate) fn file_view(command: &str) -> Option<FileView> {
    let mut cwd: Option<String> = None;
    let mut shown = None;
    for pipeline in shell_pipelines(command) {
        let first = pipeline.first()?;
        match first.first().map(String::as_str) {
            Some("cd") => {
                let dir = first.get(1)?;
                cwd = Some(join(cwd.as_deref(), dir));
            }
            Some("export" | "set" | "source" | ".") | None => {}
            Some(_) if shown.is_none() => shown = Some(pipeline),
            Some(_) => return None,
        }
    }
    let pipeline = shown?;
    let stage = pipeline.first()?;
    let program = stage.first()?.rsplit('/').next().unwrap_or("");
    let words: Vec<&str> = stage.iter().skip(1).map(String::as_str).collect();
    let operands: Vec<&str> = words.iter().copied().filter(|w| !w.starts_with('-')).collect();
    let flags = |f: char| words.iter().any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains(f));
    let only_head_follows = pipeline.iter().skip(1).all(|s| s.first().is_some_and(|p| p == "head"));
    let (path, kind) = match program {
        "cat" if operands.len() == 1 && flags('n') => (operands[0], ViewKind::Numbered),
        "cat" if operands.len() == 1 && words.len() == 1 && only_head_follows => (operands[0], ViewKind::From(1)),
        "nl" => (*operands.last()?, ViewKind::Numbered),
        "head" if only_head_follows => (*operands.last()?, ViewKind::From(1)),
        "sed" if words.contains(&"-n") && operands.len() == 2 && only_head_follows => {
            (operands[1], ViewKind::From(sed_range(operands[0])?))
        }
        "grep" | "egrep" | "rg" => {
            let recursive = flags('r') || flags('R') || program == "rg";
            let single = (operands.len() == 2 && !recursive && looks_like_file(operands[1])).then(|| operands[1]);
            return Some(FileView { path: single.map(str::to_owned), cwd, kind: ViewKind::Grep });
        }
        "git" if words.first() == Some(&"grep") => return Some(FileView { path: None, cwd, kind: ViewKind::Grep }),
        _ => return None,
    };
    Some(FileView { path: Some(join(cwd.as_deref(), path)), cwd, kind })
}

/// `A,Bp` or `Ap` → A.
fn sed_range(script: &str) -> Option<u32> {
    let body = script.strip_suffix('p')?;
    let (a, b) = body.split_once(',').unwrap_or((body, body));
    let valid = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    if !valid(a) || !(valid(b) || b == "$") {
        return None;
    }
    a.parse().ok().filter(|&a| a > 0)
}

/// A shell command as pipelines (split at `&&`, `||`, `;`, `&`, newlines) of stages (split at
/// `|`) of words, quotes removed and redirections dropped. Best effort, never fails.
pub(super) fn shell_pipelines(command: &str) -> Vec<Vec<Vec<String>>> {
    let mut pipelines: Vec<Vec<Vec<String>>> = Vec::new();
    let mut stages: Vec<Vec<String>> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut skip_next = false;
    let mut chars = command.chars().peekable();
    let finish_word = |word: &mut String, in_word: &mut bool, words: &mut Vec<String>, skip: &mut bool| {
        if *in_word {
            if *skip {
                *skip = false;
            } else {
                words.push(std::mem::take(word));
            }
        }
        word.clear();
        *in_word = false;
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        _ => word.push(q),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(next) => {
                    in_word = true;
                    word.push(next);
                }
            },
            '>' | '<' => {
                if in_word && word.bytes().all(|b| b.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                }
                finish_word(&mut word, &mut in_word, &mut words, &mut skip_next);
                while chars.next_if(|&n| n == '>' || n == '&').is_some() {}
                skip_next = true;
            }
            '|' | '&' | ';' | '\n' => {
                finish_word(&mut word, &mut in_word, &mut words, &mut skip_next);
                skip_next = false;
                let doubled = chars.next_if_eq(&c).is_some();
                if !words.is_empty() {
                    stages.push(std::mem::take(&mut words));
                }
                if (c != '|' || doubled) && !stages.is_empty() {
                    pipelines.push(std::mem::take(&mut stages));
                }
            }
            c if c.is_whitespace() => finish_word(&mut word, &mut in_word, &mut words, &mut skip_next),
            _ => {
                in_word = true;
                word.push(c);
            }
        }
    }
    finish_word(&mut word, &mut in_word, &mut words, &mut skip_next);
    if !words.is_empty() {
        stages.push(words);
    }
    if !stages.is_empty() {
        pipelines.push(stages);
    }
    pipelines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_commands_are_split_into_stages() {
        let p = shell_pipelines("cd /code/x && cat -n 'a b.py' 2>&1 | head -50; echo \"done\" > /dev/null");
        assert_eq!(p.len(), 3);
        assert_eq!(p[0], [vec!["cd", "/code/x"]]);
        assert_eq!(p[1], [vec!["cat", "-n", "a b.py"], vec!["head", "-50"]]);
        assert_eq!(p[2], [vec!["echo", "done"]]);
        let view = |c: &str| file_view(c).map(|v| (v.path, v.kind));
        assert_eq!(view("cat -n src/a.py"), Some((Some("src/a.py".into()), ViewKind::Numbered)));
        assert_eq!(view("cd /r && sed -n '175,210p' t.py"), Some((Some("/r/t.py".into()), ViewKind::From(175))));
        assert_eq!(view("nl -ba x.rs | sed -n '5,9p'"), Some((Some("x.rs".into()), ViewKind::Numbered)));
        assert_eq!(view("grep -n foo a.py"), Some((Some("a.py".into()), ViewKind::Grep)));
        let grep = file_view("cd src && grep -n 'def lex' lexer.py").unwrap();
        assert_eq!((grep.path.as_deref(), grep.cwd.as_deref()), (Some("lexer.py"), Some("src")));
        assert_eq!(view("sed -n 's/a/b/p' t.py"), None);
        assert_eq!(view("cat a.py | grep x"), None);
        assert_eq!(view("cat a.py; cat b.py"), None);
        assert_eq!(view("\"unterminated"), None);
    }
}
