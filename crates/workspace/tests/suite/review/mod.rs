//! Review: hunks on tricky diffs, reject and undo, merge, export, rebase, removal — each checked
//! against an expectation built independently with the git CLI or by hand.

mod base;
mod bench;
mod hunks;
mod merge;
mod worktree;

use super::fixture::git;
use bosun_workspace::{ChangeHint, TaskWorktree};
use std::collections::HashSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

pub struct Repo {
    _tmp: tempfile::TempDir,
    pub home: PathBuf,
    pub repo: PathBuf,
    pub base: String,
}

/// A clean repository on `main` holding `files` (path, bytes) in one commit.
pub fn repo_with(files: &[(&str, &[u8])]) -> Repo {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("project");
    let home = tmp.path().join("bosun-home");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "core.autocrlf", "false"]);
    for (path, bytes) in files {
        put(&repo, path, bytes);
    }
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let base = git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    Repo {
        _tmp: tmp,
        home,
        repo: repo.canonicalize().unwrap(),
        base,
    }
}

pub fn put(dir: &Path, rel: &str, bytes: &[u8]) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

pub fn chmod(dir: &Path, rel: &str, mode: u32) {
    std::fs::set_permissions(dir.join(rel), std::fs::Permissions::from_mode(mode)).unwrap();
}

pub fn task(r: &Repo, id: &str) -> TaskWorktree {
    TaskWorktree::create(&r.home, &r.repo, id, &r.base).unwrap()
}

/// Records whatever the "agent" did in the worktree.
pub fn step(task: &mut TaskWorktree, message: &str) -> u32 {
    task.checkpoint(&ChangeHint::Unknown, message)
        .unwrap()
        .unwrap()
        .n
}

/// Numbered lines `l1\n` … `ln\n`.
pub fn lines(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("l{i}\n")).collect()
}

pub fn join(lines: &[String]) -> Vec<u8> {
    lines.concat().into_bytes()
}

/// The ids of a file's hunks, in order.
pub fn hunk_ids(task: &TaskWorktree, path: &str) -> Vec<String> {
    task.history()
        .unwrap()
        .review_files(false)
        .unwrap()
        .into_iter()
        .find(|f| f.path == path)
        .map(|f| f.hunks.into_iter().map(|h| h.id).collect())
        .unwrap_or_default()
}

#[allow(dead_code)]
pub fn all_ids(task: &TaskWorktree) -> HashSet<String> {
    task.history()
        .unwrap()
        .review_files(false)
        .unwrap()
        .into_iter()
        .flat_map(|f| f.hunks.into_iter().map(|h| h.id))
        .collect()
}

pub fn set(ids: &[&String]) -> HashSet<String> {
    ids.iter().map(|s| s.to_string()).collect()
}

/// The tree git builds from `base` with `edits` (path → Some((bytes, mode)) or None), through a
/// throwaway index: the independent expectation for a merge.
/// A path's expected state: its bytes and git mode (`"100644"`), or None when it is gone.
pub type Expected<'a> = (&'a str, Option<(&'a [u8], &'a str)>);

pub fn expected_tree(repo: &Path, base: &str, edits: &[Expected<'_>]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("index");
    let env = [("GIT_INDEX_FILE", index.as_path())];
    super::fixture::git_env(repo, &["read-tree", base], &env);
    for (path, state) in edits {
        match state {
            Some((bytes, mode)) => {
                let file = tmp.path().join("blob");
                std::fs::write(&file, bytes).unwrap();
                let id = git(repo, &["hash-object", "-w", file.to_str().unwrap()]);
                let info = format!("{mode},{},{path}", id.trim());
                super::fixture::git_env(
                    repo,
                    &["update-index", "--add", "--cacheinfo", &info],
                    &env,
                );
            }
            None => {
                super::fixture::git_env(repo, &["update-index", "--force-remove", path], &env);
            }
        }
    }
    super::fixture::git_env(repo, &["write-tree"], &env)
        .trim()
        .to_string()
}

/// `git show REV:PATH` as bytes.
pub fn show(repo: &Path, rev: &str, path: &str) -> Vec<u8> {
    let out = std::process::Command::new("git")
        .current_dir(repo)
        .args(["show", &format!("{rev}:{path}")])
        .output()
        .unwrap();
    assert!(out.status.success(), "git show {rev}:{path} failed");
    out.stdout
}

pub fn tree(repo: &Path, rev: &str) -> String {
    git(repo, &["rev-parse", &format!("{rev}^{{tree}}")])
        .trim()
        .to_string()
}

/// What the user sees of their checkout: status, index bytes, HEAD, the `main` ref and the
/// bytes of every file (ignoring `.git`).
#[derive(Debug, PartialEq)]
pub struct Checkout {
    status: String,
    index: Vec<u8>,
    head: String,
    main: String,
    files: std::collections::BTreeMap<String, Vec<u8>>,
}

pub fn checkout(repo: &Path) -> Checkout {
    let mut files = std::collections::BTreeMap::new();
    let mut stack = vec![repo.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let rel = path
                .strip_prefix(repo)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if meta.is_dir() {
                stack.push(path);
            } else if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                files.insert(rel, target.to_string_lossy().as_bytes().to_vec());
            } else {
                files.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    Checkout {
        status: git(repo, &["status", "--porcelain=v2", "--branch"]),
        index: std::fs::read(repo.join(".git/index")).unwrap(),
        head: std::fs::read_to_string(repo.join(".git/HEAD")).unwrap(),
        main: git(repo, &["rev-parse", "refs/heads/main"]),
        files,
    }
}
