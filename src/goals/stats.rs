//! Per-goal statistics (R1.5): message count, tokens, cost and a short preview of tool calls.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::compress::{CompressConfig, Family, family_of};

/// How many runs of one tool a preview keeps (the most recent ones).
pub const PREVIEW_RUNS: usize = 8;

/// Statistics of a goal's messages. `self_stats` counts the goal's own messages,
/// `cumulative_stats` those of the goal and all its descendants.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(as = "StatsForm"))]
#[serde(from = "StatsForm", into = "StatsForm")]
pub struct GoalStats {
    pub message_count: u64,
    pub total_tokens: u64,
    pub total_cost: f64,
    pub preview: Preview,
}

impl GoalStats {
    /// Count one message with its tokens, cost (negative or non-finite counts as 0) and the
    /// tools it called.
    pub fn add_message(&mut self, tokens: u64, cost: f64, tool_names: &[&str]) {
        self.message_count = self.message_count.saturating_add(1);
        self.total_tokens = self.total_tokens.saturating_add(tokens);
        self.total_cost = add_costs(self.total_cost, cost);
        for name in tool_names {
            self.preview.push(&preview_label(name));
        }
    }
}

/// A cost that can be summed: negative and non-finite costs count as 0.
pub(crate) fn clean_cost(cost: f64) -> f64 {
    if cost.is_finite() && cost > 0.0 { cost } else { 0.0 }
}

/// `total + cost`, staying finite (JSON has no infinity: it would be written as `null`).
pub(crate) fn add_costs(total: f64, cost: f64) -> f64 {
    (clean_cost(total) + clean_cost(cost)).min(f64::MAX)
}

/// The tool calls of a goal as runs of one label, e.g. `read → edit × 2 → bash`: consecutive
/// calls of one tool collapse into one run, and only the last [`PREVIEW_RUNS`] runs are kept
/// (`… → ` in front when older ones were dropped).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preview {
    runs: Vec<(String, u32)>,
    truncated: bool,
}

impl Preview {
    /// Append one call of the tool with this label.
    pub fn push(&mut self, label: &str) {
        match self.runs.last_mut() {
            Some((last, count)) if last == label => *count = count.saturating_add(1),
            _ => self.runs.push((label.to_owned(), 1)),
        }
        if self.runs.len() > PREVIEW_RUNS {
            self.runs.remove(0);
            self.truncated = true;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The text form; `None` when no tool was called.
    pub fn text(&self) -> Option<String> {
        if self.runs.is_empty() {
            return None;
        }
        let mut parts: Vec<String> = Vec::with_capacity(self.runs.len() + 1);
        if self.truncated {
            parts.push("…".to_owned());
        }
        for (label, count) in &self.runs {
            parts.push(if *count > 1 { format!("{label} × {count}") } else { label.clone() });
        }
        Some(parts.join(" → "))
    }

    /// Parse the text form back; labels never hold ` → ` or ` × ` (see [`preview_label`]).
    pub fn parse(text: &str) -> Preview {
        let mut preview = Preview::default();
        for (i, part) in text.split(" → ").enumerate() {
            if i == 0 && part == "…" {
                preview.truncated = true;
                continue;
            }
            let (label, count) = match part.rsplit_once(" × ") {
                Some((label, count)) => (label, count.parse::<u32>().unwrap_or(1).max(1)),
                None => (part, 1),
            };
            if !label.is_empty() {
                preview.runs.push((label.to_owned(), count));
            }
        }
        if preview.runs.len() > PREVIEW_RUNS {
            let extra = preview.runs.len() - PREVIEW_RUNS;
            preview.runs.drain(..extra);
            preview.truncated = true;
        }
        preview
    }
}

/// The label of a tool in a preview: its family (`read`, `edit`, `bash` …) when it has one,
/// else its name, lowercased, spaces and arrows replaced by `_`, at most 40 characters.
pub fn preview_label(tool_name: &str) -> String {
    let family = family_of(tool_name, &Value::Null, &CompressConfig::default());
    if family != Family::Default {
        return family.name().to_owned();
    }
    let label: String = tool_name
        .trim()
        .to_lowercase()
        .chars()
        .map(|c| if c.is_whitespace() || c == '→' || c == '×' || c == '…' { '_' } else { c })
        .take(40)
        .collect();
    if label.is_empty() { "tool".to_owned() } else { label }
}

/// The persisted form of [`GoalStats`] (seed 002): the preview as its text.
#[derive(Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
struct StatsForm {
    #[serde(default)]
    message_count: u64,
    #[serde(default)]
    total_tokens: u64,
    #[serde(default)]
    total_cost: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    preview: Option<String>,
}

impl From<StatsForm> for GoalStats {
    fn from(form: StatsForm) -> Self {
        GoalStats {
            message_count: form.message_count,
            total_tokens: form.total_tokens,
            total_cost: clean_cost(form.total_cost),
            preview: form.preview.as_deref().map(Preview::parse).unwrap_or_default(),
        }
    }
}

impl From<GoalStats> for StatsForm {
    fn from(stats: GoalStats) -> Self {
        StatsForm {
            message_count: stats.message_count,
            total_tokens: stats.total_tokens,
            total_cost: stats.total_cost,
            preview: stats.preview.text(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preview(names: &[&str]) -> Option<String> {
        let mut stats = GoalStats::default();
        stats.add_message(10, 0.5, names);
        stats.preview.text()
    }

    #[test]
    fn previews_collapse_repeats_and_keep_the_last_runs() {
        assert_eq!(preview(&["Read", "edit_file", "str_replace", "bash"]).as_deref(), Some("read → edit × 2 → bash"));
        assert_eq!(preview(&[]), None);
        assert_eq!(preview(&["My Tool → x"]).as_deref(), Some("my_tool___x"));
        let many: Vec<String> = (0..12).map(|i| format!("t{i}")).collect();
        let names: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(preview(&names).as_deref(), Some("… → t4 → t5 → t6 → t7 → t8 → t9 → t10 → t11"));
    }

    #[test]
    fn the_text_form_parses_back() {
        for text in ["read → edit × 2 → bash", "… → a → b × 7", "glob"] {
            assert_eq!(Preview::parse(text).text().as_deref(), Some(text));
        }
        assert_eq!(Preview::parse("a × x").text().as_deref(), Some("a"));
        let stats =
            GoalStats { message_count: 2, total_tokens: 9, total_cost: 0.25, preview: Preview::parse("read × 2") };
        let json = serde_json::to_string(&stats).unwrap();
        assert_eq!(json, r#"{"message_count":2,"total_tokens":9,"total_cost":0.25,"preview":"read × 2"}"#);
        assert_eq!(serde_json::from_str::<GoalStats>(&json).unwrap(), stats);
    }

    #[test]
    fn bad_costs_count_as_zero() {
        let mut stats = GoalStats::default();
        stats.add_message(u64::MAX, f64::NAN, &[]);
        stats.add_message(5, -1.0, &[]);
        stats.add_message(5, f64::INFINITY, &[]);
        assert_eq!((stats.message_count, stats.total_tokens, stats.total_cost), (3, u64::MAX, 0.0));
        stats.add_message(0, f64::MAX, &[]);
        stats.add_message(0, f64::MAX, &[]);
        assert_eq!(stats.total_cost, f64::MAX);
    }
}
