//! The one error type of this crate; every message says what the user can do about it.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error(
        "{path} is not inside a git repository: point Bosun at a git checkout (run `git init` and make a first commit if the project is new)"
    )]
    NotARepository { path: PathBuf },
    #[error(
        "{path} is a bare git repository: Bosun needs a checkout with a working directory (clone it first)"
    )]
    BareRepository { path: PathBuf },
    #[error(
        "unknown base `{base}` in {repo}: give a branch, tag or commit id that exists there (see `git branch -a`)"
    )]
    UnknownBase { repo: PathBuf, base: String },
    #[error(
        "the repository at {repo} has no commits yet (HEAD is unborn): make a first commit, then start the task"
    )]
    UnbornHead { repo: PathBuf },
    #[error(
        "invalid task id `{0}`: use 1 to 100 letters, digits, '-', '_' or '.', not starting with '.' or '-'"
    )]
    InvalidTaskId(String),
    #[error("invalid path `{path}`: {reason}; give a path relative to the task's worktree")]
    InvalidPath { path: String, reason: &'static str },
    #[error(
        "the worktree of task {task_id} at {path} is gone (deleted outside Bosun); its checkpoints are safe: open the task again to re-create the worktree from its latest checkpoint"
    )]
    WorktreeVanished { task_id: String, path: PathBuf },
    #[error(
        "the released worktree {path} is still in use by process {pid} (left by an earlier task); it is not recycled while anything runs in it"
    )]
    WorktreeBusy { path: PathBuf, pid: u32 },
    #[error(
        "task {task_id} has no checkpoint {n} (it has {available}); list them with `bosun checkpoints {task_id}`"
    )]
    NoSuchCheckpoint {
        task_id: String,
        n: u32,
        available: u32,
    },
    #[error(
        "task {task_id} already exists in this repository (branch {branch} points elsewhere or its worktree {path} is in use): pick a new task id"
    )]
    TaskExists {
        task_id: String,
        branch: String,
        path: PathBuf,
    },
    #[error(
        "cannot merge into {branch}: it moved since the task started and these files conflict: {}. Rebase the task onto {branch} first (`bosun rebase TASK`), resolve the conflicts, then merge",
        paths.join(", ")
    )]
    MergeConflict { branch: String, paths: Vec<String> },
    #[error(
        "cannot merge into {branch}: it is checked out in {repo} and has uncommitted changes ({}). Commit or stash them, or merge into another branch with --into",
        paths.join(", ")
    )]
    DirtyCheckout {
        branch: String,
        repo: PathBuf,
        paths: Vec<String>,
    },
    #[error(
        "`{name}` is not a valid branch name: use letters, digits and / - _ . (no spaces, no `..`, not ending in `.lock`)"
    )]
    InvalidBranch { name: String },
    #[error(
        "nothing to merge: no hunk is accepted yet (accept hunks with `bosun accept TASK PATH[:HUNK]`)"
    )]
    NothingToMerge,
    #[error("{path} has no hunk {hunk} (it has {available}); list them with `bosun review TASK`")]
    NoSuchHunk {
        path: String,
        hunk: String,
        available: usize,
    },
    #[error("{path} is not changed by this task; list its files with `bosun review TASK`")]
    NotChanged { path: String },
    #[error(
        "cannot put the rejected hunk back into {path}: the file changed since, and the hunk no longer fits there"
    )]
    HunkDoesNotApply { path: String },
    #[error(
        "cannot watch the branches of {repo} for changes ({reason}); the review still looks at them whenever it is opened or the window comes back into focus"
    )]
    WatchUnavailable { repo: PathBuf, reason: String },
    #[error("git failed while {context}: {source}")]
    Git {
        context: String,
        #[source]
        source: git2::Error,
    },
    #[error("could not {context} {path}: {source}")]
    Io {
        context: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

pub type Result<T, E = WorkspaceError> = std::result::Result<T, E>;

/// `.git_ctx("while …")` for libgit2 results.
pub(crate) trait GitContext<T> {
    fn git_ctx(self, context: impl Into<String>) -> Result<T>;
}

impl<T> GitContext<T> for std::result::Result<T, git2::Error> {
    fn git_ctx(self, context: impl Into<String>) -> Result<T> {
        self.map_err(|source| WorkspaceError::Git {
            context: context.into(),
            source,
        })
    }
}

/// `.io_ctx("read", path)` for std IO results.
pub(crate) trait IoContext<T> {
    fn io_ctx(self, context: &'static str, path: &std::path::Path) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn io_ctx(self, context: &'static str, path: &std::path::Path) -> Result<T> {
        self.map_err(|source| WorkspaceError::Io {
            context,
            path: path.to_path_buf(),
            source,
        })
    }
}
