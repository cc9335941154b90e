//! R5.6's evidence rules, checked by code rather than trusted to the model: an index of what the
//! agent actually observed (file lines by path, tool results by message), and the checks of
//! anchors and evidence pointers against it.
//!
//! Observed file content comes from reads, `cat -n`/`nl`/`sed -n`/`head`/`cat` commands, grep
//! hits, written files and the new text of successful edits. Line numbers come from the output's
//! own `N→`/`N\t` prefixes where it has them. Everything is best effort on the input side and
//! strict on the check side: what cannot be placed is simply not evidence.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use serde_json::Value;

use super::block::CompressedTurns;
use super::board::{Anchor, StateDelta};
use crate::compress::{CompressConfig, Family, family_of, logs};
use crate::model::{Message, Role, ToolResult, ToolStatus, tool_calls_by_id};
use shell::{ViewKind, file_view, join, looks_like_file};

pub(crate) mod shell;

/// `   421→text` (Claude Code) or `   421\ttext` (`cat -n`) split into 421 and `text`.
pub fn split_line_number(line: &str) -> Option<(u32, &str)> {
    split_number(line, &["→", "\t"])
}

/// A line without its Claude Code or `cat -n` line-number prefix.
pub fn strip_line_number(line: &str) -> &str {
    split_line_number(line).map_or(line, |(_, rest)| rest)
}

/// Leading spaces, 1-9 digits, then one of `separators`.
fn split_number<'a>(line: &'a str, separators: &[&str]) -> Option<(u32, &'a str)> {
    let digits = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[digits..];
    let count = rest.bytes().take_while(u8::is_ascii_digit).count();
    if count == 0 || count > 9 {
        return None;
    }
    let number = rest[..count].parse().ok()?;
    let after = &rest[count..];
    separators.iter().find_map(|s| after.strip_prefix(s)).map(|text| (number, text))
}

/// An item of a reply that failed its check, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Rejection {
    pub item: String,
    pub reason: String,
}

/// Consecutive observed lines of one file, from one message.
#[derive(Debug, Clone)]
struct Chunk {
    message: usize,
    /// The number of the first line; `None` when unknown (an edit's new text).
    first: Option<u32>,
    /// The lines, trailing whitespace trimmed, joined by `\n`.
    text: String,
    lines: u32,
}

/// One tool result, as far as evidence pointers care.
#[derive(Debug, Clone)]
struct Outcome {
    call_id: String,
    /// A shell command (or anything with an exit code).
    command: bool,
    exit_code: Option<i32>,
    ok: bool,
    /// The output, when it is a test or build log `logs::recognise` knows.
    log: Option<String>,
    /// The log reports failures or errors.
    log_failed: bool,
}

/// What the agent observed in a list of messages, indexed for the checks.
#[derive(Debug, Clone, Default)]
pub struct Observations {
    /// Normalised path → observed chunks, in message order.
    files: BTreeMap<String, Vec<Chunk>>,
    /// Message index → the tool results it carries.
    results: BTreeMap<usize, Vec<Outcome>>,
    /// Index of a message making tool calls → (message, call id) of each result.
    answered_in: BTreeMap<usize, Vec<(usize, String)>>,
    /// Message id → index.
    ids: HashMap<String, usize>,
    messages: usize,
}

impl Observations {
    /// Index every tool result of `messages` (indices are positions in the slice).
    pub fn from_messages(messages: &[Message], config: &CompressConfig) -> Self {
        let mut obs = Observations { messages: messages.len(), ..Default::default() };
        let calls = tool_calls_by_id(messages);
        let mut caller: HashMap<&str, usize> = HashMap::new();
        for (index, message) in messages.iter().enumerate() {
            obs.ids.insert(message.id.as_str().to_owned(), index);
            if message.role == Role::Assistant {
                for call in message.tool_calls() {
                    caller.entry(call.id.as_str()).or_insert(index);
                }
            }
            for result in message.tool_results() {
                let call = calls.get(result.call_id.as_str()).copied();
                let (tool, arguments) = call.map_or((result.name.as_str(), ""), |c| (c.name.as_str(), &c.arguments));
                let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
                let family = family_of(tool, &args, config);
                obs.observe(index, family, &args, arguments, result);
                if let Some(&asked) = caller.get(result.call_id.as_str()) {
                    obs.answered_in.entry(asked).or_default().push((index, result.call_id.as_str().to_owned()));
                }
            }
        }
        obs
    }

    fn observe(&mut self, message: usize, family: Family, args: &Value, raw_args: &str, result: &ToolResult) {
        let ok = result.status == ToolStatus::Ok && result.exit_code.is_none_or(|c| c == 0);
        let command = family == Family::Bash || result.exit_code.is_some();
        let log = if matches!(family, Family::Bash | Family::Default) || result.exit_code.is_some() {
            recognised_log(result)
        } else {
            None
        };
        let (log, log_failed) = log.map_or((None, false), |(text, failed)| (Some(text), failed));
        let call_id = result.call_id.as_str().to_owned();
        let outcome = Outcome { call_id, command, exit_code: result.exit_code, ok, log, log_failed };
        self.results.entry(message).or_default().push(outcome);
        let output = result.output.as_str();
        let path = arg_str(args, &["file_path", "path", "filePath", "target_file"]);
        match family {
            Family::Read if !failed(result) => {
                let Some(path) = path else { return };
                if numbered(output, &["→", "\t"]) {
                    self.add_numbered(path, message, output, &["→", "\t"]);
                } else if numbered(output, &[":"]) {
                    self.add_numbered(path, message, output, &[":"]); // SWE-agent's `open`
                } else {
                    let first = args
                        .get("view_range")
                        .and_then(|r| r.get(0))
                        .or_else(|| args.get("offset"))
                        .and_then(Value::as_u64)
                        .map_or(1, |n| u32::try_from(n).unwrap_or(u32::MAX).max(1));
                    self.add_text(path, message, Some(first), output);
                }
            }
            Family::Write if !failed(result) => {
                let content = arg_str(args, &["content", "file_text", "contents"]);
                if let (Some(path), Some(content)) = (path, content) {
                    self.add_text(path, message, Some(1), content);
                }
            }
            Family::Edit if !failed(result) => {
                let Some(path) = path else { return };
                let mut new_texts: Vec<&str> =
                    arg_str(args, &["new_string", "new_str", "newString"]).into_iter().collect();
                if let Some(edits) = args.get("edits").and_then(Value::as_array) {
                    new_texts.extend(edits.iter().filter_map(|e| arg_str(e, &["new_string", "new_str", "newString"])));
                }
                for text in new_texts {
                    self.add_text(path, message, None, text);
                }
                // Editors often show the edited region, numbered.
                self.add_numbered(path, message, output, &["→", "\t"]);
            }
            Family::Grep => {
                let single = path.filter(|p| looks_like_file(p));
                self.add_grep(message, output, single, None);
            }
            Family::Bash => {
                let command = arg_str(args, &["command", "cmd"]).unwrap_or(if args.is_null() { raw_args } else { "" });
                self.add_command(message, command, output, ok);
            }
            _ => {}
        }
    }

    /// A shell command that shows a file: `cat -n F`, `nl F`, `sed -n 'A,Bp' F`, `head F`,
    /// `cat F`, or a grep.
    fn add_command(&mut self, message: usize, command: &str, output: &str, ok: bool) {
        let Some(view) = file_view(command) else { return };
        match view.kind {
            ViewKind::Grep => self.add_grep(message, output, view.path.as_deref(), view.cwd.as_deref()),
            _ if numbered(output, &["→", "\t"]) => {
                if let Some(path) = &view.path {
                    self.add_numbered(path, message, output, &["→", "\t"]);
                }
            }
            ViewKind::From(first) if ok => {
                if let Some(path) = &view.path {
                    self.add_text(path, message, Some(first), output);
                }
            }
            _ => {}
        }
    }

    fn add_grep(&mut self, message: usize, output: &str, single_file: Option<&str>, cwd: Option<&str>) {
        for line in output.lines() {
            let hit = match single_file {
                Some(file) => split_number(line, &[":"]).map(|(n, text)| (file, n, text)).or_else(|| grep_line(line)),
                None => grep_line(line),
            };
            if let Some((path, number, text)) = hit {
                let key = normalise(&join(cwd, path));
                if !key.is_empty() {
                    push_line(self.files.entry(key).or_default(), message, number, text);
                }
            }
        }
    }

    fn add_numbered(&mut self, path: &str, message: usize, output: &str, separators: &[&str]) {
        let key = normalise(path);
        if key.is_empty() {
            return;
        }
        let chunks = self.files.entry(key).or_default();
        for (number, text) in output.lines().filter_map(|l| split_number(l, separators)) {
            push_line(chunks, message, number, text);
        }
    }

    fn add_text(&mut self, path: &str, message: usize, first: Option<u32>, text: &str) {
        let key = normalise(path);
        if key.is_empty() || text.trim().is_empty() {
            return;
        }
        let chunks = self.files.entry(key).or_default();
        match first {
            Some(first) => {
                for (k, line) in text.lines().enumerate() {
                    let number = first.saturating_add(u32::try_from(k).unwrap_or(u32::MAX));
                    push_line(chunks, message, number, line);
                }
            }
            None => {
                let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
                let count = u32::try_from(lines.len()).unwrap_or(u32::MAX);
                chunks.push(Chunk { message, first: None, text: lines.join("\n"), lines: count });
            }
        }
    }

    /// Every chunk observed of a file matching `path` (by suffix at a `/` boundary).
    fn chunks_of(&self, path: &str) -> Vec<&Chunk> {
        let wanted = normalise(path);
        if wanted.is_empty() {
            return Vec::new();
        }
        self.files.iter().filter(|(seen, _)| same_file(seen, &wanted)).flat_map(|(_, c)| c).collect()
    }

    /// The snippet, line-number prefixes stripped and trailing whitespace ignored, must occur as
    /// consecutive observed lines of the path that overlap `start_line..=end_line`. A snippet
    /// found only in an edit's new text (whose line numbers are unknown) is accepted at any
    /// range: the agent wrote it and saw the edit succeed. Where it was also seen at known
    /// lines, those decide.
    pub fn check_anchor(&self, anchor: &Anchor) -> Result<(), String> {
        let (start, end, path) = (anchor.start_line, anchor.end_line, anchor.path.trim());
        if start == 0 || end < start {
            return Err(format!("bad line range L{start}-L{end}"));
        }
        let chunks = self.chunks_of(path);
        if chunks.is_empty() {
            return Err(format!("no observation of {path}"));
        }
        let stripped = snippet_text(&anchor.snippet, true);
        if stripped.is_empty() {
            return Err("empty snippet".to_owned());
        }
        let raw = snippet_text(&anchor.snippet, false);
        let needles = if raw == stripped { vec![stripped] } else { vec![stripped, raw] };
        let (mut elsewhere, mut unplaced) = (None, false);
        for needle in &needles {
            for chunk in &chunks {
                for (a, b) in occurrences(chunk, needle) {
                    match (a, b) {
                        (Some(a), Some(b)) if a <= end && start <= b => return Ok(()),
                        (Some(a), Some(b)) => {
                            elsewhere.get_or_insert((a, b));
                        }
                        _ => unplaced = true,
                    }
                }
            }
        }
        match elsewhere {
            Some((a, b)) => Err(format!("snippet found at L{a}-L{b}, not L{start}-L{end}")),
            None if unplaced => Ok(()),
            None => Err(format!("snippet not found in what was observed of {path}")),
        }
    }

    /// Resolve an evidence pointer: `file:PATH:Lx-Ly` (or `:Lx`, or no lines: every line must
    /// have been observed), `cmd#N exit=K` (or `cmd#N`), `test#N …` (a recognised log; with
    /// `failed: NAME`, NAME must occur in it; `passed` alone needs a log without failures),
    /// `msg#N`, `#N`, or a raw message id (`m000123`, `raw#m000123`). N is an index into the
    /// messages; a `cmd#`/`test#` naming the message that made the call means its result.
    pub fn check_pointer(&self, pointer: &str) -> Result<(), String> {
        let p = pointer.trim().trim_matches(|c: char| c == '`' || c == '[' || c == ']').trim();
        if p.is_empty() {
            return Err("empty pointer".to_owned());
        }
        if let Some(rest) = strip_prefix_ci(p, "file:") {
            return self.check_file_pointer(rest);
        }
        if let Some(id) = strip_prefix_ci(p, "raw#") {
            let id = id.split_whitespace().next().unwrap_or("");
            return self.ids.get(id).map(|_| ()).ok_or_else(|| format!("no message {id}"));
        }
        if let Some((kind, number, rest)) = split_hash(p) {
            let Some(n) = number else { return Err(format!("no message number in `{p}`")) };
            return match kind.as_str() {
                "cmd" => self.check_command(n, rest),
                "test" => self.check_test(n, rest),
                "msg" | "" => self.message(n).map(|_| ()),
                _ => Err(format!("unknown pointer kind `{kind}#`")),
            };
        }
        let id = p.split_whitespace().next().unwrap_or("");
        if self.ids.contains_key(id) {
            return Ok(());
        }
        Err(format!("unrecognised pointer `{p}`"))
    }

    fn message(&self, n: usize) -> Result<usize, String> {
        if n < self.messages { Ok(n) } else { Err(format!("no message #{n}")) }
    }

    /// The tool results message `n` carries, or, for a message making calls, their results.
    fn outcomes(&self, n: usize) -> Result<Vec<&Outcome>, String> {
        self.message(n)?;
        if let Some(list) = self.results.get(&n) {
            return Ok(list.iter().collect());
        }
        let answered = self.answered_in.get(&n).into_iter().flatten();
        let found: Vec<&Outcome> = answered
            .flat_map(|(m, id)| self.results.get(m).into_iter().flatten().filter(move |o| o.call_id == *id))
            .collect();
        if found.is_empty() { Err(format!("#{n} is not a tool result")) } else { Ok(found) }
    }

    fn check_command(&self, n: usize, rest: &str) -> Result<(), String> {
        let commands: Vec<&Outcome> = self.outcomes(n)?.into_iter().filter(|o| o.command).collect();
        if commands.is_empty() {
            return Err(format!("#{n} is not a command result"));
        }
        check_exit(n, &commands, rest)
    }

    fn check_test(&self, n: usize, rest: &str) -> Result<(), String> {
        let logs: Vec<&Outcome> = self.outcomes(n)?.into_iter().filter(|o| o.log.is_some()).collect();
        if logs.is_empty() {
            return Err(format!("#{n} is not a recognised test log"));
        }
        check_exit(n, &logs, rest)?;
        let lower = rest.to_ascii_lowercase();
        if lower.contains("passed") && !lower.contains("fail") && logs.iter().all(|o| o.log_failed) {
            return Err(format!("the log of #{n} reports failures"));
        }
        let Some(at) = lower.find("failed:") else { return Ok(()) };
        // `failed: NAME[, NAME…]`, each NAME its first word (a reason may follow it).
        let names = rest[at + "failed:".len()..].trim();
        let occurs = |name: &str| logs.iter().any(|o| o.log.as_deref().is_some_and(|l| l.contains(name)));
        if names.is_empty() || occurs(names) {
            return Ok(());
        }
        let mut wanted = names.split([',', ';']).filter_map(|part| part.split_whitespace().next());
        match wanted.find(|name| !occurs(name.trim_end_matches(['.', ':']))) {
            Some(name) => Err(format!("`{name}` does not occur in the log of #{n}")),
            None => Ok(()),
        }
    }

    fn check_file_pointer(&self, rest: &str) -> Result<(), String> {
        let head = rest.split_whitespace().next().unwrap_or("");
        let (path, lines) = match head.rsplit_once(':').and_then(|(p, spec)| line_spec(spec).map(|l| (p, l))) {
            Some((path, lines)) => (path, Some(lines)),
            None => (head, None),
        };
        let chunks = self.chunks_of(path);
        if chunks.is_empty() {
            return Err(format!("no observation of {path}"));
        }
        let Some((a, b)) = lines else { return Ok(()) };
        let mut spans: Vec<(u32, u32)> =
            chunks.iter().filter_map(|c| c.first.map(|f| (f, f.saturating_add(c.lines.saturating_sub(1))))).collect();
        spans.sort_unstable();
        let mut covered_to: Option<u32> = None; // every line from `a` to here was observed
        for (s, e) in spans {
            let next = covered_to.map_or(a, |c| c.saturating_add(1));
            if s <= next && e >= next {
                covered_to = Some(e);
            }
        }
        if covered_to.is_some_and(|c| c >= b) {
            Ok(())
        } else {
            Err(format!("lines L{a}-L{b} of {path} were not observed"))
        }
    }

    /// Drop anchors that fail; move confirmed facts without evidence, or with a pointer that
    /// fails, to `unknown`. One rejection per item.
    pub fn check_delta(&self, delta: &mut StateDelta) -> Vec<Rejection> {
        let mut rejections = Vec::new();
        delta.anchors.retain(|a| self.keep_anchor(a, &mut rejections));
        for fact in std::mem::take(&mut delta.confirmed_facts) {
            let pointers: Vec<&String> = fact.evidence.iter().filter(|p| !p.trim().is_empty()).collect();
            let failure = if pointers.is_empty() {
                Some("no evidence".to_owned())
            } else {
                pointers.iter().find_map(|p| self.check_pointer(p).err().map(|e| format!("{}: {e}", p.trim())))
            };
            match failure {
                None => delta.confirmed_facts.push(fact),
                Some(reason) => {
                    rejections.push(Rejection { item: format!("fact \"{}\"", short(&fact.text)), reason });
                    if !delta.unknown.contains(&fact.text) {
                        delta.unknown.push(fact.text);
                    }
                }
            }
        }
        rejections
    }

    /// Drop anchors that fail; keep only the evidence pointers of each conclusion that resolve,
    /// and prefix `unknown: ` to a conclusion that had pointers and has none left.
    pub fn check_block(&self, block: &mut CompressedTurns) -> Vec<Rejection> {
        let mut rejections = Vec::new();
        block.anchors.retain(|a| self.keep_anchor(a, &mut rejections));
        for item in &mut block.what_we_learned {
            item.evidence.retain(|p| !p.trim().is_empty());
            if item.evidence.is_empty() {
                continue;
            }
            let conclusion = short(&item.conclusion);
            item.evidence.retain(|p| match self.check_pointer(p) {
                Ok(()) => true,
                Err(reason) => {
                    rejections.push(Rejection { item: format!("evidence {} of \"{conclusion}\"", p.trim()), reason });
                    false
                }
            });
            if item.evidence.is_empty() && !item.conclusion.trim_start().to_ascii_lowercase().starts_with("unknown:") {
                item.conclusion = format!("unknown: {}", item.conclusion);
            }
        }
        rejections
    }

    fn keep_anchor(&self, anchor: &Anchor, rejections: &mut Vec<Rejection>) -> bool {
        match self.check_anchor(anchor) {
            Ok(()) => true,
            Err(reason) => {
                let item = format!("anchor {}:L{}-L{}", short(&anchor.path), anchor.start_line, anchor.end_line);
                rejections.push(Rejection { item, reason });
                false
            }
        }
    }
}

/// `exit=K` in `rest`, when present, must match one of `outcomes`: the exit code, or (without
/// one) success ⇔ K = 0.
fn check_exit(n: usize, outcomes: &[&Outcome], rest: &str) -> Result<(), String> {
    let lower = rest.to_ascii_lowercase();
    let Some(at) = lower.find("exit=").map(|i| i + 5).or_else(|| lower.find("exit_code=").map(|i| i + 10)) else {
        return Ok(());
    };
    let value = &rest[at..];
    let end = value
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
        .map_or(value.len(), |(i, _)| i);
    let Ok(wanted) = value[..end].parse::<i32>() else { return Err(format!("bad exit code in `{}`", rest.trim())) };
    let matches = |o: &&&Outcome| match o.exit_code {
        Some(code) => code == wanted,
        None => o.ok == (wanted == 0),
    };
    if outcomes.iter().any(|o| matches(&o)) {
        return Ok(());
    }
    let actual = outcomes.first().map_or(String::new(), |o| match o.exit_code {
        Some(code) => format!("exited with {code}"),
        None if o.ok => "succeeded".to_owned(),
        None => "failed".to_owned(),
    });
    Err(format!("#{n} {actual}, not exit={wanted}"))
}

/// `cmd#12 exit=1` → (`cmd`, Some(12), ` exit=1`); `#3` → (``, Some(3), ``).
fn split_hash(p: &str) -> Option<(String, Option<usize>, &str)> {
    let (kind, after) = p.split_once('#')?;
    if !kind.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let count = after.bytes().take_while(u8::is_ascii_digit).count();
    Some((kind.to_ascii_lowercase(), after[..count].parse().ok(), &after[count..]))
}

/// `L40-L55`, `L40-55`, `L40` → (40, 55).
fn line_spec(spec: &str) -> Option<(u32, u32)> {
    let spec = spec.strip_prefix(['L', 'l'])?;
    let (a, b) = spec.split_once('-').unwrap_or((spec, spec));
    let a: u32 = a.parse().ok()?;
    let b: u32 = b.strip_prefix(['L', 'l']).unwrap_or(b).parse().ok()?;
    (a > 0 && b >= a).then_some((a, b))
}

fn strip_prefix_ci<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &text[prefix.len()..])
}

/// Add line `number` to the last chunk when it continues it (same message), else start one.
fn push_line(chunks: &mut Vec<Chunk>, message: usize, number: u32, text: &str) {
    let text = text.trim_end();
    if let Some(last) = chunks.last_mut()
        && last.message == message
        && last.first.is_some_and(|f| f.checked_add(last.lines) == Some(number))
    {
        last.text.push('\n');
        last.text.push_str(text);
        last.lines += 1;
        return;
    }
    chunks.push(Chunk { message, first: Some(number), text: text.to_owned(), lines: 1 });
}

/// The line ranges (first, last) where `needle` occurs as whole consecutive lines of `chunk`;
/// `None` numbers for a chunk whose lines are unknown.
fn occurrences(chunk: &Chunk, needle: &str) -> Vec<(Option<u32>, Option<u32>)> {
    let text = chunk.text.as_str();
    let span = u32::try_from(needle.matches('\n').count()).unwrap_or(u32::MAX);
    let mut found = Vec::new();
    let (mut from, mut line, mut counted_to) = (0, 0u32, 0);
    while let Some(pos) = text.get(from..).and_then(|t| t.find(needle)).map(|p| p + from) {
        let end = pos + needle.len();
        let at_start = pos == 0 || text.as_bytes().get(pos - 1) == Some(&b'\n');
        let at_end = end == text.len() || text.as_bytes().get(end) == Some(&b'\n');
        if at_start && at_end {
            line += u32::try_from(text[counted_to..pos].matches('\n').count()).unwrap_or(u32::MAX);
            counted_to = pos;
            let first = chunk.first.map(|f| f.saturating_add(line));
            found.push((first, first.map(|f| f.saturating_add(span))));
        }
        // Next candidate: the start of the next line.
        match text[pos..].find('\n') {
            Some(nl) => from = pos + nl + 1,
            None => break,
        }
    }
    found
}

/// A snippet as compared: prefixes stripped (when `strip`), trailing whitespace and blank
/// lines at either end ignored.
fn snippet_text(snippet: &str, strip: bool) -> String {
    let lines: Vec<&str> =
        snippet.lines().map(|l| if strip { strip_line_number(l) } else { l }).map(str::trim_end).collect();
    let first = lines.iter().position(|l| !l.is_empty()).unwrap_or(lines.len());
    let last = lines.iter().rposition(|l| !l.is_empty()).map_or(first, |i| i + 1);
    lines.get(first..last).map(|l| l.join("\n")).unwrap_or_default()
}

/// Whether most of the first lines of `output` carry a line-number prefix.
fn numbered(output: &str, separators: &[&str]) -> bool {
    let (mut lines, mut hits) = (0, 0);
    for line in output.lines().filter(|l| !l.trim().is_empty()).take(20) {
        lines += 1;
        hits += usize::from(split_number(line, separators).is_some());
    }
    hits > 0 && hits * 2 >= lines
}

/// A read, write or edit that did not happen.
fn failed(result: &ToolResult) -> bool {
    let head = result.output.trim_start().get(..5).unwrap_or("");
    result.status == ToolStatus::Error
        || result.exit_code.is_some_and(|c| c != 0)
        || head.eq_ignore_ascii_case("error")
        || result.output.contains("<tool_use_error>")
}

/// The output (and stderr) of a recognised log, and whether it reports failures.
fn recognised_log(result: &ToolResult) -> Option<(String, bool)> {
    let stderr = result.stderr.as_deref().unwrap_or("");
    let facts = logs::recognise(&result.output).or_else(|| logs::recognise(stderr))?;
    let failed = facts.failed.unwrap_or(0) > 0
        || facts.errors.unwrap_or(0) > 0
        || facts.error_count.unwrap_or(0) > 0
        || !facts.failing.is_empty()
        || facts.first_failure.is_some();
    let text = if stderr.is_empty() { result.output.clone() } else { format!("{}\n{stderr}", result.output) };
    Some((text, failed))
}

fn arg_str<'a>(args: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| args.get(*k).and_then(Value::as_str))
}

/// `path:N:text`, the form of grep hits (the first `:digits:` after a path without spaces).
fn grep_line(line: &str) -> Option<(&str, u32, &str)> {
    let mut from = 0;
    while let Some(colon) = line.get(from..).and_then(|t| t.find(':')).map(|c| c + from) {
        let path = &line[..colon];
        if path.is_empty() || path.contains(char::is_whitespace) {
            return None;
        }
        if let Some((n, text)) = line[colon + 1..].split_once(':').and_then(|(d, text)| {
            (!d.is_empty() && d.len() <= 9 && d.bytes().all(|b| b.is_ascii_digit())).then_some((d, text))
        }) {
            return n.parse().ok().map(|n| (path, n, text));
        }
        from = colon + 1;
    }
    None
}

/// A path as compared: `\` → `/`, no leading `./`, no `/./`, no doubled or trailing `/`.
fn normalise(path: &str) -> String {
    let path = path.trim().trim_matches(|c| c == '"' || c == '\'' || c == '`').replace('\\', "/");
    let absolute = path.starts_with('/');
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    let joined = parts.join("/");
    if absolute { format!("/{joined}") } else { joined }
}

/// Equal, or one ends with the other at a `/` boundary.
fn same_file(a: &str, b: &str) -> bool {
    let suffix = |long: &str, short: &str| {
        long.len() > short.len()
            && long.ends_with(short)
            && (short.starts_with('/') || long.as_bytes().get(long.len() - short.len() - 1) == Some(&b'/'))
    };
    a == b || suffix(a, b.trim_start_matches('/')) || suffix(b, a.trim_start_matches('/'))
}

/// A text cut to about 60 characters, for rejection items.
fn short(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
pub(crate) mod tests;
