use bosun_protocol::TaskId;
use std::path::PathBuf;

/// What can go wrong with the journal. Every message says what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "could not create the directory {path} for the journal: {source}; check that it is writable or set BOSUN_HOME to a writable directory"
    )]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error(
        "could not open the journal at {path}: {source}; check that the file is a Bosun journal and that its directory is writable"
    )]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },

    #[error(
        "the journal at {path} was written by a newer Bosun (schema {found} > {supported}); upgrade Bosun, or point BOSUN_HOME at another directory"
    )]
    NewerSchema {
        path: PathBuf,
        found: u32,
        supported: u32,
    },

    #[error(
        "could not upgrade the journal at {path} to schema {step}: {source}; the journal is unchanged, report this as a Bosun bug"
    )]
    Migration {
        path: PathBuf,
        step: u32,
        source: rusqlite::Error,
    },

    #[error(
        "the journal stayed locked by another Bosun process for too long: {0}; wait for the other `bosun` run to finish, or retry"
    )]
    Busy(rusqlite::Error),

    #[error("no task matches '{id}' in the journal; `bosun tasks` lists the known tasks")]
    NotFound { id: String },

    #[error("'{prefix}' matches {} tasks ({}); type more of the id", candidates.len(), preview(candidates))]
    Ambiguous {
        prefix: String,
        candidates: Vec<TaskId>,
    },

    #[error("{}", no_batch(id))]
    NoBatch { id: String },

    #[error("'{prefix}' matches {} batches ({}); type more of the id", matches.len(), matches.join(", "))]
    AmbiguousBatch {
        prefix: String,
        matches: Vec<String>,
    },

    #[error("batch {id} is finished: every task in it ended; `bosun batch status {id}` shows them")]
    BatchFinished { id: String },

    #[error(
        "batch {id} is being run by process {pid}; stop that process (or wait for it) before resuming the batch"
    )]
    BatchRunning { id: String, pid: u32 },

    #[error("a task with id {0} is already in the journal; start the task with a fresh id")]
    TaskExists(TaskId),

    #[error(
        "task {task} is being run by process {pid}; stop that process (or wait for it) before resuming the task"
    )]
    Running { task: TaskId, pid: u32 },

    #[error("event {got} of task {task} would leave a gap: the journal's last event is {last}, so the next must be {}; events must be appended in order (a Bosun bug)", last + 1)]
    SeqGap { task: TaskId, last: u64, got: u64 },

    #[error("event {got} of task {task} is not new: the journal's last event is {last}, so the next must be {}; is another process writing this task?", last + 1)]
    DuplicateSeq { task: TaskId, last: u64, got: u64 },

    #[error(
        "event {seq} of task {task} in the journal is unreadable ({reason}); the journal may come from an incompatible Bosun"
    )]
    Corrupt {
        task: TaskId,
        seq: u64,
        reason: String,
    },

    #[error(
        "no memory has the id #{id}{}; `bosun memory --repo PATH` lists a repository's memories",
        nearest_ids(nearest)
    )]
    NoMemory { id: i64, nearest: Vec<i64> },

    /// A history search that cannot be understood; the message says what is accepted.
    #[error("{0}")]
    BadQuery(String),

    #[error("could not encode a journal record: {0} (a Bosun bug)")]
    Encode(#[from] serde_json::Error),

    #[error(
        "journal query failed: {0}; if it keeps failing, check the disk and run `sqlite3 bosun.db 'PRAGMA integrity_check'`"
    )]
    Sql(rusqlite::Error),
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                StoreError::Busy(e)
            }
            _ => StoreError::Sql(e),
        }
    }
}

fn preview(ids: &[TaskId]) -> String {
    let mut shown: Vec<&str> = ids.iter().take(5).map(TaskId::as_str).collect();
    if ids.len() > 5 {
        shown.push("…");
    }
    shown.join(", ")
}

fn nearest_ids(ids: &[i64]) -> String {
    if ids.is_empty() {
        return " (there are no memories)".into();
    }
    let shown: Vec<String> = ids.iter().map(|i| format!("#{i}")).collect();
    format!(" (the nearest: {})", shown.join(", "))
}

fn no_batch(id: &str) -> String {
    if id.is_empty() {
        "the journal has no batch yet; start one with `bosun batch FILE` or `bosun batch --prompt TEXT --repo PATH`".to_string()
    } else {
        format!(
            "no batch matches '{id}' in the journal; `bosun batch status --all` lists the batches"
        )
    }
}
