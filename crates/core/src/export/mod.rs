//! Keeping what matters out of the journal: a task as readable Markdown or as JSON, the whole
//! journal as JSON lines (and importing such a file into another journal), and the end of a
//! task's history: archive, delete, and the retention setting.

mod journal;
mod markdown;
mod retention;

pub use journal::{
    ImportReport, JournalExport, import_journal, write_journal_jsonl, write_task_json,
};
pub use markdown::markdown;
pub use retention::{DeletedTask, RetentionReport, apply_retention, delete_task};

/// The current version of the JSON-lines journal format (its header's `bosun_journal`).
pub const JOURNAL_FORMAT: u32 = 1;

/// What can go wrong exporting or importing.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Core(#[from] crate::CoreError),
    #[error("could not {what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    /// A line of a journal export that cannot be imported; nothing was.
    #[error("line {line}: {reason}; nothing was imported")]
    Malformed { line: u64, reason: String },
}

impl From<bosun_store::StoreError> for ExportError {
    fn from(e: bosun_store::StoreError) -> Self {
        ExportError::Core(e.into())
    }
}
