//! The `usage` table: one row per model response's token usage and cost.

use crate::{Store, StoreError};
use bosun_protocol::{Event, TaskId, UsageEvent};
use rusqlite::{Row, Transaction, params};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The tokens and cost of one model response of a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct UsageRow {
    /// The seq of the `usage` event.
    #[ts(type = "number")]
    pub seq: u64,
    pub model: String,
    #[ts(type = "number")]
    pub input_tokens: u64,
    #[ts(type = "number")]
    pub output_tokens: u64,
    #[ts(type = "number")]
    pub cached_input_tokens: u64,
    #[ts(type = "number")]
    pub cache_write_tokens: u64,
    pub cost_usd: f64,
    /// False when the model had no price: `cost_usd` is 0 and the cost is unknown.
    pub priced: bool,
}

/// Adds the usage row and the response's tokens and cost to the task's totals.
pub(crate) fn record(tx: &Transaction<'_>, ev: &Event, u: &UsageEvent) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO usage (task_id, seq, model, input_tokens, output_tokens, cached_input_tokens,
             cache_write_tokens, cost_usd, priced, ts)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        ev.task_id.as_str(),
        ev.seq,
        u.model,
        u.input_tokens,
        u.output_tokens,
        u.cached_input_tokens,
        u.cache_write_tokens,
        u.cost_usd,
        u.priced,
        ev.ts,
    ])?;
    tx.prepare_cached(
        "UPDATE tasks SET input_tokens = input_tokens + ?2, output_tokens = output_tokens + ?3,
             cached_input_tokens = cached_input_tokens + ?4,
             cache_write_tokens = cache_write_tokens + ?5,
             cost_usd = cost_usd + ?6, priced = priced AND ?7
         WHERE id = ?1",
    )?
    .execute(params![
        ev.task_id.as_str(),
        u.input_tokens,
        u.output_tokens,
        u.cached_input_tokens,
        u.cache_write_tokens,
        u.cost_usd,
        u.priced,
    ])?;
    Ok(())
}

fn from_row(r: &Row<'_>) -> rusqlite::Result<UsageRow> {
    Ok(UsageRow {
        seq: r.get("seq")?,
        model: r.get("model")?,
        input_tokens: r.get("input_tokens")?,
        output_tokens: r.get("output_tokens")?,
        cached_input_tokens: r.get("cached_input_tokens")?,
        cache_write_tokens: r.get("cache_write_tokens")?,
        cost_usd: r.get("cost_usd")?,
        priced: r.get("priced")?,
    })
}

impl Store {
    /// The task's model responses' usage, in seq order.
    pub fn usage(&self, task: &TaskId) -> Result<Vec<UsageRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT seq, model, input_tokens, output_tokens, cached_input_tokens, cache_write_tokens,
                 cost_usd, priced
             FROM usage WHERE task_id = ?1 ORDER BY seq",
        )?;
        let rows = stmt.query_map([task.as_str()], from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
