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
}

#[async_trait::async_trait]
impl ToolHandler for UpdatePlan {
    fn spec(&self) -> ToolSpec {
        spec(
            "update_plan",
            "Replace the task plan (todo list).",
            json!({
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "step": {"type": "string"},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                        },
                        "required": ["step", "status"],
                        "additionalProperties": false,
                    },
                },
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
