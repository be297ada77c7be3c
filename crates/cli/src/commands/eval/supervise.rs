//! Running a child under a time limit: its stdout read line by line as it comes, and on
//! expiry SIGINT first (so `bosun run` ends its task `interrupted` and stops what it started),
//! then SIGKILL after a grace period. A child started in a process group of its own
//! ([`Child::id`] is the group's id; `process_group(0)`) gets both signals as a group, as a
//! terminal's Ctrl-C would send them.

use anyhow::Context;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, ExitStatus};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a child has between SIGINT and SIGKILL.
const GRACE: Duration = Duration::from_secs(15);

pub struct Ended {
    /// None when it had to be killed and its status could not be read.
    pub status: Option<ExitStatus>,
    pub timed_out: bool,
}

/// Feeds each line of the child's stdout to `on_line` until it closes, within `limit`.
pub fn follow_lines(
    child: &mut Child,
    group: bool,
    limit: Duration,
    mut on_line: impl FnMut(&str),
) -> anyhow::Result<Ended> {
    let stdout = child
        .stdout
        .take()
        .context("the child's stdout was not piped")?;
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + limit;
    let mut timed_out = false;
    let mut kill_at: Option<Instant> = None;
    loop {
        let until = kill_at.unwrap_or(deadline);
        let wait = until.saturating_duration_since(Instant::now());
        match rx.recv_timeout(wait) {
            Ok(line) => on_line(&line),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if kill_at.is_some() {
                    signal(child, group, Stop::Kill);
                    break;
                }
                timed_out = true;
                signal(child, group, Stop::Interrupt);
                kill_at = Some(Instant::now() + GRACE);
            }
        }
    }
    let status = wait_until(child, group, kill_at.map(|k| k.max(Instant::now())))?;
    // A killed child's own children may still hold the pipe open: its reader is left to end
    // with them rather than waited for.
    if !timed_out {
        let _ = reader.join();
    }
    Ok(Ended { status, timed_out })
}

/// Waits for the child; past `kill_at` it is killed.
fn wait_until(
    child: &mut Child,
    group: bool,
    kill_at: Option<Instant>,
) -> anyhow::Result<Option<ExitStatus>> {
    let Some(kill_at) = kill_at else {
        return Ok(Some(child.wait().context("while waiting for a child")?));
    };
    loop {
        if let Some(s) = child.try_wait()? {
            return Ok(Some(s));
        }
        if Instant::now() >= kill_at {
            signal(child, group, Stop::Kill);
            return Ok(child.wait().ok());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

enum Stop {
    Interrupt,
    Kill,
}

/// SIGINT (as Ctrl-C) or SIGKILL, to the child or its whole group.
fn signal(child: &mut Child, group: bool, stop: Stop) {
    #[cfg(unix)]
    {
        use nix::sys::signal::{Signal, kill, killpg};
        use nix::unistd::Pid;
        let sig = match stop {
            Stop::Interrupt => Signal::SIGINT,
            Stop::Kill => Signal::SIGKILL,
        };
        let Ok(pid) = i32::try_from(child.id()) else {
            return;
        };
        // ESRCH: it has already gone.
        let _ = if group && pid > 1 {
            killpg(Pid::from_raw(pid), sig)
        } else {
            kill(Pid::from_raw(pid), sig)
        };
    }
    #[cfg(not(unix))]
    {
        if matches!(stop, Stop::Kill) {
            let _ = child.kill();
        }
        let _ = group;
    }
}

pub struct Output {
    pub status: Option<ExitStatus>,
    pub timed_out: bool,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// `wait_with_output` within `limit` (then SIGINT, then SIGKILL, to its group when `group`).
pub fn wait_output(child: &mut Child, group: bool, limit: Duration) -> anyhow::Result<Output> {
    let mut err = child.stderr.take();
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(e) = err.as_mut() {
            let _ = e.read_to_end(&mut buf);
        }
        buf
    });
    let mut stdout = Vec::new();
    let ended = follow_lines(child, group, limit, |l| {
        stdout.extend_from_slice(l.as_bytes());
        stdout.push(b'\n');
    })?;
    let stderr = if ended.timed_out {
        Vec::new()
    } else {
        err_reader.join().unwrap_or_default()
    };
    Ok(Output {
        status: ended.status,
        timed_out: ended.timed_out,
        stdout,
        stderr,
    })
}
