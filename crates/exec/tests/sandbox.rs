//! The command sandbox against real processes: escape attempts that must fail, and ordinary
//! work (files, git, toolchains, pipes) that must keep working inside it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bosun_exec::{CommandOutcome, CommandSpec, SandboxPolicy, SandboxSupport, probe, run_command};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const SECRET_KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY----- fake-key-material-4242";
const DOTENV: &str = "DB_PASSWORD=hunter2-dotenv";

/// A user repository, a task worktree on branch `bosun/t1`, a private temp dir, a fake home
/// with an SSH key, and a directory outside all of them.
struct Fixture {
    _root: tempfile::TempDir,
    repo: PathBuf,
    worktree: PathBuf,
    temp: PathBuf,
    home: PathBuf,
    outside: PathBuf,
}

fn git(dir: &Path, args: &[&str]) -> String {
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

impl Fixture {
    /// `None` (after saying why) when this system cannot sandbox.
    fn new() -> Option<Fixture> {
        if let SandboxSupport::Unavailable { reason } = probe() {
            eprintln!("SKIPPED: the sandbox is unavailable here: {reason}");
            return None;
        }
        let root = tempfile::tempdir().unwrap();
        let base = root.path().canonicalize().unwrap();
        let (repo, worktree, temp, home, outside) = (
            base.join("repo"),
            base.join("wt"),
            base.join("tmp"),
            base.join("home"),
            base.join("outside"),
        );
        for dir in [&repo, &temp, &home.join(".ssh"), &outside] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(home.join(".ssh/id_rsa"), SECRET_KEY).unwrap();
        git(&repo, &["init", "-q"]);
        std::fs::write(repo.join("README.md"), "hello\n").unwrap();
        std::fs::write(repo.join(".gitignore"), ".env\nescape\n").unwrap();
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-qm", "init"]);
        git(
            &repo,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "bosun/t1",
                worktree.to_str().unwrap(),
            ],
        );
        std::fs::write(worktree.join(".env"), DOTENV).unwrap();
        std::os::unix::fs::symlink(&outside, worktree.join("escape")).unwrap();
        Some(Fixture {
            _root: root,
            repo,
            worktree,
            temp,
            home,
            outside,
        })
    }

    fn policy(&self) -> SandboxPolicy {
        SandboxPolicy::for_task(&self.worktree, &self.temp, Some(&self.home)).unwrap()
    }

    fn spec(&self, command: &str, policy: SandboxPolicy) -> CommandSpec {
        let mut spec = CommandSpec::new(command, &self.worktree);
        spec.sandbox = Some(policy);
        spec.sandbox_exe = PathBuf::from(env!("CARGO_BIN_EXE_bosun-sandbox"));
        spec.env = vec![("HOME".into(), self.home.display().to_string())];
        spec.timeout = Duration::from_secs(60);
        spec
    }

    async fn run_with(&self, command: &str, policy: SandboxPolicy) -> (CommandOutcome, String) {
        let outcome = run_command(
            &self.spec(command, policy),
            &CancellationToken::new(),
            &|_, _| {},
        )
        .await
        .unwrap();
        let text = String::from_utf8_lossy(&outcome.head).into_owned();
        (outcome, text)
    }

    async fn run(&self, command: &str) -> (CommandOutcome, String) {
        self.run_with(command, self.policy()).await
    }
}

fn tool_exists(name: &str) -> bool {
    Command::new("bash")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[tokio::test]
async fn writes_outside_the_worktree_and_temp_dir_fail() {
    let Some(fx) = Fixture::new() else { return };
    let in_tmp = std::env::temp_dir().join(format!("bosun-sandbox-escape-{}", std::process::id()));
    let targets = [
        in_tmp.clone(),
        fx.home.join("x"),
        fx.outside.join("x"),
        fx.repo.join("x"),
    ];
    for target in &targets {
        let (outcome, text) = fx
            .run(&format!("echo pwned > '{}'", target.display()))
            .await;
        assert!(!outcome.success(), "writing {} succeeded", target.display());
        // EACCES from Landlock, EPERM from Seatbelt.
        assert!(
            text.contains("Permission denied") || text.contains("Operation not permitted"),
            "{text}"
        );
        assert!(!target.exists(), "{} was created", target.display());
    }
    let (outcome, _) = fx
        .run(&format!(
            "mkdir '{0}/d' || touch '{0}/README.md' || rm '{0}/README.md'; test -d '{0}/d' -o ! -e '{0}/README.md'",
            fx.repo.display()
        ))
        .await;
    assert!(!outcome.success());
    assert!(fx.repo.join("README.md").exists());
}

#[tokio::test]
async fn the_user_repository_git_dir_stays_read_only() {
    let Some(fx) = Fixture::new() else { return };
    let git_dir = fx.repo.join(".git");
    let config_before = std::fs::read_to_string(git_dir.join("config")).unwrap();
    let main_before = std::fs::read_to_string(git_dir.join("refs/heads/main")).unwrap();
    let attempts = [
        format!(
            "printf '#!/bin/sh\\necho pwned\\n' > '{}/hooks/pre-commit'",
            git_dir.display()
        ),
        format!(
            "printf '[core]\\n\\thooksPath = /tmp\\n' >> '{}/config'",
            git_dir.display()
        ),
        format!(
            "echo 0000000000000000000000000000000000000000 > '{}/refs/heads/main'",
            git_dir.display()
        ),
        format!("echo x > '{}/refs/heads/new-branch'", git_dir.display()),
        format!("git -C '{}' branch evil", fx.repo.display()),
        "git config core.hooksPath /tmp".to_string(),
    ];
    for attempt in &attempts {
        let (outcome, text) = fx.run(attempt).await;
        assert!(!outcome.success(), "`{attempt}` succeeded: {text}");
    }
    assert!(!git_dir.join("hooks/pre-commit").exists());
    assert!(!git_dir.join("refs/heads/new-branch").exists());
    assert!(!git_dir.join("refs/heads/evil").exists());
    assert_eq!(
        std::fs::read_to_string(git_dir.join("config")).unwrap(),
        config_before
    );
    assert_eq!(
        std::fs::read_to_string(git_dir.join("refs/heads/main")).unwrap(),
        main_before
    );
}

#[tokio::test]
async fn a_symlink_in_the_worktree_does_not_lead_outside() {
    let Some(fx) = Fixture::new() else { return };
    let (outcome, text) = fx.run("echo pwned > escape/x").await;
    assert!(!outcome.success(), "{text}");
    assert!(!fx.outside.join("x").exists());
    // A symlink the command makes itself does not help either.
    let (outcome, text) = fx
        .run(&format!(
            "ln -s '{}' mine && echo pwned > mine/y",
            fx.home.display()
        ))
        .await;
    assert!(!outcome.success(), "{text}");
    assert!(!fx.home.join("y").exists());
}

#[tokio::test]
async fn ssh_keys_and_dotenv_files_cannot_be_read() {
    let Some(fx) = Fixture::new() else { return };
    let (outcome, text) = fx.run("cat \"$HOME/.ssh/id_rsa\"").await;
    assert!(!outcome.success());
    assert!(!text.contains("fake-key-material"), "{text}");
    let (_, text) = fx
        .run("cat ~/.ssh/* 2>&1; cp -r ~/.ssh \"$TMPDIR/s\" 2>&1; cat \"$TMPDIR\"/s/* 2>&1; grep -r fake-key ~ 2>&1")
        .await;
    assert!(!text.contains("fake-key-material"), "{text}");
    let (_, text) = fx.run("cat .env; cat \"$PWD/.env\"").await;
    assert!(!text.contains("hunter2"), "{text}");
}

#[tokio::test]
async fn network_is_cut_unless_granted() {
    let Some(fx) = Fixture::new() else { return };
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");

    let (outcome, text) = fx.run(&connect).await;
    assert!(!outcome.success(), "connected without network: {text}");
    assert!(!text.contains("connected\n"), "{text}");

    let mut granted = fx.policy();
    granted.network = true;
    let (outcome, text) = fx.run_with(&connect, granted).await;
    assert!(outcome.success(), "{text}");
    assert!(text.contains("connected"), "{text}");
}

#[tokio::test]
async fn secret_environment_variables_are_not_passed_unless_allowed() {
    let Some(fx) = Fixture::new() else { return };
    let mut spec = fx.spec(
        "echo \"key=${OPENAI_API_KEY:-none} npm=${NPM_TOKEN:-none} name=${GIT_AUTHOR_NAME:-none}\"",
        SandboxPolicy {
            env_allow: vec!["NPM_TOKEN".into()],
            ..fx.policy()
        },
    );
    spec.env.extend([
        ("OPENAI_API_KEY".to_string(), "sk-secret-value".to_string()),
        ("NPM_TOKEN".to_string(), "npm-allowed".to_string()),
        ("GIT_AUTHOR_NAME".to_string(), "Ada".to_string()),
    ]);
    let outcome = run_command(&spec, &CancellationToken::new(), &|_, _| {})
        .await
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&outcome.head),
        "key=none npm=npm-allowed name=Ada\n"
    );
}

#[tokio::test]
async fn files_in_the_worktree_and_temp_dir_can_be_written_and_read() {
    let Some(fx) = Fixture::new() else { return };
    let (outcome, text) = fx
        .run("mkdir -p src/deep && echo one > src/deep/a.txt && cat src/deep/a.txt && echo two > \"$TMPDIR/b\" && cat \"$TMPDIR/b\" && mv src/deep/a.txt src/a.txt && rm -r src/deep && ls src && t=$(mktemp) && echo three > \"$t\" && cat \"$t\" && dirname \"$t\"")
        .await;
    assert!(outcome.success(), "{text}");
    assert_eq!(
        text,
        format!("one\ntwo\na.txt\nthree\n{}\n", fx.temp.display()),
        "mktemp lands in the task's temp dir"
    );
    assert_eq!(
        std::fs::read_to_string(fx.worktree.join("src/a.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(std::fs::read_to_string(fx.temp.join("b")).unwrap(), "two\n");
}

#[tokio::test]
async fn git_status_add_and_commit_work_in_the_worktree() {
    let Some(fx) = Fixture::new() else { return };
    let (outcome, text) = fx
        .run("echo change >> README.md && git status --short && git add README.md && git -c user.name=Agent -c user.email=agent@example.com commit -qm 'agent change' && git log --oneline | wc -l")
        .await;
    assert!(outcome.success(), "{text}");
    // git 2.47 also tries to lock `.git/packed-refs` and says it could not, without failing.
    assert!(text.starts_with(" M README.md\n"), "{text}");
    assert!(text.ends_with("\n2\n"), "{text}");
    assert_eq!(
        git(&fx.repo, &["log", "-1", "--format=%s", "bosun/t1"]),
        "agent change"
    );
    assert_eq!(git(&fx.repo, &["rev-list", "--count", "main"]), "1");
}

#[tokio::test]
async fn toolchains_pipes_and_subprocesses_work() {
    let Some(fx) = Fixture::new() else { return };
    let (outcome, text) = fx
        .run("seq 1 1000 | sort -rn | head -1; (sleep 0.1; echo from-child) & wait; bash -c 'echo nested'")
        .await;
    assert!(outcome.success(), "{text}");
    assert_eq!(text, "1000\nfrom-child\nnested\n");
    for (tool, command) in [
        ("cargo", "cargo --version"),
        (
            "python3",
            "python3 -c 'import json, sys; print(json.dumps([sys.version_info.major]))'",
        ),
        ("git", "git --version"),
    ] {
        if !tool_exists(tool) {
            eprintln!("SKIPPED: {tool} is not installed");
            continue;
        }
        let (outcome, text) = fx.run(command).await;
        assert!(outcome.success(), "{command}: {text}");
    }
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_local_server_inside_works_without_network() {
    let Some(fx) = Fixture::new() else { return };
    if !tool_exists("python3") {
        eprintln!("SKIPPED: python3 is not installed");
        return;
    }
    let script = "import socket\ns=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(1)\nc=socket.create_connection(s.getsockname()); a,_=s.accept(); c.sendall(b'ping'); print(a.recv(4).decode())";
    let (outcome, text) = fx.run(&format!("python3 -c \"{script}\"")).await;
    assert!(outcome.success(), "{text}");
    assert_eq!(text, "ping\n");
}

/// On macOS Seatbelt cannot tell the command's own loopback servers from the host's, so
/// without network loopback is cut too (see `bosun_exec::sandbox::seatbelt_profile`).
#[cfg(target_os = "macos")]
#[tokio::test]
async fn without_network_loopback_is_cut_too_on_macos() {
    let Some(fx) = Fixture::new() else { return };
    if !tool_exists("python3") {
        eprintln!("SKIPPED: python3 is not installed");
        return;
    }
    let script = "import socket\ns=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(1)\nc=socket.create_connection(s.getsockname()); print('reached')";
    let (outcome, text) = fx.run(&format!("python3 -c \"{script}\"")).await;
    assert!(!outcome.success(), "{text}");
    assert!(!text.contains("reached"), "{text}");
}

#[tokio::test]
async fn processes_outside_the_sandbox_cannot_be_signalled() {
    let Some(fx) = Fixture::new() else { return };
    let scoped = match probe() {
        SandboxSupport::Full { landlock_abi, .. } => landlock_abi >= 6,
        SandboxSupport::Seatbelt => true,
        SandboxSupport::Unavailable { .. } => false,
    };
    if !scoped {
        eprintln!("SKIPPED: signal scoping needs Landlock ABI 6");
        return;
    }
    let mut victim = Command::new("sleep").arg("30").spawn().unwrap();
    let (outcome, text) = fx.run(&format!("kill -9 {}", victim.id())).await;
    assert!(!outcome.success(), "{text}");
    assert!(
        victim.try_wait().unwrap().is_none(),
        "the outside process was killed"
    );
    victim.kill().unwrap();
    victim.wait().unwrap();
}

#[tokio::test]
async fn a_sandboxed_command_still_times_out_and_leaves_nothing_behind() {
    let Some(fx) = Fixture::new() else { return };
    let mut spec = fx.spec("sleep 30 & sleep 30", fx.policy());
    spec.timeout = Duration::from_millis(300);
    let outcome = run_command(&spec, &CancellationToken::new(), &|_, _| {})
        .await
        .unwrap();
    assert!(outcome.timed_out);
}

/// (macOS has no trampoline: `sandbox-exec` confines the command.)
#[cfg(not(target_os = "macos"))]
#[tokio::test]
async fn a_missing_trampoline_is_an_error_not_an_unsandboxed_run() {
    let Some(fx) = Fixture::new() else { return };
    let mut spec = fx.spec("echo ran", fx.policy());
    spec.sandbox_exe = fx.outside.join("no-such-binary");
    let err = run_command(&spec, &CancellationToken::new(), &|_, _| {})
        .await
        .unwrap_err();
    assert!(
        matches!(err, bosun_exec::ExecError::SandboxExeMissing(_)),
        "{err}"
    );
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn landlock_alone_still_confines_when_namespaces_are_off() {
    let Some(fx) = Fixture::new() else { return };
    let landlock_only = |command: &str, policy: SandboxPolicy| {
        let mut spec = fx.spec(command, policy);
        spec.env
            .push((bosun_exec::sandbox::NAMESPACES_ENV.into(), "0".into()));
        spec
    };
    let run = |spec: CommandSpec| async move {
        let outcome = run_command(&spec, &CancellationToken::new(), &|_, _| {})
            .await
            .unwrap();
        let text = String::from_utf8_lossy(&outcome.head).into_owned();
        (outcome, text)
    };

    // A .env inside the writable worktree cannot be hidden without a mount namespace: refused.
    let (outcome, text) = run(landlock_only("echo ran", fx.policy())).await;
    assert_eq!(
        outcome.exit_code,
        Some(bosun_exec::sandbox::SANDBOX_FAILED_EXIT)
    );
    assert!(text.contains(".env") && !text.contains("ran"), "{text}");

    let mut policy = fx.policy();
    policy.read_deny.retain(|p| !p.ends_with(".env"));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (outcome, text) = run(landlock_only(
        &format!(
            "cat ~/.ssh/id_rsa; echo x > '{}/x'; exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected",
            fx.outside.display()
        ),
        policy.clone(),
    ))
    .await;
    assert!(!outcome.success(), "{text}");
    assert!(!text.contains("fake-key-material"), "{text}");
    assert!(!text.contains("connected\n"), "{text}");
    assert!(!fx.outside.join("x").exists());

    let (outcome, text) = run(landlock_only(
        "echo ok > f && cat f && ls ~ && git status --short",
        policy,
    ))
    .await;
    assert!(outcome.success(), "{text}");
    assert!(text.starts_with("ok\n"), "{text}");
}

#[tokio::test]
async fn the_task_policy_opens_only_the_worktrees_own_git_state() {
    let Some(fx) = Fixture::new() else { return };
    let policy = fx.policy();
    let git = fx.repo.join(".git");
    assert_eq!(
        policy,
        SandboxPolicy {
            worktree: fx.worktree.clone(),
            write_paths: vec![
                fx.worktree.clone(),
                fx.temp.clone(),
                git.join("worktrees/wt"),
                git.join("objects"),
                git.join("refs/heads/bosun"),
                git.join("logs/refs/heads/bosun"),
            ],
            read_deny: vec![fx.home.join(".ssh"), fx.worktree.join(".env")],
            read_only_paths: vec![git],
            network: false,
            env_allow: vec![],
            temp_dir: Some(fx.temp.clone()),
            proxy: None,
        }
    );
}
