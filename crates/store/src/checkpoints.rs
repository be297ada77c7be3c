//! The `checkpoints` table: one row per `checkpoint_created` event.

use crate::{Store, StoreError};
use bosun_protocol::{CheckpointCreated, Event, TaskId};
use rusqlite::{Transaction, params};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A checkpoint of a task's worktree: the commit under `refs/bosun/<task>/<n>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct CheckpointRow {
    pub n: u32,
    pub commit: String,
    /// Paths (relative to the worktree) that differ from the previous checkpoint.
    pub files: Vec<String>,
    /// The tool call that made the change, if one did.
    pub call_id: Option<String>,
    pub created_at: String,
    /// The `seq` of its `checkpoint_created` event.
    #[ts(type = "number")]
    pub seq: u64,
}

pub(crate) fn record(
    tx: &Transaction<'_>,
    ev: &Event,
    c: &CheckpointCreated,
) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO checkpoints (task_id, n, commit_id, files, call_id, seq, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        ev.task_id.as_str(),
        c.checkpoint,
        c.commit,
        serde_json::to_string(&c.files)?,
        c.call_id.as_ref().map(|id| id.as_str()),
        ev.seq,
        ev.ts,
    ])?;
    Ok(())
}

impl Store {
    /// The task's checkpoints, oldest (n = 1) first.
    pub fn checkpoints(&self, task: &TaskId) -> Result<Vec<CheckpointRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT n, commit_id, files, call_id, created_at, seq FROM checkpoints
             WHERE task_id = ?1 ORDER BY n",
        )?;
        let rows = stmt.query_map([task.as_str()], |r| {
            Ok((
                r.get::<_, u32>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, u64>(5)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (n, commit, files, call_id, created_at, seq) = row?;
            let files = serde_json::from_str(&files).map_err(|e| StoreError::Corrupt {
                task: task.clone(),
                seq,
                reason: format!("checkpoint {n} has an unreadable file list: {e}"),
            })?;
            out.push(CheckpointRow {
                n,
                commit,
                files,
                call_id,
                created_at,
                seq,
            });
        }
        Ok(out)
    }
}
