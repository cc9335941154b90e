//! The state board (R5.2) and its deltas (R5.3): what the agent is doing, what is confirmed and
//! where the proof is, the code it works on. Deltas are versioned; the latest wins, and a
//! conflict with an earlier version is merged and marked instead of silently overwritten.

use serde::{Deserialize, Serialize};

/// A code anchor: a snippet copied from observed content, with where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Anchor {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub snippet: String,
}

/// A claim and the pointers that prove it (`file:src/a.py:L40-L55`, `cmd#12 exit=1`,
/// `test#3 failed: …`). A fact whose evidence does not resolve is kept as unknown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Fact {
    pub text: String,
    #[serde(default)]
    pub evidence: Vec<String>,
}

/// STATE_DELTA vN: what changed in the board. Empty fields leave the board as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields = nullable))]
#[serde(default, deny_unknown_fields)]
pub struct StateDelta {
    /// Assigned by the engine when the delta is applied.
    #[cfg_attr(test, ts(optional = nullable))]
    pub version: u32,
    pub current_goal: Option<String>,
    pub goal_shift_reason: Option<String>,
    #[cfg_attr(test, ts(optional = nullable))]
    pub confirmed_facts: Vec<Fact>,
    /// Claims whose evidence did not check out, kept with the reason (R5.6).
    #[cfg_attr(test, ts(optional = nullable))]
    pub unknown: Vec<String>,
    #[cfg_attr(test, ts(optional = nullable))]
    pub open_questions: Vec<String>,
    #[cfg_attr(test, ts(optional = nullable))]
    pub anchors: Vec<Anchor>,
    #[cfg_attr(test, ts(optional = nullable))]
    pub exec_assertions: Vec<String>,
    pub status: Option<String>,
    #[cfg_attr(test, ts(optional = nullable))]
    pub next_actions: Vec<String>,
}

impl StateDelta {
    pub fn is_empty(&self) -> bool {
        let StateDelta {
            version: _,
            current_goal,
            goal_shift_reason,
            confirmed_facts,
            unknown,
            open_questions,
            anchors,
            exec_assertions,
            status,
            next_actions,
        } = self;
        current_goal.is_none()
            && goal_shift_reason.is_none()
            && confirmed_facts.is_empty()
            && unknown.is_empty()
            && open_questions.is_empty()
            && anchors.is_empty()
            && exec_assertions.is_empty()
            && status.is_none()
            && next_actions.is_empty()
    }
}

/// The board: every delta applied in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(default)]
pub struct StateBoard {
    /// The version of the newest delta applied.
    pub version: u32,
    pub current_goal: String,
    pub goal_shift_reason: Option<String>,
    pub confirmed_facts: Vec<Fact>,
    pub unknown: Vec<String>,
    pub open_questions: Vec<String>,
    pub anchors: Vec<Anchor>,
    pub exec_assertions: Vec<String>,
    pub status: String,
    pub next_actions: Vec<String>,
    /// Conflicts merged so far, newest last: `v5 goal changed without a reason`, ….
    pub conflicts: Vec<String>,
}

/// How many facts, anchors and assertions the board keeps (newest win).
const KEPT: usize = 12;

impl StateBoard {
    /// Apply `delta` as version `board.version + 1` (its own `version` is overwritten) and return
    /// the conflicts it raised. Scalars and the action list: latest wins. Facts, anchors and
    /// assertions accumulate (newest kept); an anchor over the same lines with another snippet
    /// replaces the older one and is marked; a goal change without a reason is marked.
    pub fn apply(&mut self, delta: &mut StateDelta) -> Vec<String> {
        self.version += 1;
        delta.version = self.version;
        let v = self.version;
        let mut conflicts = Vec::new();
        if let Some(goal) = delta.current_goal.as_ref().filter(|g| !g.trim().is_empty()) {
            if !self.current_goal.is_empty() && *goal != self.current_goal && delta.goal_shift_reason.is_none() {
                conflicts.push(format!("v{v} goal changed without a reason (was: {})", self.current_goal));
            }
            self.current_goal = goal.clone();
            self.goal_shift_reason = delta.goal_shift_reason.clone();
        }
        for fact in &delta.confirmed_facts {
            self.unknown.retain(|u| *u != fact.text);
            upsert(&mut self.confirmed_facts, fact.clone(), |a, b| a.text == b.text);
        }
        for claim in &delta.unknown {
            if self.confirmed_facts.iter().any(|f| f.text == *claim) {
                conflicts.push(format!("v{v} no longer confirmed: {claim}"));
                self.confirmed_facts.retain(|f| f.text != *claim);
            }
            upsert(&mut self.unknown, claim.clone(), |a, b| a == b);
        }
        for anchor in &delta.anchors {
            let same_lines = |a: &Anchor| {
                a.path == anchor.path && a.start_line == anchor.start_line && a.end_line == anchor.end_line
            };
            if self.anchors.iter().any(|a| same_lines(a) && a.snippet != anchor.snippet) {
                conflicts.push(format!(
                    "v{v} anchor {}:L{}-L{} replaced by newer content",
                    anchor.path, anchor.start_line, anchor.end_line
                ));
            }
            upsert(&mut self.anchors, anchor.clone(), |a, b| same_lines(a) || a == b);
        }
        for assertion in &delta.exec_assertions {
            upsert(&mut self.exec_assertions, assertion.clone(), |a, b| a == b);
        }
        if !delta.open_questions.is_empty() {
            self.open_questions = delta.open_questions.clone();
        }
        if let Some(status) = &delta.status {
            self.status = status.clone();
        }
        if !delta.next_actions.is_empty() {
            self.next_actions = delta.next_actions.iter().take(3).cloned().collect();
        }
        for list in [&mut self.unknown, &mut self.exec_assertions, &mut self.open_questions] {
            keep_newest(list);
        }
        keep_newest(&mut self.confirmed_facts);
        keep_newest(&mut self.anchors);
        self.conflicts.extend(conflicts.iter().cloned());
        keep_newest(&mut self.conflicts);
        conflicts
    }
}

/// Replace the first item `same` as `item` (moving it to the end, as the newest) or append it.
fn upsert<T>(list: &mut Vec<T>, item: T, same: impl Fn(&T, &T) -> bool) {
    list.retain(|existing| !same(existing, &item));
    list.push(item);
}

fn keep_newest<T>(list: &mut Vec<T>) {
    if list.len() > KEPT {
        list.drain(..list.len() - KEPT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anchor(snippet: &str) -> Anchor {
        Anchor { path: "src/a.py".into(), start_line: 40, end_line: 41, snippet: snippet.into() }
    }

    #[test]
    fn latest_wins_and_conflicts_are_marked() {
        let mut board = StateBoard::default();
        let mut first = StateDelta {
            current_goal: Some("fix the parser".into()),
            confirmed_facts: vec![Fact { text: "parse() drops tabs".into(), evidence: vec!["cmd#3 exit=1".into()] }],
            anchors: vec![anchor("x = 1")],
            next_actions: vec!["a".into(), "b".into(), "c".into(), "d".into()],
            ..Default::default()
        };
        assert!(board.apply(&mut first).is_empty());
        assert_eq!((first.version, board.next_actions.len()), (1, 3));

        let mut second = StateDelta {
            current_goal: Some("fix the lexer".into()),
            unknown: vec!["parse() drops tabs".into()],
            anchors: vec![anchor("x = 2")],
            ..Default::default()
        };
        let conflicts = board.apply(&mut second);
        assert_eq!(second.version, 2);
        assert_eq!(conflicts.len(), 3, "{conflicts:?}");
        assert!(conflicts[0].starts_with("v2 goal changed without a reason"));
        assert!(board.confirmed_facts.is_empty());
        assert_eq!(board.anchors, vec![anchor("x = 2")]);
        assert_eq!(board.current_goal, "fix the lexer");
        assert_eq!(board.next_actions.len(), 3, "an empty list leaves the actions as they were");
    }
}
