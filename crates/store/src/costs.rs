//! Cost reports over the `usage` table (`bosun costs`): every response's tokens by class, cost
//! and cache savings added up by task, repository, model or local day, week or month.

use crate::dashboard::{FIGURE_COLUMNS, HOURLY_COLUMNS, LOCAL_MONDAY, figure};
use crate::{CostFigure, Store, StoreError};
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
    /// The local day (`YYYY-MM-DD`) of the response.
    Day,
    /// The local week of the response, as its Monday (`YYYY-MM-DD`).
    Week,
    /// The local month of the response (`YYYY-MM`).
    Month,
    /// The role whose model answered: `main` for the user's tasks, a sub-agent's role
    /// (`worker`, `escalation`, `planner`, …) for its responses.
    Role,
    /// Where the task came from: `bosun` for Bosun's own, `claude-code` or `codex` for an
    /// imported session.
    Source,
}

impl CostGroup {
    /// Every group, as `--by` names them.
    pub const ALL: [(&'static str, CostGroup); 8] = [
        ("day", CostGroup::Day),
        ("week", CostGroup::Week),
        ("month", CostGroup::Month),
        ("repo", CostGroup::Repo),
        ("model", CostGroup::Model),
        ("task", CostGroup::Task),
        ("role", CostGroup::Role),
        ("source", CostGroup::Source),
    ];

    /// Periods sort newest first; the others costliest first.
    pub fn is_period(&self) -> bool {
        matches!(self, CostGroup::Day | CostGroup::Week | CostGroup::Month)
    }
}

/// Which responses a cost report covers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct CostFilter {
    /// Responses at or after (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub since: Option<String>,
    /// Responses before (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub until: Option<String>,
    /// Only this repository's tasks (the path as the journal has it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub repo: Option<String>,
}

/// The usage of every model response in one group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct CostRow {
    /// The task id, repository path, model name, day, week (its Monday), month, role or source.
    pub key: String,
    pub figure: CostFigure,
}

impl Store {
    /// Token and cost totals grouped `by` task, repository, model, local day, week or month, for
    /// the responses `filter` lets through. Periods come newest first, the others costliest
    /// first.
    pub fn costs(&self, by: CostGroup, filter: &CostFilter) -> Result<Vec<CostRow>, StoreError> {
        let monday = format!("date(u.ts, {LOCAL_MONDAY})");
        let (key, order) = match by {
            CostGroup::Task => ("u.task_id", "total(u.cost_usd) DESC, key"),
            CostGroup::Repo => ("u.repo", "total(u.cost_usd) DESC, key"),
            CostGroup::Model => ("u.model", "total(u.cost_usd) DESC, key"),
            CostGroup::Day => ("date(u.ts, 'localtime')", "key DESC"),
            CostGroup::Week => (monday.as_str(), "key DESC"),
            CostGroup::Month => ("strftime('%Y-%m', u.ts, 'localtime')", "key DESC"),
            CostGroup::Role => (
                "(SELECT coalesce(t.role, 'main') FROM tasks t WHERE t.id = u.task_id)",
                "total(u.cost_usd) DESC, key",
            ),
            CostGroup::Source => (
                "(SELECT coalesce(t.source, 'bosun') FROM tasks t WHERE t.id = u.task_id)",
                "total(u.cost_usd) DESC, key",
            ),
        };
        let conn = self.conn();
        let since = crate::dashboard::utc_time(&conn, filter.since.as_deref())?;
        let until = crate::dashboard::utc_time(&conn, filter.until.as_deref())?;
        // Over all time, local days, weeks and months are whole UTC hours of the hourly rollup
        // wherever the local offset is (and was, at every hour with usage) a whole number of
        // hours.
        if by.is_period() && since.is_none() && until.is_none() {
            let whole_hours: bool = conn
                .prepare_cached(
                    "SELECT NOT EXISTS (SELECT 1 FROM usage_hourly
                         WHERE strftime('%M', hour || ':00:00Z', 'localtime') != '00')",
                )?
                .query_row([], |r| r.get(0))?;
            if whole_hours {
                let key = key.replace("u.ts", "(h.hour || ':00:00Z')");
                let mut stmt = conn.prepare_cached(&format!(
                    "SELECT {key} AS key, {HOURLY_COLUMNS} FROM usage_hourly h
                     WHERE (?1 IS NULL OR h.repo = ?1)
                     GROUP BY key ORDER BY {order}"
                ))?;
                let rows = stmt.query_map(params![filter.repo], |r| {
                    Ok(CostRow {
                        key: r.get(0)?,
                        figure: figure(r, 1)?,
                    })
                })?;
                return Ok(rows.collect::<Result<_, _>>()?);
            }
        }
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {key} AS key, {FIGURE_COLUMNS}
             FROM usage u
             WHERE (?1 IS NULL OR u.ts >= ?1) AND (?2 IS NULL OR u.ts < ?2)
                 AND (?3 IS NULL OR u.repo = ?3)
             GROUP BY key ORDER BY {order}"
        ))?;
        let rows = stmt.query_map(params![since, until, filter.repo], |r| {
            Ok(CostRow {
                key: r.get(0)?,
                figure: figure(r, 1)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The totals for today, this week (from Monday), this month and all time, in local time,
    /// for one repository or all (as the dashboard's).
    pub fn cost_totals(&self, repo: Option<&str>) -> Result<crate::CostTotals, StoreError> {
        crate::dashboard::totals_in(&self.conn(), repo, None)
    }

    /// Every repository the journal has tasks of, sorted.
    pub fn repos(&self) -> Result<Vec<String>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("SELECT DISTINCT repo FROM tasks ORDER BY repo")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
