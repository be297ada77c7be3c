//! The `events` table: every event of every task, as its JSON, numbered 1, 2, 3… per task.

use crate::{Store, StoreError, checkpoints, metrics, search, usage};
use bosun_protocol::{Event, EventMsg, TaskId};
use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};

impl Store {
    /// Appends one event and, in the same transaction, brings the task row up to date:
    /// `updated_at` and `last_seq` always; token totals, cost and `priced` (plus a usage row) on
    /// `usage`; a checkpoint row on `checkpoint_created`; `tool_calls` on `tool_call_begin`;
    /// status, summary and `finished_at` on `task_finished`; the full-text index, `files_changed`
    /// and `review_state` (see [`crate::search`]); the metrics' counters (see [`crate::metrics`]).
    ///
    /// The event's `seq` must be the task's `last_seq + 1`: anything else is refused
    /// ([`StoreError::SeqGap`], [`StoreError::DuplicateSeq`]) and nothing is written.
    pub fn append_event(&self, ev: &Event) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        append_in(&tx, ev)?;
        tx.commit()?;
        self.after_append(&conn);
        Ok(())
    }

    /// Appends several events (of any tasks, each task's in order) in one transaction: for
    /// imports and generated journals. All or nothing.
    pub fn append_events(&self, evs: &[Event]) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        for ev in evs {
            append_in(&tx, ev)?;
        }
        tx.commit()?;
        self.after_append(&conn);
        Ok(())
    }

    /// Appends `msg` as the task's next event, its seq assigned under the write lock: for
    /// writers that do not own the task's stream (a finished task's checks, the review), so two
    /// of them never take the same seq.
    pub fn append_next(
        &self,
        task: &TaskId,
        ts: String,
        msg: EventMsg,
    ) -> Result<Event, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let event = Event {
            seq: last_seq_in(&tx, task)? + 1,
            task_id: task.clone(),
            ts,
            msg,
        };
        append_in(&tx, &event)?;
        tx.commit()?;
        self.after_append(&conn);
        Ok(event)
    }

    /// The seq of the task's last event (0 before its first).
    pub fn last_seq(&self, task: &TaskId) -> Result<u64, StoreError> {
        last_seq_in(&self.conn(), task)
    }

    /// Up to `limit` events of the task with `seq > after_seq`, in seq order. Page with the last
    /// seq returned; an unknown task has no events.
    pub fn events(
        &self,
        task: &TaskId,
        after_seq: u64,
        limit: usize,
    ) -> Result<Vec<Event>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT seq, json FROM events WHERE task_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
        )?;
        let after = i64::try_from(after_seq).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt.query_map(params![task.as_str(), after, limit], |r| {
            Ok((r.get::<_, u64>(0)?, r.get::<_, String>(1)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, json) = row?;
            let ev = serde_json::from_str(&json).map_err(|e| StoreError::Corrupt {
                task: task.clone(),
                seq,
                reason: e.to_string(),
            })?;
            out.push(ev);
        }
        Ok(out)
    }
}

impl Store {
    /// The task's events of the given types (`type` tags such as `"review"`), in seq order.
    pub fn events_of_kinds(&self, task: &TaskId, kinds: &[&str]) -> Result<Vec<Event>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT seq, json FROM events WHERE task_id = ?1 AND type IN (SELECT value FROM json_each(?2)) ORDER BY seq",
        )?;
        let kinds = serde_json::to_string(kinds)?;
        let rows = stmt.query_map(params![task.as_str(), kinds], |r| {
            Ok((r.get::<_, u64>(0)?, r.get::<_, String>(1)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, json) = row?;
            out.push(
                serde_json::from_str(&json).map_err(|e| StoreError::Corrupt {
                    task: task.clone(),
                    seq,
                    reason: e.to_string(),
                })?,
            );
        }
        Ok(out)
    }
}

pub(crate) fn last_seq_in(conn: &rusqlite::Connection, task: &TaskId) -> Result<u64, StoreError> {
    conn.query_row(
        "SELECT last_seq FROM tasks WHERE id = ?1",
        [task.as_str()],
        |r| r.get(0),
    )
    .optional()?
    .ok_or_else(|| StoreError::NotFound {
        id: task.to_string(),
    })
}

/// Appends `ev` inside `tx` (which must hold the write lock: `BEGIN IMMEDIATE`).
pub(crate) fn append_in(tx: &Transaction<'_>, ev: &Event) -> Result<(), StoreError> {
    let task = &ev.task_id;
    let last = last_seq_in(tx, task)?;
    if ev.seq <= last {
        return Err(StoreError::DuplicateSeq {
            task: task.clone(),
            last,
            got: ev.seq,
        });
    }
    if ev.seq > last + 1 {
        return Err(StoreError::SeqGap {
            task: task.clone(),
            last,
            got: ev.seq,
        });
    }
    let json = serde_json::to_string(ev)?;
    tx.prepare_cached(
        "INSERT INTO events (task_id, seq, type, ts, json) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![task.as_str(), ev.seq, ev.msg.kind(), ev.ts, json])?;

    match &ev.msg {
        EventMsg::Usage(u) => usage::record(tx, ev, u)?,
        EventMsg::CheckpointCreated(c) => checkpoints::record(tx, ev, c)?,
        EventMsg::ToolCallBegin(_) => {
            tx.prepare_cached("UPDATE tasks SET tool_calls = tool_calls + 1 WHERE id = ?1")?
                .execute([task.as_str()])?;
        }
        EventMsg::TaskFinished(f) => {
            tx.prepare_cached(
                "UPDATE tasks SET status = ?2, summary = ?3, finished_at = ?4 WHERE id = ?1",
            )?
            .execute(params![task.as_str(), f.status.as_str(), f.summary, ev.ts])?;
            if !f.checks.is_empty() {
                let result = if f.checks.iter().any(|c| c.blocks()) {
                    "failed"
                } else {
                    "passed"
                };
                tx.prepare_cached("UPDATE tasks SET checks = ?2 WHERE id = ?1")?
                    .execute(params![task.as_str(), result])?;
            }
        }
        _ => {}
    }
    metrics::record(tx, ev)?;
    search::index_in(tx, ev)?;
    tx.prepare_cached("UPDATE tasks SET last_seq = ?2, updated_at = ?3 WHERE id = ?1")?
        .execute(params![task.as_str(), ev.seq, ev.ts])?;
    Ok(())
}
