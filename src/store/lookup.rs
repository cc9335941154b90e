//! What a viewer reads of a trace root beyond the query API (the dashboard): the originals a
//! prompt names (`raw#m000012`, a block's `m000022..m000025`) as the model's `recall` gives them
//! back, the prompt of the newest call or of any saved one, and a search of every trace's raw
//! messages that names the call which first saw each hit. Reading never writes.

use std::collections::{BTreeMap, BTreeSet};

use regex::RegexBuilder;
use serde::Serialize;
use serde_json::Value;

use super::layout::{self, TraceDir, check_id};
use super::load::{parse_json, read_lines, read_message, read_messages, read_meta, read_optional};
use super::query::{TraceStore, not_found};
use super::records::{CallPrompt, Part};
use crate::error::{Error, Result};
use crate::host::Host;
use crate::model::Role;
use crate::prompt::Assembly;
use crate::workbench::recall::original;

/// At most this many originals in one answer (a block names a range).
pub const MAX_ORIGINALS: usize = 500;
/// Characters of context on each side of a search hit.
const EXCERPT_CHARS: usize = 90;

/// `{"trace_id", "originals"}`: the messages a reference names, each as one text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Originals {
    pub trace_id: String,
    pub originals: Vec<Original>,
}

/// One message's original, the text `recall` answers with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Original {
    pub message_id: String,
    pub role: Role,
    pub description: String,
    pub text: String,
}

/// `{"trace_id", "prompt", "plan"?, "notes"?}`: a call's prompt as the model received it, and
/// for a saved call the plan it saw (the goal tree as the API shows it, without stats; none
/// for a call saved before calls kept their plan).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptPage {
    pub trace_id: String,
    pub prompt: Option<Assembly>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// `{"query", "hits", "more", "notes"?}`: newest traces first, then in message order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchPage {
    pub query: String,
    pub hits: Vec<SearchHit>,
    /// More messages matched than the limit let through.
    pub more: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A message whose original holds the query.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    pub trace_id: String,
    pub message_id: String,
    pub role: Role,
    pub description: String,
    /// The proxy's call (its number) whose request first held the message, when a proxy wrote
    /// the trace.
    pub call: Option<u64>,
    /// The match with some text around it.
    pub excerpt: String,
}

impl<H: Host> TraceStore<'_, H> {
    /// The originals of the messages `ids` names ([`message_ids`]).
    pub async fn originals(&self, trace_id: &str, ids: &[String]) -> Result<Originals> {
        let dir = TraceDir::new(&self.root, trace_id)?;
        read_meta(self.host, &dir, trace_id).await?;
        let mut originals = Vec::new();
        for id in ids {
            let message = read_message(self.host, &dir, id).await?;
            let message = message.ok_or_else(|| not_found(format!("no message `{id}` in trace `{trace_id}`")))?;
            originals.push(Original {
                message_id: message.id.to_string(),
                role: message.role,
                text: original(&message),
                description: message.description,
            });
        }
        Ok(Originals { trace_id: trace_id.to_owned(), originals })
    }

    /// The prompt of `call`, or of the newest call (`prompt.json`); none before the first call
    /// or for a call whose prompt was not saved, with a note saying so; damage is a note.
    pub async fn prompt(&self, trace_id: &str, call: Option<u64>) -> Result<PromptPage> {
        let dir = TraceDir::new(&self.root, trace_id)?;
        read_meta(self.host, &dir, trace_id).await?;
        let mut notes = Vec::new();
        let (prompt, plan) = match call {
            Some(call) => self.saved_prompt(&dir, call, &mut notes).await?,
            None => {
                let path = dir.file(layout::PROMPT);
                let prompt = match read_optional(self.host, &path).await? {
                    None => None,
                    Some(text) => parse_json::<Assembly>(&path, &text).map_err(|e| notes.push(e.to_string())).ok(),
                };
                (prompt, None)
            }
        };
        Ok(PromptPage { trace_id: trace_id.to_owned(), prompt, plan, notes })
    }

    /// `call`'s line of `prompts.jsonl` with its parts put back, and the plan it saw (the
    /// newest kept at or before it); no prompt, with a note, when it has none or a part is
    /// missing.
    async fn saved_prompt(
        &self,
        dir: &TraceDir,
        call: u64,
        notes: &mut Vec<String>,
    ) -> Result<(Option<Assembly>, Option<Value>)> {
        let mut lines = self.prompt_lines(dir).await?;
        lines.retain(|l| l.call <= call);
        let plan = lines.iter().rev().find_map(|l| l.plan.clone());
        // The last line of a call counts (a save retried after a cut write appends it again).
        let Some(line) = lines.into_iter().rev().find(|l| l.call == call) else {
            notes.push(format!(
                "call {call} has no saved prompt: a side call, a call sent unmanaged, or one saved before {} existed",
                layout::PROMPTS
            ));
            return Ok((None, plan));
        };
        let parts = self.parts(dir, &line.part_ids().collect()).await?;
        let prompt = line.put_back(&parts);
        Ok((prompt.map_err(|e| notes.push(format!("the prompt of call {call} cannot be read: {e}"))).ok(), plan))
    }

    /// The lines of a trace's `prompts.jsonl` that can be read, in order.
    pub(super) async fn prompt_lines(&self, dir: &TraceDir) -> Result<Vec<CallPrompt>> {
        Ok(read_lines::<_, CallPrompt>(self.host, &dir.file(layout::PROMPTS)).await?.records)
    }

    /// The parts of `parts.jsonl` named in `wanted`, by id.
    pub(super) async fn parts(&self, dir: &TraceDir, wanted: &BTreeSet<&str>) -> Result<BTreeMap<String, Value>> {
        let lines = read_lines::<_, Part>(self.host, &dir.file(layout::PARTS)).await?;
        Ok(lines.records.into_iter().filter(|p| wanted.contains(p.id.as_str())).map(|p| (p.id, p.value)).collect())
    }

    /// The messages of every trace whose original holds `needle`, at most `limit`; a trace that
    /// cannot be read is a note.
    pub async fn search(&self, needle: &Needle, limit: usize) -> Result<SearchPage> {
        let list = self.list_traces().await?;
        let mut page = SearchPage { query: needle.text.clone(), hits: Vec::new(), more: false, notes: list.notes };
        for meta in &list.traces {
            let dir = TraceDir::new(&self.root, &meta.trace_id)?;
            let (messages, notes) = match read_messages(self.host, &dir).await {
                Ok(read) => read,
                Err(e) => {
                    page.notes.push(format!("{}: {e}", meta.trace_id));
                    continue;
                }
            };
            page.notes.extend(notes);
            let mut firsts = None;
            for (index, message) in messages.iter().enumerate() {
                let text = original(message);
                let Some(found) = needle.pattern.find(&text) else { continue };
                if page.hits.len() == limit {
                    page.more = true;
                    return Ok(page);
                }
                if firsts.is_none() {
                    firsts = Some(self.first_requests(&meta.trace_id).await);
                }
                let call = firsts.as_ref().and_then(|f| call_holding(f, index));
                page.hits.push(SearchHit {
                    trace_id: meta.trace_id.clone(),
                    message_id: message.id.to_string(),
                    role: message.role,
                    description: message.description.clone(),
                    call,
                    excerpt: excerpt(&text, found.range()),
                });
            }
        }
        Ok(page)
    }

    /// Each main call's number and the messages its request held (`calls.jsonl`), in order.
    async fn first_requests(&self, trace_id: &str) -> Vec<(u64, u64)> {
        /// The part of a call record this reads.
        #[derive(serde::Deserialize)]
        struct Held {
            call: u64,
            messages: u64,
            #[serde(default)]
            side_call: bool,
        }
        let Ok(lines) = self.call_lines::<Held>(trace_id).await else { return Vec::new() };
        lines.records.iter().filter(|c| !c.side_call).map(|c| (c.call, c.messages)).collect()
    }
}

/// What a search looks for: a text, case-insensitively.
#[derive(Debug, Clone)]
pub struct Needle {
    text: String,
    pattern: regex::Regex,
}

impl Needle {
    /// `text` as a search; an empty one (or one too long to search for) is `invalid_input`.
    pub fn new(text: &str) -> Result<Needle> {
        let text = text.trim();
        if text.is_empty() {
            return Err(Error::InvalidInput("the query parameter `q` is empty".to_owned()));
        }
        let pattern = RegexBuilder::new(&regex::escape(text))
            .case_insensitive(true)
            .build()
            .map_err(|e| Error::InvalidInput(format!("the query is too long to search for: {e}")))?;
        Ok(Needle { text: text.to_owned(), pattern })
    }
}

impl PartialEq for Needle {
    fn eq(&self, other: &Needle) -> bool {
        self.text == other.text
    }
}

/// The first call whose request held more than `index` messages.
fn call_holding(calls: &[(u64, u64)], index: usize) -> Option<u64> {
    calls.iter().find(|&&(_, messages)| messages > index as u64).map(|&(call, _)| call)
}

/// The ids a reference names, in order: one id (`m000012`, `raw#m000012`) or a range of the same
/// prefix (`m000022..m000025`, at most `MAX_ORIGINALS`).
pub fn message_ids(reference: &str) -> Result<Vec<String>> {
    let reference = reference.trim();
    let bad = || {
        Error::InvalidInput(format!(
            "`ref` is \"{reference}\"; write a message id (`m000012`, `raw#m000012`) or a range (`m000022..m000025`)"
        ))
    };
    let reference = reference.strip_prefix("raw#").unwrap_or(reference);
    let (first, last) = reference.split_once("..").unwrap_or((reference, reference));
    if check_id("message id", first).is_err() || check_id("message id", last).is_err() {
        return Err(bad());
    }
    let split = |id: &str| {
        let digits = id.len() - id.bytes().rev().take_while(u8::is_ascii_digit).count();
        let (prefix, number) = id.split_at(digits);
        Some((prefix.to_owned(), number.len(), number.parse::<u64>().ok()?))
    };
    let ((prefix, width, from), (last_prefix, _, to)) = (split(first).ok_or_else(bad)?, split(last).ok_or_else(bad)?);
    if prefix != last_prefix || to < from {
        return Err(bad());
    }
    if to - from >= MAX_ORIGINALS as u64 {
        return Err(Error::InvalidInput(format!(
            "`ref` names {} messages; ask for at most {MAX_ORIGINALS} at a time",
            to - from + 1
        )));
    }
    Ok((from..=to).map(|n| format!("{prefix}{n:0width$}")).collect())
}

/// The match at `found` with [`EXCERPT_CHARS`] around it, on one line.
fn excerpt(text: &str, found: std::ops::Range<usize>) -> String {
    let start = text[..found.start].char_indices().rev().nth(EXCERPT_CHARS - 1).map_or(0, |(i, _)| i);
    let end = text[found.end..].char_indices().nth(EXCERPT_CHARS).map_or(text.len(), |(i, _)| found.end + i);
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.push_str(&text[start..end].replace(['\n', '\r', '\t'], " "));
    if end < text.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_names_one_message_or_a_range() {
        assert_eq!(message_ids("raw#m000012").unwrap(), ["m000012"]);
        assert_eq!(message_ids("m000022..m000024").unwrap(), ["m000022", "m000023", "m000024"]);
        assert_eq!(message_ids("A-m000003").unwrap(), ["A-m000003"]);
        let long = format!("m{}1", "0".repeat(400_000));
        for bad in ["", "m12..n14", "m000024..m000022", "nodigits", "m0..m999999", "../m1", long.as_str()] {
            assert!(message_ids(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_excerpt_shows_the_match_on_one_line() {
        let text = format!("{}\nFAILED test_total{}", "é".repeat(200), "y".repeat(200));
        let at = text.find("FAILED").unwrap();
        let shown = excerpt(&text, at..at + 17);
        assert!(shown.starts_with('…') && shown.ends_with('…') && shown.contains(" FAILED test_total"));
        assert_eq!(shown.chars().count(), 2 + 90 + 17 + 90);
    }

    #[test]
    fn a_hit_names_the_first_call_that_held_its_message() {
        let calls = [(1, 2), (2, 4), (3, 9)];
        assert_eq!(call_holding(&calls, 0), Some(1));
        assert_eq!(call_holding(&calls, 3), Some(2));
        assert_eq!(call_holding(&calls, 9), None);
    }
}
