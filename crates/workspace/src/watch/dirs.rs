//! Which directories of a worktree are watched: those an ignore-aware walk enters (the rules a
//! command checkpoint's stat walk applies: every `.gitignore`, the `info/exclude` of Bosun's own
//! git directory, the user's `core.excludesFile`), plus every directory holding a file of the
//! latest checkpoint (a tracked file stays tracked even where it is ignored). `.git` is never
//! entered, at any depth.
//!
//! The worktree's own `.git` file, and the task's git directory it names, are never read for
//! rules: the task writes them, and the stat walk does not read them either.

use crate::git_cli::user_excludes_file;
use crate::safe_fs::Reachable;
use git2::{ObjectType, Tree, TreeWalkMode, TreeWalkResult};
use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The ignore files outside the worktree that the stat walk reads.
#[derive(Debug, Clone)]
pub(crate) struct IgnoreFiles {
    /// Lowest precedence first: `core.excludesFile`, then `info/exclude` (as in git).
    files: Vec<PathBuf>,
}

impl IgnoreFiles {
    pub fn new(bosun_git_dir: &Path) -> IgnoreFiles {
        let mut files = Vec::new();
        // Without `core.excludesFile`, git reads `$XDG_CONFIG_HOME/git/ignore` (the stat walk's
        // git keeps XDG_CONFIG_HOME and HOME for it).
        let default = || {
            let config = std::env::var_os("XDG_CONFIG_HOME")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
            Some(config.join("git/ignore"))
        };
        files.extend(user_excludes_file().or_else(default));
        files.push(bosun_git_dir.join("info/exclude"));
        IgnoreFiles { files }
    }

    /// What the files are now (size, mtime, inode; None where missing), to notice a change.
    pub fn stamp(&self) -> Vec<Option<(u64, i64, i64, u64)>> {
        self.files
            .iter()
            .map(|f| {
                std::fs::metadata(f)
                    .ok()
                    .map(|m| (m.len(), m.mtime(), m.mtime_nsec(), m.ino()))
            })
            .collect()
    }
}

/// What a walk found: directories (worktree-relative, "" for the root), parents first.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub dirs: Vec<String>,
}

/// The directories an ignore-aware walk of `root` enters. With `only`, the walk goes down to and
/// into those directories alone (the rules of every directory above them still apply), for
/// directories that appeared after the watch began.
pub(crate) fn walk(root: &Path, rules: &IgnoreFiles, only: Option<&BTreeSet<String>>) -> Found {
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .standard_filters(false)
        .git_ignore(true)
        .require_git(false)
        .follow_links(false)
        .current_dir(root);
    for file in &rules.files {
        if file.is_file() {
            // A file that does not parse in part still gives the rest of its rules.
            let _ = builder.add_ignore(file);
        }
    }
    let root_owned = root.to_path_buf();
    let only: Option<Arc<BTreeSet<String>>> = only.map(|o| Arc::new(o.clone()));
    let filter = only.clone();
    builder.filter_entry(move |entry| {
        if entry.file_name() == ".git" {
            return false;
        }
        match &filter {
            None => true,
            Some(only) => {
                let rel = relative(&root_owned, entry.path());
                rel.is_some_and(|rel| on_the_way(only, &rel))
            }
        }
    });
    let found = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&found);
    let root_owned = root.to_path_buf();
    builder.threads(2).build_parallel().run(|| {
        let sink = Arc::clone(&sink);
        let root = root_owned.clone();
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return ignore::WalkState::Continue;
            };
            if entry.file_type().is_some_and(|t| t.is_dir())
                && let Some(rel) = relative(&root, entry.path())
                && let Ok(mut sink) = sink.lock()
            {
                sink.push(rel);
            }
            ignore::WalkState::Continue
        })
    });
    let mut dirs = match Arc::try_unwrap(found) {
        Ok(m) => m.into_inner().unwrap_or_default(),
        Err(shared) => shared.lock().map(|d| d.clone()).unwrap_or_default(),
    };
    if let Some(only) = only {
        // The directories above them are watched already.
        dirs.retain(|d| inside_any(&only, d));
    }
    // Parents sort before their children.
    dirs.sort();
    dirs.dedup();
    Found { dirs }
}

/// Whether `rel` lies on the way to one of `only` (an ancestor of it) or inside one of them.
fn on_the_way(only: &BTreeSet<String>, rel: &str) -> bool {
    if rel.is_empty() {
        return true;
    }
    // An ancestor: some entry of `only` starts with `rel/`.
    let prefix = format!("{rel}/");
    let above = only
        .range(prefix.clone()..)
        .next()
        .is_some_and(|o| o.starts_with(&prefix));
    above || inside_any(only, rel)
}

/// Whether `rel` is one of `only` or below one of them.
pub(crate) fn inside_any(only: &BTreeSet<String>, rel: &str) -> bool {
    if only.contains("") {
        return true;
    }
    let mut at = rel;
    loop {
        if only.contains(at) {
            return true;
        }
        match at.rfind('/') {
            Some(i) => at = &at[..i],
            None => return false,
        }
    }
}

/// `path` relative to `root`, as UTF-8 ("" for the root). None for a path outside the root or one
/// that is not UTF-8 (git's paths are, for Bosun).
pub(crate) fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    rel.to_str().map(str::to_string)
}

/// The directories of `tree` that exist in the worktree as real directories (reached through
/// real directories only) and that `known` does not hold yet.
pub(crate) fn tree_dirs(root: &Path, tree: &Tree<'_>, known: &BTreeSet<String>) -> Vec<String> {
    let mut dirs = Vec::new();
    let _ = tree.walk(TreeWalkMode::PreOrder, |parent, entry| {
        if entry.kind() == Some(ObjectType::Tree)
            && let Ok(name) = entry.name()
        {
            dirs.push(format!("{parent}{name}"));
        }
        TreeWalkResult::Ok
    });
    let mut reachable = Reachable::default();
    dirs.retain(|d| {
        !known.contains(d)
            && reachable.check(root, d)
            && std::fs::symlink_metadata(root.join(d)).is_ok_and(|m| m.is_dir())
    });
    dirs
}

/// The directories that hold a nested repository (a `.git` of their own), among `dirs`.
pub(crate) fn nested_repositories<'a>(
    root: &Path,
    dirs: impl Iterator<Item = &'a String>,
) -> BTreeSet<String> {
    dirs.filter(|d| !d.is_empty())
        .filter(|d| std::fs::symlink_metadata(root.join(d).join(".git")).is_ok())
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_for_new_directories_goes_down_to_them_and_into_them_only() {
        let only: BTreeSet<String> = ["a/b".to_string(), "c".to_string()].into();
        assert!(on_the_way(&only, ""));
        assert!(on_the_way(&only, "a"));
        assert!(on_the_way(&only, "a/b"));
        assert!(on_the_way(&only, "a/b/x/y"));
        assert!(on_the_way(&only, "c/d"));
        assert!(!on_the_way(&only, "a/bb"));
        assert!(!on_the_way(&only, "a/x"));
        assert!(!on_the_way(&only, "cc"));
    }
}
