//! A task worktree on disk: a fresh checkout of a tree, the worktree's own index, removal.
//!
//! A worktree is not a linked worktree of the user's repository (nothing is registered in the
//! user's `.git/worktrees`): its `.git` file points at the task's own git directory (see
//! [`crate::owned_git`]). Its files come from the user's object store, written as the bytes the
//! blobs hold.

use crate::error::{GitContext, IoContext, Result};
use crate::git_cli::{CHECKOUT_TIMEOUT, GitCall, Running};
use crate::layout::Layout;
use crate::materialise::switch_files;
use crate::owned_git::{bosun_git_dir, forget_linked_registration};
use crate::safe_fs::remove_any;
use git2::{Index, Oid, Repository, Tree};
use std::path::Path;

/// Writes `tree` into the new directory `path` and the private index describing it (with stat
/// data) at `index`. The git CLI (on Bosun's own git directory, see [`crate::git_cli`]) checks
/// out about five times faster than libgit2 on large trees, so it is used when installed.
pub(crate) fn checkout_fresh(
    layout: &Layout,
    user: &Repository,
    path: &Path,
    tree: Oid,
    index: &Path,
) -> Result<()> {
    std::fs::create_dir_all(path).io_ctx("create directory", path)?;
    let _ = std::fs::remove_file(index);
    if checkout_with_git_cli(layout, user, path, tree, index)? {
        if Index::open(index).is_ok() {
            return Ok(());
        }
        // An index libgit2 cannot read: start over without the CLI.
        std::fs::remove_file(index).io_ctx("remove", index)?;
    }
    let empty = user
        .treebuilder(None)
        .and_then(|b| b.write())
        .git_ctx("writing the empty tree")?;
    let from = user.find_tree(empty).git_ctx("reading the empty tree")?;
    let to = user
        .find_tree(tree)
        .git_ctx("reading the tree to check out")?;
    let mut private = Index::open(index).git_ctx("creating the private index")?;
    switch_files(user, path, &mut private, &from, &to)?;
    private.write().git_ctx("writing the private index")
}

/// `git read-tree --reset -u <tree>` into `path`; Ok(false) when git is not installed.
fn checkout_with_git_cli(
    layout: &Layout,
    user: &Repository,
    path: &Path,
    tree: Oid,
    index: &Path,
) -> Result<bool> {
    let git_dir = bosun_git_dir(layout, user)?;
    let mut cmd = GitCall::new(&git_dir)
        .work_tree(path)
        .index(index)
        .command();
    cmd.args(["read-tree", "--reset", "-u"])
        .arg(tree.to_string());
    let deadline = std::time::Instant::now() + CHECKOUT_TIMEOUT;
    let output = Running::spawn(cmd).and_then(|running| running.wait(deadline));
    match output {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e).io_ctx("run `git read-tree` for", path),
        Ok(out) if out.status.success() => Ok(true),
        Ok(out) => Err(crate::WorkspaceError::Io {
            context: "check out files into",
            path: path.to_path_buf(),
            source: std::io::Error::other(String::from_utf8_lossy(&out.stderr).trim().to_string()),
        }),
    }
}

/// Gives the worktree's own index (in its git directory, for `git status` inside the task) the
/// content of `head`, with the stat data of the private index where it matches.
pub(crate) fn write_own_index(
    own: &Path,
    private: &Path,
    private_tree: Oid,
    head: &Tree<'_>,
) -> Result<()> {
    // The task's git directory is the task's: whatever stands at the index's path or its lock
    // (a symlink to the user's index, a FIFO) is removed first, never written through.
    remove_any(own)?;
    remove_any(&own.with_extension("lock"))?;
    std::fs::copy(private, own).io_ctx("write", own)?;
    if private_tree == head.id() {
        return Ok(());
    }
    let mut index = Index::open(own).git_ctx("opening the worktree's index")?;
    index
        .read_tree(head)
        .git_ctx("resetting the worktree's index")?;
    index.write().git_ctx("writing the worktree's index")
}

/// Deletes a task's worktree and its git directory (never following a symlink the task made),
/// and a leftover registration as a linked worktree of the user's repository.
pub(crate) fn remove(layout: &Layout, user: &Repository, task_id: &str, path: &Path) -> Result<()> {
    remove_any(path)?;
    remove_any(&layout.task_git_dir(task_id))?;
    forget_linked_registration(user, task_id, path);
    Ok(())
}
