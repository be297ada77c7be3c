//! Finding what changed in a worktree since the latest checkpoint, against the private index.
//!
//! Edit tools name their paths, so only those are looked at and hashed. After a command, the
//! tree is walked comparing the stat data the private index keeps (size, mtime, ctime, inode):
//! by `git diff-files` + `git ls-files --others` against the private index (git stats in
//! parallel), or libgit2's index-to-workdir diff when git is missing. Only files whose stat
//! changed, plus new untracked files, are hashed; ignored files (.gitignore, .git/info/exclude,
//! core.excludesFile) are skipped exactly as git does.

use crate::blobs::Blobs;
use crate::entry::{git_mode, index_entry, lstat, normalise};
use crate::error::{GitContext, IoContext, Result};
use crate::git_cli::{GitCall, Running, SCAN_TIMEOUT, user_excludes_file};
use crate::safe_fs;
use crate::tree_edit::Change;
use git2::{
    Delta, DiffOptions, Index, IndexEntry, ObjectType, Oid, Repository, Tree, TreeWalkMode,
    TreeWalkResult,
};
use std::collections::BTreeMap;
use std::fs::Metadata;
use std::path::Path;

/// What a scan found: new states per changed path, and entries whose stat data merely went stale.
#[derive(Default)]
pub(crate) struct Scan {
    pub changed: BTreeMap<String, Option<IndexEntry>>,
    pub refreshed: Vec<IndexEntry>,
}

impl Scan {
    pub fn changes(&self) -> Vec<Change> {
        self.changed
            .iter()
            .map(|(path, entry)| (path.clone(), entry.as_ref().map(|e| (e.id, e.mode))))
            .collect()
    }

    /// Records what was found as pending private-index entries.
    pub fn record_in(self, pending: &mut BTreeMap<String, Option<IndexEntry>>) {
        for entry in self.refreshed {
            pending.insert(
                String::from_utf8_lossy(&entry.path).into_owned(),
                Some(entry),
            );
        }
        pending.extend(self.changed);
    }

    /// Brings the index up to date with what was found.
    pub fn apply_to(&self, index: &mut Index) -> Result<()> {
        for entry in &self.refreshed {
            index.add(entry).git_ctx("updating the private index")?;
        }
        for (path, entry) in &self.changed {
            match entry {
                Some(entry) => index.add(entry).git_ctx("updating the private index")?,
                None => {
                    if index.get_path(Path::new(path), 0).is_some() {
                        index
                            .remove_path(Path::new(path))
                            .git_ctx("updating the private index")?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Looks only at `paths` (already normalised), comparing them with the latest checkpoint's
/// tree; a path that is now a directory is walked.
pub(crate) fn scan_paths(
    blobs: &mut Blobs<'_>,
    latest: &Tree<'_>,
    paths: &[String],
    check_ignored: bool,
) -> Result<Scan> {
    let (repo, worktree) = (blobs.repo(), blobs.worktree());
    let mut scan = Scan::default();
    let mut walk = Vec::new();
    let mut reachable = safe_fs::Reachable::default();
    for path in paths {
        if path.is_empty() {
            walk.push(String::new());
            continue;
        }
        let (known, below) = in_tree(repo, latest, path)?;
        // Behind a symlinked directory a path is not in the worktree (git sees it so too).
        let meta = if reachable.check(worktree, path) {
            lstat(&worktree.join(path))?
        } else {
            None
        };
        match meta
            .map(|m| strip_set_id(&worktree.join(path), m))
            .transpose()?
        {
            None => {
                if known.is_some() {
                    scan.changed.insert(path.clone(), None);
                }
                for p in below {
                    scan.changed.insert(p, None);
                }
            }
            Some(meta) => match git_mode(&meta) {
                Some(mode) => {
                    for p in below {
                        scan.changed.insert(p, None);
                    }
                    // Tracked files stay tracked even when ignored, as in git.
                    if known.is_none()
                        && check_ignored
                        && repo
                            .is_path_ignored(path)
                            .git_ctx(format!("checking whether {path} is ignored"))?
                    {
                        continue;
                    }
                    let id = blobs.hash(path, &meta, known.map(|(id, _)| id))?;
                    let entry = index_entry(path, &meta, id, mode);
                    if known == Some((id, mode)) {
                        scan.refreshed.push(entry);
                    } else {
                        scan.changed.insert(path.clone(), Some(entry));
                    }
                }
                None => {
                    if known.is_some() {
                        scan.changed.insert(path.clone(), None);
                    }
                    if meta.is_dir() {
                        walk.push(path.clone());
                    }
                }
            },
        }
    }
    if !walk.is_empty() {
        // A tool named a directory, or one appeared under a watch: walk just those directories
        // against what the tree holds below them.
        let index = index_below(repo, latest, &walk)?;
        let walked = scan_tree(blobs, &index, &walk, false)?;
        scan.changed.extend(walked.changed);
    }
    Ok(scan)
}

/// An index of the blobs `tree` holds below `dirs` (all of it for the root), without stat
/// data: what a walk of those directories is compared with.
fn index_below(repo: &Repository, tree: &Tree<'_>, dirs: &[String]) -> Result<Index> {
    let mut index = Index::new().git_ctx("creating an index")?;
    if dirs.iter().any(String::is_empty) {
        index
            .read_tree(tree)
            .git_ctx("reading the latest checkpoint")?;
        return Ok(index);
    }
    let mut blobs: Vec<(String, Oid, u32)> = Vec::new();
    for dir in dirs {
        let Ok(entry) = tree.get_path(Path::new(dir)) else {
            continue;
        };
        if entry.kind() != Some(ObjectType::Tree) {
            continue;
        }
        let sub = repo
            .find_tree(entry.id())
            .git_ctx(format!("reading the tree {dir}"))?;
        sub.walk(TreeWalkMode::PreOrder, |root, e| {
            if e.kind() != Some(ObjectType::Tree)
                && let Ok(name) = e.name()
            {
                blobs.push((format!("{dir}/{root}{name}"), e.id(), e.filemode() as u32));
            }
            TreeWalkResult::Ok
        })
        .git_ctx(format!("listing the tree {dir}"))?;
    }
    let zero = git2::IndexTime::new(0, 0);
    for (path, id, mode) in blobs {
        let entry = IndexEntry {
            ctime: zero,
            mtime: zero,
            dev: 0,
            ino: 0,
            mode,
            uid: 0,
            gid: 0,
            file_size: 0,
            id,
            flags: 0,
            flags_extended: 0,
            path: path.into_bytes(),
        };
        index.add(&entry).git_ctx("building an index")?;
    }
    Ok(index)
}

/// A blob's id and git mode.
type Blob = (Oid, u32);

/// The blob at `path` in `tree` (id, mode), and the blobs below it if it is a directory.
fn in_tree(repo: &Repository, tree: &Tree<'_>, path: &str) -> Result<(Option<Blob>, Vec<String>)> {
    let Ok(entry) = tree.get_path(Path::new(path)) else {
        return Ok((None, Vec::new()));
    };
    if entry.kind() != Some(ObjectType::Tree) {
        return Ok((Some((entry.id(), entry.filemode() as u32)), Vec::new()));
    }
    let sub = repo
        .find_tree(entry.id())
        .git_ctx(format!("reading the tree {path}"))?;
    let mut below = Vec::new();
    sub.walk(TreeWalkMode::PreOrder, |root, e| {
        let is_blob = e.kind() != Some(ObjectType::Tree);
        match e.name() {
            Ok(name) if is_blob => below.push(format!("{path}/{root}{name}")),
            _ => {}
        }
        TreeWalkResult::Ok
    })
    .git_ctx(format!("listing the tree {path}"))?;
    Ok((None, below))
}

/// Walks the worktree (or the given directories) comparing stat data with the index.
/// `update_stat` lets libgit2 refresh (and write) stale-but-unchanged entries in the index.
pub(crate) fn scan_tree(
    blobs: &mut Blobs<'_>,
    index: &Index,
    dirs: &[String],
    update_stat: bool,
) -> Result<Scan> {
    let (repo, worktree) = (blobs.repo(), blobs.worktree());
    let mut opts = DiffOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_typechange(true)
        .ignore_submodules(true)
        .update_index(update_stat);
    // Directory names, not patterns: `pages/[id]` is that directory alone.
    opts.disable_pathspec_match(true);
    for dir in dirs.iter().filter(|d| !d.is_empty()) {
        opts.pathspec(dir);
    }
    let diff = repo
        .diff_index_to_workdir(Some(index), Some(&mut opts))
        .git_ctx("comparing the worktree with the latest checkpoint")?;
    let mut found: Vec<(String, bool)> = Vec::new();
    for delta in diff.deltas() {
        let (file, present) = match delta.status() {
            Delta::Deleted => (delta.old_file(), false),
            Delta::Added | Delta::Untracked | Delta::Modified | Delta::Typechange => {
                (delta.new_file(), true)
            }
            _ => continue,
        };
        if let Some(path) = file.path().and_then(|p| p.to_str()) {
            found.push((path.trim_end_matches('/').to_string(), present));
        }
    }
    drop(diff);
    let mut scan = Scan::default();
    for (path, present) in found {
        if !present {
            scan.changed.insert(path, None);
            continue;
        }
        let Some(meta) = lstat(&worktree.join(&path))? else {
            if index.get_path(Path::new(&path), 0).is_some() {
                scan.changed.insert(path, None);
            }
            continue;
        };
        let meta = strip_set_id(&worktree.join(&path), meta)?;
        // Nested repositories show up as untracked directories: git does not descend either.
        let Some(mode) = git_mode(&meta) else {
            continue;
        };
        let id = blobs.hash(&path, &meta, None)?;
        let entry = index_entry(&path, &meta, id, mode);
        scan.changed.insert(path, Some(entry));
    }
    Ok(scan)
}

/// Paths that may have changed since the private index was written, from the git CLI (which
/// stats in parallel): tracked files whose stat data differs, and untracked files that are not
/// ignored. The calls run on Bosun's own git directory (see [`crate::git_cli`]), never on the
/// worktree's `.git`. None when git is not installed or fails, so the caller walks with libgit2.
pub(crate) fn candidates_from_git(
    git_dir: &Path,
    worktree: &Path,
    index_file: &Path,
) -> Option<Vec<String>> {
    let excludes = user_excludes_file();
    let git = |args: &[&str]| {
        let mut cmd = GitCall::new(git_dir)
            .work_tree(worktree)
            .index(index_file)
            .excludes_file(excludes.clone())
            .command();
        cmd.args(args);
        Running::spawn(cmd).ok()
    };
    let deadline = std::time::Instant::now() + SCAN_TIMEOUT;
    let modified = git(&["diff-files", "--name-only", "-z", "--ignore-submodules"])?;
    let untracked = git(&["ls-files", "--others", "--exclude-standard", "-z"])?;
    let mut paths = Vec::new();
    for child in [modified, untracked] {
        let output = child.wait(deadline).ok()?;
        if !output.status.success() {
            return None;
        }
        for raw in output.stdout.split(|b| *b == 0).filter(|p| !p.is_empty()) {
            let path = String::from_utf8_lossy(raw);
            paths.push(normalise(&path).ok()?);
        }
    }
    paths.sort();
    paths.dedup();
    Some(paths)
}

/// A file a task made setuid or setgid does not stay so on the host: the bits are cleared
/// before the file is recorded. Returns the file's status as it now is.
pub(crate) fn strip_set_id(abs: &Path, meta: Metadata) -> Result<Metadata> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if !meta.is_file() || meta.mode() & 0o6000 == 0 {
        return Ok(meta);
    }
    let perms = std::fs::Permissions::from_mode(meta.mode() & 0o777);
    std::fs::set_permissions(abs, perms).io_ctx("clear the set-id bits of", abs)?;
    std::fs::symlink_metadata(abs).io_ctx("read the status of", abs)
}
