//! The Costs view's figures over the `usage` table: totals for today, this week, this month and
//! all time (local time, weeks from Monday), spend per local day stacked by model or repository,
//! and tables by repository, model and task with the costliest outliers marked. Every figure is
//! split into the six disjoint token classes, with what prompt caching saved.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Tokens by class (see `bosun_protocol::TokenUsage`); they add up to the billed tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct TokenClasses {
    /// Uncached prompt tokens.
    #[ts(type = "number")]
    pub input: u64,
    #[ts(type = "number")]
    pub cache_read: u64,
    #[ts(type = "number")]
    pub cache_write_5m: u64,
    #[ts(type = "number")]
    pub cache_write_1h: u64,
    #[ts(type = "number")]
    pub output: u64,
    #[ts(type = "number")]
    pub reasoning: u64,
}

/// The cost of some model responses, by token class.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct CostFigure {
    /// What the priced responses cost, in US dollars.
    pub cost_usd: f64,
    /// That cost by token class (input, cache read, 5-minute and 1-hour writes, output,
    /// reasoning), from each row's stored rates; sums to `cost_usd` except for responses whose
    /// cost the provider reported (their whole cost is in `reported_usd`).
    pub cost_by_class: CostByClass,
    /// What the cache reads would have cost at the input rate, less what they did cost, less
    /// what the cache writes cost over the input rate (negative when writing did not pay off).
    pub cache_savings_usd: f64,
    #[ts(type = "number")]
    pub responses: u64,
    /// Responses whose model had no price: not in `cost_usd` (shown "unpriced").
    #[ts(type = "number")]
    pub unpriced_responses: u64,
    pub tokens: TokenClasses,
}

/// Dollars by token class.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct CostByClass {
    pub input: f64,
    pub cache_read: f64,
    pub cache_write_5m: f64,
    pub cache_write_1h: f64,
    pub output: f64,
    pub reasoning: f64,
    /// Costs the provider reported itself (OpenRouter's `usage.cost`), not split by class.
    pub reported: f64,
}

/// Today, this week (from Monday), this month and all time, in local time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct CostTotals {
    pub today: CostFigure,
    pub week: CostFigure,
    pub month: CostFigure,
    pub all: CostFigure,
}

/// What the daily chart stacks by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum Stack {
    #[default]
    Model,
    Repo,
}

/// One stacked series of the daily chart: a model or repository, and its spend on each day of
/// [`CostDashboard::days`] (same length; 0 on days without any).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct DailySeries {
    pub key: String,
    pub cost_usd: Vec<f64>,
}

/// One row of the tables by repository, model or task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct CostTableRow {
    /// The repository path, the model name or the task id.
    pub key: String,
    /// For a task: its number, prompt (first line, cut at 120 characters), repository, model
    /// and status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub task: Option<CostTask>,
    pub figure: CostFigure,
    /// Marked as an outlier: costlier than the median of its table by more than 3 × the median
    /// absolute deviation (and among the costliest 5 %), so a runaway task stands out.
    pub outlier: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct CostTask {
    #[ts(type = "number")]
    pub number: u64,
    pub prompt: String,
    pub repo: String,
    pub model: String,
    pub status: String,
    pub created_at: String,
}

/// What the Costs view asks for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct CostQuery {
    /// Days in the daily chart, ending today (30 or 90; 1..=366).
    pub days: u32,
    pub stack: Stack,
    /// Only this repository (its path as `task_started.repo` has it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub repo: Option<String>,
    /// The tables' period, RFC 3339 (inclusive, exclusive); the totals always cover their own
    /// periods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub since: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub until: Option<String>,
    /// Rows per table (the costliest first); 0 means 50.
    pub limit: u32,
}

/// Everything the Costs view shows, in one answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct CostDashboard {
    pub totals: CostTotals,
    /// The chart's local days, `YYYY-MM-DD`, oldest first.
    pub days: Vec<String>,
    /// Costliest first.
    pub series: Vec<DailySeries>,
    pub by_repo: Vec<CostTableRow>,
    pub by_model: Vec<CostTableRow>,
    pub by_task: Vec<CostTableRow>,
    /// Models seen in responses that have no price (the UI offers to add one).
    pub unpriced_models: Vec<String>,
}
