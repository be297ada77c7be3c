//! Check directories: where the project's checks run, so nothing a check makes (`__pycache__`,
//! `.pytest_cache`, `target/`) lands in the task's worktree, is checkpointed or is credited to
//! the agent.
//!
//! ```text
//! $BOSUN_HOME/workspace/<repo-key>/checks/<slot>/tree    the files of the tree being checked
//! $BOSUN_HOME/workspace/<repo-key>/checks/<slot>/index   the private index describing them
//! $BOSUN_HOME/workspace/<repo-key>/checks/<slot>/held    the tree id they hold
//! ```
//! A slot is kept between runs (a task's slot, one per base commit for base runs, one per task
//! for the merge gate): syncing it to another tree rewrites only the files that differ, puts back
//! tracked files a check changed and removes untracked files it made that are not ignored, while
//! ignored build outputs stay, so a second `cargo test` is incremental.

use crate::entry::{index_entry, lstat};
use crate::error::{GitContext, IoContext, Result, WorkspaceError};
use crate::gitwt;
use crate::layout::{Layout, read_trimmed, write_atomic};
use crate::materialise::{remove_path, switch_files, write_blob};
use crate::owned_git::bosun_git_dir;
use crate::safe_fs::remove_any;
use crate::scan::candidates_from_git;
use crate::task::open_user_repo;
use git2::{Index, ObjectType, Oid, Repository, Tree};
use std::path::{Path, PathBuf};

/// Makes the check directory `slot` of `repo_root` hold exactly `tree_or_commit` (a tree or a
/// commit id of the user's repository, where checkpoints and accepted trees live) and returns
/// its path.
/// With `fresh`, the directory is made anew (nothing left by an earlier run stays, ignored files
/// included).
pub fn sync_check_dir(
    home: &Path,
    repo_root: &Path,
    slot: &str,
    tree_or_commit: &str,
    fresh_copy: bool,
) -> Result<PathBuf> {
    validate_slot(slot)?;
    let user = open_user_repo(repo_root)?;
    let layout = Layout::new(home, repo_root);
    let target = peel_tree(&user, tree_or_commit)?;
    let dir = slot_dir(&layout, slot);
    let files = dir.join("tree");
    let index_path = dir.join("index");
    let held_path = dir.join("held");
    std::fs::create_dir_all(&dir).io_ctx("create directory", &dir)?;
    let held = read_trimmed(&held_path).and_then(|s| Oid::from_str(&s).ok());
    let from = held
        .filter(|_| !fresh_copy)
        .and_then(|h| user.find_tree(h).ok());
    match (from, files.is_dir(), Index::open(&index_path)) {
        (Some(from), true, Ok(mut index)) => {
            // Forget which tree it holds until it holds the new one: a crash in between makes
            // the next sync start afresh.
            let _ = std::fs::remove_file(&held_path);
            let git_dir = bosun_git_dir(&layout, &user)?;
            let dirty = candidates_from_git(&git_dir, &files, &index_path);
            let to = user
                .find_tree(target)
                .git_ctx("reading the tree to check")?;
            let touched = switch_files(&user, &files, &mut index, &from, &to)?;
            match dirty {
                Some(dirty) => {
                    for path in dirty.iter().filter(|p| touched.binary_search(p).is_err()) {
                        reset_path(&user, &files, &mut index, &to, path)?;
                    }
                }
                // Without the git CLI what a check changed cannot be found cheaply: start over.
                None => {
                    drop(index);
                    return fresh(&layout, &user, &dir, target);
                }
            }
            index.write().git_ctx("writing the check index")?;
        }
        _ => return fresh(&layout, &user, &dir, target),
    }
    write_atomic(&held_path, target.to_string().as_bytes())?;
    Ok(files)
}

/// Where a check directory is (whether or not it exists).
pub fn check_dir_path(home: &Path, repo_root: &Path, slot: &str) -> PathBuf {
    slot_dir(&Layout::new(home, repo_root), slot)
}

/// Removes a check directory (a task's, when the task's worktree goes).
pub fn remove_check_dir(home: &Path, repo_root: &Path, slot: &str) -> Result<()> {
    validate_slot(slot)?;
    let dir = slot_dir(&Layout::new(home, repo_root), slot);
    remove_any(&dir)
}

/// The tree id a commit or tree id names, in the user's repository.
pub fn tree_id(repo_root: &Path, tree_or_commit: &str) -> Result<String> {
    let user = open_user_repo(repo_root)?;
    Ok(peel_tree(&user, tree_or_commit)?.to_string())
}

/// The user's git (common) directory, canonical: hidden from checks like from commands.
pub fn user_git_dir(repo_root: &Path) -> Result<PathBuf> {
    let user = open_user_repo(repo_root)?;
    let dir = user.commondir().to_path_buf();
    Ok(dir.canonicalize().unwrap_or(dir))
}

/// The newest checkpoint commit of a task (`refs/bosun/<task>/<n>` with the highest n), or
/// None when it has none.
pub fn latest_checkpoint_commit(repo_root: &Path, task_id: &str) -> Result<Option<String>> {
    let user = open_user_repo(repo_root)?;
    Ok(crate::task::latest_checkpoint(&user, task_id)?.map(|(_, c)| c.to_string()))
}

/// Holds a check directory for one run of checks; dropping it lets the next run in.
pub struct CheckDirLock {
    _file: std::fs::File,
}

/// Waits until no other run (of this or another Bosun process) uses the check directory
/// `slot`, and holds it.
pub fn lock_check_dir(home: &Path, repo_root: &Path, slot: &str) -> Result<CheckDirLock> {
    validate_slot(slot)?;
    let dir = slot_dir(&Layout::new(home, repo_root), slot);
    std::fs::create_dir_all(&dir).io_ctx("create directory", &dir)?;
    let path = dir.join("lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .io_ctx("open", &path)?;
    file.lock().io_ctx("lock", &path)?;
    Ok(CheckDirLock { _file: file })
}

/// Removes the check directories of `repo_root` whose name starts with `prefix` beyond the
/// `keep` used most recently (the base commits' directories, each with its build outputs).
pub fn evict_check_dirs(home: &Path, repo_root: &Path, prefix: &str, keep: usize) -> Result<()> {
    let root = Layout::new(home, repo_root).state_dir().join("checks");
    let Ok(entries) = std::fs::read_dir(&root) else {
        return Ok(());
    };
    let mut dirs: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .filter_map(|e| {
            let held = e.path().join("held");
            let used = std::fs::metadata(&held).and_then(|m| m.modified()).ok()?;
            Some((used, e.path()))
        })
        .collect();
    dirs.sort();
    dirs.reverse();
    for (_, dir) in dirs.into_iter().skip(keep) {
        // One in use is locked: leave it for next time.
        let Ok(file) = std::fs::File::open(dir.join("lock")) else {
            remove_any(&dir)?;
            continue;
        };
        if file.try_lock().is_ok() {
            remove_any(&dir)?;
        }
    }
    Ok(())
}

fn fresh(layout: &Layout, user: &Repository, dir: &Path, target: Oid) -> Result<PathBuf> {
    let files = dir.join("tree");
    let index_path = dir.join("index");
    let held_path = dir.join("held");
    let _ = std::fs::remove_file(&held_path);
    remove_any(&files)?;
    gitwt::checkout_fresh(layout, user, &files, target, &index_path)?;
    write_atomic(&held_path, target.to_string().as_bytes())?;
    Ok(files)
}

fn slot_dir(layout: &Layout, slot: &str) -> PathBuf {
    layout.state_dir().join("checks").join(slot)
}

fn validate_slot(slot: &str) -> Result<()> {
    let ok = !slot.is_empty()
        && slot.len() <= 100
        && slot
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(WorkspaceError::InvalidPath {
            path: slot.to_string(),
            reason: "a check directory's name is letters, digits, - and _",
        })
    }
}

fn peel_tree(user: &Repository, id: &str) -> Result<Oid> {
    let unknown = || WorkspaceError::UnknownBase {
        repo: user.workdir().unwrap_or_else(|| user.path()).to_path_buf(),
        base: id.to_string(),
    };
    let oid = Oid::from_str(id.trim()).map_err(|_| unknown())?;
    let object = user.find_object(oid, None).map_err(|_| unknown())?;
    match object.kind() {
        Some(ObjectType::Tree) => Ok(oid),
        _ => Ok(object.peel_to_tree().map_err(|_| unknown())?.id()),
    }
}

/// Makes `path` what `tree` holds there (or absent), and the index agree.
fn reset_path(
    user: &Repository,
    files: &Path,
    index: &mut Index,
    tree: &Tree<'_>,
    path: &str,
) -> Result<()> {
    let entry = tree
        .get_path(Path::new(path))
        .ok()
        .filter(|e| e.kind() == Some(ObjectType::Blob));
    match entry {
        Some(e) => {
            let mode = e.filemode() as u32;
            write_blob(user, files, path, e.id(), mode)?;
            if let Some(meta) = lstat(&files.join(path))? {
                index
                    .add(&index_entry(path, &meta, e.id(), mode))
                    .git_ctx("updating the check index")?;
            }
        }
        None => {
            remove_path(files, path)?;
            if index.get_path(Path::new(path), 0).is_some() {
                index
                    .remove_path(Path::new(path))
                    .git_ctx("updating the check index")?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    #[test]
    fn a_check_dir_holds_the_tree_and_forgets_what_a_check_made_but_keeps_ignored_outputs() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        git(&repo, &["init", "-q", "-b", "main"]);
        std::fs::write(repo.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(repo.join("a.txt"), "one\n").unwrap();
        std::fs::write(repo.join("b.txt"), "bee\n").unwrap();
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-qm", "one"]);
        let first = git(&repo, &["rev-parse", "HEAD"]);
        std::fs::write(repo.join("a.txt"), "two\n").unwrap();
        std::fs::remove_file(repo.join("b.txt")).unwrap();
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-qm", "two"]);
        let second = git(&repo, &["rev-parse", "HEAD"]);
        let home = tmp.path().join("home");

        let dir = sync_check_dir(&home, &repo, "t1", &first, false).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "one\n");
        // A check changes a tracked file, makes a stray file and a build output.
        std::fs::write(dir.join("b.txt"), "changed by a check\n").unwrap();
        std::fs::write(dir.join("stray.pyc"), "x").unwrap();
        std::fs::create_dir_all(dir.join("target")).unwrap();
        std::fs::write(dir.join("target/out"), "built").unwrap();

        let again = sync_check_dir(&home, &repo, "t1", &first, false).unwrap();
        assert_eq!(again, dir);
        assert_eq!(std::fs::read_to_string(dir.join("b.txt")).unwrap(), "bee\n");
        assert!(!dir.join("stray.pyc").exists(), "what a check made is gone");
        assert!(
            dir.join("target/out").exists(),
            "ignored build outputs stay"
        );

        sync_check_dir(&home, &repo, "t1", &second, false).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "two\n");
        assert!(!dir.join("b.txt").exists());
        // The user's checkout is untouched.
        assert_eq!(git(&repo, &["status", "--porcelain"]), "");

        // A fresh copy keeps nothing an earlier run left, ignored outputs included.
        sync_check_dir(&home, &repo, "t1", &second, true).unwrap();
        assert!(!dir.join("target/out").exists());
        assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "two\n");

        assert!(sync_check_dir(&home, &repo, "../x", &first, false).is_err());
        assert!(sync_check_dir(&home, &repo, "t1", "not-an-id", false).is_err());
        remove_check_dir(&home, &repo, "t1").unwrap();
        assert!(!dir.exists());
    }
}

/// The paths that differ between two commits (or trees) of the repository, sorted.
pub fn changed_between(repo_root: &Path, from: &str, to: &str) -> Result<Vec<String>> {
    let user = open_user_repo(repo_root)?;
    let a = user
        .find_tree(peel_tree(&user, from)?)
        .git_ctx("reading a tree")?;
    let b = user
        .find_tree(peel_tree(&user, to)?)
        .git_ctx("reading a tree")?;
    let diff = user
        .diff_tree_to_tree(Some(&a), Some(&b), None)
        .git_ctx("comparing two states")?;
    let mut paths = std::collections::BTreeSet::new();
    for delta in diff.deltas() {
        for file in [delta.old_file(), delta.new_file()] {
            if let Some(p) = file.path().and_then(|p| p.to_str()) {
                paths.insert(p.to_string());
            }
        }
    }
    Ok(paths.into_iter().collect())
}
