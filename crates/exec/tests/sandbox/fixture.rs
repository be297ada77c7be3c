//! A user repository, a task with its private git dir and worktree (the layout Bosun gives a
//! task: the worktree's `.git` points at the task's git dir, which reads the user's objects
//! through `objects/info/alternates`), a temp dir, a fake home with an SSH key, and a
//! directory outside all of them.

use bosun_exec::sandbox::DISABLE_ENV;
use bosun_exec::{
    CommandOutcome, CommandSpec, SandboxPolicy, SandboxSupport, TaskGit, probe, run_command,
};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub const SECRET_KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY----- fake-key-material-4242";
pub const DOTENV: &str = "DB_PASSWORD=hunter2-dotenv";
/// In the user's checkout only (never committed).
pub const USER_DOTENV: &str = "API_TOKEN=user-checkout-secret-7777";

pub struct Fixture {
    /// Removed (with everything below `base`) when the fixture is dropped.
    pub _root: tempfile::TempDir,
    pub base: PathBuf,
    pub repo: PathBuf,
    pub task_git: PathBuf,
    pub worktree: PathBuf,
    pub temp: PathBuf,
    pub home: PathBuf,
    pub outside: PathBuf,
    /// The commit both the user's `bosun/t1` and the task's branch start at.
    pub base_commit: String,
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
        .args(["-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub fn tool_exists(name: &str) -> bool {
    Command::new("bash")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

impl Fixture {
    /// `None` (after saying why) when this system cannot sandbox.
    pub fn new() -> Option<Fixture> {
        if let SandboxSupport::Unavailable { reason } = probe() {
            eprintln!("SKIPPED: the sandbox is unavailable here: {reason}");
            return None;
        }
        let root = tempfile::tempdir().unwrap();
        let base = root.path().canonicalize().unwrap();
        let (repo, task_git, worktree, temp, home, outside) = (
            base.join("repo"),
            base.join("taskgit"),
            base.join("wt"),
            base.join("tmp"),
            base.join("home"),
            base.join("outside"),
        );
        for dir in [&repo, &worktree, &temp, &home.join(".ssh"), &outside] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(home.join(".ssh/id_rsa"), SECRET_KEY).unwrap();
        git(&repo, &["init", "-q"]);
        std::fs::write(repo.join("README.md"), "hello\n").unwrap();
        std::fs::write(repo.join(".gitignore"), ".env\nescape\n").unwrap();
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-qm", "init"]);
        std::fs::write(repo.join(".env"), USER_DOTENV).unwrap();
        let base_commit = git(&repo, &["rev-parse", "HEAD"]);
        // The user's own branch of that name, which a task's commit must never move.
        git(&repo, &["branch", "bosun/t1"]);

        // The task's private git dir (seam 1 of issue 9).
        let tg = task_git.to_str().unwrap();
        git(&base, &["init", "-q", "--bare", tg]);
        git(&base, &["--git-dir", tg, "config", "core.bare", "false"]);
        std::fs::write(
            task_git.join("objects/info/alternates"),
            format!("{}\n", repo.join(".git/objects").display()),
        )
        .unwrap();
        git(
            &base,
            &[
                "--git-dir",
                tg,
                "update-ref",
                "refs/heads/bosun/t1",
                &base_commit,
            ],
        );
        git(
            &base,
            &[
                "--git-dir",
                tg,
                "symbolic-ref",
                "HEAD",
                "refs/heads/bosun/t1",
            ],
        );
        std::fs::write(worktree.join(".git"), format!("gitdir: {tg}\n")).unwrap();
        git(
            &base,
            &[
                "--git-dir",
                tg,
                "--work-tree",
                worktree.to_str().unwrap(),
                "read-tree",
                "-u",
                "--reset",
                "HEAD",
            ],
        );

        std::fs::write(worktree.join(".env"), DOTENV).unwrap();
        std::os::unix::fs::symlink(&outside, worktree.join("escape")).unwrap();
        Some(Fixture {
            _root: root,
            base,
            repo,
            task_git,
            worktree,
            temp,
            home,
            outside,
            base_commit,
        })
    }

    pub fn task_git_paths(&self) -> TaskGit {
        TaskGit {
            git_dir: self.task_git.clone(),
            user_checkout: self.repo.clone(),
            user_git_dir: self.repo.join(".git"),
        }
    }

    pub fn policy(&self) -> SandboxPolicy {
        SandboxPolicy::for_task(
            &self.worktree,
            &self.temp,
            Some(&self.home),
            Some(&self.task_git_paths()),
        )
        .unwrap()
    }

    /// The policy without the worktree's `.env`, which only a mount namespace can hide (so the
    /// namespace-less fallback runs it).
    pub fn policy_without_worktree_dotenv(&self) -> SandboxPolicy {
        let mut policy = self.policy();
        policy
            .read_deny
            .retain(|p| p != &self.worktree.join(".env"));
        policy
    }

    pub fn spec(&self, command: &str, policy: SandboxPolicy) -> CommandSpec {
        let mut spec = CommandSpec::new(command, &self.worktree);
        spec.sandbox = Some(policy);
        spec.sandbox_exe = PathBuf::from(env!("CARGO_BIN_EXE_bosun-sandbox"));
        spec.env = vec![("HOME".into(), self.home.display().to_string())];
        spec.timeout = Duration::from_secs(60);
        spec
    }

    /// `spec` with parts of the sandbox forced off (`BOSUN_SANDBOX_DISABLE`, debug builds).
    pub fn spec_without(
        &self,
        disabled: &str,
        command: &str,
        policy: SandboxPolicy,
    ) -> CommandSpec {
        let mut spec = self.spec(command, policy);
        spec.env.push((DISABLE_ENV.into(), disabled.into()));
        spec
    }

    pub async fn run_with(&self, command: &str, policy: SandboxPolicy) -> (CommandOutcome, String) {
        run_spec(&self.spec(command, policy)).await
    }

    pub async fn run(&self, command: &str) -> (CommandOutcome, String) {
        self.run_with(command, self.policy()).await
    }
}

/// Runs a spec to its end; the outcome and its output's head as text.
pub async fn run_spec(spec: &CommandSpec) -> (CommandOutcome, String) {
    let outcome = run_command(spec, &CancellationToken::new(), &|_, _| {})
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&outcome.head).into_owned();
    (outcome, text)
}

/// Waits long enough for a job that writes `file` two seconds after it starts, then says
/// whether it did.
pub async fn appears_later(file: &Path) -> bool {
    tokio::time::sleep(Duration::from_millis(3500)).await;
    file.exists()
}
