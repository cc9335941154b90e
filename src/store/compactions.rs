//! What each rewrite of earlier prompt kept and dropped, read from a trace: for every rewrite a
//! saved call reported (`prompts.jsonl`), the code names (paths and identifiers,
//! [`references_in`]) of the raw messages it replaced, split into those the call's prompt still
//! holds, those the prompt before it held and this one no longer does (only `recall` brings them
//! back), and those already out of view before it. Reading never writes.

use std::collections::{BTreeMap, BTreeSet};

use aho_corasick::AhoCorasick;
use serde::Serialize;

use super::layout::TraceDir;
use super::load::{read_message, read_meta};
use super::query::TraceStore;
use super::records::CallPrompt;
use crate::error::Result;
use crate::history::view::RewriteRecord;
use crate::host::Host;
use crate::model::{Message, MessageId, references_in};
use crate::prompt::Assembly;
use crate::workbench::recall::{content_text, original};

/// `{"trace_id", "compactions", "notes"?}`: oldest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompactionsPage {
    pub trace_id: String,
    pub compactions: Vec<Compaction>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One rewrite and what became of the names in what it replaced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Compaction {
    /// The call whose prompt it changed, numbered as `prompts.jsonl` (and under the proxy
    /// `calls.jsonl`) number it.
    pub call: u64,
    /// As the engine reported it: mechanism, position, the raw messages `start..end`, reasons, cost.
    pub rewrite: RewriteRecord,
    /// The replaced raw messages as one reference (`m000005..m000020`), for `originals` and `recall`.
    pub range: String,
    /// Names in the replaced messages that this call's prompt still holds, sorted.
    pub kept: Vec<String>,
    /// Names in the replaced messages that the previous call's prompt held and this one does
    /// not, sorted (every name the replaced messages held, when the previous prompt is not saved).
    pub dropped: Vec<String>,
    /// Names in the replaced messages that neither prompt holds: out of view before this rewrite
    /// (a compressed output, an earlier compaction), sorted.
    pub earlier: Vec<String>,
}

impl<H: Host> TraceStore<'_, H> {
    /// Every rewrite of the trace's saved calls, with the names it kept and dropped.
    pub async fn compactions(&self, trace_id: &str) -> Result<CompactionsPage> {
        let dir = TraceDir::new(&self.root, trace_id)?;
        read_meta(self.host, &dir, trace_id).await?;
        let lines = self.prompt_lines(&dir).await?;
        let mut page = CompactionsPage { trace_id: trace_id.to_owned(), compactions: Vec::new(), notes: Vec::new() };
        // Each call with a rewrite, and the saved call before it.
        let pairs: Vec<(Option<&CallPrompt>, &CallPrompt)> = lines
            .iter()
            .enumerate()
            .filter(|(_, line)| !line.rewrites.is_empty())
            .map(|(i, line)| (i.checked_sub(1).map(|p| &lines[p]).filter(|p| p.call < line.call), line))
            .collect();
        if pairs.is_empty() {
            return Ok(page);
        }
        let wanted: BTreeSet<&str> =
            pairs.iter().flat_map(|(before, after)| before.iter().chain([after])).flat_map(|l| l.part_ids()).collect();
        let parts = self.parts(&dir, &wanted).await?;
        // Only the replaced messages are read (a long session holds thousands).
        let mut messages: BTreeMap<usize, Message> = BTreeMap::new();
        for i in pairs.iter().flat_map(|(_, after)| after.rewrites.iter().flat_map(|r| r.start..r.end)) {
            if messages.contains_key(&i) {
                continue;
            }
            let id = MessageId::for_sequence(i as u64);
            match read_message(self.host, &dir, id.as_str()).await {
                Ok(Some(message)) => {
                    messages.insert(i, message);
                }
                Ok(None) => page.notes.push(format!("{} is missing", dir.message(id.as_str()))),
                // A damaged file is a note; a host that cannot read fails the answer.
                Err(e) if e.code() == "invalid_input" => page.notes.push(e.to_string()),
                Err(e) => return Err(e),
            }
        }
        let text = |line: &CallPrompt| line.clone().put_back(&parts).map(|prompt| prompt_text(&prompt));
        for (before, after) in pairs {
            let after_text = match text(after) {
                Ok(text) => text,
                Err(e) => {
                    page.notes.push(format!("the prompt of call {} cannot be read: {e}", after.call));
                    continue;
                }
            };
            let before_text = before.and_then(|b| text(b).ok());
            for rewrite in &after.rewrites {
                let replaced: Vec<&Message> = messages.range(rewrite.start..rewrite.end).map(|(_, m)| m).collect();
                let names: Vec<String> = replaced
                    .iter()
                    .flat_map(|m| references_in(&original(m)))
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                let in_after = held(&names, &after_text);
                let in_before = before_text.as_deref().map(|t| held(&names, t));
                let (mut kept, mut dropped, mut earlier) = (Vec::new(), Vec::new(), Vec::new());
                for (i, name) in names.into_iter().enumerate() {
                    if in_after[i] {
                        kept.push(name);
                    } else if in_before.as_ref().is_none_or(|b| b[i]) {
                        dropped.push(name);
                    } else {
                        earlier.push(name);
                    }
                }
                let range = match (replaced.first(), replaced.last()) {
                    (Some(first), Some(last)) => format!("{}..{}", first.id, last.id),
                    _ => String::new(),
                };
                page.compactions.push(Compaction {
                    call: after.call,
                    rewrite: rewrite.clone(),
                    range,
                    kept,
                    dropped,
                    earlier,
                });
            }
        }
        Ok(page)
    }
}

/// Everything a prompt's messages say, one message per line.
fn prompt_text(prompt: &Assembly) -> String {
    prompt.view.messages.iter().map(|m| content_text(&m.content)).collect::<Vec<_>>().join("\n")
}

/// Which of `names` occur in `text`, in one pass.
fn held(names: &[String], text: &str) -> Vec<bool> {
    let mut found = vec![false; names.len()];
    if let Ok(automaton) = AhoCorasick::new(names) {
        for m in automaton.find_overlapping_iter(text) {
            found[m.pattern().as_usize()] = true;
        }
    }
    found
}
