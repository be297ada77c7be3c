//! Writing a tree into a worktree, touching only the paths that differ from the tree it holds.

use crate::entry::{MODE_EXEC, MODE_LINK, index_entry, lstat};
use crate::error::{GitContext, IoContext, Result};
use git2::{Delta, Index, Oid, Repository, Tree};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

/// Moves the files of `worktree` from `from` (what it holds, as `index` describes) to `to`.
/// Returns the paths it touched, sorted.
pub(crate) fn switch_files(
    repo: &Repository,
    worktree: &Path,
    index: &mut Index,
    from: &Tree<'_>,
    to: &Tree<'_>,
) -> Result<Vec<String>> {
    let diff = repo
        .diff_tree_to_tree(Some(from), Some(to), None)
        .git_ctx("comparing two trees")?;
    let mut removed = Vec::new();
    let mut written: Vec<(String, Oid, u32)> = Vec::new();
    for delta in diff.deltas() {
        let old = delta.old_file();
        let new = delta.new_file();
        let path_of = |f: &git2::DiffFile<'_>| f.path().and_then(|p| p.to_str()).map(String::from);
        match delta.status() {
            Delta::Deleted => removed.extend(path_of(&old)),
            Delta::Added | Delta::Modified | Delta::Typechange => {
                if let Some(path) = path_of(&new) {
                    written.push((path, new.id(), u32::from(new.mode())));
                }
            }
            _ => {}
        }
    }
    drop(diff);
    for path in &removed {
        remove_path(worktree, path)?;
        if index.get_path(Path::new(path), 0).is_some() {
            index
                .remove_path(Path::new(path))
                .git_ctx("updating the private index")?;
        }
    }
    for (path, id, mode) in &written {
        write_blob(repo, worktree, path, *id, *mode)?;
        let abs = worktree.join(path);
        if let Some(meta) = lstat(&abs)? {
            index
                .add(&index_entry(path, &meta, *id, *mode))
                .git_ctx("updating the private index")?;
        }
    }
    let mut touched: Vec<String> = removed
        .into_iter()
        .chain(written.into_iter().map(|w| w.0))
        .collect();
    touched.sort();
    touched.dedup();
    Ok(touched)
}

/// Removes a file (or whatever stands at `path`) and the directories it leaves empty.
pub(crate) fn remove_path(worktree: &Path, path: &str) -> Result<()> {
    let abs = worktree.join(path);
    if let Some(meta) = lstat(&abs)? {
        if meta.is_dir() {
            std::fs::remove_dir_all(&abs).io_ctx("remove", &abs)?;
        } else {
            std::fs::remove_file(&abs).io_ctx("remove", &abs)?;
        }
    }
    let mut dir = abs.parent();
    while let Some(d) = dir {
        if d == worktree || !d.starts_with(worktree) || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(())
}

pub(crate) fn write_blob(
    repo: &Repository,
    worktree: &Path,
    path: &str,
    id: Oid,
    mode: u32,
) -> Result<()> {
    let abs = worktree.join(path);
    let current = lstat(&abs)?;
    match &current {
        Some(meta) if meta.is_dir() => std::fs::remove_dir_all(&abs).io_ctx("remove", &abs)?,
        Some(meta) if meta.file_type().is_symlink() || mode == MODE_LINK => {
            std::fs::remove_file(&abs).io_ctx("remove", &abs)?
        }
        Some(_) => {}
        None => {
            let parent = abs.parent().unwrap_or(worktree);
            if !lstat(parent)?.is_some_and(|m| m.is_dir()) {
                clear_way(worktree, parent)?;
                std::fs::create_dir_all(parent).io_ctx("create directory", parent)?;
            }
        }
    }
    let blob = repo
        .find_blob(id)
        .git_ctx(format!("reading the content of {path}"))?;
    if mode == MODE_LINK {
        let target = String::from_utf8_lossy(blob.content()).into_owned();
        std::os::unix::fs::symlink(&target, &abs).io_ctx("create symlink", &abs)?;
        return Ok(());
    }
    std::fs::write(&abs, blob.content()).io_ctx("write", &abs)?;
    // An existing regular file keeps its permissions across the write; fix only the exec bit.
    let had_exec = current
        .as_ref()
        .filter(|m| m.is_file())
        .map(|m| m.mode() & 0o111 != 0);
    let wants_exec = mode == MODE_EXEC;
    if had_exec != Some(wants_exec) && (wants_exec || had_exec.is_some()) {
        let perms = std::fs::Permissions::from_mode(if wants_exec { 0o755 } else { 0o644 });
        std::fs::set_permissions(&abs, perms).io_ctx("set permissions of", &abs)?;
    }
    Ok(())
}

/// A file (e.g. an ignored one) standing where a directory must go is removed.
fn clear_way(worktree: &Path, dir: &Path) -> Result<()> {
    let mut current = dir;
    loop {
        if current == worktree || !current.starts_with(worktree) {
            return Ok(());
        }
        if let Some(meta) = lstat(current)? {
            if !meta.is_dir() {
                std::fs::remove_file(current).io_ctx("remove", current)?;
            }
            return Ok(());
        }
        match current.parent() {
            Some(parent) => current = parent,
            None => return Ok(()),
        }
    }
}
