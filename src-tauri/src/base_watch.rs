//! Following the user's branches while a review is open, so it can say "main moved 3 commits:
//! Rebase" as soon as the user commits to main: a watcher of the task's repository's refs
//! ([`bosun_workspace::RefsWatcher`]) that tells the window `bosun://refs-changed`; the window
//! then asks [`review_base_moved`]. One watcher per repository, the most recently asked for
//! kept (a handful of inotify watches each).

use crate::commands::Runner;
use crate::error::IpcError;
use bosun_protocol::{BaseMoved, RefsChanged, TaskId};
use bosun_workspace::RefsWatcher;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tauri::{AppHandle, Emitter, State};

/// The event the window receives when branches of a repository may have moved.
pub const REFS_CHANGED: &str = "bosun://refs-changed";

/// Repositories watched at most; the one asked for longest ago goes first.
const MAX_WATCHED: usize = 8;

/// How long a burst of ref writes (a commit, a rebase of many commits) must be quiet before the
/// window is told.
const QUIET: Duration = Duration::from_millis(150);

/// The watched repositories, by the task's `repo`, the most recently asked for last.
#[derive(Default)]
pub struct BaseWatches(Mutex<Vec<(String, RefsWatcher)>>);

/// Where the task's base branch is now against its base (none: it did not move).
#[tauri::command(async)]
pub fn review_base_moved(
    runner: State<'_, Runner>,
    task_id: TaskId,
) -> Result<Option<BaseMoved>, IpcError> {
    let engine = runner.engine()?;
    let reviewer = bosun_core::review::Reviewer::open(
        &engine.home,
        Arc::clone(&engine.store),
        task_id.as_str(),
    )?;
    Ok(reviewer.base_moved()?)
}

/// Watches the branches of the task's repository (if not watched yet) and tells the window
/// [`REFS_CHANGED`] when they change. Fails where there is no watcher (the window then looks
/// again when it comes back into focus).
#[tauri::command(async)]
pub fn review_watch_base(
    app: AppHandle,
    runner: State<'_, Runner>,
    watches: State<'_, BaseWatches>,
    task_id: TaskId,
) -> Result<(), IpcError> {
    let repo = runner.engine()?.store.task(&task_id)?.repo;
    let mut watched = watches
        .0
        .lock()
        .map_err(|_| IpcError::new("internal_error", "the branch watchers failed"))?;
    if let Some(i) = watched.iter().position(|(r, _)| *r == repo) {
        let entry = watched.remove(i);
        watched.push(entry);
        return Ok(());
    }
    let changed = RefsChanged { repo: repo.clone() };
    let watcher = RefsWatcher::start(Path::new(&repo), QUIET, move || {
        if let Err(err) = app.emit_to("main", REFS_CHANGED, changed.clone()) {
            tracing::warn!("could not tell the window that branches moved: {err}");
        }
    })
    .map_err(|e| IpcError::new("watch_unavailable", e.to_string()))?;
    if watched.len() >= MAX_WATCHED {
        watched.remove(0);
    }
    watched.push((repo, watcher));
    Ok(())
}
