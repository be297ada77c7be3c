//! Child processes for Bosun: `bash -c <command>` in its own process group, with stdout and
//! stderr streamed as they arrive, a timeout, cancellation, and a bounded capture.
//!
//! Whatever a command prints, memory stays bounded: the first `keep_head_bytes` and the last
//! `keep_tail_bytes` of the combined output are kept, the middle is only counted. On timeout or
//! cancel the whole process group gets SIGTERM, then SIGKILL after a short grace.
//!
//! With [`CommandSpec::sandbox`] set, the command runs confined (see [`sandbox`]): writes only
//! in the task's worktree and temp dir, denied paths and the user's checkout unreadable, no
//! network unless granted (and then only through Bosun's proxy), no Unix sockets outside, no
//! set-id files, secret-looking environment variables dropped — and every process it starts
//! dies with it, even one that left its process group (`setsid`, `nohup`): the command has a
//! PID namespace of its own, or, where none can be made, the trampoline hunts its
//! descendants down. [`sweep_leftovers`] ends what a `kill -9` of Bosun left behind. [`probe`]
//! says once whether this system can do that; when it cannot, a sandboxed spec is refused
//! ([`ExecError::SandboxUnavailable`]), never run unconfined. A command granted the network
//! reaches it only through Bosun's egress proxy ([`Proxy`], see [`sandbox::proxy`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), bosun_exec::ExecError> {
//! use bosun_exec::{run_command, CommandSpec};
//! let spec = CommandSpec::new("cargo test", "/tmp/worktree");
//! let cancel = tokio_util::sync::CancellationToken::new();
//! let outcome = run_command(&spec, &cancel, &|_stream, chunk| print!("{}", String::from_utf8_lossy(chunk))).await?;
//! println!("exit {:?}, {} bytes", outcome.exit_code, outcome.total_bytes);
//! # Ok(()) }
//! ```

mod capture;
mod decode;
mod group;
mod run;
pub mod sandbox;

pub use bosun_protocol::OutputStream;
pub use capture::Capture;
pub use decode::StreamDecoder;
pub use run::run_command;
pub use sandbox::proxy::{
    ConnectionReport, ConnectionRequest, Decider, Proxy, ProxyConfig, ProxyError, Reporter, Verdict,
};
pub use sandbox::{
    Leftover, SANDBOX_ARG, SandboxError, SandboxPolicy, SandboxSupport, TaskGit, dispatch_sandbox,
    probe, sandbox_main, scrub_env, sweep_leftovers,
};

use std::path::PathBuf;
use std::time::Duration;

/// What to run and how much of its output to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    /// Run as `bash -c <command>`.
    pub command: String,
    pub cwd: PathBuf,
    /// Variables set for the child (after `env_remove` is applied).
    pub env: Vec<(String, String)>,
    /// Variables removed from the inherited environment.
    pub env_remove: Vec<String>,
    pub timeout: Duration,
    /// Bytes delivered to `on_output`; beyond it output is still drained and counted, not delivered.
    pub stream_cap_bytes: usize,
    pub keep_head_bytes: usize,
    pub keep_tail_bytes: usize,
    /// When set, the command runs confined to this policy (see [`sandbox`]) with a scrubbed
    /// environment ([`scrub_env`] over the inherited variables and `env` alike, keeping the
    /// policy's `env_allow` names); `run_command` refuses to run it if [`probe`] says the
    /// sandbox is unavailable.
    pub sandbox: Option<SandboxPolicy>,
    /// The trampoline binary for sandboxed commands: one that calls [`dispatch_sandbox`] first
    /// thing in `main` (the `bosun` binary: pass `std::env::current_exe()`). Unused on macOS,
    /// where `/usr/bin/sandbox-exec` confines the command.
    pub sandbox_exe: PathBuf,
    /// Two FIFOs opened for the command as fd 3 (read) and fd 4 (write) before it starts —
    /// outside the sandbox, so the command needs no path to them (a stdio MCP server's
    /// stdin and stdout: its command line redirects `<&3 >&4`). Bosun must hold the other
    /// ends open (read-write) or the opens wait.
    pub fifos: Option<(PathBuf, PathBuf)>,
}

impl CommandSpec {
    /// A spec with Bosun's defaults: 120 s timeout, 4 MB streamed, 8 KB head and 8 KB tail kept.
    pub fn new(command: impl Into<String>, cwd: impl Into<PathBuf>) -> Self {
        CommandSpec {
            command: command.into(),
            cwd: cwd.into(),
            env: Vec::new(),
            env_remove: Vec::new(),
            timeout: Duration::from_secs(120),
            stream_cap_bytes: 4 * 1024 * 1024,
            keep_head_bytes: 8 * 1024,
            keep_tail_bytes: 8 * 1024,
            sandbox: None,
            sandbox_exe: PathBuf::new(),
            fifos: None,
        }
    }
}

/// How a command ended and what it printed (combined stdout and stderr, in arrival order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutcome {
    /// The exit code, when the process exited normally. A sandboxed command that a signal N
    /// ended exits with 128 + N (the trampoline reports it).
    pub exit_code: Option<i32>,
    /// The signal that killed the process, if one did.
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
    /// Every byte the command printed, delivered or not.
    pub total_bytes: u64,
    pub head: Vec<u8>,
    pub tail: Vec<u8>,
    /// Bytes between `head` and `tail` that were counted but not kept.
    pub omitted_bytes: u64,
    pub duration: Duration,
}

impl CommandOutcome {
    /// True when the command exited with code 0 (not timed out, cancelled or killed).
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out && !self.cancelled
    }
}

/// Why a command could not be run at all. A command that runs and fails is not an error: see
/// [`CommandOutcome::exit_code`].
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error(
        "the working directory {0} does not exist or is not a directory; recreate it or run the command elsewhere"
    )]
    MissingCwd(PathBuf),
    #[error("bash was not found on PATH; install bash (commands run as `bash -c <command>`)")]
    BashMissing,
    #[error("could not start `bash -c …` in {cwd}: {source}")]
    Spawn {
        cwd: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the command must run sandboxed but this system cannot sandbox it: {0}; approve commands one by one instead"
    )]
    SandboxUnavailable(String),
    #[error(
        "the sandbox trampoline {0} does not exist; set CommandSpec::sandbox_exe to the bosun binary (std::env::current_exe())"
    )]
    SandboxExeMissing(PathBuf),
    #[error("the sandbox policy cannot be applied to the command: {0}")]
    SandboxPolicy(String),
    #[error("waiting for the command failed: {0}; the process group was killed")]
    Wait(#[source] std::io::Error),
}
