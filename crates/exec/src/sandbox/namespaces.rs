//! User, mount, network and PID namespaces for the trampoline: no network, denied paths and
//! outside Unix sockets covered, write paths `nosuid`, and a fresh `/proc` for the command's
//! PID namespace.

use super::SandboxError;
use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use nix::sys::socket::{
    AddressFamily, MsgFlags, NetlinkAddr, SockFlag, SockProtocol, SockType, recv, sendto, socket,
};
use nix::sys::statvfs::{FsFlags, statvfs};
use nix::unistd::{getegid, geteuid};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

fn io(step: &'static str) -> impl FnOnce(std::io::Error) -> SandboxError {
    move |source| SandboxError::Namespace { step, source }
}

fn errno(step: &'static str) -> impl FnOnce(nix::errno::Errno) -> SandboxError {
    move |e| SandboxError::Namespace {
        step,
        source: std::io::Error::from(e),
    }
}

/// What the mount namespace must look like. All paths resolved and existing.
pub(crate) struct Mounts<'a> {
    /// Covered: a directory by an empty read-only tmpfs, a file by `/dev/null`.
    pub hide: &'a [PathBuf],
    /// Unix socket files covered by `/dev/null` (best effort: one that vanished is skipped).
    pub sockets: &'a [PathBuf],
    /// Bind-mounted onto themselves `nosuid,nodev`.
    pub nosuid: &'a [PathBuf],
}

/// How the caller's uid and gid appear inside the new user namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ids {
    /// As themselves (what the command should see).
    Same,
    /// As root: the PID namespace's init is a freshly executed program, and only root keeps
    /// its capabilities across `exec` (it needs them to mount `/proc`). The command then
    /// enters a nested user namespace that maps its ids back ([`remap`]).
    Root,
}

/// Enters new user and mount namespaces (and a network namespace unless `network`), maps the
/// caller's ids as `ids` says, then lays out the mounts. Must run while the process has a
/// single thread.
pub(crate) fn enter(network: bool, ids: Ids, mounts: &Mounts) -> Result<(), SandboxError> {
    let (uid, gid) = (geteuid(), getegid());
    let mut flags = CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS;
    if !network {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    unshare(flags).map_err(errno("unshare"))?;
    let (inner_uid, inner_gid) = match ids {
        Ids::Same => (uid.as_raw(), gid.as_raw()),
        Ids::Root => (0, 0),
    };
    map_ids((inner_uid, uid.as_raw()), (inner_gid, gid.as_raw()))?;

    // Nothing done here may propagate back to the host's mounts.
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(errno("making mounts private"))?;
    for path in mounts.nosuid {
        remount_nosuid(path)?;
    }
    for path in mounts.sockets {
        // A socket that vanished (or sits in a directory hidden below) is not reachable anyway.
        let _ = bind_dev_null(path);
    }
    for path in mounts.hide {
        cover(path)?;
    }
    // The working directory still points into the mounts as they were: in a write path it is
    // now under that path's own bind mount, where the covers are not. Enter it again by name.
    let cwd = std::env::current_dir().map_err(io("finding the working directory"))?;
    std::env::set_current_dir(&cwd).map_err(io("re-entering the working directory"))?;
    if !network {
        // Best effort: without loopback, local servers (test suites) fail, but nothing leaks.
        let _ = loopback_up();
    }
    Ok(())
}

/// Writes the id maps of a user namespace this process just created: `(inside, outside)`.
fn map_ids(uid: (u32, u32), gid: (u32, u32)) -> Result<(), SandboxError> {
    std::fs::write("/proc/self/uid_map", format!("{} {} 1\n", uid.0, uid.1))
        .map_err(io("uid_map"))?;
    std::fs::write("/proc/self/setgroups", "deny\n").map_err(io("setgroups"))?;
    std::fs::write("/proc/self/gid_map", format!("{} {} 1\n", gid.0, gid.1))
        .map_err(io("gid_map"))?;
    Ok(())
}

/// For the command, under [`Ids::Root`]: a nested user namespace in which root (the caller
/// outside) is the caller's own uid and gid again. Must run with a single thread.
pub(crate) fn remap(uid: u32, gid: u32) -> Result<(), SandboxError> {
    unshare(CloneFlags::CLONE_NEWUSER).map_err(errno("unshare (command's user namespace)"))?;
    map_ids((uid, 0), (gid, 0))
}

/// A new PID namespace for this thread's children: the next one spawned is its init.
pub(crate) fn unshare_pid() -> nix::Result<()> {
    unshare(CloneFlags::CLONE_NEWPID)
}

/// For the PID namespace's init: a mount namespace of its own with a `/proc` that shows the
/// namespace's processes only (the supervisor keeps the host's `/proc`, which it needs).
/// Where `/proc` cannot be mounted (a container that masks parts of the host's), the host's
/// stays: the namespace still ends with its init.
pub(crate) fn fresh_proc() -> Result<bool, SandboxError> {
    unshare(CloneFlags::CLONE_NEWNS).map_err(errno("unshare (init's mount namespace)"))?;
    let mounted = mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        None::<&str>,
    );
    Ok(mounted.is_ok())
}

/// Hides `path`: a directory behind an empty read-only tmpfs, a file behind `/dev/null`.
fn cover(path: &Path) -> Result<(), SandboxError> {
    let hidden = if path.is_dir() {
        mount(
            Some("tmpfs"),
            path,
            Some("tmpfs"),
            MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            Some("size=4k,mode=000"),
        )
    } else {
        bind_dev_null(path)
    };
    hidden.map_err(errno("hiding a denied path"))
}

fn bind_dev_null(path: &Path) -> nix::Result<()> {
    mount(
        Some("/dev/null"),
        path,
        None::<&str>,
        MsFlags::MS_BIND,
        None::<&str>,
    )
}

/// Bind-mounts `path` onto itself and remounts it `nosuid,nodev`, keeping the flags the
/// underlying mount already has (a user namespace may not clear them).
fn remount_nosuid(path: &Path) -> Result<(), SandboxError> {
    let kept = statvfs(path)
        .map(|s| mount_flags(s.flags()))
        .map_err(errno("reading a write path's mount flags"))?;
    mount(
        Some(path),
        path,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )
    .map_err(errno("bind-mounting a write path"))?;
    mount(
        None::<&str>,
        path,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | kept,
        None::<&str>,
    )
    .map_err(errno("remounting a write path nosuid"))
}

/// The `statvfs` flags that a remount must repeat, as mount flags.
fn mount_flags(flags: FsFlags) -> MsFlags {
    let pairs = [
        (FsFlags::ST_RDONLY, MsFlags::MS_RDONLY),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ];
    let kept = pairs
        .iter()
        .filter(|(st, _)| flags.contains(*st))
        .fold(MsFlags::empty(), |acc, (_, ms)| acc | *ms);
    // Neither relatime nor noatime: the mount is strictatime, which a remount must say (it
    // would default to relatime).
    if flags.intersects(FsFlags::ST_RELATIME | FsFlags::ST_NOATIME) {
        kept
    } else {
        kept | MsFlags::MS_STRICTATIME
    }
}

/// `ip link set lo up`, over rtnetlink.
fn loopback_up() -> nix::Result<()> {
    const RTM_NEWLINK: u16 = 16;
    const NLM_F_REQUEST: u16 = 1;
    const NLM_F_ACK: u16 = 4;
    const IFF_UP: u32 = 1;
    const LOOPBACK_INDEX: i32 = 1;
    let sock = socket(
        AddressFamily::Netlink,
        SockType::Raw,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkRoute,
    )?;
    let mut msg = Vec::with_capacity(32);
    // struct nlmsghdr
    msg.extend_from_slice(&32u32.to_ne_bytes());
    msg.extend_from_slice(&RTM_NEWLINK.to_ne_bytes());
    msg.extend_from_slice(&(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
    msg.extend_from_slice(&1u32.to_ne_bytes()); // seq
    msg.extend_from_slice(&0u32.to_ne_bytes()); // pid: the kernel
    // struct ifinfomsg
    msg.extend_from_slice(&[0u8, 0u8]); // family AF_UNSPEC, padding
    msg.extend_from_slice(&0u16.to_ne_bytes()); // type
    msg.extend_from_slice(&LOOPBACK_INDEX.to_ne_bytes());
    msg.extend_from_slice(&IFF_UP.to_ne_bytes()); // flags
    msg.extend_from_slice(&IFF_UP.to_ne_bytes()); // change mask
    sendto(
        sock.as_raw_fd(),
        &msg,
        &NetlinkAddr::new(0, 0),
        MsgFlags::empty(),
    )?;
    let mut ack = [0u8; 64];
    let n = recv(sock.as_raw_fd(), &mut ack, MsgFlags::empty())?;
    // An NLMSG_ERROR reply carries the errno (0 for success) right after its header.
    if n >= 20 {
        let code = i32::from_ne_bytes([ack[16], ack[17], ack[18], ack[19]]);
        if code != 0 {
            return Err(nix::errno::Errno::from_raw(-code));
        }
    }
    Ok(())
}
