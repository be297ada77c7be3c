//! Spare worktrees: prepared before a task exists (the app's New task form prepares one as soon
//! as a repository is picked), so the task that follows starts by recycling it instead of
//! checking the repository out. A spare is an idle worktree like a released one, holding the
//! chosen base; it has no branch, no task and no checkpoints.

use crate::error::{GitContext, IoContext, Result, WorkspaceError};
use crate::gitwt;
use crate::layout::{Layout, read_trimmed, write_atomic};
use crate::pool::{self, IdleWorktree};
use crate::task::{find_commit, open_user_repo};
use std::path::{Path, PathBuf};

const SPARE_PREFIX: &str = "spare-";

/// Where a spare came from: made fresh for the form (removed when the form closes unused), or
/// an idle worktree of the pool switched to the chosen base (it goes back to the pool).
fn origin_file(layout: &Layout, id: &str) -> PathBuf {
    layout.task_dir(id).join("spare")
}

/// Prepares a worktree of `repo_root` holding `base_commit`, ready for the next task: the most
/// recently released worktree of the repository is switched to that base when there is one
/// (only the files that differ are rewritten), else the base is checked out. Returns the spare's
/// path. Preparing again (another base) switches the spare itself.
pub fn prepare_spare(home: &Path, repo_root: &Path, base_commit: &str) -> Result<PathBuf> {
    let user = open_user_repo(repo_root)?;
    let base = find_commit(&user, repo_root, base_commit)?;
    let target = base.tree().git_ctx("reading the base commit")?.id();
    let layout = Layout::new(home, repo_root);
    let id = spare_id();
    layout.prepare(&id, repo_root)?;
    let path = layout.worktree_path(&id);
    write_atomic(&layout.base_file(&id), base.id().to_string().as_bytes())?;
    let mut origin = "fresh";
    let mut done = false;
    for idle in pool::idle_tasks(&layout) {
        if !pool::claim(&layout, &idle.task_id) {
            continue;
        }
        let was_fresh = is_fresh_spare(&layout, &idle);
        match pool::recycle_into(&layout, &user, &idle, &id, &path, target) {
            Ok(()) => {
                if !was_fresh {
                    origin = "pool";
                }
                done = true;
                break;
            }
            Err(WorkspaceError::WorktreeBusy { .. }) => pool::unclaim(&layout, &idle.task_id),
            Err(_) => pool::discard(&layout, &user, &idle.task_id, &idle.worktree)?,
        }
    }
    if !done {
        gitwt::checkout_fresh(&layout, &user, &path, target, &layout.index_path(&id))?;
        write_atomic(&layout.tree_marker(&id), target.to_string().as_bytes())?;
    }
    write_atomic(&origin_file(&layout, &id), origin.as_bytes())?;
    write_atomic(&layout.idle_marker(&id), path.to_string_lossy().as_bytes())?;
    Ok(path)
}

/// Removes the spares made fresh for `repo_root` that no task took; spares switched from the
/// pool stay in it (bounded as every idle worktree is). Returns the paths removed.
pub fn drop_spares(home: &Path, repo_root: &Path) -> Result<Vec<PathBuf>> {
    let layout = Layout::new(home, repo_root);
    let mut removed = Vec::new();
    let idle = pool::idle_tasks(&layout);
    if idle.is_empty() {
        return Ok(removed);
    }
    let user = open_user_repo(repo_root)?;
    for spare in idle.iter().filter(|i| is_fresh_spare(&layout, i)) {
        if pool::claim(&layout, &spare.task_id) {
            pool::discard(&layout, &user, &spare.task_id, &spare.worktree)?;
            let dir = layout.task_dir(&spare.task_id);
            std::fs::remove_dir_all(&dir).io_ctx("remove", &dir)?;
            removed.push(spare.worktree.clone());
        }
    }
    Ok(removed)
}

fn is_fresh_spare(layout: &Layout, idle: &IdleWorktree) -> bool {
    idle.task_id.starts_with(SPARE_PREFIX)
        && read_trimmed(&origin_file(layout, &idle.task_id)).as_deref() == Some("fresh")
}

fn spare_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{SPARE_PREFIX}{nanos:x}-{:x}", std::process::id())
}
