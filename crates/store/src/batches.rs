//! The `batches` and `batch_items` tables: a persistent queue of tasks (`bosun batch`) and the
//! runs of a comparison (`bosun compare`). See migration 9 for the states.

use crate::liveness::owner_alive;
use crate::tasks::read as read_task;
use crate::{Store, StoreError, TaskRow, now_rfc3339};
use bosun_protocol::TaskId;
use rusqlite::{OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What the journal records when a batch is created.
#[derive(Debug, Clone, PartialEq)]
pub struct NewBatch {
    pub id: String,
    /// `batch` or `compare`.
    pub kind: String,
    /// What it was started from: the file's path, or the prompt.
    pub name: String,
    pub concurrency: u32,
    /// JSON: what started it (a comparison's repository, prompt, setups and runs).
    pub spec: String,
    pub owner_pid: u32,
    pub owner_started: Option<u64>,
}

/// One item of a new batch.
#[derive(Debug, Clone, PartialEq)]
pub struct NewBatchItem {
    /// A comparison's run, `SETUP#K`.
    pub label: Option<String>,
    /// JSON: the task to run.
    pub spec: String,
}

/// Where an item is in the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum BatchItemState {
    /// Not started.
    Queued,
    /// Its task id is chosen; the task runs, or was cut off and resumes.
    Started,
    /// Its task ended (or could not start: see `error`).
    Done,
}

impl BatchItemState {
    fn parse(s: &str) -> BatchItemState {
        match s {
            "started" => BatchItemState::Started,
            "done" => BatchItemState::Done,
            _ => BatchItemState::Queued,
        }
    }
}

/// A batch as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum BatchStatus {
    /// Its owner process lives and items are left.
    Running,
    /// Items are left and its owner is gone (a crash, a quit, Ctrl-C): `bosun batch resume`.
    Interrupted,
    /// Every item is done.
    Finished,
}

/// A batch and its queue's counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct BatchRow {
    pub id: String,
    pub kind: String,
    pub name: String,
    pub concurrency: u32,
    pub status: BatchStatus,
    pub created_at: String,
    pub finished_at: Option<String>,
    pub owner_pid: u32,
    pub items: u32,
    pub queued: u32,
    pub started: u32,
    pub done: u32,
    /// JSON: what started it.
    pub spec: String,
}

/// One item, with its task as the journal has it now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct BatchItemRow {
    /// 1-based, in the order of the file (or of the setups and runs).
    pub n: u32,
    pub label: Option<String>,
    /// JSON: the task to run.
    pub spec: String,
    pub state: BatchItemState,
    pub task_id: Option<TaskId>,
    /// Why the task could not start.
    pub error: Option<String>,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// The task (absent while queued, or when it was deleted).
    pub task: Option<TaskRow>,
}

/// An item taken from the queue to run.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedItem {
    pub n: u32,
    pub label: Option<String>,
    pub spec: String,
    pub task_id: TaskId,
}

const BATCH_COLUMNS: &str = "b.id, b.kind, b.name, b.concurrency, b.spec, b.created_at, \
    b.finished_at, b.owner_pid, b.owner_started, \
    (SELECT count(*) FROM batch_items i WHERE i.batch_id = b.id), \
    (SELECT count(*) FROM batch_items i WHERE i.batch_id = b.id AND i.state = 'queued'), \
    (SELECT count(*) FROM batch_items i WHERE i.batch_id = b.id AND i.state = 'started'), \
    (SELECT count(*) FROM batch_items i WHERE i.batch_id = b.id AND i.state = 'done')";

fn batch_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<BatchRow> {
    let finished_at: Option<String> = r.get(6)?;
    let owner_pid: u32 = r.get(7)?;
    let started: Option<i64> = r.get(8)?;
    let started = started.and_then(|s| u64::try_from(s).ok());
    let status = if finished_at.is_some() {
        BatchStatus::Finished
    } else if owner_alive(owner_pid, started) {
        BatchStatus::Running
    } else {
        BatchStatus::Interrupted
    };
    Ok(BatchRow {
        id: r.get(0)?,
        kind: r.get(1)?,
        name: r.get(2)?,
        concurrency: r.get(3)?,
        spec: r.get(4)?,
        created_at: r.get(5)?,
        finished_at,
        owner_pid,
        status,
        items: r.get(9)?,
        queued: r.get(10)?,
        started: r.get(11)?,
        done: r.get(12)?,
    })
}

impl Store {
    /// Records a batch and its items (all queued), owned by `b.owner_pid`, in one transaction.
    pub fn create_batch(&self, b: &NewBatch, items: &[NewBatchItem]) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO batches (id, kind, name, concurrency, spec, created_at, owner_pid, owner_started)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                b.id,
                b.kind,
                b.name,
                b.concurrency,
                b.spec,
                now_rfc3339(),
                b.owner_pid,
                b.owner_started.and_then(|s| i64::try_from(s).ok()),
            ],
        )?;
        for (i, item) in items.iter().enumerate() {
            tx.execute(
                "INSERT INTO batch_items (batch_id, n, label, spec) VALUES (?1, ?2, ?3, ?4)",
                params![b.id, i as u32 + 1, item.label, item.spec],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Makes process `pid` the owner of an unfinished batch (to resume it), with a new
    /// concurrency when one is given. Refused while another live process runs it, or when it
    /// is finished.
    pub fn claim_batch(
        &self,
        id: &str,
        pid: u32,
        started: Option<u64>,
        concurrency: Option<u32>,
    ) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (finished, owner, owner_started): (Option<String>, u32, Option<i64>) = tx
            .query_row(
                "SELECT finished_at, owner_pid, owner_started FROM batches WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?
            .ok_or_else(|| StoreError::NoBatch { id: id.to_string() })?;
        if finished.is_some() {
            return Err(StoreError::BatchFinished { id: id.to_string() });
        }
        let owner_started = owner_started.and_then(|s| u64::try_from(s).ok());
        let same = owner == pid && (owner_started.is_none() || owner_started == started);
        if !same && owner_alive(owner, owner_started) {
            return Err(StoreError::BatchRunning {
                id: id.to_string(),
                pid: owner,
            });
        }
        tx.execute(
            "UPDATE batches SET owner_pid = ?2, owner_started = ?3,
                 concurrency = coalesce(?4, concurrency)
             WHERE id = ?1",
            params![
                id,
                pid,
                started.and_then(|s| i64::try_from(s).ok()),
                concurrency
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Takes the first queued item of the batch: it becomes `started` with `task_id` as its
    /// task's id, before the task exists. None when nothing is queued.
    pub fn claim_next_item(
        &self,
        batch: &str,
        task_id: &TaskId,
    ) -> Result<Option<ClaimedItem>, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let next: Option<(u32, Option<String>, String)> = tx
            .query_row(
                "SELECT n, label, spec FROM batch_items
                 WHERE batch_id = ?1 AND state = 'queued' ORDER BY n LIMIT 1",
                [batch],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        let Some((n, label, spec)) = next else {
            return Ok(None);
        };
        tx.execute(
            "UPDATE batch_items SET state = 'started', task_id = ?3, started_at = ?4
             WHERE batch_id = ?1 AND n = ?2",
            params![batch, n, task_id.as_str(), now_rfc3339()],
        )?;
        tx.commit()?;
        Ok(Some(ClaimedItem {
            n,
            label,
            spec,
            task_id: task_id.clone(),
        }))
    }

    /// The items that were started and are not done (a batch cut off midway), in order.
    pub fn started_items(&self, batch: &str) -> Result<Vec<ClaimedItem>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT n, label, spec, task_id FROM batch_items
             WHERE batch_id = ?1 AND state = 'started' ORDER BY n",
        )?;
        let rows = stmt.query_map([batch], |r| {
            Ok(ClaimedItem {
                n: r.get(0)?,
                label: r.get(1)?,
                spec: r.get(2)?,
                task_id: TaskId(r.get::<_, Option<String>>(3)?.unwrap_or_default()),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Marks an item done (`error`: why its task could not start); when it was the last, the
    /// batch is finished.
    pub fn finish_item(&self, batch: &str, n: u32, error: Option<&str>) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let now = now_rfc3339();
        tx.execute(
            "UPDATE batch_items SET state = 'done', error = ?3, finished_at = ?4
             WHERE batch_id = ?1 AND n = ?2",
            params![batch, n, error, now],
        )?;
        tx.execute(
            "UPDATE batches SET finished_at = ?2
             WHERE id = ?1 AND finished_at IS NULL
               AND NOT EXISTS (SELECT 1 FROM batch_items WHERE batch_id = ?1 AND state != 'done')",
            params![batch, now],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Batches of `kind` (every kind when None), newest first.
    pub fn batches(&self, kind: Option<&str>) -> Result<Vec<BatchRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {BATCH_COLUMNS} FROM batches b
             WHERE ?1 IS NULL OR b.kind = ?1 ORDER BY b.created_at DESC, b.id DESC"
        ))?;
        let rows = stmt.query_map([kind], batch_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The batch with this id or unique id prefix (of `kind` when given).
    pub fn find_batch(
        &self,
        id_or_prefix: &str,
        kind: Option<&str>,
    ) -> Result<BatchRow, StoreError> {
        let prefix = id_or_prefix.trim().to_lowercase();
        if prefix.is_empty() {
            return Err(StoreError::NoBatch { id: String::new() });
        }
        let found: Vec<BatchRow> = self
            .batches(kind)?
            .into_iter()
            .filter(|b| b.id.starts_with(&prefix))
            .collect();
        match found.len() {
            0 => Err(StoreError::NoBatch {
                id: id_or_prefix.to_string(),
            }),
            1 => found.into_iter().next().ok_or_else(|| StoreError::NoBatch {
                id: id_or_prefix.to_string(),
            }),
            _ => Err(StoreError::AmbiguousBatch {
                prefix: id_or_prefix.to_string(),
                matches: found.into_iter().map(|b| b.id).collect(),
            }),
        }
    }

    /// A batch's items in order, each with its task as the journal has it now.
    pub fn batch_items(&self, batch: &str) -> Result<Vec<BatchItemRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT n, label, spec, state, task_id, error, started_at, finished_at
             FROM batch_items WHERE batch_id = ?1 ORDER BY n",
        )?;
        let rows: Vec<(BatchItemRow, Option<String>)> = stmt
            .query_map([batch], |r| {
                let task_id: Option<String> = r.get(4)?;
                Ok((
                    BatchItemRow {
                        n: r.get(0)?,
                        label: r.get(1)?,
                        spec: r.get(2)?,
                        state: BatchItemState::parse(&r.get::<_, String>(3)?),
                        task_id: task_id.clone().map(TaskId),
                        error: r.get(5)?,
                        started_at: r.get(6)?,
                        finished_at: r.get(7)?,
                        task: None,
                    },
                    task_id,
                ))
            })?
            .collect::<Result<_, _>>()?;
        let mut out = Vec::with_capacity(rows.len());
        for (mut item, task_id) in rows {
            if let Some(id) = task_id {
                item.task = match read_task(&conn, &TaskId(id)) {
                    Ok(t) => Some(t),
                    Err(StoreError::NotFound { .. }) => None,
                    Err(e) => return Err(e),
                };
            }
            out.push(item);
        }
        Ok(out)
    }

    /// The batch an item's task belongs to, and the item's number.
    pub fn batch_of_task(&self, task: &TaskId) -> Result<Option<(String, u32)>, StoreError> {
        let conn = self.conn();
        Ok(conn
            .query_row(
                "SELECT batch_id, n FROM batch_items WHERE task_id = ?1",
                [task.as_str()],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn batch(store: &Store, id: &str, items: usize, pid: u32) {
        store
            .create_batch(
                &NewBatch {
                    id: id.into(),
                    kind: "batch".into(),
                    name: "tasks.toml".into(),
                    concurrency: 2,
                    spec: "{}".into(),
                    owner_pid: pid,
                    owner_started: crate::process_start_time(pid),
                },
                &(0..items)
                    .map(|i| NewBatchItem {
                        label: None,
                        spec: format!("{{\"n\":{i}}}"),
                    })
                    .collect::<Vec<_>>(),
            )
            .unwrap();
    }

    #[test]
    fn items_are_claimed_once_in_order_and_the_last_done_finishes_the_batch() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("j.db")).unwrap();
        batch(&store, "b1", 3, std::process::id());
        let a = store
            .claim_next_item("b1", &TaskId("t1".into()))
            .unwrap()
            .unwrap();
        let b = store
            .claim_next_item("b1", &TaskId("t2".into()))
            .unwrap()
            .unwrap();
        assert_eq!((a.n, b.n), (1, 2));
        let started = store.started_items("b1").unwrap();
        assert_eq!(
            started
                .iter()
                .map(|i| i.task_id.0.as_str())
                .collect::<Vec<_>>(),
            ["t1", "t2"]
        );
        store.finish_item("b1", 1, None).unwrap();
        store
            .finish_item("b1", 2, Some("no such repository"))
            .unwrap();
        assert_eq!(
            store.find_batch("b", None).unwrap().status,
            BatchStatus::Running
        );
        let c = store
            .claim_next_item("b1", &TaskId("t3".into()))
            .unwrap()
            .unwrap();
        assert_eq!(c.n, 3);
        assert!(
            store
                .claim_next_item("b1", &TaskId("t4".into()))
                .unwrap()
                .is_none()
        );
        store.finish_item("b1", 3, None).unwrap();
        let row = store.find_batch("b1", Some("batch")).unwrap();
        assert_eq!(
            (row.status, row.done, row.items),
            (BatchStatus::Finished, 3, 3)
        );
        let items = store.batch_items("b1").unwrap();
        assert_eq!(items[1].error.as_deref(), Some("no such repository"));
        assert_eq!(
            store.batch_of_task(&TaskId("t3".into())).unwrap(),
            Some(("b1".into(), 3))
        );
        assert!(matches!(
            store.claim_batch("b1", 1, None, None),
            Err(StoreError::BatchFinished { .. })
        ));
    }

    #[test]
    fn a_batch_whose_owner_died_is_interrupted_and_can_be_claimed_and_a_live_ones_cannot() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("j.db")).unwrap();
        // A pid that is not running (pid_max is at most 2^22).
        batch(&store, "dead", 1, 4_194_304 + 7);
        assert_eq!(
            store.find_batch("dead", None).unwrap().status,
            BatchStatus::Interrupted
        );
        let me = std::process::id();
        store
            .claim_batch("dead", me, crate::process_start_time(me), Some(4))
            .unwrap();
        let row = store.find_batch("dead", None).unwrap();
        assert_eq!((row.status, row.concurrency), (BatchStatus::Running, 4));
        assert!(matches!(
            store.claim_batch("dead", 1, None, None),
            Err(StoreError::BatchRunning { .. })
        ));
        assert!(matches!(
            store.find_batch("nope", None),
            Err(StoreError::NoBatch { .. })
        ));
    }
}
