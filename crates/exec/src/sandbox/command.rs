//! The command's own confinement (`__sandbox-command`): the last stage before `exec`.
//!
//! In order: die with the supervisor when it is the parent (no PID namespace); give the
//! command its own uid and gid back when the namespace mapped them to root; Landlock (see
//! [`super::landlock_rules`]); the seccomp filters (see [`super::seccomp`]); then `exec` of
//! the command, which inherits every restriction, as does everything it starts.

use super::supervisor::KILLED_EXIT;
use super::trampoline::{Invocation, Stage};
use super::{SandboxError, landlock_rules, namespaces, seccomp};
use nix::sys::signal::Signal;
use std::convert::Infallible;
use std::os::unix::process::CommandExt;

pub(crate) fn run(stage: Stage, invocation: Invocation) -> Result<Infallible, SandboxError> {
    // The supervisor blocks SIGTERM and others for itself, and a blocked mask survives both
    // spawn and exec: the command must start with none blocked.
    unblock_signals()?;
    if let Some(parent) = stage.parent {
        let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
        if i64::from(nix::unistd::getppid().as_raw()) != i64::from(parent) {
            // The supervisor died before the death signal was set.
            std::process::exit(KILLED_EXIT);
        }
    }
    if let Some((uid, gid)) = stage.remap {
        namespaces::remap(uid, gid)?;
    }
    // No network namespace and no grant: cut the network here.
    let cut = !stage.netns && !stage.policy.network;
    landlock_rules::restrict(&stage.policy, cut && stage.landlock_abi >= 4)?;
    if stage.seccomp {
        seccomp::apply(seccomp::Options {
            cut_network: cut,
            allow_unix: stage.landlock_abi >= 9,
        })?;
    }
    let source = std::process::Command::new(&invocation.program)
        .args(&invocation.args)
        .exec();
    Err(SandboxError::Exec {
        program: invocation.program.to_string_lossy().into_owned(),
        source,
    })
}

/// Clears the signal mask inherited from the supervisor.
pub(crate) fn unblock_signals() -> Result<(), SandboxError> {
    nix::sys::signal::SigSet::empty()
        .thread_set_mask()
        .map_err(|e| SandboxError::Namespace {
            step: "clearing the signal mask",
            source: std::io::Error::from(e),
        })
}
