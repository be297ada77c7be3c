//! Checks on real fixture repositories and real processes (unsandboxed: the sandbox is the
//! caller's).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use anyhow::Result;
use bosun_protocol::CheckStatus;
use bosun_testkit::checks_fixtures::{
    node_calc_repo, python_calc_repo, python_calc_repo_failing_at_base, rust_calc_repo,
};
use bosun_verify::{
    BaseCache, BaseResult, CheckResult, CheckRun, Class, LOG_HEAD_BYTES, LOG_TAIL_BYTES,
    STREAM_CAP_BYTES, discover, failure_key, mark_before_task, related_command, run_check, runner,
    runner_for,
};
use pretty_assertions::assert_eq;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

fn check_run(command: &str, cwd: &Path, timeout: Duration) -> CheckRun {
    CheckRun {
        command: command.to_string(),
        cwd: cwd.to_path_buf(),
        timeout,
        // The child builds inside the fixture, not in this test's own target directory.
        env_remove: vec!["CARGO_TARGET_DIR".into()],
        sandbox: None,
        sandbox_exe: Default::default(),
        root_for_paths: cwd.to_path_buf(),
    }
}

async fn run(command: &str, cwd: &Path) -> CheckResult {
    run_check(
        &check_run(command, cwd, Duration::from_secs(300)),
        &CancellationToken::new(),
        &|_, _| {},
    )
    .await
}

fn commands(root: &Path) -> Vec<(String, String)> {
    discover(root)
        .into_iter()
        .map(|s| (s.name, s.command))
        .collect()
}

fn pair(name: &str, command: &str) -> (String, String) {
    (name.to_string(), command.to_string())
}

#[tokio::test]
async fn the_python_fixture_is_discovered_and_its_tests_pass() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let repo = python_calc_repo(dir.path())?;
    assert_eq!(commands(&repo), vec![pair("test", "python3 -m unittest")]);
    let result = run("python3 -m unittest", &repo).await;
    assert_eq!(result.status, CheckStatus::Passed, "{}", result.log);
    assert!(result.log.contains("Ran 2 tests"), "{}", result.log);
    Ok(())
}

#[tokio::test]
async fn the_node_fixture_is_discovered_and_its_tests_pass() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let repo = node_calc_repo(dir.path())?;
    assert_eq!(commands(&repo), vec![pair("test", "npm test")]);
    assert_eq!(
        runner_for("npm test", &repo),
        Some(bosun_verify::Runner::NodeTest)
    );
    let result = run("npm test", &repo).await;
    assert_eq!(result.status, CheckStatus::Passed, "{}", result.log);
    assert!(result.log.contains("# pass 2"), "{}", result.log);
    Ok(())
}

#[tokio::test]
async fn the_rust_fixture_is_discovered_and_builds_and_tests_offline() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let repo = rust_calc_repo(dir.path())?;
    assert_eq!(
        commands(&repo),
        vec![
            pair("build", "cargo build --all-targets"),
            pair("test", "cargo test"),
            pair("clippy", "cargo clippy --all-targets -- -D warnings"),
        ]
    );
    for spec in discover(&repo).into_iter().filter(|s| s.required) {
        let result = run(&format!("CARGO_NET_OFFLINE=true {}", spec.command), &repo).await;
        assert_eq!(
            result.status,
            CheckStatus::Passed,
            "{}: {}",
            spec.name,
            result.log
        );
    }
    assert!(repo.join("target").is_dir(), "built inside the fixture");
    Ok(())
}

#[tokio::test]
async fn a_broken_rust_test_is_digested_with_its_assertion() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let repo = rust_calc_repo(dir.path())?;
    let lib = std::fs::read_to_string(repo.join("src/lib.rs"))?;
    std::fs::write(
        repo.join("src/lib.rs"),
        lib.replace("    a + b\n", "    a + b + 1\n"),
    )?;
    let result = run("CARGO_NET_OFFLINE=true cargo test", &repo).await;
    assert_eq!(result.status, CheckStatus::Failed);
    assert_eq!(result.exit_code, Some(101));
    assert_eq!(result.digest.summary, "1 test failed: tests::adds");
    let f = &result.digest.failures[0];
    assert_eq!((f.path.as_deref(), f.line), (Some("src/lib.rs"), Some(17)));
    assert!(
        f.message.contains("left: 4") && f.message.contains("right: 3"),
        "{}",
        f.message
    );
    Ok(())
}

#[tokio::test]
async fn a_task_breaking_add_fails_the_related_run_first_and_keeps_old_failures_apart() -> Result<()>
{
    let dir = tempfile::tempdir()?;
    // The base: test_sub already fails there.
    let base = python_calc_repo_failing_at_base(dir.path())?;
    let spec = discover(&base).remove(0);
    let base_run = run(&spec.command, &base).await;
    assert_eq!(base_run.status, CheckStatus::Failed);
    let cache = BaseCache::new(dir.path().join("cache"));
    cache.put(
        "base-sha",
        &spec.command,
        &BaseResult {
            status: base_run.status,
            failure_keys: base_run.digest.failures.iter().map(failure_key).collect(),
            exit_code: base_run.exit_code,
        },
    )?;

    // The task's worktree: a copy of the base where the task also broke add.
    let task = dir.path().join("task");
    copy_dir(&base, &task)?;
    std::fs::write(
        task.join("calc.py"),
        "def add(a, b):\n    return a * b\n\n\ndef sub(a, b):\n    return a + b\n",
    )?;
    let runner = runner(&spec.command).unwrap();
    let related = related_command(&spec, runner, &["calc.py".to_string()], &task).unwrap();
    assert_eq!(related, "python3 -m unittest tests.test_calc");
    let result = run(&related, &task).await;
    assert_eq!(result.status, CheckStatus::Failed, "{}", result.log);
    assert!(
        result.log.contains("Ran 2 tests"),
        "the related run ran the tests: {}",
        result.log
    );

    let mut failures = result.digest.failures.clone();
    let base_result = cache.get("base-sha", &spec.command).unwrap();
    let all_before = mark_before_task(&mut failures, &base_result);
    assert!(!all_before);
    let marked: Vec<(String, bool)> = failures
        .iter()
        .map(|f| {
            (
                f.message.split(" — ").next().unwrap().to_string(),
                f.before_task,
            )
        })
        .collect();
    assert_eq!(
        marked,
        vec![
            ("tests.test_calc.CalcTest.test_add".to_string(), false),
            ("tests.test_calc.CalcTest.test_sub".to_string(), true),
        ]
    );
    Ok(())
}

#[tokio::test]
async fn unittest_discover_narrowing_runs_in_a_tests_dir_without_init() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let repo = python_calc_repo(dir.path())?;
    std::fs::remove_file(repo.join("tests/__init__.py"))?;
    let spec = discover(&repo).remove(0);
    assert_eq!(spec.command, "python3 -m unittest discover -s tests");
    let related = related_command(
        &spec,
        bosun_verify::Runner::Unittest,
        &["calc.py".to_string()],
        &repo,
    )
    .unwrap();
    let result = run(&related, &repo).await;
    assert_eq!(
        result.status,
        CheckStatus::Passed,
        "{related}: {}",
        result.log
    );
    assert!(result.log.contains("Ran 2 tests"), "{}", result.log);
    Ok(())
}

#[tokio::test]
async fn a_hanging_check_is_killed_with_everything_it_started_at_its_timeout() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let started = Instant::now();
    let result = run_check(
        &check_run(
            "sleep 300 & echo $! > bg.pid; echo started; wait",
            dir.path(),
            Duration::from_secs(1),
        ),
        &CancellationToken::new(),
        &|_, _| {},
    )
    .await;
    assert_eq!(result.status, CheckStatus::TimedOut);
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(
        result.digest.summary.starts_with("timed out after 1 s"),
        "{}",
        result.digest.summary
    );
    let pid = std::fs::read_to_string(dir.path().join("bg.pid"))?;
    // Gone, or a zombie nobody reaped yet (PID 1 in a container may never reap it).
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", pid.trim())).unwrap_or_default();
    let alive = status
        .lines()
        .find(|l| l.starts_with("State:"))
        .is_some_and(|l| !l.contains("Z (zombie)"));
    assert!(!alive, "the background sleep {} was killed", pid.trim());
    Ok(())
}

#[tokio::test]
async fn a_check_printing_100_mb_keeps_a_capped_log_and_stream() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let streamed = Mutex::new(0usize);
    let notes = Mutex::new(Vec::new());
    let result = run_check(
        &check_run(
            "yes | head -c 100000000; exit 1",
            dir.path(),
            Duration::from_secs(120),
        ),
        &CancellationToken::new(),
        &|_, chunk| {
            *streamed.lock().unwrap() += chunk.len();
            if chunk.contains("[bosun:") {
                notes.lock().unwrap().push(chunk);
            }
        },
    )
    .await;
    assert_eq!(result.status, CheckStatus::Failed);
    assert_eq!(result.total_bytes, 100_000_000);
    assert!(
        result.log.len() < LOG_HEAD_BYTES + LOG_TAIL_BYTES + 200,
        "{}",
        result.log.len()
    );
    assert!(
        result.log.contains("[… 95.1 MB not kept of 95.4 MB …]"),
        "the note is there"
    );
    let streamed = *streamed.lock().unwrap();
    assert!(streamed <= STREAM_CAP_BYTES + 300, "{streamed}");
    assert_eq!(notes.lock().unwrap().len(), 1);
    assert_eq!(result.digest.summary, "exit code 1");
    Ok(())
}

#[tokio::test]
async fn a_missing_tool_is_a_broken_check_not_a_failure() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let result = run("bosun-no-such-tool --check", dir.path()).await;
    assert_eq!(result.status, CheckStatus::Error);
    assert_eq!(
        result.class,
        Class::MissingTool("bosun-no-such-tool".into())
    );
    assert!(
        result.digest.summary.contains("a broken check"),
        "{}",
        result.digest.summary
    );

    let result = run("python3 -m bosun_no_such_runner", dir.path()).await;
    assert_eq!(result.status, CheckStatus::Error);
    assert_eq!(
        result.class,
        Class::MissingTool("bosun_no_such_runner".into())
    );
    Ok(())
}

#[tokio::test]
async fn a_cancelled_check_and_a_missing_directory_are_errors() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        canceller.cancel();
    });
    let result = run_check(
        &check_run("sleep 60", dir.path(), Duration::from_secs(120)),
        &cancel,
        &|_, _| {},
    )
    .await;
    assert_eq!(result.status, CheckStatus::Error);
    assert_eq!(result.digest.summary, "cancelled; the check was killed");

    let result = run("true", &dir.path().join("gone")).await;
    assert_eq!(result.status, CheckStatus::Error);
    assert!(
        result.digest.summary.contains("does not exist"),
        "{}",
        result.digest.summary
    );
    Ok(())
}

#[tokio::test]
async fn output_is_streamed_as_text_as_it_comes() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let seen = Mutex::new(String::new());
    let result = run_check(
        &check_run(
            "printf '✖ one\\n'; printf 'two\\n' >&2",
            dir.path(),
            Duration::from_secs(10),
        ),
        &CancellationToken::new(),
        &|_, chunk| seen.lock().unwrap().push_str(&chunk),
    )
    .await;
    assert_eq!(result.status, CheckStatus::Passed);
    let seen = seen.lock().unwrap().clone();
    assert!(seen.contains("✖ one\n") && seen.contains("two\n"), "{seen}");
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            if entry.file_name() != ".git" {
                copy_dir(&entry.path(), &target)?;
            }
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}
