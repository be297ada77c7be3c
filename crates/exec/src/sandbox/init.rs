//! The init of a command's PID namespace (`__sandbox-init`, started by the supervisor).
//!
//! As PID 1 it gets a mount namespace with a `/proc` of its own, starts the command
//! (`__sandbox-command`), reaps every process re-parented to it, and exits with the command's
//! status as soon as the command exits. Its exit ends the namespace: the kernel kills every
//! process still in it before the supervisor is told. It dies with the supervisor: by
//! `PR_SET_PDEATHSIG` (SIGKILL), and when its stdin, a pipe from the supervisor, reaches EOF
//! (which also covers a supervisor that died before the death signal was set; a namespace's
//! init cannot ask `getppid()`, which is 0 for it). Signals from the command's process group
//! (Bosun's SIGTERM) do not reach it: a namespace init only receives signals it handles.

use super::SandboxError;
use super::command::unblock_signals;
use super::namespaces;
use super::supervisor::{KILLED_EXIT, wait_for};
use super::trampoline::{COMMAND_ARG, Invocation, Stage};
use nix::sys::signal::Signal;
use std::convert::Infallible;
use std::io::Read;
use std::process::Stdio;

pub(crate) fn run(stage: Stage, invocation: Invocation) -> Result<Infallible, SandboxError> {
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
    unblock_signals()?;
    namespaces::fresh_proc()?;
    std::thread::Builder::new()
        .name("supervisor-pipe".into())
        .spawn(|| {
            let mut buf = [0u8; 64];
            let mut stdin = std::io::stdin();
            loop {
                match stdin.read(&mut buf) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            std::process::exit(KILLED_EXIT);
        })
        .map_err(|source| SandboxError::Namespace {
            step: "starting the init's watcher",
            source,
        })?;
    let command = invocation
        .next(COMMAND_ARG, &stage)?
        .stdin(Stdio::null())
        .spawn()
        .map_err(|source| SandboxError::Exec {
            program: "/proc/self/exe".into(),
            source,
        })?;
    std::process::exit(wait_for(command.id()))
}
