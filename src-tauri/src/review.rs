//! The review screen's commands: thin wrappers over [`bosun_core::review::Reviewer`], on the
//! engine's journal connection. Blocking git work runs on Tauri's async pool (`async` commands).

use crate::commands::Runner;
use crate::engine::Engine;
use crate::error::IpcError;
use bosun_core::CoreError;
use bosun_core::review::{Reviewer, Selector, Verdict};
use bosun_protocol::{
    FileDiff, MergeOutcome, MergeRequest, Review, ReviewFile, TaskId, TimelineCheckpoint,
};
use std::path::Path;
use std::sync::Arc;
use tauri::State;

impl From<CoreError> for IpcError {
    fn from(err: CoreError) -> IpcError {
        IpcError::new(err.code(), err.to_string())
    }
}

fn reviewer(
    runner: &State<'_, Runner>,
    task: &TaskId,
) -> Result<(Arc<Engine>, Reviewer), IpcError> {
    let engine = Arc::clone(runner.engine()?);
    let reviewer = Reviewer::open_changes(&engine.home, Arc::clone(&engine.store), task.as_str())?;
    Ok((engine, reviewer))
}

#[tauri::command(async)]
pub fn review_get(runner: State<'_, Runner>, task_id: TaskId) -> Result<Review, IpcError> {
    Ok(reviewer(&runner, &task_id)?.1.review(false)?)
}

#[tauri::command(async)]
pub fn review_file(
    runner: State<'_, Runner>,
    task_id: TaskId,
    path: String,
) -> Result<FileDiff, IpcError> {
    Ok(reviewer(&runner, &task_id)?.1.file(&path)?)
}

/// `verdict`: accept | reject | unmark; `path` null = every file; `hunks` (ids) null = the
/// whole file. Resolved against the review listing like the CLI's selectors.
#[tauri::command(async)]
pub fn review_verdict(
    runner: State<'_, Runner>,
    task_id: TaskId,
    verdict: String,
    path: Option<String>,
    hunks: Option<Vec<String>>,
) -> Result<Review, IpcError> {
    let verdict: Verdict = verdict.parse()?;
    let selector = Selector::from_ids(path, hunks)?;
    Ok(reviewer(&runner, &task_id)?
        .1
        .verdict(verdict, &selector)?
        .review)
}

#[tauri::command(async)]
pub fn review_undo(runner: State<'_, Runner>, task_id: TaskId) -> Result<Review, IpcError> {
    Ok(reviewer(&runner, &task_id)?.1.undo()?)
}

#[tauri::command(async)]
pub fn review_comment(
    runner: State<'_, Runner>,
    task_id: TaskId,
    path: String,
    start_line: u32,
    end_line: u32,
    body: String,
) -> Result<Review, IpcError> {
    let (_, r) = reviewer(&runner, &task_id)?;
    r.comment(&path, start_line, end_line, &body)?;
    Ok(r.review(false)?)
}

#[tauri::command(async)]
pub fn review_uncomment(
    runner: State<'_, Runner>,
    task_id: TaskId,
    id: u64,
) -> Result<Review, IpcError> {
    let (_, r) = reviewer(&runner, &task_id)?;
    r.uncomment(id)?;
    Ok(r.review(false)?)
}

/// Sends the open comments to the agent; the task continues in this app.
#[tauri::command]
pub async fn review_request_changes(
    runner: State<'_, Runner>,
    task_id: TaskId,
) -> Result<TaskId, IpcError> {
    let (engine, r) = reviewer(&runner, &task_id)?;
    let (message, ids) = r.changes_message()?;
    r.mark_sent(ids.clone())?;
    match engine.continue_task(task_id, Some(message)).await {
        Ok(id) => Ok(id),
        Err(err) => {
            // The agent never got them: open again, so they can be sent once the cause is fixed.
            r.reopen(&ids)?;
            Err(err)
        }
    }
}

#[tauri::command(async)]
pub fn review_timeline(
    runner: State<'_, Runner>,
    task_id: TaskId,
) -> Result<Vec<TimelineCheckpoint>, IpcError> {
    Ok(reviewer(&runner, &task_id)?.1.timeline()?)
}

/// Files between two states: checkpoint numbers, 0 = the base, null = the latest.
#[tauri::command(async)]
pub fn review_diff(
    runner: State<'_, Runner>,
    task_id: TaskId,
    from: u32,
    to: Option<u32>,
) -> Result<Vec<ReviewFile>, IpcError> {
    Ok(reviewer(&runner, &task_id)?.1.diff(from, to)?)
}

/// One file between two states (0 = the base, null = the latest), with its lines.
#[tauri::command(async)]
pub fn review_diff_file(
    runner: State<'_, Runner>,
    task_id: TaskId,
    from: u32,
    to: Option<u32>,
    path: String,
) -> Result<FileDiff, IpcError> {
    Ok(reviewer(&runner, &task_id)?.1.diff_file(from, to, &path)?)
}

#[tauri::command(async)]
pub fn review_restore_preview(
    runner: State<'_, Runner>,
    task_id: TaskId,
    checkpoint: u32,
) -> Result<Vec<String>, IpcError> {
    Ok(reviewer(&runner, &task_id)?.1.restore_preview(checkpoint)?)
}

#[tauri::command(async)]
pub fn review_restore(
    runner: State<'_, Runner>,
    task_id: TaskId,
    checkpoint: u32,
) -> Result<Vec<String>, IpcError> {
    Ok(reviewer(&runner, &task_id)?.1.restore(checkpoint)?)
}

#[tauri::command(async)]
pub fn review_merge_message(
    runner: State<'_, Runner>,
    task_id: TaskId,
) -> Result<String, IpcError> {
    Ok(reviewer(&runner, &task_id)?.1.merge_message()?)
}

/// Merges behind the checks gate: `checks_failed` when a required check fails on the accepted
/// changes and `request.override_checks` gives no reason.
#[tauri::command]
pub async fn review_merge(
    runner: State<'_, Runner>,
    task_id: TaskId,
    request: MergeRequest,
) -> Result<MergeOutcome, IpcError> {
    let (_, reviewer) = reviewer(&runner, &task_id)?;
    Ok(reviewer.merge_gated(&request).await?)
}

#[tauri::command(async)]
pub fn review_rebase(
    runner: State<'_, Runner>,
    task_id: TaskId,
    onto: Option<String>,
) -> Result<Review, IpcError> {
    let (_, r) = reviewer(&runner, &task_id)?;
    r.rebase(onto.as_deref())?;
    Ok(r.review(false)?)
}

/// Writes the accepted changes as a patch to `path` (chosen in a save dialog); returns its size.
#[tauri::command(async)]
pub fn review_export(
    runner: State<'_, Runner>,
    task_id: TaskId,
    path: String,
) -> Result<u64, IpcError> {
    Ok(reviewer(&runner, &task_id)?.1.export(Path::new(&path))?)
}

#[tauri::command(async)]
pub fn review_remove_worktree(runner: State<'_, Runner>, task_id: TaskId) -> Result<u64, IpcError> {
    Ok(reviewer(&runner, &task_id)?.1.remove_worktree()?)
}

#[tauri::command(async)]
pub fn review_discard(
    runner: State<'_, Runner>,
    task_id: TaskId,
    delete_history: bool,
) -> Result<(), IpcError> {
    Ok(reviewer(&runner, &task_id)?.1.discard(delete_history)?)
}
