//! The command sandbox: what a task's commands may read, write and reach, and how long what
//! they start may live.
//!
//! A sandboxed command is not spawned directly. `run_command` starts the trampoline
//! (`<sandbox_exe> __sandbox <policy-json> -- bash -c <command>`, in the command's own process
//! group, with a scrubbed environment and a pipe as stdin that only Bosun writes to). No
//! `unsafe` code and no `pre_exec` hook are needed: every step is a process of its own, the
//! same binary started again in another mode (see [`dispatch_sandbox`]).
//!
//! The processes, on Linux:
//! 1. **The supervisor** (`__sandbox`, not confined itself; see `supervisor.rs`) reads the
//!    host's bound Unix sockets, then enters new user, mount and network namespaces (when
//!    [`SandboxSupport::Full::netns`]). The user namespace is taken even as root: capabilities
//!    then only count inside it, so a root command can neither `setns` back into the host's
//!    network nor undo mounts. Without network, the network namespace has only a loopback
//!    interface (brought up, so local servers and tests still work); with a proxy in the
//!    policy the supervisor listens on `127.0.0.1:3128` there and forwards to it (see
//!    [`PROXY_PORT`]). In the mount namespace, made private: the write paths are remounted
//!    `nosuid,nodev`, every Unix socket outside them is covered by `/dev/null`, and every
//!    `read_deny` path is covered (a directory by an empty read-only tmpfs, a file by
//!    `/dev/null`). Then it unshares a PID namespace for its children and starts its init.
//! 2. **The init** (`__sandbox-init`, PID 1 of that namespace; see `init.rs`) mounts a fresh
//!    `/proc` in a mount namespace of its own, starts the command, and exits with its status
//!    when it exits: the kernel then kills everything left in the namespace. Without a PID
//!    namespace the supervisor starts the command itself as a child subreaper and kills every
//!    descendant when it ends; what survives a `kill -9` of Bosun and the supervisor together
//!    is found by its mark ([`OWNER_ENV`]) and killed at the next task start
//!    ([`crate::sweep_leftovers`]).
//! 3. **The command** (`__sandbox-command`; see `command.rs`) applies **Landlock**
//!    (`no_new_privs` with it): reading and executing are allowed everywhere except under
//!    `read_deny` paths. Landlock only grants, so "everything but X" is built by walking from
//!    `/` down to each denied path and granting every sibling on the way (directories along
//!    the way keep only `ReadDir`, so names inside a denied directory can be listed, never
//!    read). Writing is allowed only under `write_paths` and on `/dev/null`, `/dev/zero`,
//!    `/dev/full`, `/dev/tty` and `/dev/pts`. `read_only_paths` get no write rule (a write
//!    path containing one is dropped), while a write path inside one stays writable. Landlock
//!    also forbids mounting, so step 1 cannot be undone; on ABI 6 it stops the command from
//!    signalling processes outside the sandbox or reaching abstract Unix sockets, and on
//!    ABI 9 from connecting to a Unix socket file outside the write paths. Without a network
//!    namespace, network is cut with Landlock's TCP rules (ABI 4+) and by seccomp. Then the
//!    **seccomp** filters (see `seccomp.rs`): no set-id bits, no `openat2` or io_uring, no
//!    network sockets without a network namespace. Then `exec` of the command.
//!
//! A `read_deny` path inside a write path (a worktree's `.env`) can only be hidden by the mount
//! step; without namespaces the trampoline refuses to run rather than leave it readable.
//!
//! On macOS there is no trampoline: `run_command` runs the command under `sandbox-exec` with
//! a Seatbelt profile rendered from the same policy (see [`seatbelt_profile`]); the proxy is
//! not forwarded there and processes are ended by their process group only.

#[cfg(target_os = "linux")]
mod command;
mod env;
#[cfg(target_os = "linux")]
mod forwarder;
#[cfg(target_os = "linux")]
mod init;
#[cfg(target_os = "linux")]
mod landlock_rules;
mod leftovers;
#[cfg(target_os = "linux")]
mod namespaces;
mod procfs;
pub mod proxy;
mod seatbelt;
#[cfg(target_os = "linux")]
mod seccomp;
#[cfg(target_os = "linux")]
mod supervisor;
mod support;
mod task;
mod trampoline;
#[cfg(target_os = "linux")]
mod unix_sockets;

pub use env::{PROXY_PORT, looks_secret, proxy_env, scrub_env};
pub use leftovers::{Leftover, OWNER_ENV, sweep_leftovers};
pub use seatbelt::{SANDBOX_EXEC, seatbelt_args, seatbelt_profile};
pub use support::{DISABLE_ENV, SandboxSupport, probe};
pub use task::{TaskGit, home_secrets};
pub use trampoline::{
    SANDBOX_ARG, SANDBOX_FAILED_EXIT, dispatch_sandbox, is_sandbox_arg, sandbox_main,
};

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What a sandboxed command may touch. Paths should be absolute; they are resolved (symlinks
/// followed) by the trampoline, and paths that do not exist are skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxPolicy {
    /// The task's worktree (normally also in `write_paths`).
    pub worktree: PathBuf,
    /// Everything the command may write under: the worktree, the task's private temp dir and
    /// the task's own git dir (see [`SandboxPolicy::for_task`]). Remounted `nosuid` inside the
    /// sandbox.
    pub write_paths: Vec<PathBuf>,
    /// Files and directories the command may not read (`~/.ssh`, `~/.aws`, a worktree's `.env`).
    pub read_deny: Vec<PathBuf>,
    /// Readable, never writable, even where a write path contains it (the user's git dir).
    pub read_only_paths: Vec<PathBuf>,
    /// Whether the command may use the raw network. With the sandbox on, Bosun never sets it:
    /// a command granted the network gets `proxy` instead.
    pub network: bool,
    /// A Unix socket on which Bosun's egress proxy accepts HTTP proxy connections (`CONNECT
    /// host:port` and absolute-form requests). In a network namespace the command reaches it
    /// at `127.0.0.1:`[`PROXY_PORT`] (the variables of [`proxy_env`] say so) and never
    /// directly: the socket's path is covered like any other socket outside the worktree.
    /// Without a network namespace there is no forwarder, and the command has no network.
    #[serde(default)]
    pub proxy: Option<PathBuf>,
    /// Environment variable names passed through although they look secret.
    pub env_allow: Vec<String>,
    /// The task's private temp dir (also in `write_paths`): `TMPDIR`, `TMP` and `TEMP` point
    /// at it, since `/tmp` itself is not writable, and `XDG_CACHE_HOME` at its `.cache`.
    #[serde(default)]
    pub temp_dir: Option<PathBuf>,
}

/// Why the sandbox could not be set up or entered.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("the sandbox is unavailable on this system: {0}; commands must be approved one by one")]
    Unavailable(String),
    #[error(
        "usage: {SANDBOX_ARG} <policy-json> -- <program> [args…] (this is Bosun's internal sandbox entry point)"
    )]
    Usage,
    #[error("the sandbox policy is not valid JSON: {0}")]
    Policy(#[from] serde_json::Error),
    #[error("could not create the sandbox's namespaces ({step}): {source}")]
    Namespace {
        step: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{0} must stay unreadable but lies inside a writable directory, which only a mount namespace can hide; this system has none, so the command was not run: remove the file from the worktree or allow reading it"
    )]
    DenyInsideWritable(PathBuf),
    #[error(
        "{0} cannot be named in a macOS Seatbelt profile (it must be an absolute UTF-8 path without control characters); change the sandbox policy"
    )]
    SeatbeltPath(PathBuf),
    #[error("could not apply the Landlock rules: {0}")]
    Landlock(String),
    #[error("the kernel did not enforce the Landlock rules; the command was not run")]
    NotEnforced,
    #[error("could not start {program}: {source}")]
    Exec {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the sandbox must be entered before any thread starts: call bosun_exec::dispatch_sandbox() first thing in main, before building the async runtime"
    )]
    Threaded,
    #[error("could not create the task's temp dir {path}: {source}")]
    TempDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("could not install the seccomp filter: {0}")]
    Seccomp(String),
    #[error(
        "could not reach Bosun's egress proxy socket {path}: {source}; is Bosun's proxy running?"
    )]
    Proxy {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
