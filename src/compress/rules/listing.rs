//! LS (directory + counts + first N entries) and Glob (pattern + hit count + first 5-10).

use super::{Context, Draft, PATH_KEYS, arg_str, lines, push_first};

pub fn ls<'a>(cx: &Context<'_>, output: &'a str) -> Draft<'a> {
    let entries = lines(output);
    let mut draft = Draft::new("entries");
    if entries.len() > cx.config.ls_entries {
        let dirs = entries.iter().filter(|l| l.trim_end().ends_with('/')).count();
        let dir = arg_str(cx.args, PATH_KEYS).unwrap_or(".");
        draft.head.push(format!(
            "{dir}: {} entries ({dirs} directories, {} files)",
            entries.len(),
            entries.len() - dirs
        ));
    }
    push_first(&mut draft, &entries, cx.config.ls_entries);
    draft
}

pub fn glob<'a>(cx: &Context<'_>, output: &'a str) -> Draft<'a> {
    let hits = lines(output);
    let mut draft = Draft::new("hits");
    if hits.len() > cx.config.glob_hits {
        let pattern = arg_str(cx.args, &["pattern", "glob", "file_name", "query"]).unwrap_or("*");
        draft.head.push(format!("{pattern}: {} hits", hits.len()));
    }
    push_first(&mut draft, &hits, cx.config.glob_hits);
    draft
}
