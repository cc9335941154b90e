//! Todo probing (R6.10, seed 000 appendix A): when a sub-task looks delivered but the plan was
//! not updated, a short reminder for the prompt tail asks the model to update it (and to ask
//! the user when a decision needs confirming). Pure: the caller keeps the state between calls.

use serde::{Deserialize, Serialize};

use super::text::{fill, text};

/// What looked like a delivered sub-task since the last call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// A test run passed.
    TestPassed,
    /// An edit was applied.
    EditLanded,
    /// Anything else the host counts as a delivered sub-task (a `done` it expected, say).
    SubTask,
}

/// What the probe remembers between calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeState {
    /// Whether the previous call gave a reminder.
    pub reminded_last_call: bool,
}

/// The reminder for this call, if any, and the state for the next one. A reminder is given
/// when something was delivered and the plan did not change since, and never on two
/// consecutive calls.
pub fn todo_probe(delivered: Option<Delivery>, plan_changed: bool, state: ProbeState) -> (Option<String>, ProbeState) {
    let reminder = match delivered {
        Some(what) if !plan_changed && !state.reminded_last_call => {
            let what = match what {
                Delivery::TestPassed => text("probe_test_passed"),
                Delivery::EditLanded => text("probe_edit_landed"),
                Delivery::SubTask => text("probe_sub_task"),
            };
            Some(fill("probe", &[("delivered", what)]))
        }
        _ => None,
    };
    let next = ProbeState { reminded_last_call: reminder.is_some() };
    (reminder, next)
}

/// The reminder after a plain reply while `tree` has open goals (R6.8).
pub fn open_goals_reminder(tree: &super::GoalTree) -> String {
    fill("open_goals", &[("plan", &tree.to_todo_string())])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reminds_once_when_a_delivery_left_the_plan_alone() {
        let fresh = ProbeState::default();
        let (reminder, state) = todo_probe(Some(Delivery::TestPassed), false, fresh);
        let reminder = reminder.unwrap();
        assert!(
            reminder.starts_with("<system-reminder>\nA test passed, but the plan has not been updated."),
            "{reminder}"
        );
        assert!(reminder.ends_with("</system-reminder>"));
        assert!(state.reminded_last_call);

        // Never twice in a row, then again once a call passed without one.
        let (again, state) = todo_probe(Some(Delivery::EditLanded), false, state);
        assert_eq!(again, None);
        assert!(!state.reminded_last_call);
        assert!(todo_probe(Some(Delivery::EditLanded), false, state).0.unwrap().contains("An edit landed"));

        assert_eq!(todo_probe(Some(Delivery::SubTask), true, fresh).0, None);
        assert_eq!(todo_probe(None, false, fresh), (None, fresh));
    }
}
