//! The JSON schemas of the plan tools (R6.2, R6.5, R6.6), as [`ToolSpec`]s: plain object
//! schemas (`type`, `properties`, `required`, `additionalProperties`) that both OpenAI
//! functions and Anthropic tools accept.

use serde_json::{Value, json};

use super::GoalConfig;
use super::text::text;
use super::tool::{EXPLORE_TOOL, GOAL_TOOL, READ_PROGRESS_TOOL, STEP_TOOL};
use crate::prompt::ToolSpec;

/// The four plan tools, in a fixed order.
pub fn goal_tool_specs(config: &GoalConfig) -> Vec<ToolSpec> {
    vec![goal_spec(), step_spec(), read_progress_spec(), explore_spec(config)]
}

/// `goal`: add, done, abandon, focus (and the reason of added goals).
pub fn goal_spec() -> ToolSpec {
    spec(
        GOAL_TOOL,
        "tool_goal",
        json!({
            "add": string("param_goal_add"),
            "done": string("param_goal_done"),
            "abandon": string("param_goal_abandon"),
            "focus": string("param_goal_focus"),
            "reason": string("param_goal_reason"),
        }),
        &[],
    )
}

/// `step` (seed 004): plan, focus, complete, summary.
pub fn step_spec() -> ToolSpec {
    spec(
        STEP_TOOL,
        "tool_step",
        json!({
            "plan": {"type": "array", "items": {"type": "string"}, "description": text("param_step_plan")},
            "focus": string("param_step_focus"),
            "complete": {"type": "boolean", "description": text("param_step_complete")},
            "summary": string("param_step_summary"),
        }),
        &[],
    )
}

/// `read_progress`: no arguments.
pub fn read_progress_spec() -> ToolSpec {
    spec(READ_PROGRESS_TOOL, "tool_read_progress", json!({}), &[])
}

/// `explore`: one description per branch (at most `max_branches`), and an optional background.
pub fn explore_spec(config: &GoalConfig) -> ToolSpec {
    spec(
        EXPLORE_TOOL,
        "tool_explore",
        json!({
            "branches": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 1,
                "maxItems": config.max_branches,
                "description": text("param_explore_branches"),
            },
            "background": string("param_explore_background"),
        }),
        &["branches"],
    )
}

fn string(description: &str) -> Value {
    json!({"type": "string", "description": text(description)})
}

fn spec(name: &str, description: &str, properties: Value, required: &[&str]) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description: text(description).to_owned(),
        parameters: json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_a_closed_object_of_described_properties() {
        let specs = goal_tool_specs(&GoalConfig { max_branches: 3, ..GoalConfig::default() });
        for spec in &specs {
            assert!(!spec.description.is_empty(), "{}", spec.name);
            let p = &spec.parameters;
            assert_eq!((p["type"].as_str(), p["additionalProperties"].as_bool()), (Some("object"), Some(false)));
            for (name, property) in p["properties"].as_object().unwrap() {
                assert!(!property["description"].as_str().unwrap_or("").is_empty(), "{}.{name}", spec.name);
            }
        }
        assert_eq!(specs[3].parameters["properties"]["branches"]["maxItems"], 3);
        assert_eq!(specs[0].parameters["required"], json!([]));
    }
}
