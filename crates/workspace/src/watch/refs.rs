//! Watching the user's branches, so a review notices when the branch its task is based on moves
//! ("main moved 3 commits: rebase?") while it is open.
//!
//! Only what names a branch's tip is watched, in the user's git directory (the repository
//! opened at the path the user gave, never a task's): `HEAD`, `packed-refs`, `reftable/`, and
//! `refs/heads/` with every directory below it (non-recursive inotify watches, one per directory;
//! a directory that appears there is watched as it appears). Lock files (`main.lock`) are git
//! writing, not a change yet; the rename that follows is. Objects, the index and reflogs are not
//! watched, so a `git status` or a fetch of objects wakes nothing.
//!
//! Changes are coalesced: `on_change` runs on the watcher's own thread once nothing more
//! happened for the quiet period, and says only that something may have moved (the caller reads
//! the refs again). Lost events (a queue overflow, a watcher error) count as a change.

use super::backend::{AddError, Backend, Delivery};
use super::events::Seen;
use crate::error::{Result, WorkspaceError};
use crate::task::open_user_repo;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// Watches the branches of one repository while it lives (dropping it stops the watching and
/// its thread).
pub struct RefsWatcher {
    _backend: Arc<Mutex<Backend>>,
}

/// Where a repository's refs live.
#[derive(Clone)]
struct RefPaths {
    /// The (common) git directory: `refs/`, `packed-refs`, `reftable/`.
    common: PathBuf,
    /// The checkout's own git directory (its `HEAD`; the same as `common` but in a linked
    /// worktree).
    git_dir: PathBuf,
}

impl RefPaths {
    fn heads(&self) -> PathBuf {
        self.common.join("refs").join("heads")
    }

    /// Whether a change at `path` may move a branch or HEAD.
    fn names_a_ref(&self, path: &Path) -> bool {
        if path.extension().is_some_and(|e| e == "lock") {
            return false;
        }
        let top = |dir: &Path, names: &[&str]| {
            path.parent() == Some(dir)
                && path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| names.contains(&n))
        };
        top(&self.common, &["HEAD", "packed-refs", "reftable"])
            || top(&self.git_dir, &["HEAD"])
            || top(&self.common.join("refs"), &["heads"])
            || path.starts_with(self.heads())
            || path.starts_with(self.common.join("reftable"))
    }

    /// The directories to watch now.
    fn dirs(&self) -> Vec<PathBuf> {
        let mut dirs = vec![self.common.clone(), self.common.join("refs")];
        if self.git_dir != self.common {
            dirs.push(self.git_dir.clone());
        }
        let reftable = self.common.join("reftable");
        if reftable.is_dir() {
            dirs.push(reftable);
        }
        dirs.extend(dirs_below(&self.heads()));
        dirs
    }
}

/// `dir` and every directory below it (never through a symlink); none when it is not one.
fn dirs_below(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if !std::fs::symlink_metadata(&d).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        if let Ok(entries) = std::fs::read_dir(&d) {
            stack.extend(
                entries
                    .flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .map(|e| e.path()),
            );
        }
        found.push(d);
    }
    found
}

/// What the event thread hands on.
enum Noticed {
    /// A ref may have moved; a directory that appeared here is to be watched.
    Ref(PathBuf, Seen),
    Lost,
}

impl RefsWatcher {
    /// Starts watching the branches of the repository at `repo_root`; `on_change` runs (on a
    /// thread of the watcher's) once changes have been quiet for `quiet`.
    pub fn start(
        repo_root: &Path,
        quiet: Duration,
        on_change: impl FnMut() + Send + 'static,
    ) -> Result<RefsWatcher> {
        let repo = open_user_repo(repo_root)?;
        let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        let paths = RefPaths {
            common: real(repo.commondir()),
            git_dir: real(repo.path()),
        };
        drop(repo);
        let unavailable = |reason: String| WorkspaceError::WatchUnavailable {
            repo: repo_root.to_path_buf(),
            reason,
        };
        let (tx, rx) = mpsc::channel::<Noticed>();
        let interest = paths.clone();
        let backend = Backend::start(move |d| {
            let noticed = match d {
                Delivery::Path(path, seen) if interest.names_a_ref(&path) => {
                    Noticed::Ref(path, seen)
                }
                Delivery::Path(..) => return,
                Delivery::Lost | Delivery::Failed => Noticed::Lost,
            };
            let _ = tx.send(noticed);
        })
        .map_err(unavailable)?;
        let backend = Arc::new(Mutex::new(backend));
        {
            let mut b = backend
                .lock()
                .map_err(|_| unavailable("the watcher failed".into()))?;
            b.add(paths.dirs()).map_err(|e| {
                unavailable(match e {
                    AddError::Limit { .. } => {
                        "the kernel's limit on inotify watches is reached".into()
                    }
                    AddError::Failed(why) => why,
                })
            })?;
        }
        let weak = Arc::downgrade(&backend);
        std::thread::Builder::new()
            .name("bosun-refs-watch".into())
            .spawn(move || follow(rx, weak, paths, quiet, on_change))
            .map_err(|e| unavailable(e.to_string()))?;
        Ok(RefsWatcher { _backend: backend })
    }
}

/// The watcher's thread: until the watcher is dropped (the channel closes), waits for a change,
/// watches the directories that appeared, lets the burst go quiet, then says so.
fn follow(
    rx: mpsc::Receiver<Noticed>,
    backend: Weak<Mutex<Backend>>,
    paths: RefPaths,
    quiet: Duration,
    mut on_change: impl FnMut(),
) {
    let watch_new = |noticed: &Noticed| {
        let Noticed::Ref(path, Seen::Appeared | Seen::Unknown) = noticed else {
            return;
        };
        if !(path.starts_with(paths.heads()) || path.starts_with(paths.common.join("reftable"))) {
            return;
        }
        let dirs = dirs_below(path);
        if dirs.is_empty() {
            return;
        }
        if let Some(backend) = backend.upgrade()
            && let Ok(mut b) = backend.lock()
        {
            let _ = b.add(dirs);
        }
    };
    while let Ok(first) = rx.recv() {
        watch_new(&first);
        loop {
            match rx.recv_timeout(quiet) {
                Ok(more) => watch_new(&more),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        on_change();
    }
}
