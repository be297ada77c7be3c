//! Budgets' bookkeeping: spend per window across every task of every process, and reservations
//! taken before a model request and settled after it, all in `BEGIN IMMEDIATE` transactions so
//! two processes cannot both pass a limit.

use crate::liveness::owner_alive;
use crate::{Store, StoreError, process_start_time};
use bosun_protocol::TaskId;
use rusqlite::{Connection, TransactionBehavior, params};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The period a budget covers, in local time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum BudgetWindow {
    Day,
    /// From Monday.
    Week,
    Month,
}

/// One limit to hold: overall, or for one repository.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct BudgetLimit {
    /// How the user names it: `daily_usd`, `weekly_usd`, `monthly_usd`, or
    /// `repos."<path>".budgets.daily_usd`.
    pub name: String,
    pub window: BudgetWindow,
    /// Only this repository's tasks count (and only they are held by it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub repo: Option<String>,
    pub limit_usd: f64,
}

/// One budget's state: spent (settled usage) and reserved (requests in flight) in its window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct BudgetStatus {
    pub limit: BudgetLimit,
    pub spent_usd: f64,
    pub reserved_usd: f64,
}

/// What [`crate::Store::reserve`] decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Reservation {
    /// Reserved; settle it with [`crate::Store::settle`]. `statuses` are every budget after the
    /// reservation (for the 80 % warning).
    Reserved {
        id: i64,
        statuses: Vec<BudgetStatus>,
    },
    /// Not reserved: this budget would pass its limit. Nothing was written.
    Refused {
        status: BudgetStatus,
        amount_usd: f64,
    },
}

/// The usage rows of Bosun's own tasks: imported sessions' spend (another agent's, already
/// paid) counts toward no budget.
const OWN: &str =
    "NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = u.task_id AND t.source IS NOT NULL)";

/// A reservation older than this no longer holds (its request is long over, settled or not).
const RESERVATION_TTL: &str = "-30 minutes";

/// The UTC start (RFC 3339, as `usage.ts` is written) of the local window containing now.
fn window_start_sql(window: BudgetWindow) -> &'static str {
    match window {
        BudgetWindow::Day => {
            "strftime('%Y-%m-%dT%H:%M:%fZ', 'now', 'localtime', 'start of day', 'utc')"
        }
        BudgetWindow::Week => {
            "strftime('%Y-%m-%dT%H:%M:%fZ', 'now', 'localtime', 'start of day', 'weekday 0', \
             '-6 days', 'utc')"
        }
        BudgetWindow::Month => {
            "strftime('%Y-%m-%dT%H:%M:%fZ', 'now', 'localtime', 'start of month', 'utc')"
        }
    }
}

/// Deletes reservations whose process is gone (or is another process now holding its pid) or
/// that are older than [`RESERVATION_TTL`].
fn drop_stale(conn: &Connection) -> Result<(), StoreError> {
    conn.prepare_cached(&format!(
        "DELETE FROM budget_reservations
         WHERE created_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '{RESERVATION_TTL}')"
    ))?
    .execute([])?;
    let live: Vec<(i64, u32, Option<i64>)> = conn
        .prepare_cached("SELECT id, pid, pid_started FROM budget_reservations")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    for (id, pid, started) in live {
        let started = started.and_then(|s| u64::try_from(s).ok());
        if !owner_alive(pid, started) {
            conn.prepare_cached("DELETE FROM budget_reservations WHERE id = ?1")?
                .execute([id])?;
        }
    }
    Ok(())
}

fn status_in(conn: &Connection, limit: &BudgetLimit) -> Result<BudgetStatus, StoreError> {
    let start = window_start_sql(limit.window);
    let spent: f64 = match &limit.repo {
        None => conn
            .prepare_cached(&format!(
                "SELECT total(u.cost_usd) FROM usage u WHERE u.ts >= {start} AND {OWN}"
            ))?
            .query_row([], |r| r.get(0))?,
        Some(repo) => conn
            .prepare_cached(&format!(
                "SELECT total(u.cost_usd) FROM usage u WHERE u.ts >= {start} AND u.repo = ?1 AND {OWN}"
            ))?
            .query_row([repo], |r| r.get(0))?,
    };
    let reserved: f64 = conn
        .prepare_cached(&format!(
            "SELECT total(amount_usd) FROM budget_reservations
             WHERE created_at >= {start} AND (?1 IS NULL OR repo = ?1)"
        ))?
        .query_row([limit.repo.as_deref()], |r| r.get(0))?;
    Ok(BudgetStatus {
        limit: limit.clone(),
        spent_usd: spent,
        reserved_usd: reserved,
    })
}

impl BudgetStatus {
    /// Spent and reserved over the limit (0.8 is the 80 % warning; 1 or more: reached).
    pub fn used_fraction(&self) -> f64 {
        if self.limit.limit_usd > 0.0 {
            (self.spent_usd + self.reserved_usd) / self.limit.limit_usd
        } else {
            f64::INFINITY
        }
    }
}

impl BudgetLimit {
    /// Whether a request of a task in `repo` counts against this limit.
    fn holds(&self, repo: &str) -> bool {
        self.repo.as_deref().is_none_or(|r| r == repo)
    }
}

impl Store {
    /// In one `BEGIN IMMEDIATE` transaction: for every limit that holds the task's `repo`, spent
    /// (priced usage rows in its window, for its repository if any) + reserved (live
    /// reservations in that window and repository) + `amount_usd` over `limit_usd` is
    /// [`Reservation::Refused`] (nothing written); else a reservation row is written (task,
    /// repository, amount, this process's pid and start time, now) and every limit's status
    /// after it comes back. Reservations of dead processes or older than 30 minutes are
    /// deleted first; they do not count.
    pub fn reserve(
        &self,
        task: &TaskId,
        repo: &str,
        amount_usd: f64,
        limits: &[BudgetLimit],
    ) -> Result<Reservation, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        drop_stale(&tx)?;
        let mut statuses = Vec::with_capacity(limits.len());
        for limit in limits {
            let status = status_in(&tx, limit)?;
            if limit.holds(repo)
                && status.spent_usd + status.reserved_usd + amount_usd > limit.limit_usd
            {
                // Dropping stale reservations is worth keeping even when refusing.
                tx.commit()?;
                return Ok(Reservation::Refused { status, amount_usd });
            }
            statuses.push(status);
        }
        let pid = std::process::id();
        tx.prepare_cached(
            "INSERT INTO budget_reservations (task_id, repo, amount_usd, pid, pid_started,
                 created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
        )?
        .execute(params![
            task.as_str(),
            repo,
            amount_usd,
            pid,
            process_start_time(pid).and_then(|s| i64::try_from(s).ok()),
        ])?;
        let id = tx.last_insert_rowid();
        tx.commit()?;
        for (status, limit) in statuses.iter_mut().zip(limits) {
            if limit.holds(repo) {
                status.reserved_usd += amount_usd;
            }
        }
        Ok(Reservation::Reserved { id, statuses })
    }

    /// Removes the reservation: the usage row appended for the response counts instead. An
    /// unknown id (already settled, or dropped as stale) is fine.
    pub fn settle(&self, reservation: i64) -> Result<(), StoreError> {
        self.conn()
            .prepare_cached("DELETE FROM budget_reservations WHERE id = ?1")?
            .execute([reservation])?;
        Ok(())
    }

    /// Every limit's spent and reserved now, for Settings and the 80 % warning.
    pub fn budget_statuses(&self, limits: &[BudgetLimit]) -> Result<Vec<BudgetStatus>, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        drop_stale(&tx)?;
        let statuses = limits
            .iter()
            .map(|l| status_in(&tx, l))
            .collect::<Result<Vec<_>, _>>()?;
        tx.commit()?;
        Ok(statuses)
    }

    /// Priced spend (settled usage) since `since` (RFC 3339), all tasks: for the spend-rate
    /// breaker.
    pub fn spend_since(&self, since: &str) -> Result<f64, StoreError> {
        Ok(self
            .conn()
            .prepare_cached(&format!(
                "SELECT total(u.cost_usd) FROM usage u WHERE u.ts >= ?1 AND {OWN}"
            ))?
            .query_row([since], |r| r.get(0))?)
    }
}
