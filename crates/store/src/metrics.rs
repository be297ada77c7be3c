//! The articles' execution metrics over finished top-level tasks (`bosun stats`, the Insights
//! part of the Costs view). The definitions are in docs/metrics.md; they are tested on a journal
//! built for the purpose.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use ts_rs::TS;

/// What the metrics are grouped by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum StatsGroup {
    /// One row over everything.
    #[default]
    All,
    Model,
    Repo,
    /// The local week (from Monday) the task finished in, `YYYY-MM-DD` of its Monday.
    Week,
}

/// The metrics of one group. Rates are over `tasks` (decided tasks: successes and failures);
/// they are null when no task is decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct StatsRow {
    pub key: String,
    /// Decided tasks: finished top-level tasks that succeeded or failed.
    #[ts(type = "number")]
    pub tasks: u64,
    #[ts(type = "number")]
    pub successes: u64,
    #[ts(type = "number")]
    pub first_passes: u64,
    /// Finished less than 7 days ago and never reviewed: neither success nor failure yet.
    #[ts(type = "number")]
    pub pending_review: u64,
    /// Ended `answered` (no changes): neither success nor failure.
    #[ts(type = "number")]
    pub answered: u64,
    pub success_rate: Option<f64>,
    pub first_pass_rate: Option<f64>,
    pub interventions_per_task: Option<f64>,
    pub cost_per_task_usd: Option<f64>,
    /// The whole group's cost over its successes: "the actual cost of completing a task".
    pub cost_per_success_usd: Option<f64>,
    pub tokens_per_task: Option<f64>,
    pub tokens_per_success: Option<f64>,
    /// Wall time from start to finish.
    pub seconds_per_task: Option<f64>,
    pub seconds_per_success: Option<f64>,
    /// Cause → unsuccessful tasks: `permission_blocked`, `missing_tool`, `model_error`,
    /// `budget`, `step_limit`, `checks_failed`, `interrupted`, `abandoned` (and `failed` when none
    /// applies).
    pub failure_causes: BTreeMap<String, u64>,
}
