//! The supervisor: the process Bosun starts for a sandboxed command (`__sandbox`), and the
//! one that makes sure nothing the command starts outlives it.
//!
//! It enters the namespaces and lays out the mounts (single-threaded), then starts its
//! watchers, and only then the command:
//! - **With a PID namespace** it starts the namespace's init ([`super::init`]), which starts
//!   the command and exits with the command's status when the command exits; the kernel then
//!   kills everything left in the namespace (`setsid`, `nohup` and double-forked jobs
//!   included) before the supervisor sees the init's exit.
//! - **Without one** it is a child subreaper: it starts the command itself, and when the
//!   command exits it kills every descendant `/proc` shows until none is left (orphans are
//!   re-parented to it, so none slips away by its parent exiting first).
//!
//! Bosun's SIGTERM to the process group reaches the command directly; the supervisor blocks
//! it (and SIGINT, SIGHUP), and the init, as a namespace init without handlers, never sees
//! it. The supervisor ends its child with SIGKILL when Bosun dies — its stdin is a pipe from
//! `run_command` whose other end only Bosun holds, and it is told by `PR_SET_PDEATHSIG`
//! (SIGUSR1, taken by a thread) as well — and when `run_command` closes that pipe on purpose
//! (the grace after SIGTERM is over, or the command was abandoned). Its exit code is the
//! command's (128 + N when signal N ended it).

use super::forwarder::{self, ProxySocket};
use super::landlock_rules::resolve;
use super::leftovers::{OWNER_ENV, owner_mark};
use super::namespaces::{self, Ids, Mounts};
use super::trampoline::{COMMAND_ARG, INIT_ARG, Invocation, Stage};
use super::{SandboxError, SandboxPolicy, SandboxSupport, procfs, unix_sockets};
use nix::errno::Errno;
use nix::sys::signal::{SigSet, Signal, kill};
use nix::sys::wait::{WaitPidFlag, WaitStatus, wait, waitpid};
use nix::unistd::{Pid, getegid, geteuid, getppid};
use std::convert::Infallible;
use std::io::Read;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// The exit code when the command was killed (128 + SIGKILL).
pub(crate) const KILLED_EXIT: i32 = 137;

/// How long the supervisor keeps killing descendants that will not die (a process stuck in
/// the kernel) before it gives up on them.
const END_DESCENDANTS_LIMIT: Duration = Duration::from_secs(10);

pub(crate) fn run(
    policy: SandboxPolicy,
    invocation: Invocation,
) -> Result<Infallible, SandboxError> {
    // unshare(CLONE_NEWUSER) refuses threaded processes and Landlock would bind only this
    // thread: another thread means the entry point was called too late.
    if std::fs::read_dir("/proc/self/task").is_ok_and(|tasks| tasks.count() > 1) {
        return Err(SandboxError::Threaded);
    }
    let bosun = getppid();
    let (landlock_abi, netns, pidns_wanted, seccomp) = match super::probe() {
        SandboxSupport::Unavailable { reason } => return Err(SandboxError::Unavailable(reason)),
        SandboxSupport::Full {
            landlock_abi,
            netns,
            pidns,
            seccomp,
        } => (landlock_abi, netns, pidns, seccomp),
        SandboxSupport::Seatbelt => {
            return Err(SandboxError::Unavailable("Seatbelt is macOS-only".into()));
        }
    };
    let hide = resolve(&policy.read_deny);
    let writable = resolve(&policy.write_paths);
    let (uid, gid) = (geteuid(), getegid());
    let ids = if pidns_wanted && !uid.is_root() {
        Ids::Root
    } else {
        Ids::Same
    };
    let mut proxy = None;
    if netns {
        // Both read in the host's namespaces, before leaving them.
        let sockets = unix_sockets::outside(&writable);
        if let (false, Some(path)) = (policy.network, &policy.proxy) {
            proxy = Some(ProxySocket::open(path)?);
        }
        let mounts = Mounts {
            hide: &hide,
            sockets: &sockets,
            nosuid: &writable,
        };
        namespaces::enter(policy.network, ids, &mounts)?;
    } else if let Some(inside) = hide
        .iter()
        .find(|d| writable.iter().any(|w| d.starts_with(w)))
    {
        return Err(SandboxError::DenyInsideWritable(inside.clone()));
    }

    // From here on threads are allowed (the user namespace is entered), until the PID
    // namespace is unshared: after that this thread may start processes but not threads.
    let child = Child::default();
    watch_for_bosun(&child, bosun)?;
    if let Some(proxy) = proxy {
        forwarder::start(proxy)?;
    }
    let pidns = netns && pidns_wanted && namespaces::unshare_pid().is_ok();
    let stage = Stage {
        policy,
        landlock_abi,
        netns,
        seccomp,
        remap: (netns && ids == Ids::Root).then(|| (uid.as_raw(), gid.as_raw())),
        parent: (!pidns).then(std::process::id),
    };
    let spawn_err = |source| SandboxError::Exec {
        program: "/proc/self/exe".into(),
        source,
    };
    let code = if pidns {
        let mut init = invocation
            .next(INIT_ARG, &stage)?
            .env(OWNER_ENV, owner_mark())
            .stdin(Stdio::piped())
            .spawn()
            .map_err(spawn_err)?;
        // The init's stdin: while this end is open, the supervisor lives.
        let _alive = init.stdin.take();
        child.set(init.id());
        let status = init.wait();
        child.finished();
        status.map_or(KILLED_EXIT, |s| exit_code(&s))
    } else {
        nix::sys::prctl::set_child_subreaper(true).map_err(|e| SandboxError::Namespace {
            step: "becoming a child subreaper",
            source: std::io::Error::from(e),
        })?;
        let command = invocation
            .next(COMMAND_ARG, &stage)?
            .env(OWNER_ENV, owner_mark())
            .stdin(Stdio::null())
            .spawn()
            .map_err(spawn_err)?;
        child.set(command.id());
        let code = wait_for(command.id());
        child.finished();
        end_descendants();
        code
    };
    std::process::exit(code)
}

/// The process the supervisor started (the init or the command), for the watchers.
#[derive(Clone, Default)]
struct Child(Arc<AtomicI32>);

const NOT_STARTED: i32 = 0;
const FINISHED: i32 = -1;

impl Child {
    fn set(&self, pid: u32) {
        let pid = i32::try_from(pid).unwrap_or(NOT_STARTED);
        self.0.store(pid, Ordering::SeqCst);
    }

    fn finished(&self) {
        self.0.store(FINISHED, Ordering::SeqCst);
    }

    /// Bosun is gone or wants the command gone: kill the child (the main thread then cleans
    /// up after it and exits). Before there is a child there is nothing to clean up.
    fn end(&self) {
        match self.0.load(Ordering::SeqCst) {
            NOT_STARTED => std::process::exit(KILLED_EXIT),
            FINISHED => {}
            pid => {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
    }
}

/// Blocks the signals the supervisor must survive (the mask is inherited: the init and the
/// command clear it first thing), asks for SIGUSR1 when Bosun dies, and
/// starts the threads that end the child on that signal and on EOF of stdin (when stdin is
/// a pipe: Bosun's end of it closes when Bosun dies, or when `run_command` lets go).
fn watch_for_bosun(child: &Child, bosun: Pid) -> Result<(), SandboxError> {
    let signal_err = |e: Errno| SandboxError::Namespace {
        step: "blocking signals",
        source: std::io::Error::from(e),
    };
    let mut blocked = SigSet::empty();
    for signal in [
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGHUP,
        Signal::SIGUSR1,
    ] {
        blocked.add(signal);
    }
    blocked.thread_block().map_err(signal_err)?;
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGUSR1);
    if getppid() != bosun {
        // Bosun died before the signal was asked for.
        std::process::exit(KILLED_EXIT);
    }
    let thread_err = |source| SandboxError::Namespace {
        step: "starting the supervisor's watchers",
        source,
    };
    let on_signal = child.clone();
    std::thread::Builder::new()
        .name("bosun-death".into())
        .spawn(move || {
            let only = SigSet::from(Signal::SIGUSR1);
            loop {
                if only.wait() == Ok(Signal::SIGUSR1) {
                    on_signal.end();
                }
            }
        })
        .map_err(thread_err)?;
    if stdin_is_pipe() {
        let on_eof = child.clone();
        std::thread::Builder::new()
            .name("bosun-pipe".into())
            .spawn(move || {
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
                on_eof.end();
            })
            .map_err(thread_err)?;
    }
    Ok(())
}

fn stdin_is_pipe() -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata("/proc/self/fd/0").is_ok_and(|m| m.file_type().is_fifo())
}

/// The shell's convention: the exit code, or 128 + N for death by signal N.
pub(crate) fn exit_code(status: &ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(KILLED_EXIT)
}

/// Reaps children (orphans re-parented to this subreaper among them) until `pid` exits;
/// returns its exit code.
pub(crate) fn wait_for(pid: u32) -> i32 {
    loop {
        match wait() {
            Ok(WaitStatus::Exited(p, code)) if p.as_raw() as u32 == pid => return code,
            Ok(WaitStatus::Signaled(p, signal, _)) if p.as_raw() as u32 == pid => {
                return 128 + signal as i32;
            }
            Ok(_) | Err(Errno::EINTR) => {}
            Err(_) => return KILLED_EXIT,
        }
    }
}

/// Kills (SIGKILL) every descendant of this process and reaps them, until it has no child
/// left. A process that forks meanwhile is caught on the next round: its parent's death
/// re-parents it here.
fn end_descendants() {
    let me = std::process::id();
    let started = Instant::now();
    loop {
        // No child left: every descendant would have been re-parented here, so none is left.
        if waitpid(None, Some(WaitPidFlag::WNOHANG)) == Err(Errno::ECHILD) {
            return;
        }
        for pid in procfs::descendants(me) {
            if let Ok(raw) = i32::try_from(pid) {
                let _ = kill(Pid::from_raw(raw), Signal::SIGKILL);
            }
        }
        loop {
            match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
                Err(Errno::ECHILD) => return,
                Ok(WaitStatus::StillAlive) => break,
                Ok(_) | Err(Errno::EINTR) => {}
                Err(_) => return,
            }
        }
        if started.elapsed() > END_DESCENDANTS_LIMIT {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
