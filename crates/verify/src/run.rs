//! One check, run through `bosun-exec`: killed with its whole process group at its timeout,
//! its streamed output and its log capped, digested and classified.

use crate::{Class, Digest, classify, digest, runner};
use bosun_exec::StreamDecoder;
use bosun_exec::{CommandSpec, ExecError, OutputStream, SandboxPolicy, run_command};
use bosun_protocol::CheckStatus;
use std::path::PathBuf;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The start of a check's output kept in its log.
pub const LOG_HEAD_BYTES: usize = 64 * 1024;
/// The end of a check's output kept in its log.
pub const LOG_TAIL_BYTES: usize = 256 * 1024;
/// Output streamed to `on_output` per check; the rest is only counted.
pub const STREAM_CAP_BYTES: usize = 4 * 1024 * 1024;

/// How to run one check.
#[derive(Debug, Clone)]
pub struct CheckRun {
    /// The command as run (already narrowed or `{files}`-expanded).
    pub command: String,
    pub cwd: PathBuf,
    pub timeout: Duration,
    /// Variables removed from the inherited environment.
    pub env_remove: Vec<String>,
    /// The policy's sandbox for the command (`None`: unconfined, as tests run it).
    pub sandbox: Option<SandboxPolicy>,
    /// The trampoline for a sandboxed command (see [`bosun_exec::CommandSpec::sandbox_exe`]).
    pub sandbox_exe: PathBuf,
    /// Absolute paths under this directory are written relative to it in the digest.
    pub root_for_paths: PathBuf,
}

/// How a check ended.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckResult {
    pub status: CheckStatus,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub digest: Digest,
    /// The output, capped: its first 64 KB and last 256 KB with a `[… N MB not kept …]` note
    /// between them.
    pub log: String,
    /// Every byte the check printed.
    pub total_bytes: u64,
    pub class: Class,
}

/// Runs a check to its end, its timeout, or `cancel`. Never fails: a check that cannot start
/// (missing working directory, no sandbox) comes back with status `Error` and the reason as
/// its summary; a missing tool is `Error` too, with [`Class::MissingTool`].
pub async fn run_check(
    run: &CheckRun,
    cancel: &CancellationToken,
    on_output: &(dyn Fn(OutputStream, String) + Send + Sync),
) -> CheckResult {
    let spec = CommandSpec {
        command: run.command.clone(),
        cwd: run.cwd.clone(),
        env: Vec::new(),
        env_remove: run.env_remove.clone(),
        timeout: run.timeout,
        stream_cap_bytes: STREAM_CAP_BYTES,
        keep_head_bytes: LOG_HEAD_BYTES,
        keep_tail_bytes: LOG_TAIL_BYTES,
        sandbox: run.sandbox.clone(),
        sandbox_exe: run.sandbox_exe.clone(),
        fifos: None,
    };
    let decoder = StreamDecoder::default();
    let stream = |stream: OutputStream, bytes: &[u8]| {
        let text = decoder.decode(stream, bytes);
        if !text.is_empty() {
            on_output(stream, text);
        }
    };
    let started = std::time::Instant::now();
    let outcome = run_command(&spec, cancel, &stream).await;
    for s in [OutputStream::Stdout, OutputStream::Stderr] {
        let rest = decoder.flush(s);
        if !rest.is_empty() {
            on_output(s, rest);
        }
    }
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(e) => return could_not_run(&e, started.elapsed()),
    };
    if outcome.total_bytes > STREAM_CAP_BYTES as u64 {
        on_output(
            OutputStream::Stderr,
            format!(
                "\n[bosun: output past {} was not streamed; {} in all, the log keeps its start and end]\n",
                size(STREAM_CAP_BYTES as u64),
                size(outcome.total_bytes)
            ),
        );
    }
    let mut log = String::from_utf8_lossy(&outcome.head).into_owned();
    if outcome.omitted_bytes > 0 {
        log.push_str(&format!(
            "\n[… {} not kept of {} …]\n",
            size(outcome.omitted_bytes),
            size(outcome.total_bytes)
        ));
    }
    log.push_str(&String::from_utf8_lossy(&outcome.tail));
    let runner = runner(&run.command);
    let mut digest = digest(&log, outcome.exit_code, runner, Some(&run.root_for_paths));
    let class = if outcome.timed_out || outcome.cancelled {
        Class::Ran
    } else {
        classify(outcome.exit_code, &log, &run.command)
    };
    let status = if outcome.timed_out {
        digest.summary = format!(
            "timed out after {} s; the check and everything it started were killed{}",
            run.timeout.as_secs(),
            match digest.failures.len() {
                0 => String::new(),
                _ => format!(" ({})", digest.summary),
            }
        );
        CheckStatus::TimedOut
    } else if outcome.cancelled {
        digest.summary = "cancelled; the check was killed".to_string();
        CheckStatus::Error
    } else if outcome.success() {
        CheckStatus::Passed
    } else if let Class::MissingTool(tool) = &class {
        digest.summary = format!(
            "`{tool}` is missing: the check could not run (a broken check, not a failure of the task); install it or change the check's command"
        );
        CheckStatus::Error
    } else {
        if outcome.exit_code.is_none()
            && digest.failures.is_empty()
            && let Some(signal) = outcome.signal
        {
            digest.summary = format!("killed by signal {signal}");
        }
        CheckStatus::Failed
    };
    CheckResult {
        status,
        exit_code: outcome.exit_code,
        duration_ms: outcome.duration.as_millis() as u64,
        digest,
        log,
        total_bytes: outcome.total_bytes,
        class,
    }
}

fn could_not_run(error: &ExecError, elapsed: Duration) -> CheckResult {
    let summary = format!("the check could not run: {error}");
    CheckResult {
        status: CheckStatus::Error,
        exit_code: None,
        duration_ms: elapsed.as_millis() as u64,
        digest: Digest {
            failures: Vec::new(),
            summary: summary.clone(),
            tail: summary.clone(),
        },
        log: summary,
        total_bytes: 0,
        class: Class::Ran,
    }
}

fn size(bytes: u64) -> String {
    const MB: u64 = 1024 * 1024;
    if bytes >= MB {
        format!("{:.1} MB", bytes as f64 / MB as f64)
    } else if bytes >= 1024 {
        format!("{} KB", bytes / 1024)
    } else {
        format!("{bytes} B")
    }
}
