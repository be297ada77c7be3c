//! Every process a command starts dies with it: jobs that left its process group (`setsid`,
//! `nohup`) included, when it returns, times out or is cancelled.

use super::fixture::*;
use bosun_exec::run_command;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// A job that leaves the command's process group and writes `file` two seconds later.
fn setsid_job(file: &str) -> String {
    format!("setsid nohup sh -c 'sleep 2; echo escaped > {file}' >/dev/null 2>&1 &")
}

/// The same, writing after `secs` seconds.
fn slow_setsid_job(file: &str, secs: u32) -> String {
    format!("setsid nohup sh -c 'sleep {secs}; echo escaped > {file}' >/dev/null 2>&1 &")
}

#[tokio::test]
async fn a_setsid_job_dies_when_the_command_returns() {
    let Some(fx) = Fixture::new() else { return };
    let (outcome, text) = fx
        .run(&format!("{} echo started", setsid_job("escaped")))
        .await;
    assert!(outcome.success(), "{text}");
    assert_eq!(text, "started\n");
    assert!(
        !appears_later(&fx.worktree.join("escaped")).await,
        "the setsid job outlived its command"
    );
}

#[tokio::test]
async fn a_nohup_job_dies_when_the_command_returns() {
    let Some(fx) = Fixture::new() else { return };
    let (outcome, text) = fx
        .run("nohup sh -c 'sleep 2; echo escaped > escaped' >/dev/null 2>&1 & echo started")
        .await;
    assert!(outcome.success(), "{text}");
    assert!(
        !appears_later(&fx.worktree.join("escaped")).await,
        "the nohup job outlived its command"
    );
}

#[tokio::test]
async fn a_setsid_job_dies_when_the_command_times_out() {
    let Some(fx) = Fixture::new() else { return };
    let mut spec = fx.spec(&format!("{} sleep 30", setsid_job("escaped")), fx.policy());
    spec.timeout = Duration::from_millis(500);
    let (outcome, _) = run_spec(&spec).await;
    assert!(outcome.timed_out);
    assert!(
        !appears_later(&fx.worktree.join("escaped")).await,
        "the setsid job outlived the timeout"
    );
}

#[tokio::test]
async fn a_setsid_job_dies_when_the_command_is_cancelled() {
    let Some(fx) = Fixture::new() else { return };
    let spec = fx.spec(
        // (The pause lets the job leave the group before the cancel's SIGTERM reaches it.)
        &format!(
            "{} sleep 0.5; echo started; sleep 30",
            setsid_job("escaped")
        ),
        fx.policy(),
    );
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let outcome = run_command(&spec, &cancel, &move |_, chunk| {
        if String::from_utf8_lossy(chunk).contains("started") {
            trigger.cancel();
        }
    })
    .await
    .unwrap();
    assert!(outcome.cancelled);
    assert!(
        outcome.duration < Duration::from_secs(5),
        "{:?}",
        outcome.duration
    );
    assert!(
        !appears_later(&fx.worktree.join("escaped")).await,
        "the setsid job outlived the cancel"
    );
}

#[tokio::test]
async fn a_command_that_ignores_sigterm_and_its_jobs_are_still_ended_after_the_grace() {
    let Some(fx) = Fixture::new() else { return };
    let mut spec = fx.spec(
        // The job writes after the grace (2 s) that a command ignoring SIGTERM is given.
        &format!(
            "trap '' TERM; {} sleep 30; echo late > late",
            slow_setsid_job("escaped", 4)
        ),
        fx.policy(),
    );
    spec.timeout = Duration::from_millis(300);
    let (outcome, _) = run_spec(&spec).await;
    assert!(outcome.timed_out);
    assert!(
        outcome.duration < Duration::from_secs(6),
        "{:?}",
        outcome.duration
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(!appears_later(&fx.worktree.join("escaped")).await);
    assert!(!fx.worktree.join("late").exists());
}

#[tokio::test]
async fn the_command_s_exit_code_passes_through_and_death_by_signal_is_128_plus_n() {
    let Some(fx) = Fixture::new() else { return };
    let (outcome, _) = fx.run("exit 7").await;
    assert_eq!(outcome.exit_code, Some(7));
    let (outcome, _) = fx.run("kill -TERM $$").await;
    assert_eq!(outcome.exit_code, Some(128 + 15));
    let (outcome, _) = fx.run("kill -KILL $$").await;
    assert_eq!(outcome.exit_code, Some(128 + 9));
}
