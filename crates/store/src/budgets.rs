//! Budgets' bookkeeping: spend per window across every task of every process, and reservations
//! taken before a model request and settled after it, all in `BEGIN IMMEDIATE` transactions so
//! two processes cannot both pass a limit.

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
    Reserved { id: i64, statuses: Vec<BudgetStatus> },
    /// Not reserved: this budget would pass its limit. Nothing was written.
    Refused { status: BudgetStatus, amount_usd: f64 },
}
