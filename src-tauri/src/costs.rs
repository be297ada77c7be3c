//! The Costs view's commands: thin wrappers over the store's dashboard, usage, metrics and
//! budget queries, and adding a price for an unpriced model to `$BOSUN_HOME/prices.toml`.

use crate::commands::Runner;
use crate::error::IpcError;
use bosun_protocol::TaskId;
use bosun_store::{BudgetStatus, StatsGroup, StatsRow, UsageRow};
use tauri::State;

/// Each model request of a task: model, tokens by class, the rates used, cost, latency.
#[tauri::command(async)]
pub fn task_usage(runner: State<'_, Runner>, task_id: TaskId) -> Result<Vec<UsageRow>, IpcError> {
    Ok(runner.engine()?.store.usage(&task_id)?)
}

/// The execution metrics grouped `by` model, repository or week (or all together).
#[tauri::command(async)]
pub fn cost_stats(
    runner: State<'_, Runner>,
    by: StatsGroup,
    since: Option<String>,
    until: Option<String>,
    repo: Option<String>,
) -> Result<Vec<StatsRow>, IpcError> {
    let filter = bosun_store::StatsFilter { since, until, repo };
    Ok(runner.engine()?.store.stats(by, &filter)?)
}

/// Every budget `config.toml` sets, with what was spent and is reserved in its window.
#[tauri::command(async)]
pub fn budget_statuses(runner: State<'_, Runner>) -> Result<Vec<BudgetStatus>, IpcError> {
    let limits = crate::settings::budgets::limits(&bosun_store::bosun_home())?;
    Ok(runner.engine()?.store.budget_statuses(&limits)?)
}
