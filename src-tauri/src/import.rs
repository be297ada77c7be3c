//! Other agents' sessions: where Claude Code and Codex keep theirs, and importing what is new
//! (thin wrappers over `bosun_import`).

use crate::commands::Runner;
use crate::error::IpcError;
use bosun_import::{ImportFolder, SourceReport};
use std::sync::Arc;
use tauri::State;

/// Each tool's default folder and whether it has sessions to import.
#[tauri::command(async)]
pub fn import_folders() -> Vec<ImportFolder> {
    bosun_import::default_folders()
}

/// Reads what is new in those folders into the journal; what each source's scan did.
#[tauri::command(async)]
pub fn import_sessions(runner: State<'_, Runner>) -> Result<Vec<SourceReport>, IpcError> {
    let engine = Arc::clone(runner.engine()?);
    let prices = bosun_model::PriceTable::load(&engine.home)
        .map_err(|e| IpcError::new("import_failed", e.to_string()))?;
    bosun_import::import_defaults(&engine.store, &prices)
        .map_err(|e| IpcError::new("import_failed", e.to_string()))
}
