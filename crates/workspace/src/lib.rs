//! bosun-workspace: a git worktree per task, checkpoints built from a private index, diffs
//! between any two states, restore, and recycling of finished tasks' worktrees.
//!
//! The user's checkout (working tree, index, HEAD, branches other than `bosun/*`) is never
//! touched. Each task works in `$BOSUN_HOME/worktrees/<repo-key>/<task-id>` on branch
//! `bosun/<task-id>`; checkpoints are commits referenced as `refs/bosun/<task-id>/<n>`.
//!
//! The worktree is hostile: the task controls every byte of it, `.git` and `.gitattributes`
//! included. So the user's repository is always opened by the path the user gave, never through
//! the worktree's `.git`; the worktree's `.git` points at a git directory of the task's own
//! ([`owned_git`]), rewritten before each use; Bosun's git CLI calls run on a git directory
//! Bosun wrote itself, with no configuration, hooks or filters ([`git_cli`]); files are stored
//! as the bytes on disk ([`blobs`]); and nothing Bosun writes into a worktree follows a symlink
//! the task made ([`safe_fs`]).

pub mod bench;
mod blobs;
mod check_dir;
mod entry;
mod error;
mod git_cli;
mod gitwt;
mod history;
mod layout;
mod materialise;
mod owned_git;
mod pack;
mod pool;
mod recent;
mod review;
mod safe_fs;
mod scan;
mod spare;
mod task;
mod tree_edit;
pub mod watch;

pub use check_dir::{
    CheckDirLock, changed_between, check_dir_path, evict_check_dirs, latest_checkpoint_commit,
    lock_check_dir, remove_check_dir, sync_check_dir, tree_id, user_git_dir,
};
pub use entry::normalise as normalise_path;
pub use error::WorkspaceError;
pub use history::{DiffPoint, MergedIn, Restored};
pub use pool::{
    DEFAULT_MAX_IDLE_PER_REPO, DiskUsage, WorktreeUsage, remove_idle_worktrees, worktree_disk_usage,
};
pub use recent::{RecentChange, recent_changes};
pub use review::{
    AcceptedTree, MergePlan, Rebased, Rejection, TaskHistory, delete_history, delete_task_branch,
};
pub use spare::{drop_spares, prepare_spare};
pub use task::{ChangeHint, Checkpoint, TaskGitPaths, TaskWorktree, is_task_worktree};
pub use watch::{
    CommandScan, DEFAULT_WATCH_MAX, RefsWatcher, WalkReason, WatchCoverage, WatchLimits,
    WatchReport, Watcher,
};

use error::GitContext;
use git2::{ErrorCode, Repository};
use std::path::{Path, PathBuf};

/// The working directory of the repository containing `path` (any path inside it works).
pub fn resolve_repo(path: &Path) -> Result<PathBuf, WorkspaceError> {
    let repo = Repository::discover(path).map_err(|_| WorkspaceError::NotARepository {
        path: path.to_path_buf(),
    })?;
    let Some(workdir) = repo.workdir() else {
        return Err(WorkspaceError::BareRepository {
            path: path.to_path_buf(),
        });
    };
    let workdir = workdir
        .canonicalize()
        .unwrap_or_else(|_| workdir.to_path_buf());
    Ok(workdir)
}

/// The commit id `base` names in the repository (default `HEAD`).
pub fn resolve_base(repo_root: &Path, base: Option<&str>) -> Result<String, WorkspaceError> {
    let repo = task::open_user_repo(repo_root)?;
    let unknown = |base: &str| WorkspaceError::UnknownBase {
        repo: repo_root.to_path_buf(),
        base: base.to_string(),
    };
    let Some(base) = base.filter(|b| !b.trim().is_empty()) else {
        return match repo.head() {
            Ok(head) => head
                .peel_to_commit()
                .map(|c| c.id().to_string())
                .git_ctx("reading HEAD"),
            Err(e) if e.code() == ErrorCode::UnbornBranch || e.code() == ErrorCode::NotFound => {
                Err(WorkspaceError::UnbornHead {
                    repo: repo_root.to_path_buf(),
                })
            }
            Err(e) => Err(e).git_ctx("reading HEAD"),
        };
    };
    let object = repo.revparse_single(base).map_err(|e| {
        if base == "HEAD" && e.code() == ErrorCode::UnbornBranch {
            WorkspaceError::UnbornHead {
                repo: repo_root.to_path_buf(),
            }
        } else {
            unknown(base)
        }
    })?;
    let commit = object.peel_to_commit().map_err(|_| unknown(base))?;
    Ok(commit.id().to_string())
}

/// The local branch `base` names (default: the branch checked out), if it names one: where a
/// merge of the task goes by default. None for a commit id, a tag or a detached HEAD.
pub fn base_branch(repo_root: &Path, base: Option<&str>) -> Option<String> {
    let repo = task::open_user_repo(repo_root).ok()?;
    match base
        .map(str::trim)
        .filter(|b| !b.is_empty() && *b != "HEAD")
    {
        None => {
            let head = repo.find_reference("HEAD").ok()?;
            let target = head.symbolic_target().ok().flatten()?;
            let name = target.strip_prefix("refs/heads/")?.to_string();
            // An unborn branch is no merge target yet, and neither is Bosun's own.
            repo.find_branch(&name, git2::BranchType::Local).ok()?;
            Some(name)
        }
        Some(name) => {
            let name = name.strip_prefix("refs/heads/").unwrap_or(name);
            repo.find_branch(name, git2::BranchType::Local)
                .ok()
                .map(|_| name.to_string())
        }
    }
}
