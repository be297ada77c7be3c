//! The Costs view's figures over the `usage` table: totals for today, this week, this month and
//! all time (local time, weeks from Monday), spend per local day stacked by model or repository,
//! and tables by repository, model and task with the costliest outliers marked. Every figure is
//! split into the six disjoint token classes, with what prompt caching saved.

use crate::{Store, StoreError};
use rusqlite::{Connection, Row, params};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
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
    /// cost the provider reported (their whole cost is in `reported`) and those recorded
    /// without rates (in `unsplit`).
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

impl CostFigure {
    /// Adds another figure's responses into this one.
    pub fn add(&mut self, o: &CostFigure) {
        self.cost_usd += o.cost_usd;
        self.cache_savings_usd += o.cache_savings_usd;
        self.responses += o.responses;
        self.unpriced_responses += o.unpriced_responses;
        let (a, b) = (&mut self.cost_by_class, &o.cost_by_class);
        a.input += b.input;
        a.cache_read += b.cache_read;
        a.cache_write_5m += b.cache_write_5m;
        a.cache_write_1h += b.cache_write_1h;
        a.output += b.output;
        a.reasoning += b.reasoning;
        a.reported += b.reported;
        a.unsplit += b.unsplit;
        let (a, b) = (&mut self.tokens, &o.tokens);
        a.input += b.input;
        a.cache_read += b.cache_read;
        a.cache_write_5m += b.cache_write_5m;
        a.cache_write_1h += b.cache_write_1h;
        a.output += b.output;
        a.reasoning += b.reasoning;
    }
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
    /// Costs of responses recorded without their rates (before schema 5), not split by class.
    #[serde(default)]
    pub unsplit: f64,
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
    /// Marked as an outlier: costlier than the median of its table (every row of the period, not
    /// only those shown) by more than 3 × the median absolute deviation, and among the costliest
    /// 5 % of the rows (at least the costliest one), so a runaway task stands out.
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

/// Series the daily chart stacks before the rest goes into `other`.
const MAX_SERIES: usize = 8;

/// The aggregate columns of a [`CostFigure`] over usage rows aliased `u`, read by [`figure`].
pub(crate) const FIGURE_COLUMNS: &str = "total(u.cost_usd), total(u.cost_input), \
    total(u.cost_cache_read), total(u.cost_cache_write), total(u.cost_cache_write_1h), \
    total(u.cost_output), total(u.cost_reasoning), \
    total(CASE WHEN u.reported THEN u.cost_usd END), \
    total(CASE WHEN u.rates IS NULL AND NOT u.reported THEN u.cost_usd END), \
    total(u.savings_usd), count(*), count(*) - count(u.cost_usd), \
    coalesce(sum(u.input_tokens), 0), coalesce(sum(u.cached_input_tokens), 0), \
    coalesce(sum(u.cache_write_tokens), 0), coalesce(sum(u.cache_write_1h_tokens), 0), \
    coalesce(sum(u.output_tokens), 0), coalesce(sum(u.reasoning_tokens), 0)";

/// Reads [`FIGURE_COLUMNS`] starting at column `at`.
pub(crate) fn figure(r: &Row<'_>, at: usize) -> rusqlite::Result<CostFigure> {
    Ok(CostFigure {
        cost_usd: r.get(at)?,
        cost_by_class: CostByClass {
            input: r.get(at + 1)?,
            cache_read: r.get(at + 2)?,
            cache_write_5m: r.get(at + 3)?,
            cache_write_1h: r.get(at + 4)?,
            output: r.get(at + 5)?,
            reasoning: r.get(at + 6)?,
            reported: r.get(at + 7)?,
            unsplit: r.get(at + 8)?,
        },
        cache_savings_usd: r.get(at + 9)?,
        responses: r.get(at + 10)?,
        unpriced_responses: r.get(at + 11)?,
        tokens: TokenClasses {
            input: r.get(at + 12)?,
            cache_read: r.get(at + 13)?,
            cache_write_5m: r.get(at + 14)?,
            cache_write_1h: r.get(at + 15)?,
            output: r.get(at + 16)?,
            reasoning: r.get(at + 17)?,
        },
    })
}

/// RFC 3339 (UTC, milliseconds, as the journal writes `ts`) of an SQLite time expression.
pub(crate) fn utc_of(modifiers: &str) -> String {
    format!("strftime('%Y-%m-%dT%H:%M:%fZ', 'now', 'localtime', {modifiers}, 'utc')")
}

/// The local day (`YYYY-MM-DD`) of the Monday starting the week of a `ts` column.
pub(crate) const LOCAL_MONDAY: &str = "'localtime', 'weekday 0', '-6 days'";

fn period_figure(
    conn: &Connection,
    repo: Option<&str>,
    since: Option<&str>,
) -> Result<CostFigure, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {FIGURE_COLUMNS} FROM usage u
         WHERE (?1 IS NULL OR u.ts >= ?1)
             AND (?2 IS NULL OR u.repo = ?2)"
    ))?;
    Ok(stmt.query_row(params![since, repo], |r| figure(r, 0))?)
}

/// An RFC 3339 time as the journal writes times (UTC, milliseconds, `Z`), so it compares with
/// `ts` as text; a time SQLite cannot read is a [`StoreError::BadQuery`].
pub(crate) fn utc_time(conn: &Connection, t: Option<&str>) -> Result<Option<String>, StoreError> {
    let Some(t) = t else {
        return Ok(None);
    };
    let utc: Option<String> = conn
        .prepare_cached("SELECT strftime('%Y-%m-%dT%H:%M:%fZ', ?1)")?
        .query_row([t], |r| r.get(0))?;
    utc.map(Some).ok_or_else(|| {
        StoreError::BadQuery(format!(
            "`{t}` is not a time; write an RFC 3339 time such as 2026-11-30T09:00:00Z"
        ))
    })
}

/// The columns of `usage_hourly` in [`FIGURE_COLUMNS`]' order, summed.
pub(crate) const HOURLY_COLUMNS: &str = "total(h.cost_usd), total(h.cost_input), total(h.cost_cache_read), \
    total(h.cost_cache_write), total(h.cost_cache_write_1h), total(h.cost_output), \
    total(h.cost_reasoning), total(h.reported_usd), total(h.unsplit_usd), total(h.savings_usd), \
    sum(h.responses), sum(h.unpriced), sum(h.input_tokens), sum(h.cached_input_tokens), \
    sum(h.cache_write_tokens), sum(h.cache_write_1h_tokens), sum(h.output_tokens), \
    sum(h.reasoning_tokens)";

/// The usage in `[since, until)` grouped by repository and model: whole UTC hours from
/// `usage_hourly`, the parts of hours at either end from `usage`.
pub(crate) fn by_repo_and_model(
    conn: &Connection,
    since: Option<&str>,
    until: Option<&str>,
    repo: Option<&str>,
) -> Result<Vec<(String, String, CostFigure)>, StoreError> {
    // The first whole hour at or after `since` and the hour `until` falls in.
    let (first, last): (Option<String>, Option<String>) = conn
        .prepare_cached(
            "SELECT CASE WHEN ?1 IS NULL THEN NULL
                     WHEN strftime('%M:%f', ?1) = '00:00.000' THEN strftime('%Y-%m-%dT%H', ?1)
                     ELSE strftime('%Y-%m-%dT%H', ?1, '+1 hour') END,
                 strftime('%Y-%m-%dT%H', ?2)",
        )?
        .query_row(params![since, until], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let unreadable = (since.is_some() && first.is_none()) || (until.is_some() && last.is_none());
    let empty_middle = matches!((&first, &last), (Some(f), Some(l)) if f >= l);
    let mut out = Vec::new();
    let mut push = |r: &Row<'_>| -> rusqlite::Result<()> {
        out.push((r.get(0)?, r.get(1)?, figure(r, 2)?));
        Ok(())
    };
    if unreadable || empty_middle {
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT u.repo, u.model, {FIGURE_COLUMNS} FROM usage u
             WHERE (?1 IS NULL OR u.ts >= ?1) AND (?2 IS NULL OR u.ts < ?2)
                 AND (?3 IS NULL OR u.repo = ?3)
             GROUP BY u.repo, u.model"
        ))?;
        let mut rows = stmt.query(params![since, until, repo])?;
        while let Some(r) = rows.next()? {
            push(r)?;
        }
        return Ok(out);
    }
    let mut whole = conn.prepare_cached(&format!(
        "SELECT h.repo, h.model, {HOURLY_COLUMNS} FROM usage_hourly h
         WHERE (?1 IS NULL OR h.hour >= ?1) AND (?2 IS NULL OR h.hour < ?2)
             AND (?3 IS NULL OR h.repo = ?3)
         GROUP BY h.repo, h.model"
    ))?;
    let mut rows = whole.query(params![first, last, repo])?;
    while let Some(r) = rows.next()? {
        push(r)?;
    }
    drop(rows);
    // The ends: from `since` to the first whole hour, and from the last one's start to `until`.
    let mut part = conn.prepare_cached(&format!(
        "SELECT u.repo, u.model, {FIGURE_COLUMNS} FROM usage u
         WHERE u.ts >= ?1 AND u.ts < ?2 AND (?3 IS NULL OR u.repo = ?3)
         GROUP BY u.repo, u.model"
    ))?;
    let ends: [Option<(String, String)>; 2] = [
        since
            .map(str::to_string)
            .zip(first.as_ref().map(|f| format!("{f}:00:00.000Z"))),
        last.as_ref()
            .map(|l| format!("{l}:00:00.000Z"))
            .zip(until.map(str::to_string)),
    ];
    for (from, to) in ends.into_iter().flatten() {
        let mut rows = part.query(params![from, to, repo])?;
        while let Some(r) = rows.next()? {
            push(r)?;
        }
    }
    Ok(out)
}

/// Today, this week, this month and all time, for one repository or all.
pub(crate) fn totals_in(
    conn: &Connection,
    repo: Option<&str>,
    all: Option<CostFigure>,
) -> Result<CostTotals, StoreError> {
    let (today, week, month): (String, String, String) = conn.query_row(
        &format!(
            "SELECT {}, {}, {}",
            utc_of("'start of day'"),
            utc_of("'start of day', 'weekday 0', '-6 days'"),
            utc_of("'start of month'"),
        ),
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    Ok(CostTotals {
        today: period_figure(conn, repo, Some(&today))?,
        week: period_figure(conn, repo, Some(&week))?,
        month: period_figure(conn, repo, Some(&month))?,
        all: match all {
            Some(all) => all,
            None => {
                let mut all = CostFigure::default();
                for (_, _, f) in by_repo_and_model(conn, None, None, repo)? {
                    all.add(&f);
                }
                all
            }
        },
    })
}

/// Marks the outliers of a table sorted costliest first (see [`CostTableRow::outlier`]).
fn mark_outliers(rows: &mut [CostTableRow]) {
    if rows.len() < 3 {
        return;
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    };
    let mut costs: Vec<f64> = rows.iter().map(|r| r.figure.cost_usd).collect();
    let m = median(&mut costs);
    let mut deviations: Vec<f64> = costs.iter().map(|c| (c - m).abs()).collect();
    let mad = median(&mut deviations);
    let top = rows.len().div_ceil(20).max(1);
    for row in rows.iter_mut().take(top) {
        row.outlier = row.figure.cost_usd > m + 3.0 * mad;
    }
}

impl Store {
    /// Everything the Costs view shows, in one answer (see [`CostDashboard`]). Local days, weeks
    /// and months are SQLite's `localtime` (which honours `TZ`).
    pub fn cost_dashboard(&self, q: &CostQuery) -> Result<CostDashboard, StoreError> {
        let days = q.days.clamp(1, 366);
        let limit = if q.limit == 0 { 50 } else { q.limit as usize };
        let repo = q.repo.as_deref();
        let conn = self.conn();
        let since = utc_time(&conn, q.since.as_deref())?;
        let until = utc_time(&conn, q.until.as_deref())?;
        let (since, until) = (since.as_deref(), until.as_deref());

        // The tables by repository and model, from one pass grouped by both.
        let mut by_repo: HashMap<String, CostFigure> = HashMap::new();
        let mut by_model: HashMap<String, CostFigure> = HashMap::new();
        let mut all = CostFigure::default();
        for (repo, model, f) in by_repo_and_model(&conn, since, until, repo)? {
            by_repo.entry(repo).or_default().add(&f);
            by_model.entry(model).or_default().add(&f);
            all.add(&f);
        }
        let table = |groups: HashMap<String, CostFigure>| {
            let mut rows: Vec<CostTableRow> = groups
                .into_iter()
                .map(|(key, figure)| CostTableRow {
                    key,
                    task: None,
                    figure,
                    outlier: false,
                })
                .collect();
            rows.sort_by(|a, b| {
                b.figure
                    .cost_usd
                    .total_cmp(&a.figure.cost_usd)
                    .then_with(|| a.key.cmp(&b.key))
            });
            mark_outliers(&mut rows);
            rows.truncate(limit);
            rows
        };
        let by_repo = table(by_repo);
        let by_model = table(by_model);

        let totals = if since.is_none() && until.is_none() {
            totals_in(&conn, repo, Some(all))?
        } else {
            totals_in(&conn, repo, None)?
        };

        // The tasks: every task's cost (for the outliers), then the figures of those shown.
        let rank_sql = if since.is_none() && until.is_none() {
            // All time: the task rows' totals are the sums of their usage rows.
            "SELECT t.id, t.cost_usd AS cost FROM tasks t
             WHERE ?1 IS NULL AND ?2 IS NULL AND (?3 IS NULL OR t.repo = ?3)
                 AND EXISTS (SELECT 1 FROM usage u WHERE u.task_id = t.id)
             ORDER BY cost DESC, t.id"
        } else {
            "SELECT u.task_id, total(u.cost_usd) AS cost FROM usage u
             WHERE (?1 IS NULL OR u.ts >= ?1) AND (?2 IS NULL OR u.ts < ?2)
                 AND (?3 IS NULL OR u.repo = ?3)
             GROUP BY u.task_id ORDER BY cost DESC, u.task_id"
        };
        let mut ranked: Vec<CostTableRow> = conn
            .prepare_cached(rank_sql)?
            .query_map(params![since, until, repo], |r| {
                Ok(CostTableRow {
                    key: r.get(0)?,
                    task: None,
                    figure: CostFigure {
                        cost_usd: r.get(1)?,
                        ..CostFigure::default()
                    },
                    outlier: false,
                })
            })?
            .collect::<Result<_, _>>()?;
        mark_outliers(&mut ranked);
        ranked.truncate(limit);
        let mut by_task = ranked;
        {
            let mut figure_of = conn.prepare_cached(&format!(
                "SELECT {FIGURE_COLUMNS} FROM usage u
                 WHERE u.task_id = ?1 AND (?2 IS NULL OR u.ts >= ?2) AND (?3 IS NULL OR u.ts < ?3)"
            ))?;
            let mut task_of = conn.prepare_cached(
                "SELECT number, prompt, repo, model, status, created_at FROM tasks WHERE id = ?1",
            )?;
            for row in &mut by_task {
                row.figure =
                    figure_of.query_row(params![row.key, since, until], |r| figure(r, 0))?;
                row.task = Some(task_of.query_row([&row.key], |r| {
                    let prompt: String = r.get(1)?;
                    let first = prompt.lines().next().unwrap_or_default();
                    Ok(CostTask {
                        number: r.get::<_, Option<u64>>(0)?.unwrap_or_default(),
                        prompt: first.chars().take(120).collect(),
                        repo: r.get(2)?,
                        model: r.get(3)?,
                        status: r.get(4)?,
                        created_at: r.get(5)?,
                    })
                })?);
            }
        }

        // The chart: each local day's bounds in UTC, so the `ts` index finds its rows and no
        // row's time is converted.
        let bounds: Vec<(String, String, String)> = conn
            .prepare_cached(&format!(
                "WITH RECURSIVE k(n) AS (SELECT ?1 - 1 UNION ALL SELECT n - 1 FROM k WHERE n > 0)
                 SELECT date('now', 'localtime', '-' || n || ' days'),
                     {}, {} FROM k",
                utc_of("'start of day', printf('%+d days', -n)"),
                utc_of("'start of day', printf('%+d days', 1 - n)"),
            ))?
            .query_map([days], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        let day_keys: Vec<String> = bounds.iter().map(|b| b.0.clone()).collect();
        let stack = match q.stack {
            Stack::Model => "u.model",
            Stack::Repo => "u.repo",
        };
        let mut per_key: HashMap<String, (f64, Vec<f64>)> = HashMap::new();
        {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {stack} AS key, total(u.cost_usd) FROM usage u
                 WHERE u.ts >= ?1 AND u.ts < ?3 AND (?2 IS NULL OR u.repo = ?2)
                 GROUP BY key"
            ))?;
            for (i, (_, start, end)) in bounds.iter().enumerate() {
                let rows = stmt.query_map(params![start, repo, end], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)?))
                })?;
                for row in rows {
                    let (key, cost) = row?;
                    let entry = per_key
                        .entry(key)
                        .or_insert_with(|| (0.0, vec![0.0; bounds.len()]));
                    entry.0 += cost;
                    entry.1[i] += cost;
                }
            }
        }
        let mut ranked: Vec<(String, (f64, Vec<f64>))> = per_key.into_iter().collect();
        ranked.sort_by(|a, b| b.1.0.total_cmp(&a.1.0).then_with(|| a.0.cmp(&b.0)));
        let mut series: Vec<DailySeries> = Vec::new();
        let mut other: Option<Vec<f64>> = None;
        for (i, (key, (_, cost))) in ranked.into_iter().enumerate() {
            if i < MAX_SERIES {
                series.push(DailySeries {
                    key,
                    cost_usd: cost,
                });
            } else {
                let sum = other.get_or_insert_with(|| vec![0.0; bounds.len()]);
                for (s, c) in sum.iter_mut().zip(cost) {
                    *s += c;
                }
            }
        }
        if let Some(cost) = other {
            series.push(DailySeries {
                key: "other".into(),
                cost_usd: cost,
            });
        }

        let unpriced_models: Vec<String> = conn
            .prepare_cached(
                "SELECT DISTINCT u.model FROM usage u INDEXED BY usage_unpriced
                 WHERE u.cost_usd IS NULL
                     AND (?1 IS NULL OR u.repo = ?1)
                 ORDER BY u.model",
            )?
            .query_map([repo], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        Ok(CostDashboard {
            totals,
            days: day_keys,
            series,
            by_repo,
            by_model,
            by_task,
            unpriced_models,
        })
    }
}
