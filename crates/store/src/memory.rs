//! The `memories` table: what Bosun remembers about a repository across tasks, one row per
//! (repository, kind, text). The repository is keyed as `task_started.repo` has it (the
//! canonical work-tree path). Learning the same thing again bumps `seen` (once per task) and the
//! update time; past [`MEMORY_LIMIT`] rows a repository loses its oldest unpinned ones.

use crate::{Store, StoreError, now_rfc3339};
use bosun_protocol::TaskId;
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The most memories a repository keeps; the oldest unpinned go first.
pub const MEMORY_LIMIT: usize = 50;

/// What a memory is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum MemoryKind {
    /// A check command that passed for a task of the repository.
    Verification,
    /// What a task tried and why it failed, was rejected in review or was discarded.
    FailedApproach,
    /// Files that changed together in a completed or merged task.
    CoChange,
    /// What the user wrote down.
    Convention,
}

impl MemoryKind {
    pub const ALL: [MemoryKind; 4] = [
        MemoryKind::Verification,
        MemoryKind::FailedApproach,
        MemoryKind::CoChange,
        MemoryKind::Convention,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            MemoryKind::Verification => "verification",
            MemoryKind::FailedApproach => "failed_approach",
            MemoryKind::CoChange => "co_change",
            MemoryKind::Convention => "convention",
        }
    }

    pub fn parse(s: &str) -> Option<MemoryKind> {
        MemoryKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// One memory as the journal keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct MemoryRow {
    #[ts(type = "number")]
    pub id: i64,
    pub repo: String,
    pub kind: MemoryKind,
    pub text: String,
    pub pinned: bool,
    /// How many tasks (or times the user added it) it came from.
    pub seen: u32,
    /// RFC 3339.
    pub created_at: String,
    /// The last time it was learned again (or pinned, unpinned).
    pub updated_at: String,
    /// The task it was last learned from; none for what the user wrote.
    pub source_task: Option<TaskId>,
}

/// A memory to keep.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMemory {
    pub repo: String,
    pub kind: MemoryKind,
    pub text: String,
    pub source_task: Option<TaskId>,
}

const COLUMNS: &str = "id, repo, kind, text, pinned, seen, created_at, updated_at, source_task";

fn row(r: &Row) -> rusqlite::Result<MemoryRow> {
    let kind: String = r.get(2)?;
    Ok(MemoryRow {
        id: r.get(0)?,
        repo: r.get(1)?,
        kind: MemoryKind::parse(&kind).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                2,
                rusqlite::types::Type::Text,
                format!("unknown memory kind `{kind}`").into(),
            )
        })?,
        text: r.get(3)?,
        pinned: r.get(4)?,
        seen: r.get(5)?,
        created_at: r.get(6)?,
        updated_at: r.get(7)?,
        source_task: r.get::<_, Option<String>>(8)?.map(TaskId),
    })
}

fn by_id(conn: &Connection, id: i64) -> Result<Option<MemoryRow>, StoreError> {
    Ok(conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM memories WHERE id = ?1"))?
        .query_row([id], row)
        .optional()?)
}

/// The error for an id that matches no memory: it names the nearest ids there are.
fn no_memory(conn: &Connection, id: i64) -> Result<StoreError, StoreError> {
    let ids: Vec<i64> = conn
        .prepare_cached("SELECT id FROM memories ORDER BY abs(id - ?1), id LIMIT 3")?
        .query_map([id], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut nearest = ids;
    nearest.sort_unstable();
    Ok(StoreError::NoMemory { id, nearest })
}

impl Store {
    /// Keeps a memory: a new row, or the one with the same repository, kind and text learned
    /// again (its `seen` bumped unless it comes from the same task again, its update time and
    /// source now). Then the repository keeps at most [`MEMORY_LIMIT`] rows, the oldest unpinned
    /// deleted first. Returns the row as it is now.
    pub fn remember(&self, m: &NewMemory) -> Result<MemoryRow, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let now = now_rfc3339();
        let source = m.source_task.as_ref().map(TaskId::as_str);
        tx.prepare_cached(
            "INSERT INTO memories (repo, kind, text, created_at, updated_at, source_task)
             VALUES (?1, ?2, ?3, ?4, ?4, ?5)
             ON CONFLICT (repo, kind, text) DO UPDATE SET
                 seen = seen + (excluded.source_task IS NULL
                                OR source_task IS NOT excluded.source_task),
                 updated_at = excluded.updated_at,
                 source_task = coalesce(excluded.source_task, source_task)",
        )?
        .execute(params![m.repo, m.kind.as_str(), m.text, now, source])?;
        let kept: MemoryRow = tx
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM memories WHERE repo = ?1 AND kind = ?2 AND text = ?3"
            ))?
            .query_row(params![m.repo, m.kind.as_str(), m.text], row)?;
        tx.prepare_cached(
            "DELETE FROM memories WHERE id IN (
                 SELECT id FROM memories WHERE repo = ?1 AND NOT pinned AND id != ?2
                 ORDER BY updated_at DESC, id DESC LIMIT -1 OFFSET max(0, ?3 - (
                     SELECT count(*) FROM memories WHERE repo = ?1 AND (pinned OR id = ?2))))",
        )?
        .execute(params![
            m.repo,
            kept.id,
            i64::try_from(MEMORY_LIMIT).unwrap_or(i64::MAX)
        ])?;
        tx.commit()?;
        Ok(kept)
    }

    /// A repository's memories (every repository's with `None`): pinned first, then the newest.
    pub fn memories(&self, repo: Option<&str>) -> Result<Vec<MemoryRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM memories WHERE ?1 IS NULL OR repo = ?1
             ORDER BY repo, pinned DESC, updated_at DESC, id DESC"
        ))?;
        let rows = stmt.query_map([repo], row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The repositories that have memories.
    pub fn memory_repos(&self) -> Result<Vec<String>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("SELECT DISTINCT repo FROM memories ORDER BY repo")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Pins (a pinned memory is shown first and never dropped for room) or unpins a memory.
    /// [`StoreError::NoMemory`] when the id matches none.
    pub fn set_memory_pinned(&self, id: i64, pinned: bool) -> Result<MemoryRow, StoreError> {
        let conn = self.conn();
        let changed = conn
            .prepare_cached("UPDATE memories SET pinned = ?2, updated_at = ?3 WHERE id = ?1")?
            .execute(params![id, pinned, now_rfc3339()])?;
        if changed == 0 {
            return Err(no_memory(&conn, id)?);
        }
        by_id(&conn, id)?.ok_or(StoreError::NoMemory {
            id,
            nearest: Vec::new(),
        })
    }

    /// Deletes a memory; returns it as it was. [`StoreError::NoMemory`] when the id matches
    /// none.
    pub fn delete_memory(&self, id: i64) -> Result<MemoryRow, StoreError> {
        let conn = self.conn();
        let Some(found) = by_id(&conn, id)? else {
            return Err(no_memory(&conn, id)?);
        };
        conn.prepare_cached("DELETE FROM memories WHERE id = ?1")?
            .execute([id])?;
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("bosun.db")).unwrap();
        (dir, store)
    }

    fn memory(repo: &str, kind: MemoryKind, text: &str, task: Option<&str>) -> NewMemory {
        NewMemory {
            repo: repo.into(),
            kind,
            text: text.into(),
            source_task: task.map(TaskId::from),
        }
    }

    #[test]
    fn the_same_kind_and_text_is_one_row_seen_once_per_task() {
        let (_dir, store) = store();
        let first = store
            .remember(&memory(
                "/r",
                MemoryKind::CoChange,
                "a.rs, b.rs",
                Some("t1"),
            ))
            .unwrap();
        assert_eq!(first.seen, 1);
        let again = store
            .remember(&memory(
                "/r",
                MemoryKind::CoChange,
                "a.rs, b.rs",
                Some("t1"),
            ))
            .unwrap();
        assert_eq!((again.id, again.seen), (first.id, 1), "the same task again");
        let other = store
            .remember(&memory(
                "/r",
                MemoryKind::CoChange,
                "a.rs, b.rs",
                Some("t2"),
            ))
            .unwrap();
        assert_eq!((other.id, other.seen), (first.id, 2));
        assert_eq!(other.source_task, Some(TaskId::from("t2")));
        // Another kind, or another repository, is another memory.
        let conv = store
            .remember(&memory("/r", MemoryKind::Convention, "a.rs, b.rs", None))
            .unwrap();
        assert_ne!(conv.id, first.id);
        store
            .remember(&memory(
                "/s",
                MemoryKind::CoChange,
                "a.rs, b.rs",
                Some("t1"),
            ))
            .unwrap();
        assert_eq!(store.memories(Some("/r")).unwrap().len(), 2);
        assert_eq!(store.memories(None).unwrap().len(), 3);
        assert_eq!(store.memory_repos().unwrap(), vec!["/r", "/s"]);
        // What the user adds twice counts twice.
        let conv = store
            .remember(&memory("/r", MemoryKind::Convention, "a.rs, b.rs", None))
            .unwrap();
        assert_eq!(conv.seen, 2);
    }

    #[test]
    fn a_repository_keeps_fifty_dropping_the_oldest_unpinned() {
        let (_dir, store) = store();
        let first = store
            .remember(&memory("/r", MemoryKind::Convention, "m0", None))
            .unwrap();
        store.set_memory_pinned(first.id, true).unwrap();
        for i in 1..=60 {
            store
                .remember(&memory(
                    "/r",
                    MemoryKind::Convention,
                    &format!("m{i}"),
                    None,
                ))
                .unwrap();
        }
        store
            .remember(&memory("/other", MemoryKind::Convention, "x", None))
            .unwrap();
        let kept = store.memories(Some("/r")).unwrap();
        assert_eq!(kept.len(), MEMORY_LIMIT);
        // The pinned one first, then the newest; m1..m11 went.
        assert_eq!(kept[0].text, "m0");
        assert!(kept[0].pinned);
        assert_eq!(kept[1].text, "m60");
        assert_eq!(kept.last().unwrap().text, "m12");
        assert_eq!(store.memories(Some("/other")).unwrap().len(), 1);
    }

    #[test]
    fn pin_unpin_and_delete_say_which_ids_are_near_an_unknown_one() {
        let (_dir, store) = store();
        let a = store
            .remember(&memory("/r", MemoryKind::Convention, "a", None))
            .unwrap();
        let b = store
            .remember(&memory("/r", MemoryKind::Convention, "b", None))
            .unwrap();
        assert!(store.set_memory_pinned(b.id, true).unwrap().pinned);
        assert_eq!(store.memories(Some("/r")).unwrap()[0].id, b.id);
        assert!(!store.set_memory_pinned(b.id, false).unwrap().pinned);
        assert_eq!(store.delete_memory(a.id).unwrap().text, "a");
        assert_eq!(store.memories(Some("/r")).unwrap().len(), 1);
        let err = store.delete_memory(a.id).unwrap_err();
        assert!(
            matches!(&err, StoreError::NoMemory { id, nearest } if *id == a.id && nearest == &vec![b.id]),
            "{err:?}"
        );
        let msg = store.set_memory_pinned(99, true).unwrap_err().to_string();
        assert!(msg.contains("#99"), "{msg}");
        assert!(msg.contains(&format!("#{}", b.id)), "{msg}");
    }
}
