//! The proxy forwarder: how a command in its own network namespace reaches Bosun's egress
//! proxy, and nothing else.
//!
//! The command's network namespace has only a loopback interface. When the policy names a
//! proxy socket ([`super::SandboxPolicy::proxy`]), the trampoline's supervisor (inside that
//! namespace, not Landlocked) listens on `127.0.0.1:`[`PROXY_PORT`] and copies every
//! connection byte for byte to the socket, both ways; the command finds it through the
//! standard proxy variables ([`proxy_env`]). The socket path itself is covered like every
//! other Unix socket outside the worktree, so the supervisor opens it (`O_PATH`) before the
//! mounts and connects through `/proc/self/fd/<n>` afterwards.

use super::{PROXY_PORT, SandboxError};
use nix::fcntl::{OFlag, open};
use nix::sys::stat::Mode;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// The proxy socket, held open before the mounts hide its path.
pub(crate) struct ProxySocket {
    fd: OwnedFd,
    path: PathBuf,
}

impl ProxySocket {
    pub(crate) fn open(path: &Path) -> Result<ProxySocket, SandboxError> {
        let fd = open(path, OFlag::O_PATH | OFlag::O_CLOEXEC, Mode::empty()).map_err(|e| {
            SandboxError::Proxy {
                path: path.to_path_buf(),
                source: std::io::Error::from(e),
            }
        })?;
        Ok(ProxySocket {
            fd,
            path: path.to_path_buf(),
        })
    }
}

/// Listens on `127.0.0.1:PROXY_PORT` (in this thread's network namespace) and forwards each
/// connection to `proxy` from threads of its own. Returns once listening.
pub(crate) fn start(proxy: ProxySocket) -> Result<(), SandboxError> {
    let listener =
        TcpListener::bind(("127.0.0.1", PROXY_PORT)).map_err(|source| SandboxError::Proxy {
            path: proxy.path.clone(),
            source,
        })?;
    std::thread::Builder::new()
        .name("proxy-forwarder".into())
        .spawn(move || {
            let target = PathBuf::from(format!("/proc/self/fd/{}", proxy.fd.as_raw_fd()));
            for conn in listener.incoming().flatten() {
                let target = target.clone();
                let _ = std::thread::Builder::new()
                    .name("proxy-connection".into())
                    .spawn(move || forward(conn, &target));
            }
        })
        .map_err(|source| SandboxError::Proxy {
            path: PathBuf::from("(forwarder thread)"),
            source,
        })?;
    Ok(())
}

/// Copies both ways until each side has closed its half.
fn forward(client: TcpStream, target: &Path) {
    let Ok(upstream) = UnixStream::connect(target) else {
        let _ = client.shutdown(Shutdown::Both);
        return;
    };
    let (Ok(mut client_read), Ok(mut upstream_write)) = (client.try_clone(), upstream.try_clone())
    else {
        return;
    };
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut client_read, &mut upstream_write);
        let _ = upstream_write.shutdown(Shutdown::Write);
    });
    let (mut upstream_read, mut client_write) = (upstream, client);
    let _ = std::io::copy(&mut upstream_read, &mut client_write);
    let _ = client_write.shutdown(Shutdown::Write);
    let _ = up.join();
}
