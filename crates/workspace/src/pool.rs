//! Released worktrees: kept idle (a bounded number per repository) and recycled for later tasks,
//! so a new task starts by rewriting only the files that differ instead of a full checkout.

use crate::entry::{index_entry, lstat};
use crate::error::{GitContext, IoContext, Result, WorkspaceError};
use crate::gitwt;
use crate::layout::{Layout, read_trimmed, write_atomic};
use crate::materialise::{remove_path, switch_files, write_blob};
use crate::owned_git::{bosun_git_dir, forget_linked_registration};
use crate::safe_fs::remove_any;
use crate::scan::candidates_from_git;
use crate::task::{ChangeHint, TaskWorktree, latest_checkpoint, tree_of};
use git2::{Index, Oid, Repository};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Released worktrees kept per repository; older ones are removed.
pub const DEFAULT_MAX_IDLE_PER_REPO: usize = 2;

#[derive(Debug, Clone)]
pub(crate) struct IdleWorktree {
    pub task_id: String,
    pub worktree: PathBuf,
    released: SystemTime,
}

/// Disk used by Bosun's task worktrees, for `bosun worktrees`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiskUsage {
    pub worktrees: Vec<WorktreeUsage>,
    pub idle_count: usize,
    pub in_use_count: usize,
    pub idle_bytes: u64,
    pub in_use_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeUsage {
    /// The user's repository it belongs to, when known.
    pub repo: Option<PathBuf>,
    pub task_id: String,
    pub path: PathBuf,
    /// Released: may be recycled for a later task or removed.
    pub idle: bool,
    pub bytes: u64,
}

impl TaskWorktree {
    /// The task is finished: its final state is checkpointed and its worktree may be recycled.
    pub fn release(self) -> Result<()> {
        self.release_keeping(DEFAULT_MAX_IDLE_PER_REPO)
    }

    /// [`TaskWorktree::release`], keeping at most `max_idle` idle worktrees for this repository.
    pub fn release_keeping(mut self, max_idle: usize) -> Result<()> {
        if self.worktree.is_dir() {
            // The final state is walked, never taken from the watcher's events alone.
            self.unwatch();
            self.checkpoint(&ChangeHint::Unknown, "Final state")?;
            self.flush_index()?;
            let marker = self.layout.idle_marker(&self.task_id);
            write_atomic(&marker, self.worktree.to_string_lossy().as_bytes())?;
        }
        let layout = self.layout.clone();
        drop(self);
        remove_idle(&layout, max_idle).map(|_| ())
    }
}

/// Removes idle worktrees of `repo_root` beyond the newest `keep`; returns the removed paths.
pub fn remove_idle_worktrees(home: &Path, repo_root: &Path, keep: usize) -> Result<Vec<PathBuf>> {
    remove_idle(&Layout::new(home, repo_root), keep)
}

fn remove_idle(layout: &Layout, keep: usize) -> Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    let idle = idle_tasks(layout);
    if idle.len() <= keep {
        return Ok(removed);
    }
    let Some(repo_root) = read_trimmed(&layout.state_dir().join("repo")) else {
        return Ok(removed);
    };
    let user = crate::task::open_user_repo(Path::new(&repo_root))?;
    for idle in idle.into_iter().skip(keep) {
        if claim(layout, &idle.task_id) {
            discard(layout, &user, &idle.task_id, &idle.worktree)?;
            removed.push(idle.worktree);
        }
    }
    Ok(removed)
}

/// Idle worktrees of this repository, most recently released first.
pub(crate) fn idle_tasks(layout: &Layout) -> Vec<IdleWorktree> {
    let Ok(dir) = std::fs::read_dir(layout.tasks_dir()) else {
        return Vec::new();
    };
    let mut out: Vec<IdleWorktree> = dir
        .flatten()
        .filter_map(|entry| {
            let task_id = entry.file_name().to_str()?.to_string();
            let marker = layout.idle_marker(&task_id);
            let released = std::fs::metadata(&marker).and_then(|m| m.modified()).ok()?;
            let worktree = PathBuf::from(read_trimmed(&marker)?);
            Some(IdleWorktree {
                task_id,
                worktree,
                released,
            })
        })
        .collect();
    out.sort_by_key(|idle| std::cmp::Reverse(idle.released));
    out
}

fn claimed_marker(layout: &Layout, task_id: &str) -> PathBuf {
    layout.task_dir(task_id).join("idle.claimed")
}

/// Takes an idle worktree out of the pool; false if someone else took it first.
pub(crate) fn claim(layout: &Layout, task_id: &str) -> bool {
    std::fs::rename(layout.idle_marker(task_id), claimed_marker(layout, task_id)).is_ok()
}

/// A released task is being worked on again.
pub(crate) fn unidle(layout: &Layout, task_id: &str) {
    let _ = std::fs::remove_file(layout.idle_marker(task_id));
}

/// Deletes an idle worktree and the private state that only served it.
pub(crate) fn discard(
    layout: &Layout,
    user: &Repository,
    task_id: &str,
    worktree: &Path,
) -> Result<()> {
    gitwt::remove(layout, user, task_id, worktree)?;
    forget_worktree_state(layout, task_id);
    Ok(())
}

fn forget_worktree_state(layout: &Layout, task_id: &str) {
    for path in [
        layout.index_path(task_id),
        layout.tree_marker(task_id),
        claimed_marker(layout, task_id),
    ] {
        let _ = std::fs::remove_file(path);
    }
}

/// Puts a claimed worktree back into the pool (it could not be recycled now).
fn unclaim(layout: &Layout, task_id: &str) {
    let _ = std::fs::rename(claimed_marker(layout, task_id), layout.idle_marker(task_id));
}

/// Turns the idle worktree of `old` into `new_task`'s at `new_path` holding the tree `target`:
/// only the files that differ are rewritten, and so is anything changed since the old task's
/// final checkpoint (so nothing of the old task is credited to the new one). The old task's git
/// directory is deleted; the caller gives the worktree a new one.
pub(crate) fn recycle_into(
    layout: &Layout,
    user: &Repository,
    old: &IdleWorktree,
    new_task: &str,
    new_path: &Path,
    target: Oid,
) -> Result<()> {
    if !old.worktree.is_dir() {
        return Err(WorkspaceError::WorktreeVanished {
            task_id: old.task_id.clone(),
            path: old.worktree.clone(),
        });
    }
    if let Some(pid) = process_inside(&old.worktree) {
        return Err(WorkspaceError::WorktreeBusy {
            path: old.worktree.clone(),
            pid,
        });
    }
    // What the old worktree holds: its latest checkpoint (written at release), else its base.
    let held = match latest_checkpoint(user, &old.task_id)? {
        Some((_, commit)) => commit,
        None => read_trimmed(&layout.base_file(&old.task_id))
            .and_then(|s| Oid::from_str(&s).ok())
            .ok_or_else(|| WorkspaceError::WorktreeVanished {
                task_id: old.task_id.clone(),
                path: old.worktree.clone(),
            })?,
    };
    let from = tree_of(user, held)?;
    let old_index = layout.index_path(&old.task_id);
    let mut index = Index::open(&old_index).git_ctx("opening the private index")?;
    if read_trimmed(&layout.tree_marker(&old.task_id)) != Some(from.id().to_string()) {
        index
            .read_tree(&from)
            .git_ctx("rebuilding the private index")?;
        index.write().git_ctx("writing the private index")?;
    }
    // Whatever differs from that checkpoint (written after it) is put right too.
    let git_dir = bosun_git_dir(layout, user)?;
    let dirty = candidates_from_git(&git_dir, &old.worktree, &old_index).unwrap_or_default();
    let to = user.find_tree(target).git_ctx("reading the target tree")?;
    let touched = switch_files(user, &old.worktree, &mut index, &from, &to)?;
    for path in dirty.iter().filter(|p| touched.binary_search(p).is_err()) {
        reset_path(user, &old.worktree, &mut index, &to, path)?;
    }
    index.write().git_ctx("writing the private index")?;
    let new_index = layout.index_path(new_task);
    std::fs::rename(&old_index, &new_index).io_ctx("move private index to", &new_index)?;
    write_atomic(&layout.tree_marker(new_task), target.to_string().as_bytes())?;
    forget_worktree_state(layout, &old.task_id);
    remove_any(&layout.task_git_dir(&old.task_id))?;
    forget_linked_registration(user, &old.task_id, &old.worktree);
    std::fs::rename(&old.worktree, new_path).io_ctx("move worktree to", new_path)?;
    Ok(())
}

/// Recycles the most recently released worktree of this repository that can be recycled into
/// `new_task`'s at `new_path` holding `target`; returns the task (or spare) it came from, None
/// when there was none. One still in use by a process goes back to the pool; one that cannot be
/// recycled (vanished, broken) is discarded.
pub(crate) fn recycle_newest(
    layout: &Layout,
    user: &Repository,
    new_task: &str,
    new_path: &Path,
    target: Oid,
) -> Result<Option<String>> {
    for idle in idle_tasks(layout) {
        if !claim(layout, &idle.task_id) {
            continue;
        }
        match recycle_into(layout, user, &idle, new_task, new_path, target) {
            Ok(()) => return Ok(Some(idle.task_id)),
            Err(WorkspaceError::WorktreeBusy { .. }) => unclaim(layout, &idle.task_id),
            Err(_) => discard(layout, user, &idle.task_id, &idle.worktree)?,
        }
    }
    Ok(None)
}

/// Makes `path` in the worktree what `tree` holds there (or absent), and the index agree.
fn reset_path(
    user: &Repository,
    worktree: &Path,
    index: &mut Index,
    tree: &git2::Tree<'_>,
    path: &str,
) -> Result<()> {
    let entry = tree
        .get_path(Path::new(path))
        .ok()
        .filter(|e| e.kind() == Some(git2::ObjectType::Blob));
    match entry {
        Some(e) => {
            let mode = e.filemode() as u32;
            write_blob(user, worktree, path, e.id(), mode)?;
            if let Some(meta) = lstat(&worktree.join(path))? {
                index
                    .add(&index_entry(path, &meta, e.id(), mode))
                    .git_ctx("updating the private index")?;
            }
        }
        None => {
            remove_path(worktree, path)?;
            if index.get_path(Path::new(path), 0).is_some() {
                index
                    .remove_path(Path::new(path))
                    .git_ctx("updating the private index")?;
            }
        }
    }
    Ok(())
}

/// A process (other than Bosun itself) whose working directory, root or an open file is inside
/// `dir`: an earlier task's process still running there. Read from /proc (Linux); elsewhere
/// none is found.
pub(crate) fn process_inside(dir: &Path) -> Option<u32> {
    let own = std::process::id();
    let procs = std::fs::read_dir("/proc").ok()?;
    for entry in procs.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == own {
            continue;
        }
        let base = entry.path();
        let links = ["cwd", "root"]
            .into_iter()
            .filter_map(|l| std::fs::read_link(base.join(l)).ok());
        let fds = std::fs::read_dir(base.join("fd"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|fd| std::fs::read_link(fd.path()).ok());
        if links.chain(fds).any(|target| target.starts_with(dir)) {
            return Some(pid);
        }
    }
    None
}

/// Idle and in-use worktrees under `$BOSUN_HOME/worktrees`, with their sizes.
pub fn worktree_disk_usage(home: &Path) -> Result<DiskUsage> {
    let mut usage = DiskUsage::default();
    let root = home.join("worktrees");
    let Ok(repos) = std::fs::read_dir(&root) else {
        return Ok(usage);
    };
    for repo_dir in repos.flatten() {
        let key = repo_dir.file_name().to_string_lossy().into_owned();
        let layout = Layout {
            home: home.to_path_buf(),
            key,
        };
        let repo = read_trimmed(&layout.state_dir().join("repo")).map(PathBuf::from);
        let Ok(tasks) = std::fs::read_dir(repo_dir.path()) else {
            continue;
        };
        for task in tasks.flatten() {
            let task_id = task.file_name().to_string_lossy().into_owned();
            let path = task.path();
            let idle = layout.idle_marker(&task_id).exists();
            let bytes = dir_size(&path)?;
            if idle {
                usage.idle_count += 1;
                usage.idle_bytes += bytes;
            } else {
                usage.in_use_count += 1;
                usage.in_use_bytes += bytes;
            }
            usage.worktrees.push(WorktreeUsage {
                repo: repo.clone(),
                task_id,
                path,
                idle,
                bytes,
            });
        }
    }
    usage.worktrees.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(usage)
}

pub(crate) fn dir_size(path: &Path) -> Result<u64> {
    let mut total = 0;
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let meta = entry.metadata().io_ctx("read the size of", &entry.path())?;
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                total += meta.len();
            }
        }
    }
    Ok(total)
}
