//! Removing a task's worktree (its checkpoints stay) and deleting its history.

use crate::error::{GitContext, IoContext, Result};
use crate::layout::{Layout, validate_task_id};
use crate::task::{TaskWorktree, checkpoint_refs, open_user_repo};
use crate::{gitwt, pool};
use std::path::Path;

impl TaskWorktree {
    /// Removes the worktree directory, its git admin entry and the `bosun/<task>` branch; the
    /// checkpoints stay. Returns the bytes freed.
    pub fn remove(self) -> Result<u64> {
        let bytes = pool::dir_size(&self.worktree)?;
        let user = open_user_repo(&self.repo_root)?;
        gitwt::remove(&self.layout, &user, &self.task_id, &self.worktree)?;
        pool::unidle(&self.layout, &self.task_id);
        delete_task_branch(&self.repo_root, &self.task_id)?;
        Ok(bytes)
    }
}

/// Deletes the task's `bosun/<task>` branch from the user's repository (a merged or discarded
/// task needs it no more; its checkpoints stay under `refs/bosun/<task>/`, and continuing the
/// task makes the branch again). A branch the user checked out is left alone. True when it
/// was deleted.
pub fn delete_task_branch(repo_root: &Path, task_id: &str) -> Result<bool> {
    validate_task_id(task_id)?;
    let user = open_user_repo(repo_root)?;
    let name = format!("bosun/{task_id}");
    let Ok(mut branch) = user.find_branch(&name, git2::BranchType::Local) else {
        return Ok(false);
    };
    if branch.is_head() {
        return Ok(false);
    }
    branch.delete().git_ctx(format!("deleting branch {name}"))?;
    Ok(true)
}

/// Deletes a task's checkpoint refs and Bosun's private files for it (after `remove`).
pub fn delete_history(home: &Path, repo_root: &Path, task_id: &str) -> Result<()> {
    validate_task_id(task_id)?;
    let user = open_user_repo(repo_root)?;
    for (n, _) in checkpoint_refs(&user, task_id)? {
        let name = format!("refs/bosun/{task_id}/{n}");
        if let Ok(mut reference) = user.find_reference(&name) {
            reference.delete().git_ctx(format!("deleting {name}"))?;
        }
    }
    let dir = Layout::new(home, repo_root).task_dir(task_id);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).io_ctx("remove", &dir)?;
    }
    Ok(())
}
