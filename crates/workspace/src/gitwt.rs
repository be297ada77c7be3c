//! Git's linked-worktree plumbing: adding, moving, re-pointing and removing a worktree while
//! keeping `.git/worktrees/<name>` consistent, so `git worktree list` and `prune` stay right.

use crate::error::{GitContext, IoContext, Result};
use crate::layout::{read_trimmed, write_atomic};
use git2::{Index, Repository, Tree, WorktreeAddOptions};
use std::path::{Path, PathBuf};

/// The worktree's administrative directory (`<common>/worktrees/<name>`), from its `.git` file.
pub(crate) fn admin_dir(worktree: &Path) -> Option<PathBuf> {
    let text = read_trimmed(&worktree.join(".git"))?;
    let dir = PathBuf::from(text.strip_prefix("gitdir:")?.trim());
    Some(if dir.is_absolute() {
        dir
    } else {
        worktree.join(dir)
    })
}

/// `git worktree add <path> <branch>`: a full checkout, the slow path. The git CLI checks out
/// about five times faster than libgit2 on large trees, so it is used when installed.
pub(crate) fn add(repo: &Repository, name: &str, path: &Path, branch: &str) -> Result<()> {
    remove_stale_admin(repo, name)?;
    if add_with_git_cli(repo, path, branch)? {
        return Ok(());
    }
    let reference = repo
        .find_reference(&format!("refs/heads/{branch}"))
        .git_ctx(format!("looking up branch {branch}"))?;
    let mut opts = WorktreeAddOptions::new();
    opts.reference(Some(&reference));
    repo.worktree(name, path, Some(&opts))
        .git_ctx(format!("adding a worktree at {}", path.display()))?;
    Ok(())
}

/// A leftover `.git/worktrees/<name>` whose worktree no longer exists is removed.
fn remove_stale_admin(repo: &Repository, name: &str) -> Result<()> {
    let admin = repo.commondir().join("worktrees").join(name);
    if !admin.exists() {
        return Ok(());
    }
    let target = read_trimmed(&admin.join("gitdir")).map(PathBuf::from);
    if target.is_none_or(|t| !t.exists()) {
        std::fs::remove_dir_all(&admin).io_ctx("remove stale worktree metadata", &admin)?;
    }
    Ok(())
}

/// Points the worktree's HEAD at `refs/heads/<branch>`.
pub(crate) fn set_head(admin: &Path, branch: &str) -> Result<()> {
    write_atomic(
        &admin.join("HEAD"),
        format!("ref: refs/heads/{branch}\n").as_bytes(),
    )
}

/// Gives the worktree its own index = `tree`, with the stat data of `private` where it matches,
/// so `git status` inside the worktree is fast and right.
pub(crate) fn reset_own_index(
    admin: &Path,
    private: &Path,
    private_tree: git2::Oid,
    tree: &Tree<'_>,
) -> Result<()> {
    let own = admin.join("index");
    std::fs::copy(private, &own).io_ctx("write", &own)?;
    if private_tree == tree.id() {
        return Ok(());
    }
    let mut index = Index::open(&own).git_ctx("opening the worktree's index")?;
    index
        .read_tree(tree)
        .git_ctx("resetting the worktree's index")?;
    index.write().git_ctx("writing the worktree's index")
}

/// Moves a worktree to `new_path` and renames its metadata to `new_name`; the metadata is locked
/// meanwhile so a concurrent `git worktree prune` leaves it alone. Returns the new admin dir.
pub(crate) fn relocate(
    repo: &Repository,
    old_path: &Path,
    new_path: &Path,
    new_name: &str,
) -> Result<PathBuf> {
    let Some(old_admin) = admin_dir(old_path) else {
        return Err(crate::WorkspaceError::WorktreeVanished {
            task_id: new_name.to_string(),
            path: old_path.to_path_buf(),
        });
    };
    let lock = old_admin.join("locked");
    std::fs::write(&lock, "bosun: moving this worktree\n").io_ctx("write", &lock)?;
    std::fs::rename(old_path, new_path).io_ctx("move worktree to", new_path)?;
    remove_stale_admin(repo, new_name)?;
    let wanted = repo.commondir().join("worktrees").join(new_name);
    let admin = if wanted == old_admin || wanted.exists() {
        old_admin
    } else {
        std::fs::rename(&old_admin, &wanted).io_ctx("rename worktree metadata to", &wanted)?;
        wanted
    };
    write_atomic(
        &new_path.join(".git"),
        format!("gitdir: {}\n", admin.display()).as_bytes(),
    )?;
    write_atomic(
        &admin.join("gitdir"),
        format!("{}\n", new_path.join(".git").display()).as_bytes(),
    )?;
    let lock = admin.join("locked");
    std::fs::remove_file(&lock).io_ctx("remove", &lock)?;
    Ok(admin)
}

/// Deletes a worktree and its metadata (`git worktree remove --force`).
pub(crate) fn remove(path: &Path) -> Result<()> {
    let admin = admin_dir(path);
    if path.exists() {
        std::fs::remove_dir_all(path).io_ctx("remove worktree", path)?;
    }
    if let Some(admin) = admin.filter(|a| a.join("gitdir").exists()) {
        std::fs::remove_dir_all(&admin).io_ctx("remove worktree metadata", &admin)?;
    }
    Ok(())
}

/// Runs `git worktree add`; Ok(false) when git is not installed. The index is kept in a form
/// libgit2 reads (version 2, not split, no fsmonitor).
fn add_with_git_cli(repo: &Repository, path: &Path, branch: &str) -> Result<bool> {
    let Some(workdir) = repo.workdir() else {
        return Ok(false);
    };
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(workdir)
        .args(["-c", "core.splitIndex=false", "-c", "index.version=2"])
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "feature.manyFiles=false",
        ])
        .args(["worktree", "add", "--quiet"])
        .arg(path)
        .arg(branch)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output();
    match output {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e).io_ctx("run `git worktree add` for", path),
        Ok(out) if out.status.success() => Ok(true),
        Ok(out) => Err(crate::WorkspaceError::Io {
            context: "add a git worktree at",
            path: path.to_path_buf(),
            source: std::io::Error::other(String::from_utf8_lossy(&out.stderr).trim().to_string()),
        }),
    }
}
