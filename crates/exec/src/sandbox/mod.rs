//! The command sandbox: what a task's commands may read, write and reach.
//!
//! A sandboxed command is not spawned directly. `run_command` starts the trampoline
//! (`<sandbox_exe> __sandbox <policy-json> -- bash -c <command>`, in the command's own process
//! group, with a scrubbed environment); the trampoline restricts itself and then `exec`s bash, so
//! every restriction is inherited by the command and everything it starts. No `unsafe` code and
//! no `pre_exec` hook in the parent are needed.
//!
//! What the trampoline does, in order (Linux):
//! 1. **Namespaces** (when [`SandboxSupport::Full::netns`]): `unshare(CLONE_NEWUSER |
//!    CLONE_NEWNS | CLONE_NEWNET)` with the caller's uid/gid mapped to themselves. The user
//!    namespace is taken even as root: capabilities then only count inside it, so a root
//!    command can neither `setns` back into the host's network nor undo mounts. Without
//!    network, the new network namespace has only a loopback interface (brought up, so local
//!    servers and tests still work). The mount namespace is made private and every `read_deny`
//!    path is covered: a directory by an empty read-only tmpfs, a file by `/dev/null`.
//! 2. **Landlock** (`no_new_privs` is set with it): reading and executing are allowed
//!    everywhere except under `read_deny` paths. Landlock only grants, so "everything but X" is
//!    built by walking from `/` down to each denied path and granting every sibling on the way
//!    (directories along the way keep only `ReadDir`, so names inside a denied directory can be
//!    listed, never read). Writing is allowed only under `write_paths` and on `/dev/null`,
//!    `/dev/zero`, `/dev/full`, `/dev/tty` and `/dev/pts`. `read_only_paths` get no write rule
//!    (a write path containing one is dropped), while a write path inside one — the worktree's
//!    git admin dir inside the user's `.git` — stays writable. Landlock also forbids
//!    mounting, so step 1 cannot be undone, and on kernels with ABI 6 it stops the command from
//!    signalling processes outside the sandbox or reaching abstract unix sockets (D-Bus, X11).
//!    Without a network namespace, network is cut with Landlock's TCP rules (ABI 4+), which
//!    leaves UDP open: [`SandboxSupport::Full::netns`] says which one is in force.
//! 3. `exec` of the command.
//!
//! A `read_deny` path inside a write path (a worktree's `.env`) can only be hidden by the mount
//! step; without namespaces the trampoline refuses to run rather than leave it readable.
//!
//! On macOS there is no trampoline: `run_command` runs the command under `sandbox-exec` with
//! a Seatbelt profile rendered from the same policy (see [`seatbelt_profile`]).

mod env;
#[cfg(target_os = "linux")]
mod landlock_rules;
#[cfg(target_os = "linux")]
mod namespaces;
pub mod proxy;
mod seatbelt;
mod support;
mod task;
mod trampoline;

pub use env::{looks_secret, scrub_env};
pub use seatbelt::{SANDBOX_EXEC, seatbelt_args, seatbelt_profile};
pub use support::{NAMESPACES_ENV, SandboxSupport, probe};
pub use task::home_secrets;
pub use trampoline::{SANDBOX_ARG, SANDBOX_FAILED_EXIT, dispatch_sandbox, sandbox_main};

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What a sandboxed command may touch. Paths should be absolute; they are resolved (symlinks
/// followed) by the trampoline, and paths that do not exist are skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxPolicy {
    /// The task's worktree (normally also in `write_paths`).
    pub worktree: PathBuf,
    /// Everything the command may write under: the worktree, the task's private temp dir, and
    /// the worktree's own git admin dir, branch ref directory and the object store (see
    /// [`SandboxPolicy::for_task`]).
    pub write_paths: Vec<PathBuf>,
    /// Files and directories the command may not read (`~/.ssh`, `~/.aws`, a worktree's `.env`).
    pub read_deny: Vec<PathBuf>,
    /// Readable, never writable, even where a write path lies inside (the user's `.git`).
    pub read_only_paths: Vec<PathBuf>,
    /// Whether the command may use the raw network. With the sandbox on, Bosun never sets it:
    /// a command granted the network gets `proxy` instead.
    pub network: bool,
    /// Environment variable names passed through although they look secret.
    pub env_allow: Vec<String>,
    /// The task's private temp dir (also in `write_paths`): `TMPDIR`, `TMP` and `TEMP` point
    /// at it, since `/tmp` itself is not writable, and `XDG_CACHE_HOME` at its `.cache`.
    #[serde(default)]
    pub temp_dir: Option<PathBuf>,
    /// The Unix socket of Bosun's egress proxy for this command (see [`proxy`]), under
    /// `$BOSUN_HOME/run/`: inside its network namespace the command reaches it, and through it
    /// only the hosts the policy allows, as `HTTP_PROXY`/`HTTPS_PROXY`.
    #[serde(default)]
    pub proxy: Option<PathBuf>,
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
    #[error("could not read the worktree's git metadata at {path}: {source}")]
    GitMetadata {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
