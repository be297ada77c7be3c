//! The journal: one SQLite file (`$BOSUN_HOME/bosun.db`, WAL mode) holding every task, every event
//! of every task, the checkpoints and the token usage with its cost.
//!
//! Several processes share the file: a `bosun run` writing its task, the app reading (and running
//! tasks of its own), another `bosun run` writing another task. Writers take SQLite's write lock for
//! one short transaction per event and wait (`busy_timeout`) rather than fail when it is taken; a
//! reader polls [`Store::data_version`] to notice other processes' writes cheaply. Every few hundred
//! appends a store briefly tries to restart the WAL, which SQLite's own checkpoints cannot do while
//! several connections stay busy (the WAL then grows without bound: 110 MiB for 7 500 events from
//! three writers, against 16 MiB with the restarts; see `examples/journal_bench.rs`).
//!
//! An event and everything derived from it (the task row's totals, a checkpoint row, a usage row)
//! are written in one transaction, so a `kill -9` at any moment leaves a journal whose task rows
//! agree with their events, and whose events are numbered 1, 2, 3… without gaps.

mod archive;
mod batches;
mod budgets;
mod checkpoints;
mod costs;
mod dashboard;
mod error;
mod events;
mod imports;
mod liveness;
mod memory;
mod metrics;
mod migrations;
pub mod search;
mod tag_cache;
mod tasks;
mod usage;

pub use archive::{ImportTask, Imported, TaskLimits, TaskMarks, TranscriptRemoved};
pub use batches::{
    BatchItemRow, BatchItemState, BatchRow, BatchStatus, ClaimedItem, NewBatch, NewBatchItem,
};
pub use budgets::{BudgetLimit, BudgetStatus, BudgetWindow, Reservation};
pub use checkpoints::CheckpointRow;
pub use costs::{CostFilter, CostGroup, CostRow};
pub use dashboard::{
    CostByClass, CostDashboard, CostFigure, CostQuery, CostTableRow, CostTask, CostTotals,
    DailySeries, Stack, TokenClasses,
};
pub use error::StoreError;
pub use imports::{ImportedFile, ImportedSession};
pub use liveness::process_start_time;
pub use memory::{MEMORY_LIMIT, MemoryKind, MemoryRow, NewMemory};
pub use metrics::{StatsFilter, StatsGroup, StatsRow};
pub use migrations::SCHEMA_VERSION;
#[doc(hidden)]
pub use migrations::create_at_version;
pub use search::{
    FacetCount, Facets, HistoryHit, HistoryPage, HistoryQuery, REVIEW_STATES, SnippetPart, Sort,
};
pub use tasks::{NewTask, TaskRow};
pub use usage::UsageRow;

use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// How long a writer waits for another process's write transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The WAL file is truncated back to this size after a checkpoint restarts it.
const WAL_SIZE_LIMIT: i64 = 16 << 20;

/// Every this many appends, a store tries (briefly) to checkpoint and restart the WAL. SQLite's
/// automatic checkpoints cannot restart it while other connections keep reading and writing, so
/// with several busy writers it would otherwise grow without bound.
const WAL_RESTART_EVERY: u32 = 500;

/// How long that attempt waits for other connections' readers to move on.
const WAL_RESTART_WAIT: Duration = Duration::from_millis(20);

/// An open journal. `Send + Sync`: share it behind an `Arc`; calls are serialised on one
/// connection. Open a second `Store` on the same file for a second connection.
pub struct Store {
    conn: Mutex<Connection>,
    path: PathBuf,
    /// Appends through this store since it last tried to restart the WAL.
    appends: AtomicU32,
}

impl Store {
    /// Opens (creating the file and its directories if needed) the journal at `path`, switches it
    /// to WAL and applies any pending migrations. Refuses a journal from a newer Bosun.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        // Switching a new file to WAL takes an exclusive lock that SQLite's busy handler does not
        // always wait for; when several processes create the journal at once, retry briefly.
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        let mut conn = loop {
            match Self::connect(path) {
                Ok(conn) => break conn,
                Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => return Err(open_err(e)),
            }
        };
        migrations::migrate(&mut conn, path)?;
        Ok(Store {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
            appends: AtomicU32::new(0),
        })
    }

    fn connect(path: &Path) -> rusqlite::Result<Connection> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // Returns the resulting mode; a filesystem without shared memory keeps the rollback journal,
        // which is slower for concurrent readers but still correct.
        let _mode: String =
            conn.pragma_update_and_check(None, "journal_mode", "wal", |r| r.get(0))?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", true)?;
        conn.pragma_update(None, "journal_size_limit", WAL_SIZE_LIMIT)?;
        Ok(conn)
    }

    /// Opens the default journal, `bosun_home()/bosun.db`.
    pub fn open_default() -> Result<Store, StoreError> {
        Store::open(&journal_path())
    }

    /// The file this store reads and writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// SQLite's `PRAGMA data_version` for this connection: it changes whenever another connection
    /// (another process, or another `Store`) commits to the file. Cheap enough to poll.
    pub fn data_version(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn()
            .pragma_query_value(None, "data_version", |r| r.get(0))?)
    }

    /// Counts an append and, every [`WAL_RESTART_EVERY`], tries to checkpoint and restart the
    /// WAL. Failing to (other connections are busy) is fine: the next attempt will.
    fn after_append(&self, conn: &Connection) {
        if self.appends.fetch_add(1, Ordering::Relaxed) + 1 < WAL_RESTART_EVERY {
            return;
        }
        self.appends.store(0, Ordering::Relaxed);
        let restarted = conn.busy_timeout(WAL_RESTART_WAIT).and_then(|()| {
            conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |r| r.get::<_, i64>(0))
        });
        // Put the normal timeout back whatever happened; a checkpoint is only housekeeping.
        let _ = (restarted, conn.busy_timeout(BUSY_TIMEOUT));
    }

    /// The connection. A panic while it was held cannot leave a transaction open (a dropped
    /// transaction rolls back), so a poisoned lock is safe to take over.
    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// Bosun's data directory: `$BOSUN_HOME` if set and non-empty, else the platform data directory
/// plus `bosun` (`~/.local/share/bosun` on Linux), else `~/.local/share/bosun`.
pub fn bosun_home() -> PathBuf {
    if let Some(home) = std::env::var_os("BOSUN_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(home);
    }
    if let Some(data) = dirs::data_dir() {
        return data.join("bosun");
    }
    dirs::home_dir()
        .unwrap_or_default()
        .join(".local/share/bosun")
}

/// The default journal file, `bosun_home()/bosun.db`.
pub fn journal_path() -> PathBuf {
    bosun_home().join("bosun.db")
}

/// The current UTC time as RFC 3339 with milliseconds, e.g. `2026-11-30T03:15:00.123Z`.
pub fn now_rfc3339() -> String {
    rfc3339(time::OffsetDateTime::now_utc())
}

/// `t` in the journal's time format: UTC, RFC 3339 with milliseconds.
pub fn rfc3339(t: time::OffsetDateTime) -> String {
    const FORMAT: &[time::format_description::FormatItem<'static>] = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
    );
    t.to_offset(time::UtcOffset::UTC)
        .format(FORMAT)
        .unwrap_or_else(|_| "1970-01-01T00:00:00.000Z".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_is_send_and_sync() {
        fn shareable<T: Send + Sync>() {}
        shareable::<Store>();
    }

    #[test]
    fn now_is_rfc3339_utc_with_milliseconds() {
        let now = now_rfc3339();
        assert_eq!(now.len(), "2026-11-30T03:15:00.123Z".len(), "{now}");
        assert!(now.ends_with('Z'), "{now}");
        assert!(
            time::OffsetDateTime::parse(&now, &time::format_description::well_known::Rfc3339)
                .is_ok(),
            "{now}"
        );
    }
}
