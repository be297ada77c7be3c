//! The local branches of a repository, for the "New task" form's base branch select. Read with
//! the git CLI in the user's own checkout (which no task can write), with their configuration so
//! it sees what they see in a terminal, but no hooks, no fsmonitor and no inherited `GIT_*`
//! variables (nothing here may run a program a configuration names).

use crate::error::IpcError;
use serde::Serialize;
use std::path::Path;
use std::process::Command;

/// A repository's local branches, sorted by name, and the one checked out (none when HEAD is
/// detached or the repository has no commit yet).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepoBranches {
    pub current: Option<String>,
    pub names: Vec<String>,
}

fn git(repo: &Path, args: &[&str]) -> Result<std::process::Output, IpcError> {
    Command::new("git")
        .arg("-C")
        .arg(repo)
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
        ])
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_CONFIG_PARAMETERS")
        .env_remove("GIT_CONFIG_COUNT")
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| {
            IpcError::new(
                "git",
                format!("could not run git ({e}): install git and make sure it is on the PATH"),
            )
        })
}

/// Lists the local branches of the repository containing `repo`.
pub fn local_branches(repo: &Path) -> Result<RepoBranches, IpcError> {
    if repo.as_os_str().is_empty() {
        return Err(IpcError::new(
            "not_a_repo",
            "choose a repository first: the path of a git folder",
        ));
    }
    if !repo.is_dir() {
        return Err(IpcError::new(
            "not_a_repo",
            format!(
                "{} is not a folder: choose the folder of a git repository",
                repo.display()
            ),
        ));
    }
    let inside = git(repo, &["rev-parse", "--is-inside-work-tree"])?;
    if !inside.status.success() {
        return Err(IpcError::new(
            "not_a_repo",
            format!(
                "{} is not a git repository: choose a folder under git (or run `git init` there)",
                repo.display()
            ),
        ));
    }
    let listed = git(
        repo,
        &["for-each-ref", "--format=%(refname:short)", "refs/heads"],
    )?;
    if !listed.status.success() {
        return Err(IpcError::new(
            "git",
            format!(
                "git could not list the branches of {}: {}",
                repo.display(),
                String::from_utf8_lossy(&listed.stderr).trim()
            ),
        ));
    }
    let mut names: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    names.sort();
    let head = git(repo, &["symbolic-ref", "--short", "-q", "HEAD"])?;
    let current = Some(String::from_utf8_lossy(&head.stdout).trim().to_string())
        .filter(|b| head.status.success() && names.contains(b));
    Ok(RepoBranches { current, names })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn run(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .status()
            .unwrap();
        assert!(ok.success(), "git {args:?}");
    }

    #[test]
    fn lists_local_branches_with_the_checked_out_one() {
        let dir = tempfile::tempdir().unwrap();
        run(dir.path(), &["init", "-q", "-b", "main"]);
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        run(dir.path(), &["add", "a.txt"]);
        run(dir.path(), &["commit", "-q", "-m", "one"]);
        run(dir.path(), &["branch", "feature/login"]);
        run(dir.path(), &["branch", "dev"]);
        // Any folder inside the repository works.
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let b = local_branches(&dir.path().join("sub")).unwrap();
        assert_eq!(b.names, ["dev", "feature/login", "main"]);
        assert_eq!(b.current.as_deref(), Some("main"));
    }

    #[test]
    fn a_folder_outside_git_gets_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = local_branches(dir.path()).unwrap_err();
        assert_eq!(err.code, "not_a_repo");
        assert!(err.message.contains("is not a git repository"), "{err}");
        let err = local_branches(&dir.path().join("missing")).unwrap_err();
        assert!(err.message.contains("is not a folder"), "{err}");
    }
}
