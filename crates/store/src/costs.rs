//! Cost reports over the `usage` table: totals by task, repository, model or day.

use crate::{Store, StoreError};
use rusqlite::params;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What a cost report adds up by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum CostGroup {
    Task,
    Repo,
    Model,
    /// The UTC day (`YYYY-MM-DD`) of the response.
    Day,
}

/// The usage of every model response in one group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct CostRow {
    /// The task id, repository path, model name or day.
    pub key: String,
    /// How many model responses.
    #[ts(type = "number")]
    pub responses: u64,
    #[ts(type = "number")]
    pub input_tokens: u64,
    #[ts(type = "number")]
    pub output_tokens: u64,
    #[ts(type = "number")]
    pub cached_input_tokens: u64,
    #[ts(type = "number")]
    pub cache_write_tokens: u64,
    pub cost_usd: f64,
    /// False when at least one response had no price: `cost_usd` is then a lower bound.
    pub priced: bool,
}

impl Store {
    /// Token and cost totals grouped `by` task, repository, model or day, for responses at or
    /// after `since` (RFC 3339; `None` for all). Days come newest first, the others costliest
    /// first.
    pub fn costs(&self, by: CostGroup, since: Option<&str>) -> Result<Vec<CostRow>, StoreError> {
        let (key, order) = match by {
            CostGroup::Task => ("u.task_id", "cost_usd DESC, key"),
            CostGroup::Repo => ("t.repo", "cost_usd DESC, key"),
            CostGroup::Model => ("u.model", "cost_usd DESC, key"),
            CostGroup::Day => ("substr(u.ts, 1, 10)", "key DESC"),
        };
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {key} AS key, count(*), sum(u.input_tokens), sum(u.output_tokens),
                 sum(u.cached_input_tokens), sum(u.cache_write_tokens), total(u.cost_usd) AS cost_usd,
                 min(u.priced)
             FROM usage u JOIN tasks t ON t.id = u.task_id
             WHERE ?1 IS NULL OR u.ts >= ?1
             GROUP BY key ORDER BY {order}"
        ))?;
        let rows = stmt.query_map(params![since], |r| {
            Ok(CostRow {
                key: r.get(0)?,
                responses: r.get(1)?,
                input_tokens: r.get(2)?,
                output_tokens: r.get(3)?,
                cached_input_tokens: r.get(4)?,
                cache_write_tokens: r.get(5)?,
                cost_usd: r.get(6)?,
                priced: r.get(7)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
