//! Spare worktrees: prepared before a task exists (the app's New task form prepares one as soon
//! as a repository is picked), so the task that follows starts by recycling it instead of
//! checking the repository out. A spare is an idle worktree like a released one, holding the
//! chosen base; it has no branch, no task and no checkpoints.

use crate::error::{GitContext, Result};
use crate::gitwt;
use crate::layout::{Layout, read_trimmed, write_atomic};
use crate::pool;
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
    let origin = match pool::recycle_newest(&layout, &user, &id, &path, target)? {
        Some(old) => {
            let origin = if is_fresh(&layout, &old) {
                "fresh"
            } else {
                "pool"
            };
            forget(&layout, &old);
            origin
        }
        None => {
            gitwt::checkout_fresh(&layout, &user, &path, target, &layout.index_path(&id))?;
            write_atomic(&layout.tree_marker(&id), target.to_string().as_bytes())?;
            "fresh"
        }
    };
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
    for spare in idle.iter().filter(|i| is_fresh(&layout, &i.task_id)) {
        if pool::claim(&layout, &spare.task_id) {
            pool::discard(&layout, &user, &spare.task_id, &spare.worktree)?;
            forget(&layout, &spare.task_id);
            removed.push(spare.worktree.clone());
        }
    }
    Ok(removed)
}

fn is_fresh(layout: &Layout, id: &str) -> bool {
    id.starts_with(SPARE_PREFIX)
        && read_trimmed(&origin_file(layout, id)).as_deref() == Some("fresh")
}

/// After a spare's worktree went to a task (or another spare): a spare has no history, so
/// nothing of it is kept. Anything else (a released task) keeps its state.
pub(crate) fn forget(layout: &Layout, id: &str) {
    if id.starts_with(SPARE_PREFIX) {
        let _ = std::fs::remove_dir_all(layout.task_dir(id));
    }
}

fn spare_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{SPARE_PREFIX}{nanos:x}-{:x}", std::process::id())
}
