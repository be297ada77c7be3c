//! The sandbox's first rooms: writes, denied reads, the network, the environment, signals,
//! and ordinary work that must keep working.

use super::fixture::*;
use bosun_exec::{CommandSpec, SandboxPolicy, SandboxSupport, probe, run_command};
use std::net::TcpListener;
use std::process::Command;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

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
        format!(
            "git --git-dir='{}' config core.hooksPath /tmp",
            git_dir.display()
        ),
    ];
    for attempt in &attempts {
        let (outcome, text) = fx.run(attempt).await;
        // A hidden file reads as empty and takes writes into nothing (it is /dev/null), so
        // an append to the config "succeeds": what counts is what is on disk, below.
        if !attempt.contains("/config'") {
            assert!(!outcome.success(), "`{attempt}` succeeded: {text}");
        }
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
    let landlock_only =
        |command: &str, policy: SandboxPolicy| fx.spec_without("netns", command, policy);
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

    let policy = fx.policy_without_worktree_dotenv();
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
async fn the_task_policy_opens_only_the_task_s_own_git_state() {
    let Some(fx) = Fixture::new() else { return };
    let policy = fx.policy();
    let git = fx.repo.join(".git");
    // Every entry of the user's git dir but its objects (which entries git made depends on
    // its version).
    let mut git_entries: Vec<String> = std::fs::read_dir(&git)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "objects")
        .collect();
    git_entries.sort();
    assert!(git_entries.iter().any(|e| e == "refs") && git_entries.iter().any(|e| e == "hooks"));
    let mut read_deny = vec![
        fx.home.join(".ssh"),
        fx.worktree.join(".env"),
        fx.repo.join(".env"),
        fx.repo.join(".gitignore"),
        fx.repo.join("README.md"),
    ];
    read_deny.extend(git_entries.iter().map(|e| git.join(e)));
    assert_eq!(
        policy,
        SandboxPolicy {
            worktree: fx.worktree.clone(),
            write_paths: vec![fx.worktree.clone(), fx.temp.clone(), fx.task_git.clone()],
            read_deny,
            read_only_paths: vec![git],
            network: false,
            proxy: None,
            env_allow: vec![],
            temp_dir: Some(fx.temp.clone()),
        }
    );
}

/// A FIFO where Bosun reads files between commands (`.gitignore`, `AGENTS.md`) would hang it.
#[tokio::test]
async fn a_fifo_cannot_be_made_in_the_worktree_or_the_temp_dir() {
    let Some(fx) = Fixture::new() else { return };
    let (outcome, text) = fx
        .run("mkdir -p sub && mkfifo sub/.gitignore; mkfifo \"$TMPDIR/pipe\"; python3 -c 'import os; os.mkfifo(\"AGENTS.md\")'; ls -la")
        .await;
    assert!(outcome.exit_code.is_some(), "{text}");
    for path in [
        fx.worktree.join(".gitignore"),
        fx.temp.join("pipe"),
        fx.worktree.join("AGENTS.md"),
    ] {
        let made = std::fs::symlink_metadata(&path)
            .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type()));
        assert!(!made, "{} is a FIFO: {text}", path.display());
    }
    // Ordinary files, directories and pipes between processes still work.
    let (outcome, text) = fx
        .run("echo a | cat > ok.txt && mkdir d && cat ok.txt")
        .await;
    assert!(outcome.success(), "{text}");
}
