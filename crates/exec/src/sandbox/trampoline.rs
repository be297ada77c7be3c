//! The trampoline's entry points. `<exe> __sandbox <policy-json> -- <program> [args…]` is the
//! one Bosun calls (the supervisor, [`super::supervisor`]); the supervisor starts the same
//! binary again (`/proc/self/exe`) in two internal modes, `__sandbox-init` (the PID
//! namespace's init, [`super::init`]) and `__sandbox-command` (the confinement of the command
//! itself, [`super::command`]), which take a [`Stage`] as JSON instead of a policy. Every mode
//! goes through [`dispatch_sandbox`], so any binary that can serve as the trampoline serves
//! them all.

use super::{SandboxError, SandboxPolicy};
use serde::{Deserialize, Serialize};
use std::ffi::{OsStr, OsString};

/// The hidden first argument that makes a Bosun binary act as the sandbox trampoline.
pub const SANDBOX_ARG: &str = "__sandbox";
/// The PID namespace's init (internal: started by the supervisor only).
pub(crate) const INIT_ARG: &str = "__sandbox-init";
/// The command's own confinement (internal: started by the supervisor or the init only).
pub(crate) const COMMAND_ARG: &str = "__sandbox-command";

/// The trampoline's exit code when it could not set the sandbox up (the reason is on stderr,
/// prefixed `bosun sandbox:`); the command did not run.
pub const SANDBOX_FAILED_EXIT: i32 = 125;

/// Whether `arg` (a binary's first argument) is one of the trampoline's modes: every one
/// starts with [`SANDBOX_ARG`].
pub fn is_sandbox_arg(arg: &OsStr) -> bool {
    arg.to_str()
        .is_some_and(|a| a == SANDBOX_ARG || a == INIT_ARG || a == COMMAND_ARG)
}

/// Call first thing in `main` of every binary that may serve as `CommandSpec::sandbox_exe`:
/// when the process was started in one of the trampoline's modes this never returns,
/// otherwise it does nothing.
pub fn dispatch_sandbox() {
    let mut args = std::env::args_os();
    let Some(mode) = args.nth(1) else {
        return;
    };
    if !is_sandbox_arg(&mode) {
        return;
    }
    let rest: Vec<OsString> = args.collect();
    if mode == SANDBOX_ARG {
        sandbox_main(rest);
    }
    finish(run_stage(&mode, rest))
}

/// Runs the supervisor with the arguments after `__sandbox`: `<policy-json> -- <program>
/// [args…]`. Never returns: it exits with the command's exit code (128 + N when a signal N
/// ended it), or with [`SANDBOX_FAILED_EXIT`] after printing why on stderr. Must be called
/// while the process has a single thread.
pub fn sandbox_main(args: Vec<OsString>) -> ! {
    finish(supervise(args))
}

fn finish(result: Result<std::convert::Infallible, SandboxError>) -> ! {
    let err = match result {
        Err(e) => e,
        Ok(never) => match never {},
    };
    eprintln!("bosun sandbox: {err}");
    std::process::exit(SANDBOX_FAILED_EXIT)
}

/// What the supervisor hands to the init and the command: the policy and what it found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Stage {
    pub policy: SandboxPolicy,
    pub landlock_abi: i32,
    /// The command runs in its own network namespace (sockets are then harmless).
    pub netns: bool,
    pub seccomp: bool,
    /// The caller's uid and gid, when the namespace maps them to root and the command must
    /// be given them back in a nested user namespace.
    pub remap: Option<(u32, u32)>,
    /// The supervisor's pid, when it is the command's parent (no PID namespace): the command
    /// then dies with it.
    pub parent: Option<u32>,
}

/// The arguments every mode takes: `<json> -- <program> [args…]`.
pub(crate) struct Invocation {
    pub json: String,
    pub program: OsString,
    pub args: Vec<OsString>,
}

impl Invocation {
    fn parse(args: Vec<OsString>) -> Result<Invocation, SandboxError> {
        let mut args = args.into_iter();
        let json = args.next().ok_or(SandboxError::Usage)?;
        if args.next().is_none_or(|sep| sep != "--") {
            return Err(SandboxError::Usage);
        }
        let program = args.next().ok_or(SandboxError::Usage)?;
        Ok(Invocation {
            json: json.into_string().map_err(|_| SandboxError::Usage)?,
            program,
            args: args.collect(),
        })
    }

    /// `<exe> <mode> <json> -- <program> [args…]` for a later stage, with `/proc/self/exe`
    /// (this very binary, wherever it was started from).
    #[cfg(target_os = "linux")]
    pub(crate) fn next(
        &self,
        mode: &str,
        stage: &Stage,
    ) -> Result<std::process::Command, SandboxError> {
        let mut cmd = std::process::Command::new("/proc/self/exe");
        cmd.arg(mode)
            .arg(serde_json::to_string(stage)?)
            .arg("--")
            .arg(&self.program)
            .args(&self.args);
        Ok(cmd)
    }
}

fn supervise(args: Vec<OsString>) -> Result<std::convert::Infallible, SandboxError> {
    let invocation = Invocation::parse(args)?;
    let policy: SandboxPolicy = serde_json::from_str(&invocation.json)?;
    confine(policy, invocation)
}

#[cfg(target_os = "linux")]
fn confine(
    policy: SandboxPolicy,
    invocation: Invocation,
) -> Result<std::convert::Infallible, SandboxError> {
    super::supervisor::run(policy, invocation)
}

#[cfg(not(target_os = "linux"))]
fn confine(
    _policy: SandboxPolicy,
    _invocation: Invocation,
) -> Result<std::convert::Infallible, SandboxError> {
    match super::probe() {
        super::SandboxSupport::Unavailable { reason } => Err(SandboxError::Unavailable(reason)),
        // macOS confines through `sandbox-exec` (see `run_command`), never through this
        // trampoline, so it refuses rather than run the program unconfined.
        _ => Err(SandboxError::Unavailable(
            "this system's sandbox is not entered through the trampoline".into(),
        )),
    }
}

#[cfg(target_os = "linux")]
fn run_stage(mode: &OsStr, args: Vec<OsString>) -> Result<std::convert::Infallible, SandboxError> {
    let invocation = Invocation::parse(args)?;
    let stage: Stage = serde_json::from_str(&invocation.json)?;
    if mode == INIT_ARG {
        super::init::run(stage, invocation)
    } else {
        super::command::run(stage, invocation)
    }
}

#[cfg(not(target_os = "linux"))]
fn run_stage(
    _mode: &OsStr,
    _args: Vec<OsString>,
) -> Result<std::convert::Infallible, SandboxError> {
    Err(SandboxError::Unavailable(
        "the trampoline's internal stages exist on Linux only".into(),
    ))
}
