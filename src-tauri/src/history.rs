//! The History view's commands: thin wrappers over `bosun_core::export` and the store.

use crate::commands::Runner;
use crate::error::IpcError;
use bosun_core::review::Reviewer;
use bosun_protocol::TaskId;
use std::path::PathBuf;
use std::sync::Arc;
use tauri::State;

/// Writes the task as `markdown`, `json` (its events) or `patch` (the accepted changes) to
/// `path`; the bytes written.
#[tauri::command(async)]
pub fn export_task(
    runner: State<'_, Runner>,
    task_id: TaskId,
    format: String,
    path: String,
) -> Result<u64, IpcError> {
    let engine = Arc::clone(runner.engine()?);
    let path = PathBuf::from(path);
    let io = |e: std::io::Error| IpcError::new("export_failed", format!("{}: {e}", path.display()));
    match format.as_str() {
        "patch" => {
            let reviewer =
                Reviewer::open_changes(&engine.home, Arc::clone(&engine.store), task_id.as_str())?;
            Ok(reviewer.export(&path)?)
        }
        "markdown" => {
            let text = bosun_core::export::markdown(&engine.store, &engine.home, &task_id)?;
            std::fs::write(&path, text.as_bytes()).map_err(io)?;
            Ok(text.len() as u64)
        }
        "json" => {
            let mut out = Vec::new();
            bosun_core::export::write_task_json(&engine.store, &task_id, &mut out)
                .map_err(|e| IpcError::new("export_failed", e.to_string()))?;
            std::fs::write(&path, &out).map_err(io)?;
            Ok(out.len() as u64)
        }
        other => Err(IpcError::new(
            "bad_request",
            format!("unknown export format {other:?}: markdown, json or patch"),
        )),
    }
}

/// Hides a task from the lists (`archived`), or shows it again; everything is kept.
#[tauri::command(async)]
pub fn archive_task(
    runner: State<'_, Runner>,
    task_id: TaskId,
    archived: bool,
) -> Result<(), IpcError> {
    runner.engine()?.store.set_archived(&task_id, archived)?;
    Ok(())
}

/// Deletes a task's transcript, checkpoints, worktree and branch (its cost rows stay).
#[tauri::command(async)]
pub fn delete_task(runner: State<'_, Runner>, task_id: TaskId) -> Result<(), IpcError> {
    let engine = Arc::clone(runner.engine()?);
    bosun_core::export::delete_task(&engine.home, &engine.store, task_id.as_str())?;
    Ok(())
}

/// One page of the tasks matching `query` (words and filter tokens as typed), sorted by
/// `sort` (`date` | `cost` | `duration`). A token that does not parse: `bad_query`.
#[tauri::command(async)]
pub fn history_search(
    runner: State<'_, Runner>,
    query: String,
    sort: String,
    offset: u32,
    limit: u32,
) -> Result<bosun_store::HistoryPage, IpcError> {
    let engine = runner.engine()?;
    let bad = |m: String| IpcError::new("bad_query", m);
    let mut q = bosun_store::HistoryQuery::parse(&query, bosun_store::search::local_now())
        .map_err(|e| bad(e.to_string()))?;
    q.sort = match sort.as_str() {
        "date" => bosun_store::Sort::Date,
        "cost" => bosun_store::Sort::Cost,
        "duration" => bosun_store::Sort::Duration,
        other => {
            return Err(bad(format!(
                "unknown sort {other:?}: date, cost or duration"
            )));
        }
    };
    q.offset = offset;
    q.limit = limit.clamp(1, 500);
    Ok(engine.store.history(&q)?)
}
