//! The Costs view's commands: thin wrappers over the store's dashboard, usage, metrics and
//! budget queries, and adding a price for an unpriced model to `$BOSUN_HOME/prices.toml`.

use crate::commands::Runner;
use crate::error::IpcError;
use bosun_protocol::TaskId;
use bosun_store::{
    BudgetStatus, CostDashboard, CostFilter, CostGroup, CostQuery, CostRow, StatsGroup, StatsRow,
    UsageRow,
};
use serde::Deserialize;
use tauri::State;

/// Totals, the daily chart's series and the tables, for `query`.
#[tauri::command(async)]
pub fn cost_dashboard(
    runner: State<'_, Runner>,
    query: CostQuery,
) -> Result<CostDashboard, IpcError> {
    if !(1..=366).contains(&query.days) {
        return Err(IpcError::new(
            "bad_request",
            format!("{} days: the chart shows 1 to 366", query.days),
        ));
    }
    Ok(runner.engine()?.store.cost_dashboard(&query)?)
}

/// Spend added up `by` one grouping (the Costs view's table by role: `main` for the user's
/// tasks, a sub-agent's role for its responses), costliest first.
#[tauri::command(async)]
pub fn cost_groups(
    runner: State<'_, Runner>,
    by: CostGroup,
    filter: CostFilter,
) -> Result<Vec<CostRow>, IpcError> {
    Ok(runner.engine()?.store.costs(by, &filter)?)
}

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

/// A price for a model, as the "Add price" dialog sends it: US dollars per million tokens.
#[derive(Debug, Clone, Deserialize)]
pub struct PriceInput {
    pub input: f64,
    pub output: f64,
    #[serde(default)]
    pub cache_read: Option<f64>,
    #[serde(default)]
    pub cache_write: Option<f64>,
}

/// Adds (or replaces) `model`'s price in `$BOSUN_HOME/prices.toml`; later responses are priced
/// with it (history keeps the rates it was priced at).
#[tauri::command(async)]
pub fn add_price(model: String, price: PriceInput) -> Result<(), IpcError> {
    let model = model.trim().to_string();
    if model.is_empty() {
        return Err(IpcError::new("invalid_price", "name the model to price"));
    }
    for (key, v) in [
        ("input", Some(price.input)),
        ("output", Some(price.output)),
        ("cache_read", price.cache_read),
        ("cache_write", price.cache_write),
    ] {
        if let Some(v) = v
            && (!v.is_finite() || v < 0.0)
        {
            return Err(IpcError::new(
                "invalid_price",
                format!("{key}: {v} is not a price; give dollars per million tokens, ≥ 0"),
            ));
        }
    }
    let user = bosun_model::UserPrice {
        input: price.input,
        output: price.output,
        cache_read: price.cache_read,
        cache_write: price.cache_write,
        ..bosun_model::UserPrice::default()
    };
    bosun_model::write_user_price(&bosun_store::bosun_home(), &model, &user)
        .map_err(|e| IpcError::new("invalid_price", e.to_string()))?;
    Ok(())
}
