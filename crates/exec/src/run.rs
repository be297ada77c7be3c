//! `run_command`: spawn, stream, capture, time out, cancel, and leave no process behind.

use crate::capture::Capture;
use crate::sandbox::{self, SandboxSupport};
use crate::{CommandOutcome, CommandSpec, ExecError, OutputStream, group};
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

/// Between SIGTERM and SIGKILL on timeout or cancel.
const KILL_GRACE: Duration = Duration::from_secs(2);
/// A sandboxed command is ended by closing the trampoline's stdin (it then kills everything
/// the command started, which a SIGKILL of its group would keep it from doing); how long it
/// has for that before the group gets SIGKILL.
const TEARDOWN_GRACE: Duration = Duration::from_secs(1);
/// After the command exits, how long background jobs that still hold its stdout/stderr may keep
/// them open before the group is killed and reading stops.
const DRAIN_GRACE: Duration = Duration::from_millis(500);
const READ_CHUNK: usize = 64 * 1024;

/// Why the command was stopped before it finished on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    TimedOut,
    Cancelled,
}

/// Runs `bash -c <spec.command>` in `spec.cwd` with stdin from /dev/null, in its own process
/// group. Output chunks go to `on_output` as they arrive (up to `spec.stream_cap_bytes`), and a
/// bounded head and tail of the combined output come back in the [`CommandOutcome`].
///
/// On timeout or when `cancel` fires, the whole group gets SIGTERM, then SIGKILL after a short
/// grace. Background jobs that keep the output pipes open after the command exits are killed
/// after a brief wait. Dropping the returned future kills the group too.
///
/// A sandboxed command's trampoline gets a pipe as stdin (the command itself reads
/// /dev/null): it lives while the write end is open here, and when it closes — the grace
/// after SIGTERM is over, the future was dropped, or Bosun died — the trampoline kills
/// everything the command started, in or out of its process group.
pub async fn run_command(
    spec: &CommandSpec,
    cancel: &CancellationToken,
    on_output: &(dyn Fn(OutputStream, &[u8]) + Send + Sync),
) -> Result<CommandOutcome, ExecError> {
    if !spec.cwd.is_dir() {
        return Err(ExecError::MissingCwd(spec.cwd.clone()));
    }
    let started = Instant::now();
    let sandboxed = spec.sandbox.is_some();
    let mut cmd = command_for(spec)?;
    cmd.current_dir(&spec.cwd)
        .stdin(if sandboxed {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        // A sandboxed trampoline is ended through its stdin (see `GroupGuard`).
        .kill_on_drop(!sandboxed);
    let mut child = cmd.spawn().map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound && spec.cwd.is_dir() {
            ExecError::BashMissing
        } else {
            ExecError::Spawn {
                cwd: spec.cwd.clone(),
                source,
            }
        }
    })?;
    let pgid = child.id().unwrap_or(0);
    let mut guard = GroupGuard {
        pgid,
        armed: true,
        alive: child.stdin.take(),
    };
    let (Some(mut stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
        group::kill(pgid);
        return Err(ExecError::Spawn {
            cwd: spec.cwd.clone(),
            source: std::io::Error::other("the child's output pipes were not created"),
        });
    };

    let far = started + Duration::from_secs(60 * 60 * 24 * 365);
    let deadline = started.checked_add(spec.timeout).unwrap_or(far).min(far);
    let mut sink = Sink {
        capture: Capture::new(spec.keep_head_bytes, spec.keep_tail_bytes),
        delivered: 0,
        cap: spec.stream_cap_bytes,
        on_output,
    };
    let mut out_buf = vec![0u8; READ_CHUNK];
    let mut err_buf = vec![0u8; READ_CHUNK];
    let (mut out_open, mut err_open) = (true, true);
    let mut status: Option<ExitStatus> = None;
    let mut stop: Option<Stop> = None;
    let mut kill_at: Option<Instant> = None;
    let mut drain_until: Option<Instant> = None;

    loop {
        if status.is_some() && !out_open && !err_open {
            break;
        }
        let running = status.is_none();
        tokio::select! {
            read = stdout.read(&mut out_buf), if out_open => match read {
                Ok(n) if n > 0 => sink.push(OutputStream::Stdout, &out_buf[..n]),
                _ => out_open = false,
            },
            read = stderr.read(&mut err_buf), if err_open => match read {
                Ok(n) if n > 0 => sink.push(OutputStream::Stderr, &err_buf[..n]),
                _ => err_open = false,
            },
            waited = child.wait(), if running => match waited {
                Ok(exit) => {
                    status = Some(exit);
                    drain_until = Some(Instant::now() + DRAIN_GRACE);
                }
                Err(e) => return Err(ExecError::Wait(e)),
            },
            _ = sleep_until(deadline), if running && stop.is_none() => {
                stop = Some(Stop::TimedOut);
                group::terminate(pgid);
                kill_at = Some(Instant::now() + KILL_GRACE);
            },
            _ = cancel.cancelled(), if running && stop.is_none() => {
                stop = Some(Stop::Cancelled);
                group::terminate(pgid);
                kill_at = Some(Instant::now() + KILL_GRACE);
            },
            _ = sleep_until(kill_at.unwrap_or(far)), if kill_at.is_some() => {
                if guard.alive.take().is_some() {
                    // The trampoline ends the command's whole tree and exits; the group's
                    // SIGKILL follows if it does not.
                    kill_at = Some(Instant::now() + TEARDOWN_GRACE);
                } else {
                    group::kill(pgid);
                    kill_at = None;
                }
            },
            _ = sleep_until(drain_until.unwrap_or(far)), if drain_until.is_some() => {
                // Background jobs still hold the pipes: end them and stop reading.
                group::kill(pgid);
                break;
            },
        }
    }
    if stop.is_some() {
        // The command was stopped: nothing it started may outlive it.
        group::kill(pgid);
    }
    guard.armed = false;
    drop(guard.alive.take());

    let (head, tail, omitted_bytes) = sink.capture.into_parts();
    let (exit_code, signal) = match status {
        Some(s) => (s.code(), s.signal()),
        None => (None, None),
    };
    Ok(CommandOutcome {
        exit_code,
        signal,
        timed_out: stop == Some(Stop::TimedOut),
        cancelled: stop == Some(Stop::Cancelled),
        total_bytes: head.len() as u64 + tail.len() as u64 + omitted_bytes,
        head,
        tail,
        omitted_bytes,
        duration: started.elapsed(),
    })
}

/// `bash -c <command>` with the spec's environment, or, with a sandbox, the confined command
/// ([`confined`]: the trampoline on Linux, `sandbox-exec` on macOS) with a scrubbed environment.
fn command_for(spec: &CommandSpec) -> Result<tokio::process::Command, ExecError> {
    let Some(policy) = &spec.sandbox else {
        let mut cmd = program(spec, std::ffi::OsStr::new("bash"));
        cmd.arg("-c").arg(&spec.command);
        for key in &spec.env_remove {
            cmd.env_remove(key);
        }
        cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
        return Ok(cmd);
    };
    if let SandboxSupport::Unavailable { reason } = sandbox::probe() {
        return Err(ExecError::SandboxUnavailable(reason));
    }
    let mut cmd = confined(spec, policy)?;
    cmd.env_clear();
    // Variables that are not UTF-8 are dropped rather than judged.
    let inherited = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| !spec.env_remove.contains(k));
    cmd.envs(sandbox::scrub_env(inherited, &policy.env_allow));
    if policy.proxy.is_some() && !policy.network {
        cmd.envs(sandbox::proxy_env());
    }
    if let Some(temp) = &policy.temp_dir {
        for key in ["TMPDIR", "TMP", "TEMP"] {
            cmd.env(key, temp);
        }
        // Build caches (go, pip, …) default to ~/.cache, which is not writable.
        cmd.env("XDG_CACHE_HOME", temp.join(".cache"));
    }
    cmd.envs(sandbox::scrub_env(
        spec.env.iter().cloned(),
        &policy.env_allow,
    ));
    Ok(cmd)
}

/// A command running `program`: directly, or, with [`CommandSpec::fifos`], through a `bash`
/// that first opens the FIFOs as fds 3 and 4 and then becomes `program` (no `pre_exec`, and
/// the FIFOs are opened by that child alone, so no other process Bosun starts inherits them).
fn program(spec: &CommandSpec, program: &std::ffi::OsStr) -> tokio::process::Command {
    match &spec.fifos {
        None => tokio::process::Command::new(program),
        Some((read, write)) => {
            let mut cmd = tokio::process::Command::new("bash");
            cmd.arg("-c")
                .arg(r#"r=$1; w=$2; shift 2; exec "$@" 3<"$r" 4>"$w""#)
                .arg("bosun-fifos")
                .arg(read)
                .arg(write)
                .arg(program);
            cmd
        }
    }
}

/// The trampoline `<sandbox_exe> __sandbox <policy-json> -- bash -c <command>`.
#[cfg(not(target_os = "macos"))]
fn confined(
    spec: &CommandSpec,
    policy: &sandbox::SandboxPolicy,
) -> Result<tokio::process::Command, ExecError> {
    if !spec.sandbox_exe.is_file() {
        return Err(ExecError::SandboxExeMissing(spec.sandbox_exe.clone()));
    }
    let json =
        serde_json::to_string(policy).map_err(|e| ExecError::SandboxPolicy(e.to_string()))?;
    let mut cmd = program(spec, spec.sandbox_exe.as_os_str());
    cmd.arg(sandbox::SANDBOX_ARG)
        .arg(json)
        .args(["--", "bash", "-c"])
        .arg(&spec.command);
    Ok(cmd)
}

/// `/usr/bin/sandbox-exec -p <profile> -- bash -c <command>` (no trampoline on macOS).
#[cfg(target_os = "macos")]
fn confined(
    spec: &CommandSpec,
    policy: &sandbox::SandboxPolicy,
) -> Result<tokio::process::Command, ExecError> {
    let args = sandbox::seatbelt_args(policy, &spec.command)
        .map_err(|e| ExecError::SandboxPolicy(e.to_string()))?;
    let mut cmd = program(spec, std::ffi::OsStr::new(sandbox::SANDBOX_EXEC));
    cmd.args(args);
    Ok(cmd)
}

/// Delivers chunks to the caller up to the stream cap and keeps the bounded capture.
struct Sink<'a> {
    capture: Capture,
    delivered: usize,
    cap: usize,
    on_output: &'a (dyn Fn(OutputStream, &[u8]) + Send + Sync),
}

impl Sink<'_> {
    fn push(&mut self, stream: OutputStream, bytes: &[u8]) {
        self.capture.push(bytes);
        let n = bytes.len().min(self.cap - self.delivered);
        if n > 0 {
            (self.on_output)(stream, &bytes[..n]);
            self.delivered += n;
        }
    }
}

/// Kills the process group if `run_command` is abandoned midway (its future dropped, or an
/// early error return). A sandboxed command's trampoline is told first, by closing its stdin
/// (`alive`), and the group is killed after [`TEARDOWN_GRACE`], from a thread of its own.
struct GroupGuard {
    pgid: u32,
    armed: bool,
    alive: Option<tokio::process::ChildStdin>,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        if self.alive.take().is_none() {
            group::kill(self.pgid);
            return;
        }
        let pgid = self.pgid;
        let spawned = std::thread::Builder::new()
            .name("bosun-teardown".into())
            .spawn(move || {
                std::thread::sleep(TEARDOWN_GRACE);
                group::kill(pgid);
            });
        if spawned.is_err() {
            group::kill(pgid);
        }
    }
}
