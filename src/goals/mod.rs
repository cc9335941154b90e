//! Goals, plans and exploration (R6): the goal tree the model maintains with the `goal` (or
//! `step`) tool, display numbering, exploration branches, the events of every change, the
//! renderings for the prompt and for debugging, the step view, agent phases, todo probing, and
//! the plans of other agents (`TodoWrite`, `update_plan`) mapped onto the tree.
//!
//! Pure: no I/O, no clock (times are passed in), deterministic output. Every tool call either
//! applies whole or fails with a [`ToolError`] the model can act on, leaving the tree as it was.

mod check;
mod dump;
mod events;
mod explore;
#[cfg(test)]
mod fixtures;
mod import;
mod numbering;
mod ops;
mod phase;
mod probe;
mod render;
mod schema;
mod stats;
mod steps;
mod sub_agents;
mod tasks;
mod text;
mod tool;
mod tree;

pub use dump::{date_time, dump_tree, dump_tree_json, is_utc_day, utc_day};
pub use events::{AffectedGoal, Event, EventKind, EventLog, GoalUpdates};
pub use explore::Merged;
pub use import::{CANCELLED_REASON, PlanItem, PlanStatus, parse_plan_call, sync_plan};
pub use ops::{Abandoned, Placement};
pub use phase::{Phase, PlanStep, PlanStepStatus, Revision, Workflow, revise_plan};
pub use probe::{Delivery, ProbeState, open_goals_reminder, todo_probe};
pub use schema::{explore_spec, goal_spec, goal_tool_specs, read_progress_spec, step_spec};
pub use stats::{GoalStats, PREVIEW_RUNS, Preview, preview_label};
pub use steps::{Step, StepStatus, StepType, goal_step_id, step_view};
pub use sub_agents::{SubAgentCall, finished_sub_agents, is_launch_notice, sub_agent_call};
pub use tasks::{TaskList, is_task_tool};
pub use tool::{
    EXPLORE_TOOL, GOAL_TOOL, READ_PROGRESS_TOOL, STEP_TOOL, ToolError, ToolOutcome, call_tool, explore_tool, focuses,
    goal_tool, parse_arguments, read_progress_tool, step_tool,
};
pub use tree::{
    Branch, BranchStatus, GOAL_TREE_FORMAT_VERSION, Goal, GoalConfig, GoalStatus, GoalTree, GoalType, PlanRevision,
};
