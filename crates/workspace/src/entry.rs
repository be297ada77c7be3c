//! Index entries from the file system: stat data, modes, blob ids.

use crate::error::{IoContext, Result, WorkspaceError};
use git2::{IndexEntry, IndexTime, Oid};
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path};

pub(crate) const MODE_FILE: u32 = 0o100644;
pub(crate) const MODE_EXEC: u32 = 0o100755;
pub(crate) const MODE_LINK: u32 = 0o120000;
pub(crate) const MODE_TREE: i32 = 0o040000;

/// The git mode of a file, or None for what git does not track (directories, sockets, …).
pub(crate) fn git_mode(meta: &Metadata) -> Option<u32> {
    let ft = meta.file_type();
    if ft.is_symlink() {
        Some(MODE_LINK)
    } else if ft.is_file() {
        Some(if meta.mode() & 0o111 != 0 {
            MODE_EXEC
        } else {
            MODE_FILE
        })
    } else {
        None
    }
}

/// An index entry carrying the file's current stat data.
pub(crate) fn index_entry(path: &str, meta: &Metadata, id: Oid, mode: u32) -> IndexEntry {
    // Index fields are 32 bits wide, exactly as git truncates them.
    IndexEntry {
        ctime: IndexTime::new(meta.ctime() as i32, meta.ctime_nsec() as u32),
        mtime: IndexTime::new(meta.mtime() as i32, meta.mtime_nsec() as u32),
        dev: meta.dev() as u32,
        ino: meta.ino() as u32,
        mode,
        uid: meta.uid(),
        gid: meta.gid(),
        file_size: meta.size() as u32,
        id,
        flags: path.len().min(0xfff) as u16,
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    }
}

/// lstat that maps "not there" to None.
pub(crate) fn lstat(path: &Path) -> Result<Option<Metadata>> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(meta)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.raw_os_error() == Some(20) => Ok(None), // ENOTDIR: a parent became a file
        Err(e) => Err(e).io_ctx("read the status of", path),
    }
}

/// Normalises a worktree-relative path to git's form (`a/b`), refusing anything outside the
/// worktree and git's own directory.
pub fn normalise(path: &str) -> Result<String> {
    let invalid = |reason| WorkspaceError::InvalidPath {
        path: path.to_string(),
        reason,
    };
    let mut parts = Vec::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(part) => {
                let part = part.to_str().ok_or_else(|| invalid("it is not UTF-8"))?;
                if part == ".git" {
                    return Err(invalid("it is inside git's own directory"));
                }
                parts.push(part);
            }
            Component::CurDir => {}
            Component::ParentDir => return Err(invalid("it leaves the worktree")),
            Component::RootDir | Component::Prefix(_) => {
                return Err(invalid("it is absolute"));
            }
        }
    }
    Ok(parts.join("/"))
}
