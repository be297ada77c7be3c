//! Writing a tree into a worktree, touching only the paths that differ from the tree it holds.

use crate::entry::{MODE_EXEC, MODE_LINK, index_entry, lstat};
use crate::error::{GitContext, IoContext, Result};
use crate::safe_fs;
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

/// Removes a file (or whatever stands at `path`) and the directories it leaves empty. A path
/// behind a symlinked directory is not in the worktree and is left alone (the symlink itself
/// is a path of its own).
pub(crate) fn remove_path(worktree: &Path, path: &str) -> Result<()> {
    if !safe_fs::inside(worktree, path) {
        return Ok(());
    }
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

/// Writes blob `id` at `path` with git mode `mode`. Every directory on the way is made a real
/// directory (a symlink or file standing there is removed, never followed), and the file is
/// written to a temporary name and renamed over whatever stood at `path`, so neither a symlink
/// nor a hard link the task made leads the write outside the worktree.
pub(crate) fn write_blob(
    repo: &Repository,
    worktree: &Path,
    path: &str,
    id: Oid,
    mode: u32,
) -> Result<()> {
    let rel = Path::new(path);
    let (Some(parent), Some(name)) = (rel.parent(), rel.file_name().and_then(|n| n.to_str()))
    else {
        return Err(crate::WorkspaceError::InvalidPath {
            path: path.to_string(),
            reason: "it names no file",
        });
    };
    let dir = safe_fs::real_dirs(worktree, parent)?;
    let abs = dir.join(name);
    let current = lstat(&abs)?;
    if current.as_ref().is_some_and(|m| m.is_dir()) {
        std::fs::remove_dir_all(&abs).io_ctx("remove", &abs)?;
    }
    let blob = repo
        .find_blob(id)
        .git_ctx(format!("reading the content of {path}"))?;
    if mode == MODE_LINK {
        safe_fs::remove_any(&abs)?;
        let target = String::from_utf8_lossy(blob.content()).into_owned();
        std::os::unix::fs::symlink(&target, &abs).io_ctx("create symlink", &abs)?;
        return Ok(());
    }
    // An existing regular file keeps its permissions across the write; only the exec bit follows
    // the mode. A new file gets 644 or 755. Set-id bits never survive.
    let wants_exec = mode == MODE_EXEC;
    let perms = match current.as_ref().filter(|m| m.is_file()) {
        Some(m) => {
            let kept = m.mode() & 0o666;
            if wants_exec {
                kept | ((kept & 0o444) >> 2)
            } else {
                kept
            }
        }
        None if wants_exec => 0o755,
        None => 0o644,
    };
    safe_fs::replace_file(&dir, name, blob.content())?;
    std::fs::set_permissions(&abs, std::fs::Permissions::from_mode(perms))
        .io_ctx("set permissions of", &abs)?;
    Ok(())
}
