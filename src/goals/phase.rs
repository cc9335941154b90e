//! Agent phases (R6.8, seed 003): Planning → Executing{step} → Completed, where only an
//! explicit advance moves on (a plain text reply never ends the workflow), and plan revision
//! after user feedback (R6.9): diff the revised plan's (title, description) pairs against the
//! last snapshot, keep the finished steps before the first mismatch, and resume there.

use serde::{Deserialize, Serialize};

use super::ToolError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum Phase {
    Planning,
    /// Working on the step at this index.
    Executing {
        step: usize,
    },
    Completed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStepStatus {
    Pending,
    Running,
    Done,
    Failed,
}

/// One step of the plan; `summary` is filled when it is done and stands in for its messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanStep {
    pub title: String,
    pub description: String,
    pub status: PlanStepStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

impl PlanStep {
    pub fn new(title: impl Into<String>, description: impl Into<String>) -> Self {
        PlanStep {
            title: title.into(),
            description: description.into(),
            status: PlanStepStatus::Pending,
            summary: None,
        }
    }
}

/// Seed 003's agent state without the chat history (which the engine keeps): the phase, the
/// plan and the scratchpad. Its serde form is the snapshot appended on every step change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Workflow {
    pub phase: Phase,
    pub steps: Vec<PlanStep>,
    #[serde(default)]
    pub scratchpad: String,
}

impl Default for Workflow {
    fn default() -> Self {
        Workflow { phase: Phase::Planning, steps: Vec::new(), scratchpad: String::new() }
    }
}

/// The result of [`revise_plan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    /// The first step whose (title, description) differs; `None` when the plans are equal.
    pub first_mismatch: Option<usize>,
    /// The revised workflow, already in the phase it resumes in.
    pub workflow: Workflow,
}

impl Workflow {
    /// Set the plan while planning.
    pub fn set_plan(&mut self, steps: Vec<PlanStep>) -> Result<(), ToolError> {
        if self.phase != Phase::Planning {
            return Err(ToolError::new("plan: the plan is set while planning; revise it with feedback instead"));
        }
        self.steps = steps;
        Ok(())
    }

    /// A plain text reply: shown to the user, and never a transition.
    pub fn text_reply(&self) -> Phase {
        self.phase
    }

    /// The explicit advance (`advance_step`): from planning, start the first step; while
    /// executing, finish the current step with `summary` and start the next, or complete.
    pub fn advance(&mut self, summary: &str) -> Result<Phase, ToolError> {
        match self.phase {
            Phase::Planning => {
                let Some(first) = self.steps.first_mut() else {
                    return Err(ToolError::new("advance: the plan has no steps; make a plan first"));
                };
                first.status = PlanStepStatus::Running;
                self.phase = Phase::Executing { step: 0 };
            }
            Phase::Executing { step } => {
                let summary = summary.trim();
                if summary.is_empty() {
                    return Err(ToolError::new("advance: the summary is empty; say what the step achieved"));
                }
                let Some(current) = self.steps.get_mut(step) else {
                    return Err(ToolError::new(format!("advance: there is no step {}", step + 1)));
                };
                current.status = PlanStepStatus::Done;
                current.summary = Some(summary.to_owned());
                self.phase = self.start_from(step + 1);
            }
            Phase::Completed => return Err(ToolError::new("advance: the workflow is already completed")),
        }
        Ok(self.phase)
    }

    /// The current step failed: it is marked failed and the phase stays, for a plan revision.
    pub fn fail(&mut self, reason: &str) -> Result<(), ToolError> {
        let Phase::Executing { step } = self.phase else {
            return Err(ToolError::new("fail: no step is running"));
        };
        let Some(current) = self.steps.get_mut(step) else {
            return Err(ToolError::new(format!("fail: there is no step {}", step + 1)));
        };
        current.status = PlanStepStatus::Failed;
        current.summary = Some(reason.trim().to_owned()).filter(|r| !r.is_empty());
        Ok(())
    }

    /// Start the first step at or after `from` that is not done, or complete.
    fn start_from(&mut self, from: usize) -> Phase {
        let next = self.steps.iter().enumerate().skip(from).find(|(_, s)| s.status != PlanStepStatus::Done);
        match next.map(|(i, _)| i) {
            Some(i) => {
                if let Some(step) = self.steps.get_mut(i) {
                    step.status = PlanStepStatus::Running;
                }
                Phase::Executing { step: i }
            }
            None => Phase::Completed,
        }
    }
}

impl super::GoalTree {
    /// The phase of the work this tree plans (R6.8): planning until it holds a goal of the
    /// plan; executing while one is open (the step: the top-level goal being worked on, the
    /// focused one's, else the first open one, counted among the top-level goals); completed
    /// when none is.
    pub fn phase(&self) -> Phase {
        use super::GoalStatus;
        let steps: Vec<&super::Goal> = self.plan_steps().collect();
        if steps.is_empty() {
            return Phase::Planning;
        }
        let open = |g: &&super::Goal| matches!(g.status, GoalStatus::Pending | GoalStatus::InProgress);
        let focused = self.current_id().map(|id| self.ancestors(id).last().cloned().unwrap_or_else(|| id.clone()));
        let step = steps
            .iter()
            .position(|g| Some(&g.id) == focused.as_ref() && open(g))
            .or_else(|| steps.iter().position(open));
        step.map_or(Phase::Completed, |step| Phase::Executing { step })
    }

    /// The plan's steps, its top-level goals; their count is the `n` of "step k of n".
    pub fn plan_steps(&self) -> impl Iterator<Item = &super::Goal> {
        self.children(None).filter(|g| g.goal_type == super::GoalType::Normal)
    }
}

/// Revise a plan (R6.9) like a build cache: steps before the first mismatch keep their status
/// and summary when done (others go back to pending); from the first mismatch on, the revised
/// steps are new. The workflow resumes at the first step not done; from planning it stays in
/// planning.
pub fn revise_plan(snapshot: &Workflow, revised: &[(String, String)]) -> Result<Revision, ToolError> {
    if revised.is_empty() {
        return Err(ToolError::new("revise: the revised plan has no steps"));
    }
    let same = |old: &PlanStep, new: &(String, String)| old.title == new.0 && old.description == new.1;
    let first_mismatch = (0..revised.len().max(snapshot.steps.len()))
        .find(|&i| !matches!((snapshot.steps.get(i), revised.get(i)), (Some(old), Some(new)) if same(old, new)));
    let keep = first_mismatch.unwrap_or(revised.len());
    let mut steps: Vec<PlanStep> = Vec::with_capacity(revised.len());
    for (i, (title, description)) in revised.iter().enumerate() {
        match snapshot.steps.get(i).filter(|_| i < keep) {
            Some(old) if old.status == PlanStepStatus::Done => steps.push(old.clone()),
            _ => steps.push(PlanStep::new(title.clone(), description.clone())),
        }
    }
    let mut workflow = Workflow { phase: Phase::Planning, steps, scratchpad: snapshot.scratchpad.clone() };
    if snapshot.phase != Phase::Planning {
        workflow.phase = workflow.start_from(0);
    }
    Ok(Revision { first_mismatch, workflow })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(titles: &[&str]) -> Vec<(String, String)> {
        titles.iter().map(|t| ((*t).to_owned(), format!("do {t}"))).collect()
    }

    fn workflow(titles: &[&str]) -> Workflow {
        let mut w = Workflow::default();
        w.set_plan(plan(titles).into_iter().map(|(t, d)| PlanStep::new(t, d)).collect()).unwrap();
        w
    }

    #[test]
    fn phases_move_only_on_an_explicit_advance() {
        let mut w = workflow(&["analyse", "implement"]);
        assert_eq!(w.text_reply(), Phase::Planning);
        assert_eq!(w.advance("").unwrap(), Phase::Executing { step: 0 });
        assert_eq!(w.text_reply(), Phase::Executing { step: 0 });
        assert_eq!(w.steps[0].status, PlanStepStatus::Running);
        assert!(w.advance(" ").unwrap_err().message.contains("summary is empty"));
        assert_eq!(w.advance("parser is in src/parse.rs").unwrap(), Phase::Executing { step: 1 });
        assert_eq!(w.steps[0].summary.as_deref(), Some("parser is in src/parse.rs"));
        assert_eq!(w.advance("fixed").unwrap(), Phase::Completed);
        assert_eq!(w.text_reply(), Phase::Completed);
        assert!(w.advance("again").unwrap_err().message.contains("already completed"));
        assert!(w.set_plan(Vec::new()).is_err());
    }

    #[test]
    fn an_empty_plan_cannot_start_and_failures_stay_put() {
        let mut w = Workflow::default();
        assert!(w.advance("").unwrap_err().message.contains("no steps"));
        assert!(w.fail("x").is_err());
        let mut w = workflow(&["a"]);
        w.advance("").unwrap();
        w.fail("tests do not build").unwrap();
        assert_eq!(w.phase, Phase::Executing { step: 0 });
        assert_eq!(w.steps[0].status, PlanStepStatus::Failed);
    }

    #[test]
    fn revision_keeps_finished_steps_before_the_first_mismatch() {
        let mut w = workflow(&["a", "b", "c", "d"]);
        w.advance("").unwrap();
        w.advance("a done").unwrap();
        w.advance("b done").unwrap();
        let revised = revise_plan(&w, &plan(&["a", "b", "c2", "d"])).unwrap();
        assert_eq!(revised.first_mismatch, Some(2));
        assert_eq!(revised.workflow.phase, Phase::Executing { step: 2 });
        assert_eq!(revised.workflow.steps[1].summary.as_deref(), Some("b done"));
        assert_eq!(revised.workflow.steps[2].title, "c2");
        assert_eq!(revised.workflow.steps[3].status, PlanStepStatus::Pending);

        let earlier = revise_plan(&w, &plan(&["a", "x", "c", "d"])).unwrap();
        assert_eq!((earlier.first_mismatch, earlier.workflow.phase), (Some(1), Phase::Executing { step: 1 }));
        assert_eq!(earlier.workflow.steps[1].summary, None);

        let same = revise_plan(&w, &plan(&["a", "b", "c", "d"])).unwrap();
        assert_eq!((same.first_mismatch, same.workflow.phase), (None, Phase::Executing { step: 2 }));

        let shorter = revise_plan(&w, &plan(&["a", "b"])).unwrap();
        assert_eq!((shorter.first_mismatch, shorter.workflow.phase), (Some(2), Phase::Completed));

        let longer = revise_plan(&w, &plan(&["a", "b", "c", "d", "e"])).unwrap();
        assert_eq!((longer.first_mismatch, longer.workflow.phase), (Some(4), Phase::Executing { step: 2 }));

        assert!(revise_plan(&w, &[]).is_err());
        let planning = revise_plan(&Workflow::default(), &plan(&["a"])).unwrap();
        assert_eq!((planning.first_mismatch, planning.workflow.phase), (Some(0), Phase::Planning));
    }
}
