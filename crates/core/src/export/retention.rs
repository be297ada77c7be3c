//! The end of a task's history: `bosun delete` and the `[history] retention_days` setting.
//! Both remove the transcript (events, checkpoint rows), the checkpoints (`refs/bosun/<id>/*`)
//! and the worktree, and keep the task row and its usage rows, so cost totals stay right.

use crate::review::Reviewer;
use crate::{BosunConfig, CoreError};
use bosun_protocol::TaskId;
use bosun_store::Store;
use std::path::Path;
use std::sync::Arc;

/// What [`apply_retention`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetentionReport {
    /// The setting; none: transcripts are kept forever and nothing was done.
    pub retention_days: Option<u32>,
    /// Tasks whose transcript was removed now.
    pub pruned: Vec<TaskId>,
    pub events_removed: u64,
    /// Tasks left as they were, with why (their repository's refs could not be deleted…).
    pub failed: Vec<(TaskId, String)>,
}

/// What [`delete_task`] removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeletedTask {
    pub id: TaskId,
    pub events_removed: u64,
    /// False when the task's repository is gone (nothing of it was left to remove).
    pub git_removed: bool,
}

/// Removes the worktree, the `bosun/<id>` branch, the checkpoint refs and Bosun's private files
/// of the task. False when its repository no longer exists. A running task is refused.
fn remove_git_state(home: &Path, store: &Arc<Store>, id: &TaskId) -> Result<bool, CoreError> {
    let row = store.task(id)?;
    if row.status == bosun_protocol::TaskStatus::Running {
        return Err(CoreError::Refused {
            code: "running",
            message: format!(
                "task {id} is running: stop it (or wait for it to finish) before deleting it"
            ),
        });
    }
    let repo = Path::new(&row.repo);
    if !repo.join(".git").exists() && bosun_workspace::resolve_repo(repo).is_err() {
        return Ok(false);
    }
    // Only a worktree of Bosun's own is removed (an imported journal can name any path).
    let has_worktree = Path::new(&row.worktree).exists()
        && bosun_workspace::is_task_worktree(home, repo, Path::new(&row.worktree));
    let reviewer = Reviewer::open(home, store.clone(), id.as_str())?;
    if has_worktree {
        reviewer.discard(false)?;
    }
    bosun_workspace::delete_history(home, repo, id.as_str())?;
    // The branch goes with the worktree; a task whose worktree was already gone may keep one.
    bosun_workspace::delete_task_branch(repo, id.as_str())?;
    Ok(true)
}

/// `bosun delete`: the task's transcript, checkpoints and worktree go; its row stays (hidden
/// from the lists) with its usage rows, so cost reports still count what it spent.
pub fn delete_task(home: &Path, store: &Arc<Store>, task: &str) -> Result<DeletedTask, CoreError> {
    store.reconcile_interrupted()?;
    let row = store.find_task(task)?;
    let git_removed = remove_git_state(home, store, &row.id)?;
    let events_removed =
        store.remove_transcript(&row.id, "delete", "transcript deleted by `bosun delete`")?;
    Ok(DeletedTask {
        id: row.id,
        events_removed,
        git_removed,
    })
}

/// Applies `[history] retention_days` from `home/config.toml`: tasks that finished more than
/// that many days ago lose their transcript, checkpoints and worktree; their row and cost rows
/// stay, and `bosun show` says why the transcript is gone. Without the setting it does nothing.
pub fn apply_retention(home: &Path, store: &Arc<Store>) -> Result<RetentionReport, CoreError> {
    let config = BosunConfig::load(home)?;
    let Some(days) = config.history.and_then(|h| h.retention_days) else {
        return Ok(RetentionReport::default());
    };
    let mut report = RetentionReport {
        retention_days: Some(days),
        ..RetentionReport::default()
    };
    let cutoff = time::OffsetDateTime::now_utc() - time::Duration::days(i64::from(days));
    let cutoff = cutoff
        .format(&time::format_description::well_known::Rfc3339)
        .map_err(|e| CoreError::Internal(format!("formatting the retention cutoff: {e}")))?;
    let reason = format!(
        "transcript removed by retention (older than {days} day{})",
        if days == 1 { "" } else { "s" }
    );
    for id in store.tasks_finished_before(&cutoff)? {
        let removed = remove_git_state(home, store, &id)
            .and_then(|_| Ok(store.remove_transcript(&id, "retention", &reason)?));
        match removed {
            Ok(n) => {
                report.events_removed += n;
                report.pruned.push(id);
            }
            Err(e) => report.failed.push((id, e.to_string())),
        }
    }
    Ok(report)
}
