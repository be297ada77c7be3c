//! Real repositories built with the `git` CLI, and independent views of their state.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn git(dir: &Path, args: &[&str]) -> String {
    git_env(dir, args, &[])
}

pub fn git_env(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> String {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "T")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `home/<kind>/<repo-key>`: the one repository's directory under `worktrees` or `workspace`.
pub fn repo_dir(home: &Path, kind: &str) -> PathBuf {
    home.join(kind)
        .read_dir()
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
}

pub fn write(dir: &Path, rel: &str, content: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

pub struct Fixture {
    _tmp: tempfile::TempDir,
    pub home: PathBuf,
    pub repo: PathBuf,
    pub base: String,
}

/// A repository with a few commits, a .gitignore, an executable, a symlink, and on top of it the
/// user's own unfinished work: staged and unstaged edits and untracked files.
pub fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("project");
    let home = tmp.path().join("bosun-home");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    write(&repo, "README.md", "# project\n");
    write(&repo, "src/lib.rs", "pub fn one() -> u32 { 1 }\n");
    write(&repo, "src/deep/mod.rs", "mod x;\n");
    write(&repo, ".gitignore", "target/\n*.log\n");
    write(&repo, "run.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(
        repo.join("run.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::os::unix::fs::symlink("README.md", repo.join("link")).unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    write(
        &repo,
        "src/lib.rs",
        "pub fn one() -> u32 { 1 }\npub fn two() -> u32 { 2 }\n",
    );
    git(&repo, &["commit", "-q", "-am", "second"]);
    let base = git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    // The user's own work in progress, which Bosun must never touch.
    write(&repo, "README.md", "# project (staged edit)\n");
    git(&repo, &["add", "README.md"]);
    write(&repo, "src/lib.rs", "// unstaged edit\n");
    write(&repo, "notes.txt", "untracked\n");
    let repo = repo.canonicalize().unwrap();
    Fixture {
        _tmp: tmp,
        home,
        repo,
        base,
    }
}

/// Everything about the user's checkout that Bosun must leave alone.
#[derive(Debug, PartialEq)]
pub struct UserState {
    status: String,
    index: Vec<u8>,
    head: String,
    branches: Vec<String>,
    files: BTreeMap<String, Vec<u8>>,
}

pub fn user_state(repo: &Path) -> UserState {
    let branches = git(repo, &["branch", "--format=%(refname:short) %(objectname)"])
        .lines()
        .filter(|l| !l.starts_with("bosun/"))
        .map(String::from)
        .collect();
    let mut files = BTreeMap::new();
    for rel in ["README.md", "src/lib.rs", "notes.txt", "run.sh"] {
        files.insert(rel.to_string(), std::fs::read(repo.join(rel)).unwrap());
    }
    UserState {
        status: git(repo, &["status", "--porcelain=v2", "--branch"]),
        index: std::fs::read(repo.join(".git/index")).unwrap(),
        head: std::fs::read_to_string(repo.join(".git/HEAD")).unwrap(),
        branches,
        files,
    }
}

/// The tree git itself would record for the worktree: a throwaway index seeded with `seed`,
/// then `git add -A` and `git write-tree`.
pub fn independent_tree(worktree: &Path, seed: &str) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("index");
    let env = [("GIT_INDEX_FILE", index.as_path())];
    git_env(worktree, &["read-tree", seed], &env);
    git_env(worktree, &["add", "-A"], &env);
    git_env(worktree, &["write-tree"], &env).trim().to_string()
}

pub fn tree_of(repo: &Path, commit: &str) -> String {
    git(repo, &["rev-parse", &format!("{commit}^{{tree}}")])
        .trim()
        .to_string()
}

pub fn ls_tree(repo: &Path, commit: &str) -> String {
    git(repo, &["ls-tree", "-r", commit])
}
