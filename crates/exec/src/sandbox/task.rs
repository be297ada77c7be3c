//! The policy for a task's commands: its worktree, its temp dir and its own git state, with
//! the user's checkout and git directory out of reach.
//!
//! The git paths come from Bosun ([`TaskGit`]), never from the worktree: the worktree is
//! written by the agent, its `.git` file included, so reading it would let a command choose
//! what becomes writable (`gitdir: /home/user`). A task has a private git directory (HEAD,
//! index, refs, config, the objects of new commits) that its commands may write; it reads
//! the user's objects through `objects/info/alternates`. So that `git status`, `add` and
//! `commit` work while nothing of the user's can be read or changed:
//! - `git_dir` is writable;
//! - the user's git directory is read-only, and every entry of it but `objects` is hidden
//!   (config, hooks, refs, index, logs, worktrees);
//! - every entry of the user's checkout but `.git` is hidden: the task has its own copy in
//!   the worktree, and the checkout holds what the worktree's policy hides (an `.env` the
//!   user never committed). An entry that contains the worktree, the temp dir or the task's
//!   git dir stays (what is hidden is then inside it, as its own entries).

use super::{SandboxError, SandboxPolicy};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The git state a task's commands may use, as Bosun knows it (never read from the worktree).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskGit {
    /// The task's private git directory (the worktree's `.git` file points here): its HEAD,
    /// index, refs, config and objects of new commits. Writable by the command.
    pub git_dir: PathBuf,
    /// The user's checkout (working directory). Its files are hidden from commands: the task
    /// has its own copy in the worktree.
    pub user_checkout: PathBuf,
    /// The user's git directory (common dir). Only its `objects/` stays visible, read-only
    /// (the task's git dir reads them through `objects/info/alternates`); config, hooks,
    /// refs, index, logs, worktrees are hidden.
    pub user_git_dir: PathBuf,
}

/// Credential files and directories under `home` that commands never need to read: SSH, cloud
/// and cluster credentials, package registry tokens, GnuPG, `gh`, `.netrc`, git credentials.
/// Only those that exist are returned.
pub fn home_secrets(home: &Path) -> Vec<PathBuf> {
    [
        ".ssh",
        ".aws",
        ".azure",
        ".gnupg",
        ".kube",
        ".docker/config.json",
        ".netrc",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        ".cargo/credentials",
        ".cargo/credentials.toml",
        ".config/gcloud",
        ".config/gh",
        ".config/hub",
        ".password-store",
    ]
    .iter()
    .map(|p| home.join(p))
    .filter(|p| p.exists())
    .collect()
}

impl SandboxPolicy {
    /// The policy for a task: writes in `worktree` and `temp_dir` (created if missing) and in
    /// the task's own git dir; the user's checkout and git dir out of reach but for the
    /// objects (see the module docs); `home`'s credentials ([`home_secrets`]) and the
    /// worktree's top-level `.env*` files unreadable; no network. Adjust `network`, `proxy`,
    /// `env_allow` and `read_deny` after.
    pub fn for_task(
        worktree: &Path,
        temp_dir: &Path,
        home: Option<&Path>,
        git: Option<&TaskGit>,
    ) -> Result<SandboxPolicy, SandboxError> {
        std::fs::create_dir_all(temp_dir).map_err(|source| SandboxError::TempDir {
            path: temp_dir.to_path_buf(),
            source,
        })?;
        let mut policy = SandboxPolicy {
            temp_dir: Some(temp_dir.to_path_buf()),
            worktree: worktree.to_path_buf(),
            write_paths: vec![worktree.to_path_buf(), temp_dir.to_path_buf()],
            read_deny: home.map(home_secrets).unwrap_or_default(),
            ..SandboxPolicy::default()
        };
        policy.read_deny.extend(env_files(worktree));
        if let Some(git) = git {
            policy.write_paths.push(git.git_dir.clone());
            policy.read_only_paths.push(git.user_git_dir.clone());
            let keep = [worktree, temp_dir, git.git_dir.as_path()];
            policy
                .read_deny
                .extend(entries_but(&git.user_checkout, ".git", &keep));
            policy
                .read_deny
                .extend(entries_but(&git.user_git_dir, "objects", &keep));
        }
        Ok(policy)
    }
}

/// The entries of `dir` except the one named `except` and any that contains one of `keep`,
/// sorted. A missing directory has none.
fn entries_but(dir: &Path, except: &str, keep: &[&Path]) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let resolved: Vec<PathBuf> = keep
        .iter()
        .map(|k| k.canonicalize().unwrap_or_else(|_| k.to_path_buf()))
        .collect();
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_name() != except)
        .map(|e| e.path())
        .filter(|p| {
            let real = p.canonicalize().unwrap_or_else(|_| p.clone());
            !keep.iter().any(|k| k.starts_with(p)) && !resolved.iter().any(|k| k.starts_with(&real))
        })
        .collect();
    found.sort();
    found
}

/// `.env`, `.env.local`, … at the top of the worktree (`.envrc` too: it often exports keys).
fn env_files(worktree: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(worktree) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name == ".env" || name.starts_with(".env.") || name == ".envrc"
        })
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_user_checkout_and_git_dir_are_hidden_but_for_the_objects_and_the_task_s_own_paths() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path().canonicalize().unwrap();
        let checkout = r.join("repo");
        for dir in [
            "repo/.git/objects",
            "repo/.git/refs",
            "repo/.git/hooks",
            "repo/src",
            "repo/.bosun/tasks/t1/git",
            "repo/.bosun/tasks/t1/wt",
            "tmp",
        ] {
            std::fs::create_dir_all(r.join(dir)).unwrap();
        }
        std::fs::write(checkout.join(".env"), "SECRET=1").unwrap();
        std::fs::write(checkout.join(".git/config"), "").unwrap();
        let git = TaskGit {
            git_dir: checkout.join(".bosun/tasks/t1/git"),
            user_checkout: checkout.clone(),
            user_git_dir: checkout.join(".git"),
        };
        let worktree = checkout.join(".bosun/tasks/t1/wt");
        let policy = SandboxPolicy::for_task(&worktree, &r.join("tmp"), None, Some(&git)).unwrap();
        assert_eq!(
            policy.read_deny,
            vec![
                checkout.join(".env"),
                checkout.join("src"),
                checkout.join(".git/config"),
                checkout.join(".git/hooks"),
                checkout.join(".git/refs"),
            ],
            ".bosun holds the worktree and the task's git dir, so it stays"
        );
        assert_eq!(policy.read_only_paths, vec![checkout.join(".git")]);
        assert_eq!(
            policy.write_paths,
            vec![worktree, r.join("tmp"), git.git_dir.clone()]
        );
    }
}
