//! Display numbers (R2.2, R6.2): `1`, `2`, `2.1` …, regenerated from the tree on every use,
//! continuous among the goals shown: abandoned goals and everything under them are skipped.

use std::collections::BTreeMap;

use super::{GoalStatus, GoalTree, ToolError};
use crate::model::GoalId;

/// How many numbers an error lists before `…`.
const LISTED: usize = 30;

/// A goal in display order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Numbered {
    /// Index in [`GoalTree::goals`].
    pub index: usize,
    pub number: String,
    /// 0 for the top level.
    pub depth: usize,
}

impl GoalTree {
    /// The goals shown to the model, in display order, with their numbers.
    pub fn display_numbers(&self) -> Vec<(GoalId, String)> {
        self.numbered(false)
            .into_iter()
            .filter_map(|n| Some((self.goals().get(n.index)?.id.clone(), n.number)))
            .collect()
    }

    /// The display number of a goal; `None` when it is hidden (abandoned, or under an abandoned
    /// goal) or unknown.
    pub fn display_number(&self, id: &GoalId) -> Option<String> {
        let index = self.index_of(id)?;
        self.numbered(false).into_iter().find(|n| n.index == index).map(|n| n.number)
    }

    /// Numbers over every goal, abandoned ones included (seed 002's listing of the data): what
    /// a late reference to an abandoned goal is resolved against.
    pub fn data_numbers(&self) -> Vec<(GoalId, String)> {
        self.numbered(true)
            .into_iter()
            .filter_map(|n| Some((self.goals().get(n.index)?.id.clone(), n.number)))
            .collect()
    }

    /// Pre-order over the tree; with `include_abandoned` false, abandoned goals and their
    /// subtrees are left out and do not take a number. Goals on a parent cycle (which
    /// [`GoalTree::validate`] refuses) are unreachable and left out.
    pub(crate) fn numbered(&self, include_abandoned: bool) -> Vec<Numbered> {
        let goals = self.goals();
        let position: BTreeMap<&GoalId, usize> = goals.iter().enumerate().map(|(i, g)| (&g.id, i)).collect();
        let mut roots = Vec::new();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); goals.len()];
        for (i, goal) in goals.iter().enumerate() {
            if !include_abandoned && goal.status == GoalStatus::Abandoned {
                continue;
            }
            match goal.parent_id.as_ref() {
                None => roots.push(i),
                Some(parent) => {
                    if let Some(list) = position.get(parent).and_then(|&p| children.get_mut(p)) {
                        list.push(i);
                    }
                }
            }
        }
        let mut out = Vec::new();
        let mut stack: Vec<Numbered> = roots
            .iter()
            .enumerate()
            .rev()
            .map(|(k, &index)| Numbered { index, number: (k + 1).to_string(), depth: 0 })
            .collect();
        while let Some(node) = stack.pop() {
            if out.len() >= goals.len() {
                break;
            }
            if let Some(list) = children.get(node.index) {
                for (k, &child) in list.iter().enumerate().rev() {
                    let number = format!("{}.{}", node.number, k + 1);
                    stack.push(Numbered { index: child, number, depth: node.depth + 1 });
                }
            }
            out.push(node);
        }
        out
    }

    /// The index of the goal the model calls `number` (`2`, `2.1`, `2.`); errors say what the
    /// numbers are, or that the goal was abandoned.
    pub(crate) fn resolve(&self, op: &str, number: &str) -> Result<usize, ToolError> {
        let wanted = number.trim().trim_end_matches('.').trim();
        if wanted.is_empty() {
            return Err(ToolError::new(format!("{op}: the goal number is empty; {}", self.numbers_hint())));
        }
        if let Some(found) = self.numbered(false).into_iter().find(|n| n.number == wanted) {
            return Ok(found.index);
        }
        let abandoned = self.numbered(true).into_iter().find(|n| n.number == wanted).is_some_and(|n| {
            let hidden = |i: usize| self.goals().get(i).is_some_and(|g| g.status == GoalStatus::Abandoned);
            let id = self.goals().get(n.index).map(|g| g.id.clone());
            hidden(n.index)
                || id.is_some_and(|id| self.ancestors(&id).iter().any(|a| self.index_of(a).is_some_and(hidden)))
        });
        if abandoned {
            return Err(ToolError::new(format!("{op}: goal {wanted} was abandoned; {}", self.numbers_hint())));
        }
        Err(ToolError::new(format!("{op}: no goal numbered {wanted}; {}", self.numbers_hint())))
    }

    /// `goals are 1, 2, 2.1`, or `there are no goals yet`.
    pub(crate) fn numbers_hint(&self) -> String {
        let numbers: Vec<String> = self.numbered(false).into_iter().map(|n| n.number).collect();
        if numbers.is_empty() {
            return "there are no goals yet; add some first".to_owned();
        }
        let mut listed = numbers.iter().take(LISTED).cloned().collect::<Vec<_>>().join(", ");
        if numbers.len() > LISTED {
            listed.push_str(", …");
        }
        format!("goals are {listed}")
    }

    /// `2.1 description` for messages to the model; the internal id when the goal is hidden.
    pub(crate) fn label(&self, index: usize) -> String {
        let Some(goal) = self.goals().get(index) else { return String::new() };
        let number = self.numbered(false).into_iter().find(|n| n.index == index).map(|n| n.number);
        match number {
            Some(number) => format!("{number} {}", goal.description),
            None => goal.description.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::goals::fixtures::test_support::{id, run, tree_after};

    #[test]
    fn numbers_are_continuous_and_skip_abandoned_subtrees() {
        let mut tree = tree_after(&[r#"{"add": "a, b, c"}"#, r#"{"focus": "2"}"#, r#"{"add": "b1, b2"}"#]);
        run(&mut tree, r#"{"focus": "2.1"}"#);
        run(&mut tree, r#"{"add": "b1x"}"#);
        let shown = |t: &crate::goals::GoalTree| -> Vec<String> {
            t.display_numbers().into_iter().map(|(g, n)| format!("{n}={g}")).collect()
        };
        assert_eq!(shown(&tree), vec!["1=1", "2=2", "2.1=4", "2.1.1=6", "2.2=5", "3=3"]);
        tree.record_message(&id(2), 1, 0.0, &[]).unwrap();
        run(&mut tree, r#"{"focus": "2"}"#);
        run(&mut tree, r#"{"abandon": "no"}"#);
        assert_eq!(shown(&tree), vec!["1=1", "2=3"]);
        let data: Vec<String> = tree.data_numbers().into_iter().map(|(g, n)| format!("{n}={g}")).collect();
        assert_eq!(data, vec!["1=1", "2=2", "2.1=4", "2.1.1=6", "2.2=5", "3=3"]);
        assert_eq!(tree.display_number(&id(4)), None);
        assert_eq!(tree.display_number(&id(3)).as_deref(), Some("2"));
        assert_eq!(tree.display_number(&id(42)), None);
    }

    #[test]
    fn references_resolve_or_say_why_not() {
        let mut tree = tree_after(&[r#"{"add": "a, b"}"#, r#"{"focus": "2"}"#, r#"{"add": "b1"}"#]);
        assert_eq!(tree.resolve("focus", "2.1").unwrap(), 2);
        assert_eq!(tree.resolve("focus", "2.").unwrap(), 1);
        assert_eq!(
            tree.resolve("focus", "").unwrap_err().message,
            "focus: the goal number is empty; goals are 1, 2, 2.1"
        );
        tree.record_message(&id(2), 1, 0.0, &[]).unwrap();
        run(&mut tree, r#"{"abandon": "no"}"#);
        // 2 now names what was 3; 2.1 was under the abandoned goal.
        assert_eq!(tree.resolve("focus", "2.1").unwrap_err().message, "focus: goal 2.1 was abandoned; goals are 1");
        assert_eq!(tree.resolve("focus", "2").unwrap_err().message, "focus: goal 2 was abandoned; goals are 1");
        let many: Vec<String> = (0..40).map(|i| format!("g{i}")).collect();
        let mut big = crate::goals::GoalTree::new("m");
        big.add_goals(&many.iter().map(String::as_str).collect::<Vec<_>>(), "", crate::goals::Placement::TopLevel)
            .unwrap();
        assert!(big.numbers_hint().ends_with("29, 30, …"), "{}", big.numbers_hint());
    }
}
