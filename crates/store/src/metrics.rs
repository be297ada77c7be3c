//! The articles' execution metrics over finished top-level tasks (`bosun stats`, the Insights
//! part of the Costs view). The definitions are in docs/metrics.md; they are tested on a journal
//! built for the purpose.

use crate::{Store, StoreError};
use bosun_protocol::{Event, EventMsg, ReviewEvent, TaskId, ToolCallStatus};
use rusqlite::{OptionalExtension, Transaction, params};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use ts_rs::TS;

/// What the metrics are grouped by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum StatsGroup {
    /// One row over everything.
    #[default]
    All,
    Model,
    Repo,
    /// The local week (from Monday) the task finished in, `YYYY-MM-DD` of its Monday.
    Week,
}

/// The metrics of one group. Rates are over `tasks` (decided tasks: successes and failures);
/// they are null when no task is decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct StatsRow {
    pub key: String,
    /// Decided tasks: finished top-level tasks that succeeded or failed.
    #[ts(type = "number")]
    pub tasks: u64,
    #[ts(type = "number")]
    pub successes: u64,
    #[ts(type = "number")]
    pub first_passes: u64,
    /// Finished less than 7 days ago and never reviewed: neither success nor failure yet.
    #[ts(type = "number")]
    pub pending_review: u64,
    /// Ended `answered` (no changes): neither success nor failure.
    #[ts(type = "number")]
    pub answered: u64,
    pub success_rate: Option<f64>,
    pub first_pass_rate: Option<f64>,
    pub interventions_per_task: Option<f64>,
    pub cost_per_task_usd: Option<f64>,
    /// The whole group's cost over its successes: "the actual cost of completing a task".
    pub cost_per_success_usd: Option<f64>,
    pub tokens_per_task: Option<f64>,
    pub tokens_per_success: Option<f64>,
    /// Wall time from start to finish.
    pub seconds_per_task: Option<f64>,
    pub seconds_per_success: Option<f64>,
    /// Cause → unsuccessful tasks: `permission_blocked`, `missing_tool`, `no_progress` (the
    /// model made no progress through all of its nudges), `model_error`,
    /// `budget`, `step_limit`, `checks_failed`, `interrupted`, `abandoned` (and `failed` when none
    /// applies).
    pub failure_causes: BTreeMap<String, u64>,
}

/// Keeps the task's counters in `task_metrics` up to date with `ev`, in the append's
/// transaction (so `bosun stats` never scans the events).
pub(crate) fn record(tx: &Transaction<'_>, ev: &Event) -> Result<(), StoreError> {
    let bump = |column: &str, by: i64| -> Result<(), StoreError> {
        tx.prepare_cached(&format!(
            "INSERT INTO task_metrics (task_id, {column}) VALUES (?1, ?2)
             ON CONFLICT (task_id) DO UPDATE SET {column} = {column} + excluded.{column}"
        ))?
        .execute(params![ev.task_id.as_str(), by])?;
        Ok(())
    };
    match &ev.msg {
        EventMsg::UserMessage(m) if m.origin.as_deref() != Some("checks") => {
            bump("user_messages", 1)?
        }
        EventMsg::ApprovalRequested(_) => bump("approvals_asked", 1)?,
        EventMsg::ApprovalResolved(r) if !r.decision.approves() => bump("denials", 1)?,
        EventMsg::ToolCallEnd(end) => {
            let denied = end.status == ToolCallStatus::Denied;
            tx.prepare_cached(
                "INSERT INTO task_metrics (task_id, last_call_denied) VALUES (?1, ?2)
                 ON CONFLICT (task_id) DO UPDATE SET last_call_denied = excluded.last_call_denied",
            )?
            .execute(params![ev.task_id.as_str(), denied])?;
            if end
                .error
                .as_deref()
                .is_some_and(|e| e.starts_with(UNKNOWN_TOOL))
            {
                bump("unknown_tools", 1)?;
            }
        }
        EventMsg::Error(e) if MODEL_ERROR_CODES.contains(&e.code.as_str()) => {
            bump("model_errors", 1)?
        }
        EventMsg::CheckFinished(f) if f.blocks() => {
            let round: Option<i64> = tx
                .prepare_cached(
                    "SELECT json_extract(json, '$.round') FROM events
                     WHERE task_id = ?1 AND type = 'check_started'
                         AND json_extract(json, '$.check_id') = ?2
                     ORDER BY seq DESC LIMIT 1",
                )?
                .query_row(params![ev.task_id.as_str(), f.check_id], |r| r.get(0))
                .optional()?
                .flatten();
            if round == Some(1) {
                tx.prepare_cached(
                    "INSERT INTO task_metrics (task_id, checks_first_round_failed) VALUES (?1, 1)
                     ON CONFLICT (task_id) DO UPDATE SET checks_first_round_failed = 1",
                )?
                .execute([ev.task_id.as_str()])?;
            }
        }
        EventMsg::Review(r) => match r {
            ReviewEvent::Reject { hunks, .. } => bump("hunks_rejected", hunks.len() as i64)?,
            ReviewEvent::Unreject { hunks, .. } => bump("hunks_unrejected", hunks.len() as i64)?,
            ReviewEvent::RequestChanges { .. } => bump("requests_for_changes", 1)?,
            _ => {}
        },
        _ => {}
    }
    Ok(())
}

/// Marks an imported session, which the metrics leave out.
pub(crate) fn mark_imported(tx: &Transaction<'_>, task: &TaskId) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO task_metrics (task_id, imported) VALUES (?1, 1)
         ON CONFLICT (task_id) DO UPDATE SET imported = 1",
    )?
    .execute([task.as_str()])?;
    Ok(())
}

/// How `bosun_core`'s dispatcher answers a call of a tool that does not exist.
const UNKNOWN_TOOL: &str = "there is no tool named ";

/// `error` event codes that are the model's or its provider's failure (`ModelError::code`).
const MODEL_ERROR_CODES: [&str; 4] = [
    "model_error",
    "rate_limited",
    "model_timeout",
    "response_too_large",
];

/// Finished this long ago or more and never reviewed: abandoned; less: pending review.
const REVIEW_GRACE: &str = "-7 days";

/// What one finished task was, for the metrics.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Answered,
    PendingReview,
    Success { first_pass: bool },
    Failure(&'static str),
}

struct TaskFacts {
    key: String,
    status: String,
    review_state: String,
    checks: Option<String>,
    grace_over: bool,
    cost: f64,
    tokens: u64,
    seconds: f64,
    user_messages: u64,
    approvals_asked: u64,
    denials: u64,
    requests_for_changes: u64,
    hunks_rejected: u64,
    hunks_unrejected: u64,
    unknown_tools: u64,
    model_errors: u64,
    /// It failed "no progress after N nudges" (see `bosun_core::nudge`).
    no_progress: bool,
    last_call_denied: bool,
    checks_first_round_failed: bool,
    /// It changed files, so there is something to review (a task that changed nothing cannot
    /// be reviewed, and is never left pending).
    reviewable: bool,
}

impl TaskFacts {
    /// User messages after the prompt, less those that carried a request for changes (the
    /// review's comments are sent as one; the request counts on its own).
    fn follow_ups(&self) -> u64 {
        self.user_messages
            .saturating_sub(1)
            .saturating_sub(self.requests_for_changes)
    }

    fn interventions(&self) -> u64 {
        self.approvals_asked
            + self.denials
            + self.follow_ups()
            + self.requests_for_changes
            + self.hunks_rejected
            + u64::from(self.status == "interrupted")
    }

    fn outcome(&self) -> Outcome {
        if self.status == "answered" {
            return Outcome::Answered;
        }
        let all_accepted =
            self.review_state == "reviewed" && self.hunks_rejected <= self.hunks_unrejected;
        if self.review_state == "merged" || all_accepted {
            let first_pass = self.hunks_rejected == 0
                && self.follow_ups() == 0
                && self.requests_for_changes == 0
                && !self.checks_first_round_failed;
            return Outcome::Success { first_pass };
        }
        let never_reviewed = self.review_state == "unreviewed";
        if never_reviewed && self.reviewable && !self.grace_over {
            return Outcome::PendingReview;
        }
        Outcome::Failure(if self.last_call_denied {
            "permission_blocked"
        } else if self.unknown_tools > 0 {
            "missing_tool"
        } else if self.no_progress {
            "no_progress"
        } else if self.model_errors > 0 {
            "model_error"
        } else if self.status == "budget_exceeded" {
            "budget"
        } else if self.status == "max_steps" {
            "step_limit"
        } else if self.status == "checks_failed" || self.checks.as_deref() == Some("failed") {
            "checks_failed"
        } else if self.status == "interrupted" {
            "interrupted"
        } else if never_reviewed && self.reviewable {
            "abandoned"
        } else {
            "failed"
        })
    }
}

#[derive(Default)]
struct Totals {
    tasks: u64,
    successes: u64,
    first_passes: u64,
    pending_review: u64,
    answered: u64,
    interventions: u64,
    cost: f64,
    success_cost: f64,
    tokens: u64,
    success_tokens: u64,
    seconds: f64,
    success_seconds: f64,
    failure_causes: BTreeMap<String, u64>,
}

impl Totals {
    fn add(&mut self, t: &TaskFacts) {
        match t.outcome() {
            Outcome::Answered => {
                self.answered += 1;
                return;
            }
            Outcome::PendingReview => {
                self.pending_review += 1;
                return;
            }
            Outcome::Success { first_pass } => {
                self.successes += 1;
                self.first_passes += u64::from(first_pass);
                self.success_cost += t.cost;
                self.success_tokens += t.tokens;
                self.success_seconds += t.seconds;
            }
            Outcome::Failure(cause) => {
                *self.failure_causes.entry(cause.to_string()).or_default() += 1;
            }
        }
        self.tasks += 1;
        self.interventions += t.interventions();
        self.cost += t.cost;
        self.tokens += t.tokens;
        self.seconds += t.seconds;
    }

    fn row(self, key: String) -> StatsRow {
        let per = |x: f64, n: u64| (n > 0).then(|| x / n as f64);
        StatsRow {
            key,
            tasks: self.tasks,
            successes: self.successes,
            first_passes: self.first_passes,
            pending_review: self.pending_review,
            answered: self.answered,
            success_rate: per(self.successes as f64, self.tasks),
            first_pass_rate: per(self.first_passes as f64, self.tasks),
            interventions_per_task: per(self.interventions as f64, self.tasks),
            cost_per_task_usd: per(self.cost, self.tasks),
            cost_per_success_usd: per(self.cost, self.successes),
            tokens_per_task: per(self.tokens as f64, self.tasks),
            tokens_per_success: per(self.success_tokens as f64, self.successes),
            seconds_per_task: per(self.seconds, self.tasks),
            seconds_per_success: per(self.success_seconds, self.successes),
            failure_causes: self.failure_causes,
        }
    }
}

/// Which finished tasks the metrics cover.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct StatsFilter {
    /// Finished at or after (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub since: Option<String>,
    /// Finished before (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub until: Option<String>,
    /// Only this repository (its path as the journal has it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub repo: Option<String>,
}

impl Store {
    /// The metrics of finished top-level tasks (imported sessions left out) grouped `by` model,
    /// repository or local week of finishing (newest first; the others by decided tasks, most
    /// first). Reads the per-task counters, never the events.
    pub fn stats(&self, by: StatsGroup, filter: &StatsFilter) -> Result<Vec<StatsRow>, StoreError> {
        let key = match by {
            StatsGroup::All => "'all'",
            StatsGroup::Model => "t.model",
            StatsGroup::Repo => "t.repo",
            StatsGroup::Week => "date(t.finished_at, 'localtime', 'weekday 0', '-6 days')",
        };
        let conn = self.conn();
        let since = crate::dashboard::utc_time(&conn, filter.since.as_deref())?;
        let until = crate::dashboard::utc_time(&conn, filter.until.as_deref())?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {key}, t.status, t.review_state, t.checks,
                 t.finished_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '{REVIEW_GRACE}'),
                 t.cost_usd,
                 t.input_tokens + t.output_tokens + t.cached_input_tokens + t.cache_write_tokens
                     + t.cache_write_1h_tokens + t.reasoning_tokens,
                 max(0.0, (julianday(t.finished_at) - julianday(t.created_at)) * 86400.0),
                 coalesce(m.user_messages, 0), coalesce(m.approvals_asked, 0),
                 coalesce(m.denials, 0), coalesce(m.requests_for_changes, 0),
                 coalesce(m.hunks_rejected, 0), coalesce(m.hunks_unrejected, 0),
                 coalesce(m.unknown_tools, 0), coalesce(m.model_errors, 0),
                 coalesce(m.last_call_denied, 0), coalesce(m.checks_first_round_failed, 0),
                 t.files_changed > 0,
                 t.status = 'failed' AND coalesce(t.summary, '') LIKE 'no progress after %'
             FROM tasks t LEFT JOIN task_metrics m ON m.task_id = t.id
             WHERE t.status != 'running' AND t.finished_at IS NOT NULL
                 AND NOT coalesce(m.imported, 0) AND t.parent_task_id IS NULL
                 AND (?1 IS NULL OR t.finished_at >= ?1) AND (?2 IS NULL OR t.finished_at < ?2)
                 AND (?3 IS NULL OR t.repo = ?3)"
        ))?;
        let rows = stmt.query_map(params![since, until, filter.repo], |r| {
            Ok(TaskFacts {
                key: r.get::<_, Option<String>>(0)?.unwrap_or_default(),
                status: r.get(1)?,
                review_state: r.get(2)?,
                checks: r.get(3)?,
                grace_over: r.get(4)?,
                cost: r.get(5)?,
                tokens: r.get(6)?,
                seconds: r.get(7)?,
                user_messages: r.get(8)?,
                approvals_asked: r.get(9)?,
                denials: r.get(10)?,
                requests_for_changes: r.get(11)?,
                hunks_rejected: r.get(12)?,
                hunks_unrejected: r.get(13)?,
                unknown_tools: r.get(14)?,
                model_errors: r.get(15)?,
                last_call_denied: r.get(16)?,
                checks_first_round_failed: r.get(17)?,
                reviewable: r.get(18)?,
                no_progress: r.get(19)?,
            })
        })?;
        let mut groups: BTreeMap<String, Totals> = BTreeMap::new();
        for row in rows {
            let facts = row?;
            groups.entry(facts.key.clone()).or_default().add(&facts);
        }
        let mut out: Vec<StatsRow> = groups.into_iter().map(|(k, t)| t.row(k)).collect();
        match by {
            StatsGroup::Week => out.sort_by(|a, b| b.key.cmp(&a.key)),
            _ => out.sort_by(|a, b| b.tasks.cmp(&a.tasks).then_with(|| a.key.cmp(&b.key))),
        }
        Ok(out)
    }
}
