//! File operations inside directories a task's commands can write (its worktree, its private git
//! directory) that never follow what the task put there: a directory replaced by a symlink to the
//! user's checkout, a temporary file name pre-created as a symlink, a FIFO where a file is read.
//!
//! Bosun does these operations between commands. With the command sandbox's PID namespace no
//! process of the task is alive then, so the checks cannot be raced; without it (the fallback)
//! an escaped background job could race them, which is why that fallback kills every descendant
//! when a command ends.

use crate::error::{IoContext, Result};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

/// Bytes beyond which [`read_small`] does not read a file.
const SMALL: u64 = 64 * 1024;

/// Makes every directory of `rel_dir` below `root` a real directory: a symlink, file or
/// anything else standing where one must be is removed and replaced by an empty directory.
/// `root` itself must be trusted (not writable by a task). Returns the absolute directory.
pub(crate) fn real_dirs(root: &Path, rel_dir: &Path) -> Result<PathBuf> {
    let mut dir = root.to_path_buf();
    for component in rel_dir.components() {
        let Component::Normal(part) = component else {
            continue;
        };
        dir.push(part);
        match std::fs::symlink_metadata(&dir) {
            Ok(meta) if meta.is_dir() => continue,
            Ok(_) => std::fs::remove_file(&dir).io_ctx("remove", &dir)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).io_ctx("read the status of", &dir),
        }
        std::fs::create_dir(&dir).io_ctx("create directory", &dir)?;
    }
    Ok(dir)
}

/// Whether `rel` below `root` can be reached through real directories only (no symlink and no
/// file on the way). A path behind a symlinked directory is, for git and for Bosun, not there.
pub(crate) fn inside(root: &Path, rel: &str) -> bool {
    Reachable::default().check(root, rel)
}

/// [`inside`] for many paths, remembering the directories already found real.
#[derive(Default)]
pub(crate) struct Reachable {
    real: std::collections::HashSet<String>,
}

impl Reachable {
    pub fn check(&mut self, root: &Path, rel: &str) -> bool {
        for (i, _) in rel.match_indices('/') {
            let dir = &rel[..i];
            if dir.is_empty() || self.real.contains(dir) {
                continue;
            }
            match std::fs::symlink_metadata(root.join(dir)) {
                Ok(meta) if meta.is_dir() => {
                    self.real.insert(dir.to_string());
                }
                _ => return false,
            }
        }
        true
    }
}

/// Removes whatever stands at `path` (a directory tree, a file, a symlink — never what a
/// symlink points to). Nothing there is fine.
pub(crate) fn remove_any(path: &Path) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path).io_ctx("remove", path),
        Ok(_) => std::fs::remove_file(path).io_ctx("remove", path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).io_ctx("read the status of", path),
    }
}

/// Writes `bytes` to `dir/name` through a fresh temporary file and a rename, never following a
/// symlink: whatever stood at the temporary name or at `name` is replaced, not written through.
/// `dir` must be a real directory (see [`real_dirs`]).
pub(crate) fn replace_file(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let path = dir.join(name);
    let tmp = dir.join(format!(".{name}.bosun-tmp"));
    remove_any(&tmp)?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o644)
        .open(&tmp)
        .io_ctx("create", &tmp)?;
    file.write_all(bytes).io_ctx("write", &tmp)?;
    drop(file);
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
        std::fs::remove_dir_all(&path).io_ctx("remove", &path)?;
    }
    std::fs::rename(&tmp, &path).io_ctx("replace", &path)
}

/// The content of `path` when it is a regular file of at most 64 KB (not a symlink, FIFO or
/// device); None otherwise. For comparing a file a task could have changed with what it must be.
pub(crate) fn read_small(path: &Path) -> Option<Vec<u8>> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > SMALL {
        return None;
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, SMALL), &mut out).ok()?;
    Some(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_symlinked_directory_is_replaced_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let (root, outside) = (tmp.path().join("root"), tmp.path().join("outside"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("refs")).unwrap();
        let dir = real_dirs(&root, Path::new("refs/heads")).unwrap();
        replace_file(&dir, "main", b"x\n").unwrap();
        assert_eq!(std::fs::read(root.join("refs/heads/main")).unwrap(), b"x\n");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        assert!(!inside(&tmp.path().join("nowhere"), "a/b"));
    }

    #[test]
    fn a_temporary_name_planted_as_a_symlink_is_not_written_through() {
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        std::os::unix::fs::symlink(&victim, tmp.path().join(".HEAD.bosun-tmp")).unwrap();
        std::os::unix::fs::symlink(&victim, tmp.path().join("HEAD")).unwrap();
        replace_file(tmp.path(), "HEAD", b"ref: refs/heads/x\n").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("HEAD")).unwrap(),
            "ref: refs/heads/x\n"
        );
        assert_eq!(read_small(&victim), Some(b"keep".to_vec()));
        std::fs::remove_file(tmp.path().join("HEAD")).unwrap();
        std::os::unix::fs::symlink(&victim, tmp.path().join("HEAD")).unwrap();
        assert_eq!(
            read_small(&tmp.path().join("HEAD")),
            None,
            "symlinks are not read"
        );
    }
}
