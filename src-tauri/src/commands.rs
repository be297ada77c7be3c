//! The commands the UI invokes. Each is thin: state + typed params → one call → `IpcError`.

use crate::bridge::{Bridge, SubscriptionId};
use crate::error::IpcError;
use crate::feed::{TaskFeed, TaskListFeed};
use bosun_protocol::{Event, TaskId};
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
