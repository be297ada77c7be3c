//! The `usage` table: one row per model response's token usage, the rates it was priced at and
//! its cost, split by token class (so the dashboards add columns instead of parsing rates).

use crate::{Store, StoreError};
use bosun_protocol::{Event, Rates, TaskId, UsageEvent};
use rusqlite::{Row, Transaction, params};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The tokens and cost of one model response of a task (the per-request table of a task).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct UsageRow {
    /// The seq of the `usage` event.
    #[ts(type = "number")]
    pub seq: u64,
    /// When the response ended (RFC 3339, UTC).
    pub ts: String,
    pub model: String,
    /// Uncached prompt tokens (the classes are disjoint; see `bosun_protocol::TokenUsage`).
    #[ts(type = "number")]
    pub input_tokens: u64,
    #[ts(type = "number")]
    pub output_tokens: u64,
    #[ts(type = "number")]
    pub cached_input_tokens: u64,
    #[ts(type = "number")]
    pub cache_write_tokens: u64,
    #[ts(type = "number")]
    pub cache_write_1h_tokens: u64,
    #[ts(type = "number")]
    pub reasoning_tokens: u64,
    /// Null when the model had no price ("unpriced").
    pub cost_usd: Option<f64>,
    /// False when the model had no price: `cost_usd` is null.
    pub priced: bool,
    /// The rates it was priced at (none when unpriced, or written before schema 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rates: Option<Rates>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub latency_ms: Option<u64>,
}

/// One response's cost by class and what caching saved, from its rates (US dollars).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct ClassCosts {
    pub input: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub cache_write_1h: f64,
    pub output: f64,
    pub reasoning: f64,
    /// Cache reads at the input rate less at the cache-read rate, less the cache writes' cost
    /// over the input rate.
    pub savings: f64,
}

pub(crate) fn class_costs(u: &UsageEvent, r: &Rates) -> ClassCosts {
    let m = |tokens: u64, rate: f64| tokens as f64 * rate / 1e6;
    ClassCosts {
        input: m(u.input_tokens, r.input),
        cache_read: m(u.cached_input_tokens, r.cache_read),
        cache_write: m(u.cache_write_tokens, r.cache_write),
        cache_write_1h: m(u.cache_write_1h_tokens, r.cache_write_1h),
        output: m(u.output_tokens, r.output),
        reasoning: m(u.reasoning_tokens, r.reasoning),
        savings: m(u.cached_input_tokens, r.input - r.cache_read)
            - m(u.cache_write_tokens, r.cache_write - r.input)
            - m(u.cache_write_1h_tokens, r.cache_write_1h - r.input),
    }
}

/// Adds the usage row and the response's tokens and cost to the task's totals.
pub(crate) fn record(tx: &Transaction<'_>, ev: &Event, u: &UsageEvent) -> Result<(), StoreError> {
    let cost = u.cost_usd.filter(|_| u.priced);
    let rates = u.rates.as_ref().filter(|_| cost.is_some());
    let reported = rates.is_some_and(|r| r.source == "provider");
    let split = rates.filter(|_| !reported).map(|r| class_costs(u, r));
    let savings = rates.map(|r| class_costs(u, r).savings);
    let rates_json = rates.map(serde_json::to_string).transpose()?;
    tx.prepare_cached(
        "INSERT INTO usage (task_id, seq, model, input_tokens, output_tokens, cached_input_tokens,
             cache_write_tokens, cache_write_1h_tokens, reasoning_tokens, cost_usd, priced,
             reported, rates, latency_ms, cost_input, cost_cache_read, cost_cache_write,
             cost_cache_write_1h, cost_output, cost_reasoning, savings_usd, ts, repo)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
             ?19, ?20, ?21, ?22, (SELECT repo FROM tasks WHERE id = ?1))",
    )?
    .execute(params![
        ev.task_id.as_str(),
        ev.seq,
        u.model,
        u.input_tokens,
        u.output_tokens,
        u.cached_input_tokens,
        u.cache_write_tokens,
        u.cache_write_1h_tokens,
        u.reasoning_tokens,
        cost,
        cost.is_some(),
        reported,
        rates_json,
        u.latency_ms.and_then(|l| i64::try_from(l).ok()),
        split.map(|c| c.input),
        split.map(|c| c.cache_read),
        split.map(|c| c.cache_write),
        split.map(|c| c.cache_write_1h),
        split.map(|c| c.output),
        split.map(|c| c.reasoning),
        savings,
        ev.ts,
    ])?;
    tx.prepare_cached(
        "UPDATE tasks SET input_tokens = input_tokens + ?2, output_tokens = output_tokens + ?3,
             cached_input_tokens = cached_input_tokens + ?4,
             cache_write_tokens = cache_write_tokens + ?5,
             cache_write_1h_tokens = cache_write_1h_tokens + ?6,
             reasoning_tokens = reasoning_tokens + ?7,
             cost_usd = cost_usd + coalesce(?8, 0), priced = priced AND ?9
         WHERE id = ?1",
    )?
    .execute(params![
        ev.task_id.as_str(),
        u.input_tokens,
        u.output_tokens,
        u.cached_input_tokens,
        u.cache_write_tokens,
        u.cache_write_1h_tokens,
        u.reasoning_tokens,
        cost,
        cost.is_some(),
    ])?;
    Ok(())
}

fn from_row(r: &Row<'_>) -> rusqlite::Result<UsageRow> {
    let rates: Option<String> = r.get("rates")?;
    Ok(UsageRow {
        seq: r.get("seq")?,
        ts: r.get("ts")?,
        model: r.get("model")?,
        input_tokens: r.get("input_tokens")?,
        output_tokens: r.get("output_tokens")?,
        cached_input_tokens: r.get("cached_input_tokens")?,
        cache_write_tokens: r.get("cache_write_tokens")?,
        cache_write_1h_tokens: r.get("cache_write_1h_tokens")?,
        reasoning_tokens: r.get("reasoning_tokens")?,
        cost_usd: r.get("cost_usd")?,
        priced: r.get("priced")?,
        // Rates this build cannot read (a newer Bosun's) are left out rather than failing.
        rates: rates.and_then(|j| serde_json::from_str(&j).ok()),
        latency_ms: r.get("latency_ms")?,
    })
}

impl Store {
    /// The task's model responses' usage, in seq order: model, tokens by class, the rates used,
    /// cost and latency of each request.
    pub fn usage(&self, task: &TaskId) -> Result<Vec<UsageRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT seq, ts, model, input_tokens, output_tokens, cached_input_tokens,
                 cache_write_tokens, cache_write_1h_tokens, reasoning_tokens, cost_usd, priced,
                 rates, latency_ms
             FROM usage WHERE task_id = ?1 ORDER BY seq",
        )?;
        let rows = stmt.query_map([task.as_str()], from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
