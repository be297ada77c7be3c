//! The error every command returns across IPC: `{code, message}`. Internal error types never cross
//! the boundary; a `code` exists only where the UI branches on it.

use bosun_store::StoreError;
use serde::Serialize;
use ts_rs::TS;

#[derive(Debug, Clone, PartialEq, Serialize, TS, thiserror::Error)]
#[error("{message}")]
#[ts(export, export_to = "../../ui/src/lib/bindings/")]
pub struct IpcError {
    /// `not_found` (the task is not in the journal), `journal_busy` (retry later), or `journal`.
    pub code: String,
    /// What went wrong and what to do about it, for a person.
    pub message: String,
}

impl IpcError {
    pub fn new(code: &str, message: impl Into<String>) -> IpcError {
        IpcError {
            code: code.to_string(),
            message: message.into(),
        }
    }
}

impl From<StoreError> for IpcError {
    fn from(err: StoreError) -> IpcError {
        let code = match err {
            StoreError::NotFound { .. }
            | StoreError::Ambiguous { .. }
            | StoreError::NoMemory { .. } => "not_found",
            StoreError::Busy(_) => "journal_busy",
            _ => "journal",
        };
        IpcError::new(code, err.to_string())
    }
}
