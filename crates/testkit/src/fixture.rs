//! Real git repositories for tests, built with the `git` CLI.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

const README: &str = "# demo\n\nA small project for Bosun's tests.\n";
const MAIN_RS: &str = "fn main() {\n    println!(\"{}\", demo::greeting(\"world\"));\n}\n";
const LIB_RS: &str = "/// A friendly greeting.\npub fn greeting(name: &str) -> String {\n    format!(\"Hello, {name}!\")\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn greets() {\n        assert_eq!(super::greeting(\"a\"), \"Hello, a!\");\n    }\n}\n";
const GITIGNORE: &str = "target/\n*.log\n";

/// Creates `dir/repo`: a git repository on branch `main` with `README.md`, `src/main.rs`,
/// `src/lib.rs` and a `.gitignore` (ignoring `target/` and `*.log`), in one commit, with
/// `user.name` and `user.email` set locally. Returns the repository's path.
pub fn fixture_repo(dir: &Path) -> io::Result<PathBuf> {
    let repo = dir.join("repo");
    std::fs::create_dir_all(repo.join("src"))?;
    std::fs::write(repo.join("README.md"), README)?;
    std::fs::write(repo.join("src/main.rs"), MAIN_RS)?;
    std::fs::write(repo.join("src/lib.rs"), LIB_RS)?;
    std::fs::write(repo.join(".gitignore"), GITIGNORE)?;
    commit_all(&repo)?;
    Ok(repo)
}

/// Makes `repo` a git repository on branch `main` with everything in it in one commit, by a
/// fixed author at a fixed date.
pub(crate) fn commit_all(repo: &Path) -> io::Result<()> {
    git(repo, &["init", "--quiet"])?;
    git(repo, &["symbolic-ref", "HEAD", "refs/heads/main"])?;
    git(repo, &["config", "user.name", "Bosun Test"])?;
    git(repo, &["config", "user.email", "test@bosun.invalid"])?;
    git(repo, &["config", "commit.gpgsign", "false"])?;
    git(repo, &["add", "-A"])?;
    git(repo, &["commit", "--quiet", "-m", "Initial commit"])
}

fn git(repo: &Path, args: &[&str]) -> io::Result<()> {
    let out = Command::new("git")
        .args(args)
        .current_dir(repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .output()?;
    if out.status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "git {} failed in {}: {}",
            args.join(" "),
            repo.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}
