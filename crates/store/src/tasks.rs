//! The `tasks` table: one row per task, kept in step with its events by [`Store::append_event`].

use crate::{Store, StoreError};
use bosun_protocol::{TaskId, TaskStatus};
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What the journal needs to know about a task when it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTask {
    pub id: TaskId,
    pub repo: String,
    pub prompt: String,
    pub base_commit: String,
    pub branch: String,
    pub worktree: String,
    pub provider: String,
    pub model: String,
    /// RFC 3339.
    pub created_at: String,
    /// The process running the task; see [`Store::reconcile_interrupted`].
    pub owner_pid: u32,
    /// That process's start time (`/proc/<pid>/stat` field 22), from [`crate::process_start_time`],
    /// so a reused pid is not mistaken for the owner.
    pub owner_started: Option<u64>,
    pub max_steps: u32,
    pub max_cost_usd: Option<f64>,
    /// A sub-agent's parent task, role and depth (None, None, 0 for the user's task).
    pub parent_task_id: Option<TaskId>,
    pub role: Option<String>,
    pub depth: u32,
}

/// A task as the journal sees it: what was asked, where, and the running totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct TaskRow {
    pub id: TaskId,
    pub repo: String,
    pub prompt: String,
    pub status: TaskStatus,
    pub summary: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub finished_at: Option<String>,
    pub provider: String,
    pub model: String,
    pub base_commit: String,
    pub branch: String,
    pub worktree: String,
    #[ts(type = "number")]
    pub input_tokens: u64,
    #[ts(type = "number")]
    pub output_tokens: u64,
    #[ts(type = "number")]
    pub cached_input_tokens: u64,
    #[ts(type = "number")]
    pub cache_write_tokens: u64,
    #[serde(default)]
    #[ts(type = "number")]
    pub cache_write_1h_tokens: u64,
    #[serde(default)]
    #[ts(type = "number")]
    pub reasoning_tokens: u64,
    /// Sum of the priced responses' costs; see `priced`.
    pub cost_usd: f64,
    /// False when at least one response's model had no price: `cost_usd` is then a lower bound.
    pub priced: bool,
    #[ts(type = "number")]
    pub tool_calls: u64,
    #[ts(type = "number")]
    pub last_seq: u64,
    pub owner_pid: u32,
    /// The last checks' result: `passed` (every required check passed, or only failures the
    /// base had too), `failed`, or none when no checks ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub checks: Option<String>,
    /// `unreviewed`, `in_review` (a verdict or comment was given), `reviewed` (every hunk
    /// decided), `merged` or `discarded` (the worktree was removed unmerged).
    pub review_state: String,
    /// Distinct paths over the task's checkpoints.
    pub files_changed: u32,
    /// A sub-agent's parent (absent for the user's own tasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent_task_id: Option<TaskId>,
    /// The role whose model ran a sub-agent (`worker`, `escalation`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub role: Option<String>,
    /// 0 for the user's task, 1 for its children, 2 for theirs.
    #[serde(default)]
    pub depth: u32,
    /// Where an imported session came from (`claude-code`, `codex`); absent for Bosun's own
    /// tasks. An imported task is read-only: it cannot be continued, resumed or merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub source: Option<String>,
}

const COLUMNS: &str = "id, repo, prompt, status, summary, created_at, updated_at, finished_at, \
    provider, model, base_commit, branch, worktree, input_tokens, output_tokens, \
    cached_input_tokens, cache_write_tokens, cache_write_1h_tokens, reasoning_tokens, cost_usd, priced, \
    tool_calls, last_seq, owner_pid, checks, review_state, files_changed, parent_task_id, role, depth, source";

/// [`COLUMNS`] of the table aliased `t`.
pub(crate) const COLUMNS_OF_T: &str = "t.id, t.repo, t.prompt, t.status, t.summary, t.created_at, \
    t.updated_at, t.finished_at, t.provider, t.model, t.base_commit, t.branch, t.worktree, \
    t.input_tokens, t.output_tokens, t.cached_input_tokens, t.cache_write_tokens, \
    t.cache_write_1h_tokens, t.reasoning_tokens, t.cost_usd, t.priced, t.tool_calls, t.last_seq, t.owner_pid, t.checks, t.review_state, t.files_changed, t.parent_task_id, t.role, t.depth, t.source";

pub(crate) fn from_row(r: &Row<'_>) -> rusqlite::Result<TaskRow> {
    let status: String = r.get("status")?;
    Ok(TaskRow {
        id: TaskId(r.get("id")?),
        repo: r.get("repo")?,
        prompt: r.get("prompt")?,
        // A status this build does not know (written by a newer Bosun) reads as failed rather
        // than hiding the task.
        status: TaskStatus::parse(&status).unwrap_or(TaskStatus::Failed),
        summary: r.get("summary")?,
        created_at: r.get("created_at")?,
        updated_at: r.get("updated_at")?,
        finished_at: r.get("finished_at")?,
        provider: r.get("provider")?,
        model: r.get("model")?,
        base_commit: r.get("base_commit")?,
        branch: r.get("branch")?,
        worktree: r.get("worktree")?,
        input_tokens: r.get("input_tokens")?,
        output_tokens: r.get("output_tokens")?,
        cached_input_tokens: r.get("cached_input_tokens")?,
        cache_write_tokens: r.get("cache_write_tokens")?,
        cache_write_1h_tokens: r.get("cache_write_1h_tokens")?,
        reasoning_tokens: r.get("reasoning_tokens")?,
        cost_usd: r.get("cost_usd")?,
        priced: r.get("priced")?,
        tool_calls: r.get("tool_calls")?,
        last_seq: r.get("last_seq")?,
        owner_pid: r.get("owner_pid")?,
        checks: r.get("checks")?,
        review_state: r.get("review_state")?,
        files_changed: r.get("files_changed")?,
        parent_task_id: r.get::<_, Option<String>>("parent_task_id")?.map(TaskId),
        role: r.get("role")?,
        depth: r.get("depth")?,
        source: r.get("source")?,
    })
}

/// The task row, read on any connection or transaction.
pub(crate) fn read(conn: &Connection, id: &TaskId) -> Result<TaskRow, StoreError> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM tasks WHERE id = ?1"),
        [id.as_str()],
        from_row,
    )
    .optional()?
    .ok_or_else(|| StoreError::NotFound { id: id.to_string() })
}

impl Store {
    /// Records a new task as `running`, owned by `t.owner_pid`. Its events follow with seq 1, 2, ….
    pub fn create_task(&self, t: &NewTask) -> Result<(), StoreError> {
        let conn = self.conn();
        let inserted = conn.execute(
            "INSERT INTO tasks (id, repo, prompt, status, created_at, updated_at, provider, model,
                 base_commit, branch, worktree, owner_pid, owner_started, max_steps, max_cost_usd,
                 number, parent_task_id, role, depth)
             VALUES (?1, ?2, ?3, 'running', ?4, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,
                 (SELECT coalesce(max(number), 0) + 1 FROM tasks), ?14, ?15, ?16)
             ON CONFLICT (id) DO NOTHING",
            params![
                t.id.as_str(),
                t.repo,
                t.prompt,
                t.created_at,
                t.provider,
                t.model,
                t.base_commit,
                t.branch,
                t.worktree,
                t.owner_pid,
                t.owner_started.and_then(|s| i64::try_from(s).ok()),
                t.max_steps,
                t.max_cost_usd,
                t.parent_task_id.as_ref().map(|p| p.as_str()),
                t.role,
                t.depth,
            ],
        )?;
        if inserted == 0 {
            return Err(StoreError::TaskExists(t.id.clone()));
        }
        Ok(())
    }

    /// Makes process `owner_pid` (started at `owner_started`) the owner of an existing task and
    /// marks it `running` again, clearing its summary and `finished_at`: call it before appending
    /// the events of a resumed task. Refused while another live process runs the task.
    pub fn claim_task(
        &self,
        id: &TaskId,
        owner_pid: u32,
        owner_started: Option<u64>,
    ) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (status, pid, started): (String, u32, Option<i64>) = tx
            .query_row(
                "SELECT status, owner_pid, owner_started FROM tasks WHERE id = ?1",
                [id.as_str()],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound { id: id.to_string() })?;
        let started = started.and_then(|s| u64::try_from(s).ok());
        let same_owner = pid == owner_pid && (started.is_none() || started == owner_started);
        if status == TaskStatus::Running.as_str()
            && !same_owner
            && crate::liveness::owner_alive(pid, started)
        {
            return Err(StoreError::Running {
                task: id.clone(),
                pid,
            });
        }
        tx.execute(
            "UPDATE tasks SET status = 'running', summary = NULL, finished_at = NULL,
                 owner_pid = ?2, owner_started = ?3
             WHERE id = ?1",
            params![
                id.as_str(),
                owner_pid,
                owner_started.and_then(|s| i64::try_from(s).ok())
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Every top-level task (not a sub-agent), newest first.
    pub fn tasks(&self) -> Result<Vec<TaskRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM tasks WHERE parent_task_id IS NULL ORDER BY created_at DESC, id DESC"
        ))?;
        let rows = stmt.query_map([], from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The `limit` newest top-level tasks (by creation), newest first: the first page of a list.
    pub fn recent_tasks(&self, limit: usize) -> Result<Vec<TaskRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM tasks WHERE parent_task_id IS NULL ORDER BY created_at DESC, id DESC LIMIT ?1"
        ))?;
        let rows = stmt.query_map([i64::try_from(limit).unwrap_or(i64::MAX)], from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The top-level tasks whose row changed at or after `since` (an `updated_at`), for a list
    /// that follows the journal without reading every task again (sub-agents stay out of it, as
    /// out of [`Store::tasks`]).
    pub fn tasks_updated_since(&self, since: &str) -> Result<Vec<TaskRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM tasks WHERE updated_at >= ?1 AND parent_task_id IS NULL
             ORDER BY created_at DESC, id DESC"
        ))?;
        let rows = stmt.query_map([since], from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every task, sub-agents included, newest first (an export of the whole journal).
    pub fn all_tasks(&self) -> Result<Vec<TaskRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM tasks ORDER BY created_at DESC, id DESC"
        ))?;
        let rows = stmt.query_map([], from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A task's sub-agents (its direct children), oldest first.
    pub fn children(&self, parent: &TaskId) -> Result<Vec<TaskRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM tasks WHERE parent_task_id = ?1 ORDER BY created_at, id"
        ))?;
        let rows = stmt.query_map([parent.as_str()], from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// How many tasks the journal has.
    pub fn task_count(&self) -> Result<u64, StoreError> {
        Ok(self
            .conn()
            .query_row("SELECT COUNT(*) FROM tasks", [], |r| r.get(0))?)
    }

    /// Records a new base commit for the task (after its changes were rebased onto it).
    pub fn set_base_commit(&self, id: &TaskId, commit: &str) -> Result<(), StoreError> {
        let n = self
            .conn()
            .prepare_cached("UPDATE tasks SET base_commit = ?2 WHERE id = ?1")?
            .execute(params![id.as_str(), commit])?;
        if n == 0 {
            return Err(StoreError::NotFound { id: id.0.clone() });
        }
        Ok(())
    }

    /// Deletes a task with its events, checkpoints and usage (foreign keys cascade).
    pub fn delete_task(&self, id: &TaskId) -> Result<(), StoreError> {
        let n = self
            .conn()
            .prepare_cached("DELETE FROM tasks WHERE id = ?1")?
            .execute(params![id.as_str()])?;
        if n == 0 {
            return Err(StoreError::NotFound { id: id.0.clone() });
        }
        Ok(())
    }

    /// One task by its exact id.
    pub fn task(&self, id: &TaskId) -> Result<TaskRow, StoreError> {
        read(&self.conn(), id)
    }

    /// The step limit the task was started with (model requests per run), which a follow-up or
    /// a resume keeps unless told otherwise.
    pub fn task_max_steps(&self, id: &TaskId) -> Result<u32, StoreError> {
        self.conn()
            .prepare_cached("SELECT max_steps FROM tasks WHERE id = ?1")?
            .query_row([id.as_str()], |r| r.get(0))
            .optional()?
            .ok_or_else(|| StoreError::NotFound { id: id.to_string() })
    }

    /// One task by its id or a unique prefix of it (as typed on the command line).
    pub fn find_task(&self, id_or_prefix: &str) -> Result<TaskRow, StoreError> {
        let wanted = id_or_prefix.trim();
        let not_found = || StoreError::NotFound {
            id: wanted.to_string(),
        };
        if wanted.is_empty() {
            return Err(not_found());
        }
        let conn = self.conn();
        match read(&conn, &TaskId::from(wanted)) {
            Err(StoreError::NotFound { .. }) => {}
            found => return found,
        }
        // Ids are lowercase ULIDs; accept a prefix typed in upper case too.
        let mut candidates = with_prefix(&conn, wanted)?;
        let lower = wanted.to_lowercase();
        if candidates.is_empty() && lower != wanted {
            candidates = with_prefix(&conn, &lower)?;
        }
        match candidates.as_slice() {
            [] => Err(not_found()),
            [only] => read(&conn, only),
            _ => Err(StoreError::Ambiguous {
                prefix: wanted.to_string(),
                candidates,
            }),
        }
    }
}

/// Ids starting with `prefix`, newest first. `substr` rather than `LIKE`, so `%` and `_` in what
/// the user typed are matched literally.
fn with_prefix(conn: &Connection, prefix: &str) -> Result<Vec<TaskId>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id FROM tasks WHERE substr(id, 1, length(?1)) = ?1 ORDER BY created_at DESC, id DESC",
    )?;
    let rows = stmt.query_map([prefix], |r| r.get::<_, String>(0).map(TaskId))?;
    Ok(rows.collect::<Result<_, _>>()?)
}
