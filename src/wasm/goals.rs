//! Goals, plans, events and explore branches: the `ContextEngine` methods of R6 and R8.2.

use wasm_bindgen::prelude::*;

use super::ContextEngine;
use super::convert::{js, to_js_value};
use crate::js_forms::{GoalPlan, MessageInput};

/// Tool arguments from JS: JSON text as the model wrote it, or an object.
fn arguments_text(arguments: JsValue) -> Result<String, JsValue> {
    if let Some(text) = arguments.as_string() {
        return Ok(text);
    }
    let json: serde_json::Value = super::convert::from_js(arguments, "tool arguments")?;
    Ok(json.to_string())
}

#[wasm_bindgen]
impl ContextEngine {
    /// The plan tools to offer the model (`goal`, `step`, `read_progress`, `explore`) as
    /// JSON-schema functions.
    #[wasm_bindgen(js_name = goalTools, unchecked_return_type = "ToolSpec[]")]
    pub fn goal_tools(&self) -> Result<JsValue, JsValue> {
        to_js_value(&self.engine.goal_tools())
    }

    /// Run a plan tool the model called. A refused call is a result with `is_error`, never a
    /// throw; `arguments` is the model's JSON text or an object.
    #[wasm_bindgen(js_name = callGoalTool, unchecked_return_type = "GoalToolResult")]
    pub fn call_goal_tool(
        &self,
        name: &str,
        #[wasm_bindgen(unchecked_param_type = "string | object")] arguments: JsValue,
    ) -> Result<JsValue, JsValue> {
        to_js_value(&self.engine.call_goal_tool(name, &arguments_text(arguments)?))
    }

    /// The `recall` tool to offer beside the plan tools: the originals of compressed forms.
    #[wasm_bindgen(js_name = recallTool, unchecked_return_type = "ToolSpec")]
    pub fn recall_tool(&self) -> Result<JsValue, JsValue> {
        to_js_value(&self.engine.recall_tool())
    }

    /// Answer a `recall` call from the raw trace; read-only, a bad call is a result with
    /// `is_error`, never a throw; `arguments` is the model's JSON text or an object.
    #[wasm_bindgen(unchecked_return_type = "RecallResult")]
    pub fn recall(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string | object")] arguments: JsValue,
    ) -> Result<JsValue, JsValue> {
        to_js_value(&self.engine.recall(&arguments_text(arguments)?))
    }

    /// The goal tree in its persisted form (`goal.json`).
    #[wasm_bindgen(js_name = goalTree, unchecked_return_type = "GoalTree")]
    pub fn goal_tree(&self) -> Result<JsValue, JsValue> {
        to_js_value(&self.engine.goal_tree())
    }

    /// The plan block, the todo list and the goals' numbers.
    #[wasm_bindgen(unchecked_return_type = "GoalPlan")]
    pub fn plan(&self) -> Result<JsValue, JsValue> {
        to_js_value(&GoalPlan::of(&self.engine.goal_tree()))
    }

    /// The step view (R1.4): each message as a typed step with its parent.
    #[wasm_bindgen(js_name = stepView, unchecked_return_type = "Step[]")]
    pub fn step_view(&self) -> Result<JsValue, JsValue> {
        to_js_value(&self.engine.step_view())
    }

    /// Seed 004's tree dump: text, or JSON text when `json`.
    #[wasm_bindgen(js_name = dumpTree)]
    pub fn dump_tree(&self, json: bool) -> String {
        self.engine.dump_tree(json)
    }

    /// Every goal event after `sinceEventId` (0 for all), for a consumer that resumes.
    #[wasm_bindgen(js_name = eventsSince, unchecked_return_type = "EngineEvent[]")]
    pub fn events_since(&self, since_event_id: f64) -> Result<JsValue, JsValue> {
        let since = if since_event_id.is_finite() && since_event_id > 0.0 { since_event_id as u64 } else { 0 };
        to_js_value(&self.engine.events_since(since))
    }

    /// Whether the model's plain reply just recorded ends the task: not while the plan has open
    /// goals, until the model, reminded of them, answers plainly again (R6.8).
    #[wasm_bindgen(js_name = replyEndsTask)]
    pub fn reply_ends_task(&self) -> bool {
        self.engine.reply_ends_task()
    }

    /// End the trace: `trace_completed` with the totals. Once per task (the next user input reopens it).
    #[wasm_bindgen(js_name = completeTrace)]
    pub fn complete_trace(&self) -> Result<(), JsValue> {
        js(self.engine.complete_trace())
    }

    /// Record a message in an exploring branch; its id (`A-m000000`).
    #[wasm_bindgen(js_name = recordInBranch)]
    pub fn record_in_branch(
        &self,
        branch: &str,
        #[wasm_bindgen(unchecked_param_type = "MessageInput")] message: JsValue,
    ) -> Result<String, JsValue> {
        let input: MessageInput = super::convert::from_js(message, "message")?;
        js(self.engine.record_in_branch(branch, input.into_draft(Some(branch)))).map(|id| id.0)
    }

    /// Run a plan tool inside a branch, on the branch's own goal tree; the tool result text.
    #[wasm_bindgen(js_name = callBranchTool)]
    pub fn call_branch_tool(
        &self,
        branch: &str,
        name: &str,
        #[wasm_bindgen(unchecked_param_type = "string | object")] arguments: JsValue,
    ) -> Result<String, JsValue> {
        js(self.engine.call_branch_tool(branch, name, &arguments_text(arguments)?))
    }

    /// A branch's messages, in order.
    #[wasm_bindgen(js_name = branchMessages, unchecked_return_type = "Message[]")]
    pub fn branch_messages(&self, branch: &str) -> Result<JsValue, JsValue> {
        to_js_value(&self.engine.branch_messages(branch))
    }

    /// A branch finished with its summary; true when every branch of its exploration has.
    #[wasm_bindgen(js_name = finishBranch)]
    pub fn finish_branch(&self, branch: &str, summary: &str) -> Result<bool, JsValue> {
        js(self.engine.finish_branch(branch, summary))
    }

    /// Merge the finished exploration; the merge summary, the `explore` call's result.
    #[wasm_bindgen(js_name = mergeExplore)]
    pub fn merge_explore(&self, selected: Option<String>) -> Result<String, JsValue> {
        let selected = selected.filter(|s| !s.trim().is_empty());
        js(self.engine.merge_explore(selected.as_deref()))
    }
}
