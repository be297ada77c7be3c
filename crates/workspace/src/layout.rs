//! Where Bosun keeps a repository's task worktrees and their private state under `$BOSUN_HOME`.
//!
//! ```text
//! $BOSUN_HOME/worktrees/<repo-key>/<task-id>/        the task's git worktree
//! $BOSUN_HOME/workspace/<repo-key>/repo              the user's repository workdir (for reports)
//! $BOSUN_HOME/workspace/<repo-key>/tasks/<task-id>/  base, index (private), tree, worktree, idle
//! ```

use crate::error::{IoContext, Result, WorkspaceError};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub home: PathBuf,
    pub key: String,
}

impl Layout {
    pub fn new(home: &Path, repo_root: &Path) -> Layout {
        Layout {
            home: home.to_path_buf(),
            // The same repository must map to the same key however its path was spelled.
            key: repo_key(
                &repo_root
                    .canonicalize()
                    .unwrap_or_else(|_| repo_root.to_path_buf()),
            ),
        }
    }

    pub fn worktrees_dir(&self) -> PathBuf {
        self.home.join("worktrees").join(&self.key)
    }
    pub fn worktree_path(&self, task_id: &str) -> PathBuf {
        self.worktrees_dir().join(task_id)
    }
    pub fn state_dir(&self) -> PathBuf {
        self.home.join("workspace").join(&self.key)
    }
    pub fn tasks_dir(&self) -> PathBuf {
        self.state_dir().join("tasks")
    }
    pub fn task_dir(&self, task_id: &str) -> PathBuf {
        self.tasks_dir().join(task_id)
    }
    /// Bosun's own git directory for this repository (see [`crate::owned_git`]).
    pub fn bosun_git_dir(&self) -> PathBuf {
        self.state_dir().join("git")
    }
    /// The task's git directory, which its worktree's `.git` file points to.
    pub fn task_git_dir(&self, task_id: &str) -> PathBuf {
        self.task_dir(task_id).join("git")
    }
    /// Which files of a base tree match a set of rules, found once per tree and rules.
    pub fn base_scan(&self, tree: &str, rules: &str) -> PathBuf {
        self.state_dir()
            .join("base-scans")
            .join(format!("{tree}-{:016x}", fnv1a(rules.as_bytes())))
    }
    /// The private index: stat data and blob ids of the task's latest checkpoint.
    pub fn index_path(&self, task_id: &str) -> PathBuf {
        self.task_dir(task_id).join("index")
    }
    /// The tree id the on-disk private index describes.
    pub fn tree_marker(&self, task_id: &str) -> PathBuf {
        self.task_dir(task_id).join("tree")
    }
    /// Present while the task is released; holds the worktree path.
    pub fn idle_marker(&self, task_id: &str) -> PathBuf {
        self.task_dir(task_id).join("idle")
    }
    pub fn base_file(&self, task_id: &str) -> PathBuf {
        self.task_dir(task_id).join("base")
    }

    /// Creates the state directories and records which repository the key stands for.
    pub fn prepare(&self, task_id: &str, repo_root: &Path) -> Result<()> {
        let dir = self.task_dir(task_id);
        std::fs::create_dir_all(&dir).io_ctx("create directory", &dir)?;
        let wt = self.worktrees_dir();
        std::fs::create_dir_all(&wt).io_ctx("create directory", &wt)?;
        let repo_file = self.state_dir().join("repo");
        if !repo_file.exists() {
            write_atomic(&repo_file, repo_root.to_string_lossy().as_bytes())?;
        }
        Ok(())
    }
}

/// `<dir name>-<16 hex digits of FNV-1a of the path>`: stable, readable, collision-safe enough.
pub(crate) fn repo_key(repo_root: &Path) -> String {
    let hash = fnv1a(repo_root.to_string_lossy().as_bytes());
    let name: String = repo_root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "repo".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!("{name}-{hash:016x}")
}

/// 64-bit FNV-1a: a stable short name for a longer text (not a security hash).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

pub(crate) fn validate_task_id(task_id: &str) -> Result<()> {
    let ok = !task_id.is_empty()
        && task_id.len() <= 100
        && !task_id.starts_with(['.', '-'])
        && !task_id.ends_with(".lock")
        && !task_id.contains("..")
        && task_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(WorkspaceError::InvalidTaskId(task_id.to_string()))
    }
}

/// Writes through a temporary file and a rename, so readers never see half a file. The
/// temporary name is this writer's own (process and call): two tasks starting at once on one
/// repository both write its `repo` file, and a shared name let the second rename find its file
/// already moved (`bosun bench batch` at concurrency 4 hit it).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.{n}.tmp", std::process::id()));
    let tmp = path.with_file_name(name);
    if let Err(e) = std::fs::write(&tmp, bytes) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).io_ctx("write", &tmp);
    }
    std::fs::rename(&tmp, path).or_else(|e| {
        let _ = std::fs::remove_file(&tmp);
        Err(e).io_ctx("replace", path)
    })
}

pub(crate) fn read_trimmed(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn writers_racing_on_one_file_all_succeed_and_leave_one_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("repo");
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        write_atomic(&path, format!("writer {i}").as_bytes()).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .starts_with("writer ")
        );
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left behind");
    }
}
