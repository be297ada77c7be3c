//! Keeping what matters: tasks archived out of the lists, transcripts removed (by `bosun delete`
//! or by the retention setting) while the task row and its usage rows stay, and tasks imported
//! from another journal's export. The `task_marks` table holds the first two.

use crate::{Store, StoreError, TaskRow, events, tasks};
use bosun_protocol::{Event, TaskId, TaskStatus};
use rusqlite::{OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// What happened to a task after it ran: archived (hidden from the lists, everything kept) and
/// whether its transcript was removed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskMarks {
    /// When it was archived (RFC 3339); none when it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript_removed: Option<TranscriptRemoved>,
}

/// The task's events and checkpoint rows were deleted; its row and usage rows stay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptRemoved {
    /// RFC 3339.
    pub at: String,
    /// What removed it: `delete` (the task is gone from the lists too) or `retention`.
    pub by: String,
    /// Why, in words: "deleted by `bosun delete`", "removed by retention (older than 30 days)".
    pub reason: String,
}

/// What the limits a task was started with were (a follow-up keeps them).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TaskLimits {
    pub max_steps: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
}

/// What [`Store::import_task`] did with a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Imported {
    /// It was not in the journal: it is now, with its events.
    Created,
    /// The journal has it already, with the same row and events: nothing was written.
    Identical,
    /// The journal has a task with that id and different content: nothing was written.
    Conflict,
}

/// A task to import: its row as exported, its limits and marks.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportTask<'a> {
    pub row: &'a TaskRow,
    pub limits: TaskLimits,
    pub marks: &'a TaskMarks,
}

fn marks_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TaskMarks> {
    let at: Option<String> = r.get("transcript_removed_at")?;
    let by: Option<String> = r.get("transcript_removed_by")?;
    let reason: Option<String> = r.get("transcript_removed_reason")?;
    Ok(TaskMarks {
        archived_at: r.get("archived_at")?,
        transcript_removed: at.map(|at| TranscriptRemoved {
            at,
            by: by.unwrap_or_default(),
            reason: reason.unwrap_or_default(),
        }),
    })
}

impl Store {
    /// Archives (`archived`) or un-archives the task. True when that changed something.
    pub fn set_archived(&self, task: &TaskId, archived: bool) -> Result<bool, StoreError> {
        let conn = self.conn();
        tasks::read(&conn, task)?;
        let n = if archived {
            conn.execute(
                "INSERT INTO task_marks (task_id, archived_at) VALUES (?1, ?2)
                 ON CONFLICT (task_id) DO UPDATE SET archived_at = excluded.archived_at
                 WHERE archived_at IS NULL",
                params![task.as_str(), crate::now_rfc3339()],
            )?
        } else {
            conn.execute(
                "UPDATE task_marks SET archived_at = NULL WHERE task_id = ?1 AND archived_at IS NOT NULL",
                [task.as_str()],
            )?
        };
        Ok(n > 0)
    }

    /// The task's marks (all empty for a task never archived nor pruned).
    pub fn task_marks(&self, task: &TaskId) -> Result<TaskMarks, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT archived_at, transcript_removed_at, transcript_removed_by, transcript_removed_reason
                 FROM task_marks WHERE task_id = ?1",
                [task.as_str()],
                marks_from_row,
            )
            .optional()?
            .unwrap_or_default())
    }

    /// The marks of every task that has some.
    pub fn all_task_marks(&self) -> Result<HashMap<TaskId, TaskMarks>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT task_id, archived_at, transcript_removed_at, transcript_removed_by,
                 transcript_removed_reason
             FROM task_marks",
        )?;
        let rows = stmt.query_map([], |r| Ok((TaskId(r.get("task_id")?), marks_from_row(r)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The tasks the lists leave out: archived ones and deleted ones (whose rows stay for the
    /// cost totals).
    pub fn hidden_tasks(&self) -> Result<std::collections::HashSet<TaskId>, StoreError> {
        Ok(self
            .all_task_marks()?
            .into_iter()
            .filter(|(_, m)| {
                m.archived_at.is_some()
                    || m.transcript_removed
                        .as_ref()
                        .is_some_and(|r| r.by == "delete")
            })
            .map(|(id, _)| id)
            .collect())
    }

    /// The limits the task was started with.
    pub fn task_limits(&self, task: &TaskId) -> Result<TaskLimits, StoreError> {
        self.conn()
            .query_row(
                "SELECT max_steps, max_cost_usd FROM tasks WHERE id = ?1",
                [task.as_str()],
                |r| {
                    Ok(TaskLimits {
                        max_steps: r.get(0)?,
                        max_cost_usd: r.get(1)?,
                    })
                },
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound {
                id: task.to_string(),
            })
    }

    /// Deletes the task's events and checkpoint rows, keeping its row (totals, status, cost) and
    /// its usage rows, so cost reports stay right; records `by` (`delete`, `retention`) and
    /// `reason`. A running task is refused. Returns how many events were deleted.
    pub fn remove_transcript(
        &self,
        task: &TaskId,
        by: &str,
        reason: &str,
    ) -> Result<u64, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let row = tasks::read(&tx, task)?;
        if row.status == TaskStatus::Running {
            return Err(StoreError::Running {
                task: task.clone(),
                pid: row.owner_pid,
            });
        }
        let deleted = tx.execute("DELETE FROM events WHERE task_id = ?1", [task.as_str()])?;
        tx.execute(
            "DELETE FROM checkpoints WHERE task_id = ?1",
            [task.as_str()],
        )?;
        tx.execute(
            "INSERT INTO task_marks (task_id, transcript_removed_at, transcript_removed_by,
                 transcript_removed_reason) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (task_id) DO UPDATE SET
                 transcript_removed_at = excluded.transcript_removed_at,
                 transcript_removed_by = excluded.transcript_removed_by,
                 transcript_removed_reason = excluded.transcript_removed_reason",
            params![task.as_str(), crate::now_rfc3339(), by, reason],
        )?;
        tx.commit()?;
        Ok(deleted as u64)
    }

    /// Tasks that finished before `cutoff` (RFC 3339, compared as text like every journal time)
    /// and still have their transcript, oldest first.
    pub fn tasks_finished_before(&self, cutoff: &str) -> Result<Vec<TaskId>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT t.id FROM tasks t LEFT JOIN task_marks m ON m.task_id = t.id
             WHERE t.status != 'running' AND t.finished_at IS NOT NULL AND t.finished_at < ?1
               AND m.transcript_removed_at IS NULL
             ORDER BY t.finished_at, t.id",
        )?;
        let rows = stmt.query_map([cutoff], |r| r.get::<_, String>(0).map(TaskId))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Imports one task of another journal's export, in one transaction: when the id is new, its
    /// row, its `events` in order (their seqs kept, 1, 2, 3…; a task whose transcript was removed
    /// has none) and its marks. When the journal already has the id, compares instead: the same
    /// row and events are [`Imported::Identical`], anything else [`Imported::Conflict`]; nothing
    /// is written either way.
    ///
    /// `events` is read lazily (a task may have a million): when it yields an error, nothing of
    /// the task is written and the error comes back as `Ok(Err(e))`. On `Conflict` or
    /// `Identical` it may not have been read to its end.
    pub fn import_task<E>(
        &self,
        task: &ImportTask<'_>,
        events: impl Iterator<Item = Result<Event, E>>,
    ) -> Result<Result<Imported, E>, StoreError> {
        let row = task.row;
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        match tasks::read(&tx, &row.id) {
            Ok(existing) => {
                drop(tx);
                drop(conn);
                return self.compare_task(&existing, task, events);
            }
            Err(StoreError::NotFound { .. }) => {}
            Err(e) => return Err(e),
        }
        tx.execute(
            "INSERT INTO tasks (id, repo, prompt, status, created_at, updated_at, provider, model,
                 base_commit, branch, worktree, owner_pid, owner_started, max_steps, max_cost_usd,
                 parent_task_id, role, depth)
             VALUES (?1, ?2, ?3, 'running', ?4, ?4, ?5, ?6, ?7, ?8, ?9, ?10, NULL, ?11, ?12,
                 ?13, ?14, ?15)",
            params![
                row.id.as_str(),
                row.repo,
                row.prompt,
                row.created_at,
                row.provider,
                row.model,
                row.base_commit,
                row.branch,
                row.worktree,
                row.owner_pid,
                task.limits.max_steps,
                task.limits.max_cost_usd,
                row.parent_task_id.as_ref().map(|p| p.as_str()),
                row.role,
                row.depth,
            ],
        )?;
        for ev in events {
            let ev = match ev {
                Ok(ev) => ev,
                Err(e) => return Ok(Err(e)),
            };
            if ev.task_id != row.id {
                return Err(StoreError::Corrupt {
                    task: row.id.clone(),
                    seq: ev.seq,
                    reason: format!("the event belongs to task {}", ev.task_id),
                });
            }
            events::append_in(&tx, &ev)?;
        }
        // The row as exported: its totals and status (events rebuilt them, but a task whose
        // transcript was removed has none left) and anything changed after its events (a rebase's
        // new base).
        tx.execute(
            "UPDATE tasks SET status = ?2, summary = ?3, updated_at = ?4, finished_at = ?5,
                 base_commit = ?6, input_tokens = ?7, output_tokens = ?8, cached_input_tokens = ?9,
                 cache_write_tokens = ?10, cost_usd = ?11, priced = ?12, tool_calls = ?13,
                 last_seq = ?14, checks = ?15, cache_write_1h_tokens = ?16, reasoning_tokens = ?17
             WHERE id = ?1",
            params![
                row.id.as_str(),
                row.status.as_str(),
                row.summary,
                row.updated_at,
                row.finished_at,
                row.base_commit,
                row.input_tokens,
                row.output_tokens,
                row.cached_input_tokens,
                row.cache_write_tokens,
                row.cost_usd,
                row.priced,
                row.tool_calls,
                row.last_seq,
                row.checks,
                row.cache_write_1h_tokens,
                row.reasoning_tokens,
            ],
        )?;
        // Imported sessions stay out of the metrics' denominator.
        crate::metrics::mark_imported(&tx, &row.id)?;
        let marks = task.marks;
        if marks.archived_at.is_some() || marks.transcript_removed.is_some() {
            tx.execute(
                "INSERT INTO task_marks (task_id, archived_at, transcript_removed_at,
                     transcript_removed_by, transcript_removed_reason) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    row.id.as_str(),
                    marks.archived_at,
                    marks.transcript_removed.as_ref().map(|t| &t.at),
                    marks.transcript_removed.as_ref().map(|t| &t.by),
                    marks.transcript_removed.as_ref().map(|t| &t.reason),
                ],
            )?;
        }
        tx.commit()?;
        Ok(Ok(Imported::Created))
    }

    /// Whether the journal's `existing` task is the one being imported: the same row (costs
    /// within rounding) and the same events, compared page by page.
    fn compare_task<E>(
        &self,
        existing: &TaskRow,
        task: &ImportTask<'_>,
        events: impl Iterator<Item = Result<Event, E>>,
    ) -> Result<Result<Imported, E>, StoreError> {
        let same_row = {
            let mut a = existing.clone();
            let b = task.row;
            if (a.cost_usd - b.cost_usd).abs() < 1e-9 {
                a.cost_usd = b.cost_usd;
            }
            &a == b
        };
        if !same_row {
            return Ok(Ok(Imported::Conflict));
        }
        let mut page = Vec::new().into_iter();
        let mut after = 0;
        for ev in events {
            let ev = match ev {
                Ok(ev) => ev,
                Err(e) => return Ok(Err(e)),
            };
            let stored = match page.next() {
                Some(s) => s,
                None => {
                    let mut next = self.events(&existing.id, after, 1000)?.into_iter();
                    match next.next() {
                        Some(s) => {
                            page = next;
                            s
                        }
                        None => return Ok(Ok(Imported::Conflict)),
                    }
                }
            };
            after = stored.seq;
            if serde_json::to_string(&stored)? != serde_json::to_string(&ev)? {
                return Ok(Ok(Imported::Conflict));
            }
        }
        let more = page.next().is_some() || !self.events(&existing.id, after, 1)?.is_empty();
        Ok(Ok(if more {
            Imported::Conflict
        } else {
            Imported::Identical
        }))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::NewTask;
    use bosun_protocol::{EventMsg, Warning};
    use pretty_assertions::assert_eq;

    fn journal_with_a_task(dir: &std::path::Path, name: &str) -> (Store, TaskId) {
        let store = Store::open(&dir.join(name)).unwrap();
        let id = TaskId::from("01task");
        store
            .create_task(&NewTask {
                id: id.clone(),
                repo: "/repo".into(),
                prompt: "do it".into(),
                base_commit: "0".repeat(40),
                branch: "bosun/01task".into(),
                worktree: "/wt".into(),
                provider: "p".into(),
                model: "m".into(),
                created_at: "2026-01-01T00:00:00.000Z".into(),
                owner_pid: 1,
                owner_started: None,
                max_steps: 7,
                max_cost_usd: Some(1.5),
                parent_task_id: None,
                role: None,
                depth: 0,
            })
            .unwrap();
        for n in 1..=3 {
            store
                .append_next(
                    &id,
                    format!("2026-01-01T00:00:0{n}.000Z"),
                    EventMsg::Warning(Warning {
                        code: "w".into(),
                        message: format!("warning {n}"),
                    }),
                )
                .unwrap();
        }
        (store, id)
    }

    #[test]
    fn an_import_that_fails_midway_writes_nothing_and_a_whole_one_is_identical_after() {
        let dir = tempfile::tempdir().unwrap();
        let (from, id) = journal_with_a_task(dir.path(), "from.db");
        let row = from.task(&id).unwrap();
        let events = from.events(&id, 0, 100).unwrap();
        let marks = TaskMarks::default();
        let task = ImportTask {
            row: &row,
            limits: from.task_limits(&id).unwrap(),
            marks: &marks,
        };
        let to = Store::open(&dir.path().join("to.db")).unwrap();

        let broken = events
            .iter()
            .take(2)
            .cloned()
            .map(Ok)
            .chain([Err("line 4 is broken")]);
        assert_eq!(
            to.import_task(&task, broken).unwrap(),
            Err("line 4 is broken")
        );
        assert!(matches!(to.task(&id), Err(StoreError::NotFound { .. })));

        let whole = events.iter().cloned().map(Ok::<_, ()>);
        assert_eq!(
            to.import_task(&task, whole.clone()).unwrap(),
            Ok(Imported::Created)
        );
        assert_eq!(to.task(&id).unwrap(), row);
        assert_eq!(to.events(&id, 0, 100).unwrap(), events);
        assert_eq!(to.task_limits(&id).unwrap(), task.limits);
        assert_eq!(
            to.import_task(&task, whole).unwrap(),
            Ok(Imported::Identical)
        );
        let fewer = events.iter().take(2).cloned().map(Ok::<_, ()>);
        assert_eq!(
            to.import_task(&task, fewer).unwrap(),
            Ok(Imported::Conflict)
        );
    }

    #[test]
    fn removing_a_transcript_keeps_the_row_and_is_refused_while_running() {
        let dir = tempfile::tempdir().unwrap();
        let (store, id) = journal_with_a_task(dir.path(), "j.db");
        // Still `running`, owned by pid 1 (alive): refused.
        assert!(matches!(
            store.remove_transcript(&id, "delete", "deleted"),
            Err(StoreError::Running { .. })
        ));
        store
            .conn()
            .execute(
                "UPDATE tasks SET status = 'completed', finished_at = '2026-01-02T00:00:00.000Z'",
                [],
            )
            .unwrap();
        assert_eq!(
            store.tasks_finished_before("2026-01-03").unwrap(),
            vec![id.clone()]
        );
        assert_eq!(store.remove_transcript(&id, "retention", "old").unwrap(), 3);
        assert!(store.events(&id, 0, 10).unwrap().is_empty());
        assert_eq!(store.task(&id).unwrap().last_seq, 3);
        let removed = store.task_marks(&id).unwrap().transcript_removed.unwrap();
        assert_eq!(
            (removed.by.as_str(), removed.reason.as_str()),
            ("retention", "old")
        );
        assert!(
            store
                .tasks_finished_before("2026-01-03")
                .unwrap()
                .is_empty()
        );
        assert!(store.set_archived(&id, true).unwrap());
        assert!(!store.set_archived(&id, true).unwrap());
        assert!(store.task_marks(&id).unwrap().archived_at.is_some());
        assert!(store.set_archived(&id, false).unwrap());
        assert!(store.all_task_marks().unwrap()[&id].archived_at.is_none());
    }
}
