//! `run_command` against real `bash` processes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bosun_exec::{CommandSpec, ExecError, OutputStream, run_command};
use std::sync::Mutex;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn spec(command: &str, dir: &tempfile::TempDir) -> CommandSpec {
    CommandSpec::new(command, dir.path())
}

/// A process is gone (or a zombie waiting for its reaper) once it has been killed. SIGKILL is
/// delivered asynchronously, so this waits up to 5 s for the kernel to finish it off.
fn is_dead(pid: i32) -> bool {
    (0..100).any(|_| {
        let dead = is_dead_now(pid);
        if !dead {
            std::thread::sleep(Duration::from_millis(50));
        }
        dead
    })
}

fn is_dead_now(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            state.starts_with('Z') || state.starts_with('X')
        }
    }
}

#[tokio::test]
async fn streams_stdout_and_stderr_in_order_and_reports_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let chunks = Mutex::new(Vec::new());
    let outcome = run_command(
        &spec(
            "echo out; sleep 0.1; echo err >&2; sleep 0.1; echo $PWD; exit 3",
            &dir,
        ),
        &CancellationToken::new(),
        &|stream, bytes| chunks.lock().unwrap().push((stream, bytes.to_vec())),
    )
    .await
    .unwrap();
    assert_eq!(outcome.exit_code, Some(3));
    assert!(!outcome.success());
    let cwd = dir.path().canonicalize().unwrap();
    let expected = format!("out\nerr\n{}\n", cwd.display());
    assert_eq!(String::from_utf8_lossy(&outcome.head), expected);
    assert_eq!(outcome.total_bytes, expected.len() as u64);
    let chunks = chunks.into_inner().unwrap();
    assert_eq!(chunks[0], (OutputStream::Stdout, b"out\n".to_vec()));
    assert_eq!(chunks[1], (OutputStream::Stderr, b"err\n".to_vec()));
}

#[tokio::test]
async fn stdin_is_empty_and_env_is_applied() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec("cat; echo \"[$BOSUN_X][${HOME:-unset}]\"", &dir);
    s.env.push(("BOSUN_X".into(), "42".into()));
    s.env_remove.push("HOME".into());
    let outcome = run_command(&s, &CancellationToken::new(), &|_, _| {})
        .await
        .unwrap();
    assert_eq!(outcome.exit_code, Some(0));
    assert_eq!(outcome.head, b"[42][unset]\n");
}

#[tokio::test]
async fn stream_cap_limits_delivery_but_not_counting() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec("head -c 100000 /dev/zero", &dir);
    s.stream_cap_bytes = 1000;
    s.keep_head_bytes = 10;
    s.keep_tail_bytes = 10;
    let delivered = Mutex::new(0usize);
    let outcome = run_command(&s, &CancellationToken::new(), &|_, b| {
        *delivered.lock().unwrap() += b.len()
    })
    .await
    .unwrap();
    assert_eq!(*delivered.lock().unwrap(), 1000);
    assert_eq!(outcome.total_bytes, 100_000);
    assert_eq!((outcome.head.len(), outcome.tail.len()), (10, 10));
    assert_eq!(outcome.omitted_bytes, 100_000 - 20);
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec("sleep 300 & echo $!; sleep 300", &dir);
    s.timeout = Duration::from_millis(500);
    let outcome = run_command(&s, &CancellationToken::new(), &|_, _| {})
        .await
        .unwrap();
    assert!(outcome.timed_out);
    assert_eq!(outcome.exit_code, None);
    assert!(outcome.signal.is_some());
    let grandchild: i32 = String::from_utf8_lossy(&outcome.head)
        .trim()
        .parse()
        .unwrap();
    assert!(
        is_dead(grandchild),
        "the background sleep {grandchild} survived the timeout"
    );
}

#[tokio::test]
async fn a_command_that_ignores_sigterm_is_killed_after_the_grace() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec(
        "trap '' TERM; echo started; while true; do sleep 0.05; done",
        &dir,
    );
    s.timeout = Duration::from_millis(300);
    let outcome = run_command(&s, &CancellationToken::new(), &|_, _| {})
        .await
        .unwrap();
    assert!(outcome.timed_out);
    assert_eq!(outcome.signal, Some(9), "SIGKILL after SIGTERM was ignored");
}

#[tokio::test]
async fn cancel_stops_the_command_and_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let pid = Mutex::new(String::new());
    let trigger = cancel.clone();
    let outcome = run_command(
        &spec("sleep 300 & echo $!; wait", &dir),
        &cancel,
        &|_, bytes| {
            pid.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(bytes));
            trigger.cancel();
        },
    )
    .await
    .unwrap();
    assert!(outcome.cancelled);
    assert!(!outcome.timed_out);
    let grandchild: i32 = pid.lock().unwrap().trim().parse().unwrap();
    assert!(is_dead(grandchild), "background sleep survived cancel");
}

#[tokio::test]
async fn background_job_holding_the_pipes_does_not_hang_us() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = run_command(
        &spec("(sleep 300; echo late) & echo $!; exit 0", &dir),
        &CancellationToken::new(),
        &|_, _| {},
    )
    .await
    .unwrap();
    assert_eq!(outcome.exit_code, Some(0));
    assert!(!outcome.timed_out);
    let subshell: i32 = String::from_utf8_lossy(&outcome.head)
        .trim()
        .parse()
        .unwrap();
    assert!(
        is_dead(subshell),
        "the job holding the pipes was left running"
    );
}

#[tokio::test]
async fn a_missing_working_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let s = CommandSpec::new("true", dir.path().join("gone"));
    let err = run_command(&s, &CancellationToken::new(), &|_, _| {})
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::MissingCwd(_)));
    assert!(err.to_string().contains("does not exist"), "{err}");
}

#[tokio::test]
async fn bash_missing_from_path_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec("true", &dir);
    s.env
        .push(("PATH".into(), dir.path().display().to_string()));
    let err = run_command(&s, &CancellationToken::new(), &|_, _| {})
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::BashMissing), "{err:?}");
    assert!(err.to_string().contains("install bash"));
}
