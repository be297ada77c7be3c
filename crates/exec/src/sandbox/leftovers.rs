//! Processes that outlived the command that started them, found and killed later.
//!
//! Every process a sandboxed command starts carries [`OWNER_ENV`]`=<pid>:<start time>` of the
//! trampoline that supervised it (inherited through the environment). While that trampoline
//! lives, the command is running; once it is gone, anything still carrying its mark is a
//! leftover. With a PID namespace there are none (the kernel ends the namespace with its
//! init); without one, the trampoline kills every descendant it can find, but a `kill -9` of
//! both Bosun and the trampoline leaves their descendants running. [`sweep_leftovers`],
//! called when a task starts, ends them.
//!
//! The mark is an environment variable, so a hostile command can start a process without it
//! (`env -u`); the PID namespace, not this sweep, is what contains such a command.

use super::procfs;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The environment variable that names the trampoline supervising a sandboxed process.
pub const OWNER_ENV: &str = "BOSUN_SANDBOX_OWNER";

/// A process killed by [`sweep_leftovers`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leftover {
    pub pid: u32,
    /// Its command line, arguments joined by spaces.
    pub command: String,
}

/// The mark for processes supervised by this process: `<pid>:<start time>`.
pub(crate) fn owner_mark() -> String {
    let me = std::process::id();
    let start = procfs::stat(me).map_or(0, |s| s.start_time);
    format!("{me}:{start}")
}

/// Whether the process a mark names is still running (the same process: pid and start time).
fn owner_alive(mark: &str) -> bool {
    let Some((pid, start)) = mark.split_once(':') else {
        return false;
    };
    let (Ok(pid), Ok(start)) = (pid.parse::<u32>(), start.parse::<u64>()) else {
        return false;
    };
    procfs::stat(pid).is_some_and(|s| s.start_time == start)
}

/// Kills (SIGKILL) every process of this user whose sandbox trampoline is gone, and returns
/// what it killed. Processes of running commands, of other users, and this process itself
/// are left alone. Linux only (elsewhere it finds nothing).
pub fn sweep_leftovers() -> Vec<Leftover> {
    let me = std::process::id();
    let mut killed: Vec<Leftover> = Vec::new();
    // A second pass catches what a leftover started while the first one ran.
    for _ in 0..2 {
        for pid in procfs::pids() {
            if pid == me || killed.iter().any(|k| k.pid == pid) {
                continue;
            }
            let Some(mark) = procfs::environ_var(pid, OWNER_ENV) else {
                continue;
            };
            if owner_alive(&mark) {
                continue;
            }
            let command = procfs::command_line(pid);
            let Ok(raw) = i32::try_from(pid) else {
                continue;
            };
            if kill(Pid::from_raw(raw), Signal::SIGKILL).is_ok() {
                killed.push(Leftover { pid, command });
            }
        }
    }
    killed
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_reused_pid_is_not() {
        assert!(owner_alive(&owner_mark()));
        let me = std::process::id();
        assert!(!owner_alive(&format!("{me}:1")), "same pid, other start");
        assert!(!owner_alive("nonsense"));
        assert!(!owner_alive("4194999:5"));
    }
}
