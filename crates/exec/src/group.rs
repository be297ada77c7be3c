//! Signals to a whole process group (the command's own, made with `process_group(0)`).

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// Sends `signal` to every process in the group `pgid`. A group that is already gone is fine.
pub(crate) fn signal_group(pgid: u32, signal: Signal) {
    let Ok(raw) = i32::try_from(pgid) else {
        return;
    };
    if raw <= 1 {
        // Never signal our own group (0) or init's (1) by accident.
        return;
    }
    // ESRCH (no such group) means everything in it has already exited.
    let _ = killpg(Pid::from_raw(raw), signal);
}

pub(crate) fn terminate(pgid: u32) {
    signal_group(pgid, Signal::SIGTERM);
}

pub(crate) fn kill(pgid: u32) {
    signal_group(pgid, Signal::SIGKILL);
}
