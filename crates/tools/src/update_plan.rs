//! `update_plan{items}`: the task's plan (todo list), replaced whole.

use crate::{ToolContext, ToolError, ToolHandler, ToolOutput, parse_args, spec};
use bosun_protocol::{PlanItem, PlanStatus, ToolAction, ToolSpec};
use serde::Deserialize;
use serde_json::json;

pub struct UpdatePlan;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    items: Vec<PlanItem>,
    /// Run the plan as a task graph: each node a sub-agent, in dependency order (the task
    /// loop runs it; see [`runs_plan`]).
    #[serde(default, rename = "run")]
    _run: bool,
}

/// Whether an `update_plan` call asks for its plan to be run (`run: true`).
pub fn runs_plan(args: &serde_json::Value) -> bool {
    args.get("run").and_then(serde_json::Value::as_bool) == Some(true)
}

#[async_trait::async_trait]
impl ToolHandler for UpdatePlan {
    fn spec(&self) -> ToolSpec {
        spec(
            "update_plan",
            "Replace the task plan (todo list). With `run: true` the plan is run as a task graph: \
             each item with an `id` is a node run by a sub-agent (its `step` is the brief, \
             `scope` the files it may change, `checks` what judges it) once the nodes it \
             `depends_on` are completed.",
            json!({
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "step": {"type": "string"},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed", "failed"]},
                            "id": {"type": "string"},
                            "depends_on": {"type": "array", "items": {"type": "string"}},
                            "role": {"type": "string", "enum": ["worker", "planner", "escalation", "main"]},
                            "scope": {"type": "array", "items": {"type": "string"}},
                            "checks": {"type": "array", "items": {"type": "string"}},
                        },
                        "required": ["step", "status"],
                        "additionalProperties": false,
                    },
                },
                "run": {"type": "boolean", "description": "Run the plan as a task graph of sub-agents."},
            }),
            &["items"],
        )
    }

    fn action(&self, args: &serde_json::Value) -> Result<ToolAction, ToolError> {
        let _: Args = parse_args("update_plan", args)?;
        Ok(ToolAction::Internal)
    }

    async fn handle(
        &self,
        args: serde_json::Value,
        _ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args("update_plan", &args)?;
        let count = |s: PlanStatus| args.items.iter().filter(|i| i.status == s).count();
        let content = format!(
            "Plan updated: {} steps ({} completed, {} in progress, {} pending).",
            args.items.len(),
            count(PlanStatus::Completed),
            count(PlanStatus::InProgress),
            count(PlanStatus::Pending),
        );
        Ok(ToolOutput {
            plan: Some(args.items),
            ..ToolOutput::text(content)
        })
    }
}
