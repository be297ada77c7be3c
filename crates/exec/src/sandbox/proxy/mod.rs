//! Bosun's egress proxy: the only way a sandboxed command reaches the network.
//!
//! A [`Proxy`] listens on a Unix socket (under `$BOSUN_HOME/run/`; inside the command's network
//! namespace a forwarder exposes it as `127.0.0.1:3128`) and speaks the HTTP/1.1 proxy
//! protocol: `CONNECT host:port` opens a tunnel (TLS passes through untouched) and an
//! absolute-form request (`GET http://host/path`) is forwarded in origin form with
//! `Connection: close`, its response streamed back. One request per connection.
//!
//! For every connection the proxy asks the caller's [`Decider`] about `(host, port)` and holds
//! the client (its `CONNECT` unanswered) while the decider waits, for a person if need be, up to
//! [`ProxyConfig::decide_timeout`]. Then, and only for an allowed host (a lookup alone can leak
//! data), it resolves the name itself and connects to the address it got, so a second lookup
//! cannot point elsewhere. It refuses, with a `403` whose one-line reason the command prints:
//! - a host the decider denies, or no decision in time;
//! - an IP address, unless the allowing rule names that exact address ([`Verdict::named`]);
//! - a name with any answer that is not a public address — loopback, private (RFC 1918),
//!   shared (CGNAT), unique-local (`fc00::/7`), link-local, unspecified, multicast, broadcast,
//!   documentation or reserved — unless the allowing rule names that exact host (an internal
//!   registry; a glob such as `*.corp` is not enough, nor is a person approving it once:
//!   "approve always" writes the exact host as a rule, and that is);
//! - numbers in disguise (`127.1`, `2130706433`), which are not host names (`400`).
//!
//! A malformed request gets `400`, a head over [`ProxyConfig::max_head_bytes`] `431`, a host that
//! cannot be resolved or reached `502`, a connection beyond 256 at once `503`. A tunnel with no traffic for
//! [`ProxyConfig::idle_timeout`] is closed. Every connection that named a host is reported when
//! it ends ([`ConnectionReport`], a refused one with 0 bytes) through the caller's [`Reporter`].

mod address;
pub mod bench;
mod connection;
mod request;
mod tunnel;

pub use address::{RESOLVE_ENV, parse_resolve};

use bosun_protocol::NetworkDecision;
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::UnixListener;
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

/// A connection the command asks for: the host (lowercase, an IPv6 address without brackets)
/// and port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionRequest {
    pub host: String,
    pub port: u16,
}

/// The caller's answer about one connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// `allowed` (a rule), `approved` (a person), or `denied`.
    pub decision: NetworkDecision,
    /// The rule that decided, as the report shows it.
    pub rule: Option<String>,
    /// For a refusal: the one line the command is told.
    pub reason: String,
    /// The allowing rule names this host (or address) exactly: it may resolve to, or be, a
    /// non-public address.
    pub named: bool,
}

impl Verdict {
    pub fn allowed(rule: impl Into<String>, named: bool) -> Verdict {
        Verdict {
            decision: NetworkDecision::Allowed,
            rule: Some(rule.into()),
            reason: String::new(),
            named,
        }
    }

    /// A person approved a host no rule names; `named` only when they also wrote a rule that
    /// names it exactly ("approve always"): approving once never opens a non-public address.
    pub fn approved(rule: Option<String>, named: bool) -> Verdict {
        Verdict {
            decision: NetworkDecision::Approved,
            rule,
            reason: String::new(),
            named,
        }
    }

    pub fn denied(rule: Option<String>, reason: impl Into<String>) -> Verdict {
        Verdict {
            decision: NetworkDecision::Denied,
            rule,
            reason: reason.into(),
            named: false,
        }
    }
}

/// One connection, reported when it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionReport {
    pub host: String,
    pub port: u16,
    pub decision: NetworkDecision,
    pub rule: Option<String>,
    /// Why it carried nothing: the refusal the command was told, or why the host was not reached.
    pub reason: Option<String>,
    /// Bytes sent to the host (for a forwarded request, the request as forwarded).
    pub bytes_up: u64,
    /// Bytes the host sent back.
    pub bytes_down: u64,
}

/// Decides a connection; it may wait (for a person), the proxy caps the wait.
pub type Decider =
    Arc<dyn Fn(ConnectionRequest) -> Pin<Box<dyn Future<Output = Verdict> + Send>> + Send + Sync>;

/// Called once per connection that named a host, when it ends.
pub type Reporter = Arc<dyn Fn(ConnectionReport) + Send + Sync>;

/// Limits of the proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyConfig {
    /// How long a connection waits for the decider (normally the command's timeout).
    pub decide_timeout: Duration,
    /// Resolving a name, and connecting to one address.
    pub connect_timeout: Duration,
    /// A tunnel with no bytes either way for this long is closed.
    pub idle_timeout: Duration,
    /// How long a client may take to send its request head.
    pub head_timeout: Duration,
    pub max_head_bytes: usize,
    /// Names mapped to fixed addresses instead of being resolved (tests: see [`RESOLVE_ENV`]).
    pub resolve: Vec<(String, SocketAddr)>,
}

impl Default for ProxyConfig {
    fn default() -> Self {
        ProxyConfig {
            decide_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            head_timeout: Duration::from_secs(30),
            max_head_bytes: 64 * 1024,
            resolve: Vec::new(),
        }
    }
}

impl ProxyConfig {
    /// In debug builds, adds the name mappings of [`RESOLVE_ENV`]; release builds ignore it.
    pub fn with_env_overrides(mut self) -> Result<ProxyConfig, ProxyError> {
        #[cfg(debug_assertions)]
        if let Ok(text) = std::env::var(RESOLVE_ENV) {
            self.resolve
                .extend(parse_resolve(&text).map_err(ProxyError::Resolve)?);
        }
        Ok(self)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error(
        "the proxy socket path {0} is longer than a Unix socket allows (107 bytes); set BOSUN_HOME to a shorter directory"
    )]
    PathTooLong(PathBuf),
    #[error("{0} exists and is not a socket; remove it (Bosun keeps only its proxy sockets there)")]
    NotASocket(PathBuf),
    #[error("cannot create the proxy socket {path}: {source}")]
    Bind {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Resolve(String),
}

/// What every connection shares.
pub(crate) struct Shared {
    pub config: ProxyConfig,
    pub decider: Decider,
    pub report: Reporter,
}

/// A running proxy. [`Proxy::shutdown`] ends it and waits for every report; dropping it stops
/// it without waiting. Either way the socket file is removed.
pub struct Proxy {
    socket: PathBuf,
    stop: CancellationToken,
    server: Option<JoinHandle<()>>,
}

impl Proxy {
    /// Listens on `socket` (its directory is created, private to the user) and serves until
    /// shut down. Call it inside a tokio runtime.
    pub fn start(
        socket: &Path,
        config: ProxyConfig,
        decider: Decider,
        report: Reporter,
    ) -> Result<Proxy, ProxyError> {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::{DirBuilderExt, FileTypeExt, PermissionsExt};
        if socket.as_os_str().as_bytes().len() > 107 {
            return Err(ProxyError::PathTooLong(socket.to_path_buf()));
        }
        let bind_error = |source| ProxyError::Bind {
            path: socket.to_path_buf(),
            source,
        };
        if let Some(dir) = socket.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(bind_error)?;
        }
        match std::fs::symlink_metadata(socket) {
            Ok(meta) if meta.file_type().is_socket() => {
                std::fs::remove_file(socket).map_err(bind_error)?
            }
            Ok(_) => return Err(ProxyError::NotASocket(socket.to_path_buf())),
            Err(_) => {}
        }
        let listener = UnixListener::bind(socket).map_err(bind_error)?;
        std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))
            .map_err(bind_error)?;
        let stop = CancellationToken::new();
        let shared = Arc::new(Shared {
            config,
            decider,
            report,
        });
        let server = tokio::spawn(accept(listener, shared, stop.clone()));
        Ok(Proxy {
            socket: socket.to_path_buf(),
            stop,
            server: Some(server),
        })
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Stops accepting, ends every connection (a decision still waiting is refused), waits until
    /// each is reported, and removes the socket.
    pub async fn shutdown(mut self) {
        self.stop.cancel();
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
        let _ = std::fs::remove_file(&self.socket);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.cancel();
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// Connections one proxy serves at once; more get `503` (a command opening sockets in a loop
/// must not exhaust Bosun's file descriptors).
const MAX_CONNECTIONS: usize = 256;

async fn accept(listener: UnixListener, shared: Arc<Shared>, stop: CancellationToken) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) if connections.len() >= MAX_CONNECTIONS => {
                    connections.spawn(connection::busy(stream));
                }
                Ok((stream, _)) => {
                    connections.spawn(connection::serve(stream, Arc::clone(&shared), stop.clone()));
                }
                // Out of file descriptors and the like: wait a little rather than spin.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
}
