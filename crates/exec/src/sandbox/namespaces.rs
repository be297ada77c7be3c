//! User, mount and network namespaces for the trampoline: no network, and denied paths covered.

use super::SandboxError;
use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use nix::sys::socket::{
    AddressFamily, MsgFlags, NetlinkAddr, SockFlag, SockProtocol, SockType, recv, sendto, socket,
};
use nix::unistd::{getegid, geteuid};
use std::os::fd::AsRawFd;
use std::path::PathBuf;

fn io(step: &'static str) -> impl FnOnce(std::io::Error) -> SandboxError {
    move |source| SandboxError::Namespace { step, source }
}

fn errno(step: &'static str) -> impl FnOnce(nix::errno::Errno) -> SandboxError {
    move |e| SandboxError::Namespace {
        step,
        source: std::io::Error::from(e),
    }
}

/// Enters new user and mount namespaces (and a network namespace unless `network`), keeping
/// the caller's uid and gid, then covers each of `hide` (resolved, existing paths). Must run
/// while the process has a single thread.
pub(crate) fn enter(network: bool, hide: &[PathBuf]) -> Result<(), SandboxError> {
    let (uid, gid) = (geteuid(), getegid());
    let mut flags = CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS;
    if !network {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    unshare(flags).map_err(errno("unshare"))?;
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1\n")).map_err(io("uid_map"))?;
    std::fs::write("/proc/self/setgroups", "deny\n").map_err(io("setgroups"))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1\n")).map_err(io("gid_map"))?;

    // Nothing done here may propagate back to the host's mounts.
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(errno("making mounts private"))?;
    for path in hide {
        cover(path)?;
    }
    if !network {
        // Best effort: without loopback, local servers (test suites) fail, but nothing leaks.
        let _ = loopback_up();
    }
    Ok(())
}

/// Hides `path`: a directory behind an empty read-only tmpfs, a file behind `/dev/null`.
fn cover(path: &PathBuf) -> Result<(), SandboxError> {
    let hidden = if path.is_dir() {
        mount(
            Some("tmpfs"),
            path,
            Some("tmpfs"),
            MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            Some("size=4k,mode=000"),
        )
    } else {
        mount(
            Some("/dev/null"),
            path,
            None::<&str>,
            MsFlags::MS_BIND,
            None::<&str>,
        )
    };
    hidden.map_err(errno("hiding a denied path"))
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
