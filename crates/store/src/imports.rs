//! Other agents' sessions in the journal: the `import_files` table (how far each session file was
//! read, so a re-scan reads only what is new), `import_responses` (the responses already
//! counted) and the tasks an import creates, marked with their `source` and read-only.

use crate::{NewTask, Store, StoreError, events, metrics};
use bosun_protocol::Event;
use rusqlite::{OptionalExtension, TransactionBehavior, params};

/// How far one session file was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedFile {
    /// The file, as the import found it.
    pub path: String,
    /// `claude-code` or `codex`.
    pub source: String,
    /// The task its lines went to.
    pub task_id: bosun_protocol::TaskId,
    /// The byte after the last complete line read.
    pub offset: u64,
    /// Lines read so far, and how many of them were not JSON of a known shape.
    pub lines: u64,
    pub malformed: u64,
    /// The reader's state at `offset` (its own JSON: open tool calls, the running totals).
    pub state: String,
}

/// What one scan of one session file adds, written in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedSession<'a> {
    /// The file's new position and counts.
    pub file: &'a ImportedFile,
    /// The task to create first, when the file is new.
    pub new_task: Option<&'a NewTask>,
    /// The task's next events, numbered from its `last_seq + 1`.
    pub events: &'a [Event],
    /// The keys of the responses among them (so another file repeating one does not count it
    /// twice).
    pub response_keys: &'a [String],
    /// The file was read before under this other path (moved or renamed): its row moves here.
    pub moved_from: Option<&'a str>,
}

/// An `import_files` row selected as `path, source, task_id, offset, lines, malformed, state`.
fn file_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ImportedFile> {
    Ok(ImportedFile {
        path: r.get(0)?,
        source: r.get(1)?,
        task_id: bosun_protocol::TaskId(r.get(2)?),
        offset: r.get(3)?,
        lines: r.get(4)?,
        malformed: r.get(5)?,
        state: r.get(6)?,
    })
}

impl Store {
    /// How far `path` was read, when an import read it before.
    pub fn imported_file(&self, path: &str) -> Result<Option<ImportedFile>, StoreError> {
        Ok(self
            .conn()
            .prepare_cached(
                "SELECT path, source, task_id, offset, lines, malformed, state
                 FROM import_files WHERE path = ?1",
            )?
            .query_row([path], file_row)
            .optional()?)
    }

    /// The files whose lines went to task `task`.
    pub fn imported_files_of(
        &self,
        task: &bosun_protocol::TaskId,
    ) -> Result<Vec<ImportedFile>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT path, source, task_id, offset, lines, malformed, state
             FROM import_files WHERE task_id = ?1 ORDER BY path",
        )?;
        let rows = stmt.query_map([task.as_str()], file_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Whether a response with this key was imported already (from any file).
    pub fn response_imported(&self, key: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn()
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM import_responses WHERE key = ?1)")?
            .query_row([key], |r| r.get(0))?)
    }

    /// Writes one scan of one session file: the task (when new, `completed`, with its source),
    /// its new events, the responses' keys and the file's position, all or nothing. The task
    /// stays out of the statistics; its last event's time is its `finished_at`.
    pub fn import_session(&self, s: &ImportedSession<'_>) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let task = &s.file.task_id;
        if let Some(t) = s.new_task {
            tx.execute(
                "INSERT INTO tasks (id, repo, prompt, status, created_at, updated_at, provider,
                     model, base_commit, branch, worktree, owner_pid, max_steps, number,
                     parent_task_id, role, depth, source, review_state)
                 VALUES (?1, ?2, ?3, 'completed', ?4, ?4, ?5, ?6, '', '', '', 0, 0,
                     (SELECT coalesce(max(number), 0) + 1 FROM tasks), ?7, ?8, ?9, ?10,
                     'reviewed')
                 ON CONFLICT (id) DO NOTHING",
                params![
                    t.id.as_str(),
                    t.repo,
                    t.prompt,
                    t.created_at,
                    t.provider,
                    t.model,
                    t.parent_task_id.as_ref().map(|p| p.as_str()),
                    t.role,
                    t.depth,
                    s.file.source,
                ],
            )?;
        }
        for ev in s.events {
            events::append_in(&tx, ev)?;
        }
        if let Some(last) = s.events.last() {
            tx.execute(
                "UPDATE tasks SET status = 'completed', finished_at = ?2 WHERE id = ?1",
                params![task.as_str(), last.ts],
            )?;
        }
        if s.new_task.is_some() || !s.events.is_empty() {
            metrics::mark_imported(&tx, task)?;
        }
        for key in s.response_keys {
            tx.prepare_cached("INSERT OR IGNORE INTO import_responses (key) VALUES (?1)")?
                .execute([key])?;
        }
        if let Some(old) = s.moved_from {
            tx.execute("DELETE FROM import_files WHERE path = ?1", [old])?;
        }
        tx.execute(
            "INSERT INTO import_files (path, source, task_id, offset, lines, malformed, state,
                 updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT (path) DO UPDATE SET offset = excluded.offset, lines = excluded.lines,
                 malformed = excluded.malformed, state = excluded.state,
                 updated_at = excluded.updated_at",
            params![
                s.file.path,
                s.file.source,
                task.as_str(),
                s.file.offset,
                s.file.lines,
                s.file.malformed,
                s.file.state,
                crate::now_rfc3339(),
            ],
        )?;
        tx.commit()?;
        self.after_append(&conn);
        Ok(())
    }
}
