//! The git directories Bosun writes itself, so no git call ever uses one a task could have
//! changed:
//!
//! - **Bosun's git directory** of a repository (`$BOSUN_HOME/workspace/<key>/git`): used only by
//!   Bosun's own git CLI calls ([`crate::git_cli`]). No task can write it. Its config is Bosun's
//!   (no filters, no hooks, no includes), its `info/attributes` neutralises every attribute that
//!   converts content, its `info/exclude` is a copy of the user's, and it reads the user's objects
//!   through `objects/info/alternates`.
//! - **A task's git directory** (`$BOSUN_HOME/workspace/<key>/tasks/<id>/git`): what the task's
//!   worktree `.git` file points to, and the only git state its sandboxed commands may write.
//!   It has its own HEAD, index, refs (the task's branch `bosun/<id>`) and objects (for commits
//!   made inside the task), and reads the user's objects, read-only, through alternates. Bosun
//!   never reads it as git configuration: it only rewrites its few fixed files before each use.
//!
//! Why a private git directory rather than a linked worktree of the user's repository: a linked
//! worktree must be able to write the user's `.git/objects` (so a command could delete the
//! user's objects) and the user's `refs/heads/bosun/` (so one task could move another's branch),
//! and its admin directory inside the user's `.git` is task-writable. A private directory costs
//! the same at 100,000 files (its index is the size the worktree's own index was; objects are
//! shared through alternates, not copied) and keeps every write of a task inside the task.

use crate::error::{IoContext, Result};
use crate::git_cli::NEUTRAL_ATTRIBUTES;
use crate::layout::Layout;
use crate::safe_fs::{read_small, real_dirs, remove_any, replace_file};
use git2::{Oid, Repository};
use std::path::{Path, PathBuf};

/// Bosun's own git directory for `user`'s repository, brought up to date (created if missing).
pub(crate) fn bosun_git_dir(layout: &Layout, user: &Repository) -> Result<PathBuf> {
    let dir = layout.bosun_git_dir();
    std::fs::create_dir_all(&dir).io_ctx("create directory", &dir)?;
    let config = format!(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tlogallrefupdates = false\n{}",
        copied_core_settings(user)
    );
    ensure_file(&dir, "HEAD", b"ref: refs/heads/bosun-scratch\n")?;
    ensure_file(&dir, "config", config.as_bytes())?;
    write_common(&dir, user)?;
    Ok(dir)
}

/// What a task's git directory must hold, as Bosun knows it.
pub(crate) struct TaskGitSpec<'a> {
    pub worktree: &'a Path,
    /// `bosun/<task-id>`.
    pub branch: &'a str,
    /// Where the branch starts when the directory has none (the task's base).
    pub base: Oid,
}

/// Creates (or rebuilds) a task's git directory from scratch and points the worktree at it
/// (its index is written by the caller: `gitwt::write_own_index`).
pub(crate) fn create_task_git(
    layout: &Layout,
    user: &Repository,
    task_id: &str,
    spec: &TaskGitSpec<'_>,
) -> Result<PathBuf> {
    let dir = layout.task_git_dir(task_id);
    remove_any(&dir)?;
    std::fs::create_dir_all(&dir).io_ctx("create directory", &dir)?;
    repair_task_git(layout, user, task_id, spec)?;
    Ok(dir)
}

/// Puts back what a task's commands may have changed in its git directory and its worktree's
/// `.git` file: HEAD on the task's branch, Bosun's config, the alternates, the branch itself when
/// it is missing or not a commit id. Returns what had to be put back, in words, for a warning.
/// The branch's position, the index and objects the task committed stay the task's business.
pub(crate) fn repair_task_git(
    layout: &Layout,
    user: &Repository,
    task_id: &str,
    spec: &TaskGitSpec<'_>,
) -> Result<Vec<String>> {
    let dir = layout.task_git_dir(task_id);
    let mut repaired = Vec::new();
    if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
        remove_any(&dir)?;
        std::fs::create_dir_all(&dir).io_ctx("create directory", &dir)?;
        repaired.push(format!("its git directory {} was missing", dir.display()));
    }
    let head = format!("ref: refs/heads/{}\n", spec.branch);
    let config = format!(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tlogallrefupdates = true\n\tworktree = {}\n{}",
        spec.worktree.display(),
        copied_core_settings(user)
    );
    for (name, bytes) in [("HEAD", head.as_bytes()), ("config", config.as_bytes())] {
        if ensure_file(&dir, name, bytes)? {
            repaired.push(format!("its git {name} was changed"));
        }
    }
    if write_common(&dir, user)? {
        repaired.push("its git objects/info/alternates was changed".into());
    }
    let (branch_dir, branch_name) = spec.branch.rsplit_once('/').unwrap_or(("", spec.branch));
    let refs = real_dirs(&dir, &Path::new("refs/heads").join(branch_dir))?;
    let current = read_small(&refs.join(branch_name));
    let valid = current
        .as_deref()
        .and_then(|b| std::str::from_utf8(b).ok())
        .and_then(|s| Oid::from_str(s.trim()).ok())
        .is_some();
    if !valid {
        replace_file(&refs, branch_name, format!("{}\n", spec.base).as_bytes())?;
        if current.is_some() {
            repaired.push(format!("its branch {} was not a commit", spec.branch));
        }
    }
    let strays = remove_strays(&dir)?;
    if !strays.is_empty() {
        repaired.push(format!(
            "files git would follow elsewhere were removed from its git directory: {}",
            strays.join(", ")
        ));
    }
    let foreign = remove_foreign_refs(&dir, spec.branch)?;
    if !foreign.is_empty() {
        repaired.push(format!(
            "refs other than its branch {} were made and are removed: {}",
            spec.branch,
            foreign.join(", ")
        ));
    }
    if link_worktree(spec.worktree, &dir)? {
        repaired.push("its .git file was changed".into());
    }
    Ok(repaired)
}

/// What a task's git directory may hold besides its fixed files: git's own working files and
/// the objects, refs and logs of the task's commits. Anything else — `commondir`, `gitdir`,
/// `worktrees/`, `config.worktree`, `shallow`, `info/grafts`, a second object store named by
/// `objects/info/http-alternates` — could point git (the task's own, or a user's in a terminal)
/// somewhere else, and `hooks/` would run for a user's own `git commit` in the worktree, so they
/// are removed after every command. An `index`, `HEAD` or `config` that is not a regular file
/// goes too.
const GIT_DIR_ENTRIES: &[&str] = &[
    "HEAD",
    "config",
    "index",
    "objects",
    "refs",
    "logs",
    "info",
    "description",
    "COMMIT_EDITMSG",
    "ORIG_HEAD",
    "FETCH_HEAD",
    "MERGE_HEAD",
    "MERGE_MSG",
    "MERGE_MODE",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "AUTO_MERGE",
    "REBASE_HEAD",
    "rebase-merge",
    "rebase-apply",
    "sequencer",
    "packed-refs",
    "rr-cache",
    "lost-found",
    "gc.pid",
    "gc.log",
    "bench-shadow-index",
];

fn remove_strays(dir: &Path) -> Result<Vec<String>> {
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(removed);
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let regular_file_expected = matches!(name.as_str(), "index" | "HEAD" | "config");
        let known = GIT_DIR_ENTRIES.contains(&name.as_str())
            || name.ends_with(".lock")
            || name.starts_with('.') && name.ends_with(".bosun-tmp");
        if !known || (regular_file_expected && !meta.is_file()) || meta.file_type().is_symlink() {
            remove_any(&path)?;
            removed.push(name);
        }
    }
    for rel in ["info/grafts", "objects/info/http-alternates"] {
        let path = dir.join(rel);
        if std::fs::symlink_metadata(&path).is_ok() {
            remove_any(&path)?;
            removed.push(rel.to_string());
        }
    }
    removed.sort();
    Ok(removed)
}

/// A task writes one branch, its own: any other branch or tag a command made in the task's git
/// directory (`git branch x`, `git update-ref refs/heads/bosun/<another task>`, a packed-refs
/// file) is removed. `refs/stash` stays, so `git stash` works across commands. Returns the
/// refs removed.
fn remove_foreign_refs(dir: &Path, branch: &str) -> Result<Vec<String>> {
    let own = format!("refs/heads/{branch}");
    let mut removed = Vec::new();
    let mut stack = vec![(dir.join("refs"), "refs".to_string())];
    while let Some((abs, rel)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&abs) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let (path, rel) = (entry.path(), format!("{rel}/{name}"));
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let on_the_way = own.starts_with(&format!("{rel}/"));
            if meta.is_dir() && (on_the_way || rel == "refs/heads" || rel == "refs/tags") {
                stack.push((path, rel));
            } else if meta.is_dir()
                && (rel.starts_with("refs/heads/") || rel.starts_with("refs/tags/"))
            {
                remove_any(&path)?;
                removed.push(format!("{rel}/…"));
            } else if !meta.is_dir()
                && rel != own
                && (rel.starts_with("refs/heads/") || rel.starts_with("refs/tags/"))
                && !rel.ends_with(".lock")
            {
                remove_any(&path)?;
                removed.push(rel);
            }
        }
    }
    let packed = dir.join("packed-refs");
    if std::fs::symlink_metadata(&packed).is_ok() {
        remove_any(&packed)?;
        removed.push("packed-refs".into());
    }
    removed.sort();
    Ok(removed)
}

/// Moves the task's branch in its git directory to `commit` (a rebase).
pub(crate) fn move_task_branch(
    layout: &Layout,
    task_id: &str,
    branch: &str,
    commit: Oid,
) -> Result<()> {
    let dir = layout.task_git_dir(task_id);
    let (branch_dir, name) = branch.rsplit_once('/').unwrap_or(("", branch));
    let refs = real_dirs(&dir, &Path::new("refs/heads").join(branch_dir))?;
    replace_file(&refs, name, format!("{commit}\n").as_bytes())
}

/// Writes the worktree's `.git` file (`gitdir: <dir>`), replacing whatever the task put there.
/// Returns true when something else stood there.
pub(crate) fn link_worktree(worktree: &Path, git_dir: &Path) -> Result<bool> {
    let wanted = format!("gitdir: {}\n", git_dir.display());
    ensure_file(worktree, ".git", wanted.as_bytes())
}

/// The files every Bosun-owned git directory shares: objects reached through the user's
/// object store, refs, the user's excludes and the neutral attributes. Returns true when the
/// alternates had to be rewritten.
fn write_common(dir: &Path, user: &Repository) -> Result<bool> {
    let objects = user.commondir().join("objects");
    let objects = objects.canonicalize().unwrap_or(objects);
    let info = real_dirs(dir, Path::new("objects/info"))?;
    real_dirs(dir, Path::new("objects/pack"))?;
    real_dirs(dir, Path::new("refs/tags"))?;
    let changed = ensure_file(
        &info,
        "alternates",
        format!("{}\n", objects.display()).as_bytes(),
    )?;
    let info = real_dirs(dir, Path::new("info"))?;
    let exclude_path = user.commondir().join("info/exclude");
    let exclude = std::fs::read(&exclude_path).unwrap_or_default();
    ensure_file(&info, "exclude", &exclude)?;
    ensure_file(&info, "attributes", NEUTRAL_ATTRIBUTES.as_bytes())?;
    Ok(changed)
}

/// `core.filemode`, `core.ignorecase` and `core.symlinks` as the user's repository sets them
/// (git chose them for the file system at `git init`), read by libgit2.
fn copied_core_settings(user: &Repository) -> String {
    let Ok(config) = user.config() else {
        return String::new();
    };
    let mut out = String::new();
    for key in ["filemode", "ignorecase", "symlinks"] {
        if let Ok(value) = config.get_bool(&format!("core.{key}")) {
            out.push_str(&format!("\t{key} = {value}\n"));
        }
    }
    out
}

/// Makes `dir/name` hold exactly `bytes`; true when it did not.
fn ensure_file(dir: &Path, name: &str, bytes: &[u8]) -> Result<bool> {
    if read_small(&dir.join(name)).as_deref() == Some(bytes) {
        return Ok(false);
    }
    let existed = std::fs::symlink_metadata(dir.join(name)).is_ok();
    replace_file(dir, name, bytes)?;
    Ok(existed)
}

/// A leftover registration of a task's worktree as a linked worktree of the user's repository
/// (made by Bosun before task git directories existed): removed when it is the task's own,
/// that is, named after the task and pointing back at the worktree.
pub(crate) fn forget_linked_registration(user: &Repository, name: &str, worktree: &Path) {
    let admin = user.commondir().join("worktrees").join(name);
    let Some(gitdir) = read_small(&admin.join("gitdir")) else {
        return;
    };
    let points_at = PathBuf::from(String::from_utf8_lossy(&gitdir).trim());
    if points_at == worktree.join(".git") {
        let _ = std::fs::remove_dir_all(&admin);
    }
}
