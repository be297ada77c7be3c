//! The commands the UI invokes. Each is thin: state + typed params → one call → `IpcError`.

use crate::bridge::{Bridge, SubscriptionId};
use crate::engine::{Engine, LaunchRequest};
use crate::error::IpcError;
use crate::feed::{TaskFeed, TaskListFeed};
use bosun_protocol::{ApprovalAnswer, Event, PinOp, TaskId};
use bosun_store::TaskRow;
use std::sync::Arc;
use tauri::State;
use tauri::ipc::Channel;

/// The journal as the app opened it; an open failure is kept and reported to the UI on every call.
pub struct Journal(pub Result<Arc<Bridge>, IpcError>);

impl Journal {
    fn bridge(&self) -> Result<&Arc<Bridge>, IpcError> {
        self.0.as_ref().map_err(Clone::clone)
    }
}

/// Most events one `task_events` call returns.
const MAX_PAGE: u32 = 5000;

#[tauri::command(async)]
pub fn list_tasks(journal: State<'_, Journal>) -> Result<Vec<TaskRow>, IpcError> {
    Ok(journal.bridge()?.store().tasks()?)
}

/// One task's row, for a task the lists do not carry (a sub-agent opened from the Costs view).
#[tauri::command(async)]
pub fn get_task(journal: State<'_, Journal>, task_id: TaskId) -> Result<TaskRow, IpcError> {
    Ok(journal.bridge()?.store().task(&task_id)?)
}

/// A task's sub-agents (its direct children), oldest first; the lists above carry top-level tasks only.
#[tauri::command(async)]
pub fn task_children(
    journal: State<'_, Journal>,
    task_id: TaskId,
) -> Result<Vec<TaskRow>, IpcError> {
    Ok(journal.bridge()?.store().children(&task_id)?)
}

#[tauri::command(async)]
pub fn task_events(
    journal: State<'_, Journal>,
    task_id: TaskId,
    after_seq: u64,
    limit: u32,
) -> Result<Vec<Event>, IpcError> {
    let limit = limit.clamp(1, MAX_PAGE) as usize;
    Ok(journal
        .bridge()?
        .store()
        .events(&task_id, after_seq, limit)?)
}

#[tauri::command(async)]
pub fn subscribe_tasks(
    journal: State<'_, Journal>,
    channel: Channel<TaskListFeed>,
) -> Result<SubscriptionId, IpcError> {
    Ok(journal.bridge()?.follow_tasks(Box::new(channel))?)
}

#[tauri::command(async)]
pub fn subscribe_task(
    journal: State<'_, Journal>,
    task_id: TaskId,
    after_seq: u64,
    channel: Channel<TaskFeed>,
) -> Result<SubscriptionId, IpcError> {
    Ok(journal
        .bridge()?
        .follow_task(task_id, after_seq, Box::new(channel))?)
}

#[tauri::command(async)]
pub fn unsubscribe(journal: State<'_, Journal>, subscription: SubscriptionId) -> bool {
    journal
        .bridge()
        .map(|b| b.unsubscribe(subscription))
        .unwrap_or(false)
}

/// The engine as the app opened it (it needs the journal); an open failure is reported on every call.
pub struct Runner(pub Result<Arc<Engine>, IpcError>);

impl Runner {
    pub(crate) fn engine(&self) -> Result<&Arc<Engine>, IpcError> {
        self.0.as_ref().map_err(Clone::clone)
    }
}

/// Starts a task from the "New task" form; returns its id once it is in the journal.
#[tauri::command]
pub async fn start_task(
    runner: State<'_, Runner>,
    request: LaunchRequest,
) -> Result<TaskId, IpcError> {
    runner.engine()?.start(request).await
}

/// A new task from a checkpoint of an earlier one (History, the checkpoint panel).
#[tauri::command]
pub async fn fork_task(
    runner: State<'_, Runner>,
    task_id: TaskId,
    checkpoint: u32,
    prompt: String,
) -> Result<TaskId, IpcError> {
    runner.engine()?.fork(&task_id, checkpoint, prompt).await
}

/// The New task form picked a repository (or another base): prepare a worktree for it now.
#[tauri::command]
pub async fn prepare_worktree(
    runner: State<'_, Runner>,
    repo: String,
    base: Option<String>,
) -> Result<(), IpcError> {
    runner
        .engine()?
        .prepare_worktree(&repo, base.as_deref())
        .await
}

/// The New task form closed without starting a task: remove what it prepared.
#[tauri::command]
pub async fn release_prepared_worktree(runner: State<'_, Runner>) -> Result<(), IpcError> {
    runner.engine()?.release_prepared_worktree().await;
    Ok(())
}

/// Asks a task this app runs to stop.
#[tauri::command(async)]
pub fn stop_task(runner: State<'_, Runner>, task_id: TaskId) -> Result<(), IpcError> {
    runner.engine()?.stop(&task_id)
}

/// Answers an approval request of a task this app runs.
#[tauri::command(async)]
pub fn answer_approval(
    runner: State<'_, Runner>,
    task_id: TaskId,
    answer: ApprovalAnswer,
) -> Result<(), IpcError> {
    runner.engine()?.answer(&task_id, answer)
}

/// Pins (or unpins) a file, a tool call's output or a message of a task this app runs, so
/// compaction never drops it; the task journals it (`context_pinned`) at its next turn, or
/// says why not (`pin_refused`).
#[tauri::command(async)]
pub fn pin_context(runner: State<'_, Runner>, task_id: TaskId, pin: PinOp) -> Result<(), IpcError> {
    runner.engine()?.pin(&task_id, pin)
}

/// Sends a follow-up `message` to a finished or stopped task, or (`message` null) resumes an
/// interrupted one; it then runs in this app like a task started here.
#[tauri::command]
pub async fn continue_task(
    runner: State<'_, Runner>,
    task_id: TaskId,
    message: Option<String>,
) -> Result<TaskId, IpcError> {
    runner.engine()?.continue_task(task_id, message).await
}

/// The local branches of the repository at `repo`, for the base branch select.
#[tauri::command(async)]
pub fn list_branches(repo: String) -> Result<crate::branches::RepoBranches, IpcError> {
    crate::branches::local_branches(std::path::Path::new(repo.trim()))
}
