//! How the prompt shows the recorded history (L3). The raw trace is never changed; this records
//! what replaced what: the history forms of settled tool outputs (R3.1), the archived summary
//! (R4.5) and pruned outputs (R4.7).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::model::{ContentPart, Message, Role};
use crate::prompt::template::{body, render};
use crate::prompt::{Layer, PromptMessage};

const PRUNED: &str = include_str!("../../prompts/output_pruned.md");

/// The prompt's view of the history.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HistoryView {
    /// Tool outputs of messages before this index belong to finished rounds and are shown in
    /// their history form.
    pub settled: usize,
    /// History forms of settled tool outputs, by message index.
    pub forms: BTreeMap<usize, String>,
    /// The archived summary and the raw range it replaces.
    pub summary: Option<ArchivedSummary>,
    /// Tool messages whose output the prune stage replaced by a placeholder.
    pub pruned: BTreeSet<usize>,
    /// Compactions that failed in a row; at [`MAX_FAILED_COMPACTIONS`] automatic compaction stops.
    pub failed_compactions: u32,
}

/// After this many failed compactions in a row, automatic compaction stops and says so.
pub const MAX_FAILED_COMPACTIONS: u32 = 3;

/// An archived summary (R4.5), or the notice of a hard truncation when the summary failed (R4.6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArchivedSummary {
    /// The summary text as the prompt shows it.
    pub text: String,
    /// Raw messages `start..end` are replaced by it.
    pub start: usize,
    pub end: usize,
    /// No summary could be made: the range was dropped, `text` says so.
    pub truncated: bool,
}

impl HistoryView {
    /// The history as prompt messages, in order.
    pub fn render(&self, messages: &[Message]) -> Vec<PromptMessage> {
        let mut out = Vec::with_capacity(messages.len());
        for (i, message) in messages.iter().enumerate() {
            if let Some(summary) = &self.summary {
                if i == summary.start {
                    out.push(PromptMessage {
                        role: Role::System,
                        content: vec![ContentPart::Text { text: summary.text.clone() }],
                        layer: Layer::History,
                        source: None,
                    });
                }
                if (summary.start..summary.end).contains(&i) {
                    continue;
                }
            }
            out.push(self.render_message(i, message));
        }
        out
    }

    fn render_message(&self, i: usize, message: &Message) -> PromptMessage {
        let role = if message.role == Role::Summary { Role::System } else { message.role };
        let content = message
            .content
            .iter()
            .map(|part| match part {
                ContentPart::ToolResult(result) if self.pruned.contains(&i) => {
                    let mut result = result.clone();
                    result.output = render(body(PRUNED), &[("id", message.id.as_str())]);
                    result.stderr = None;
                    ContentPart::ToolResult(result)
                }
                ContentPart::ToolResult(result) if i < self.settled => match self.forms.get(&i) {
                    Some(form) => {
                        let mut result = result.clone();
                        result.output = form.clone();
                        result.stderr = None;
                        result.exit_code = None;
                        ContentPart::ToolResult(result)
                    }
                    None => part.clone(),
                },
                other => other.clone(),
            })
            .collect();
        PromptMessage { role, content, layer: Layer::History, source: Some(message.id.clone()) }
    }
}
