//! `bosun bench proxy`: throughput through a CONNECT tunnel of the egress proxy (over its Unix
//! socket) next to a direct TCP connection to the same local server, and the time to open a
//! connection each way. Figures, never assertions.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UnixStream};

use super::{Proxy, ProxyConfig, Verdict};

const CHUNK: usize = 64 * 1024;

/// A local server: the first byte says `d` (send `bytes` then close) or `u` (read to the end,
/// then answer one byte).
async fn server(bytes: u64) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut what = [0u8; 1];
                if s.read_exact(&mut what).await.is_err() {
                    return;
                }
                let _ = match what[0] {
                    b'd' => send(&mut s, bytes).await,
                    b'u' => {
                        let _ = tokio::io::copy(&mut s, &mut tokio::io::sink()).await;
                        s.write_all(b"k").await
                    }
                    _ => Ok(()),
                };
                let _ = s.shutdown().await;
            });
        }
    });
    Ok(addr)
}

async fn send<W: AsyncWrite + Unpin>(w: &mut W, bytes: u64) -> std::io::Result<()> {
    let chunk = vec![0x5au8; CHUNK];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(CHUNK as u64) as usize;
        w.write_all(&chunk[..n]).await?;
        left -= n as u64;
    }
    Ok(())
}

/// Downloads then uploads `bytes` on fresh connections; returns both durations.
async fn transfer<S, F>(open: F, bytes: u64) -> std::io::Result<(Duration, Duration)>
where
    S: AsyncRead + AsyncWrite + Unpin,
    F: AsyncFn() -> std::io::Result<S>,
{
    let mut s = open().await?;
    let started = Instant::now();
    s.write_all(b"d").await?;
    let got = tokio::io::copy(&mut s, &mut tokio::io::sink()).await?;
    let down = started.elapsed();
    if got != bytes {
        return Err(std::io::Error::other(format!("got {got} of {bytes} bytes")));
    }
    let mut s = open().await?;
    let started = Instant::now();
    s.write_all(b"u").await?;
    send(&mut s, bytes).await?;
    s.shutdown().await?;
    let mut ack = [0u8; 1];
    s.read_exact(&mut ack).await?;
    Ok((down, started.elapsed()))
}

async fn connect_through(socket: &std::path::Path) -> std::io::Result<UnixStream> {
    let mut s = UnixStream::connect(socket).await?;
    s.write_all(b"CONNECT bench.test:443 HTTP/1.1\r\nHost: bench.test:443\r\n\r\n")
        .await?;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        s.read_exact(&mut byte).await?;
        head.push(byte[0]);
    }
    if !head.starts_with(b"HTTP/1.1 200") {
        return Err(std::io::Error::other(
            String::from_utf8_lossy(&head).into_owned(),
        ));
    }
    Ok(s)
}

/// Runs the benchmark with `megabytes` each way and `connections` connection openings, and
/// prints the figures to `out`.
pub async fn run(megabytes: u64, connections: u32, out: &mut dyn Write) -> std::io::Result<()> {
    let bytes = megabytes * 1024 * 1024;
    let addr = server(bytes).await?;
    let dir = std::env::temp_dir().join(format!("bosun-proxy-bench-{}", std::process::id()));
    let config = ProxyConfig {
        resolve: vec![("bench.test".into(), addr)],
        ..ProxyConfig::default()
    };
    let proxy = Proxy::start(
        &dir.join("proxy.sock"),
        config,
        Arc::new(|_| Box::pin(async { Verdict::allowed("bench", true) })),
        Arc::new(|_| {}),
    )
    .map_err(std::io::Error::other)?;
    let socket = proxy.socket().to_path_buf();
    // Best of three rounds, alternating, so warm-up and noise favour neither side.
    let best = |a: (Duration, Duration), b: (Duration, Duration)| (a.0.min(b.0), a.1.min(b.1));
    let (mut direct, mut proxied) = (
        (Duration::MAX, Duration::MAX),
        (Duration::MAX, Duration::MAX),
    );
    for _ in 0..3 {
        direct = best(
            direct,
            transfer(async || TcpStream::connect(addr).await, bytes).await?,
        );
        proxied = best(
            proxied,
            transfer(async || connect_through(&socket).await, bytes).await?,
        );
    }
    let rate = |d: Duration| megabytes as f64 / d.as_secs_f64().max(1e-9);
    writeln!(
        out,
        "egress proxy: {megabytes} MB each way to a local server (best of 3), direct TCP vs a CONNECT tunnel through the proxy's Unix socket"
    )?;
    for (what, d, p) in [
        ("download", direct.0, proxied.0),
        ("upload", direct.1, proxied.1),
    ] {
        writeln!(
            out,
            "  {what:<8}  direct {:>8.0} MB/s   proxy {:>8.0} MB/s   ({:.0}% of direct)",
            rate(d),
            rate(p),
            100.0 * rate(p) / rate(d)
        )?;
    }
    let opened = |total: Duration| total.as_secs_f64() * 1000.0 / f64::from(connections.max(1));
    let started = Instant::now();
    for _ in 0..connections {
        drop(TcpStream::connect(addr).await?);
    }
    let direct_open = opened(started.elapsed());
    let started = Instant::now();
    for _ in 0..connections {
        drop(connect_through(&socket).await?);
    }
    let proxy_open = opened(started.elapsed());
    writeln!(
        out,
        "  open      direct {direct_open:>8.3} ms     proxy {proxy_open:>8.3} ms     (mean of {connections}: TCP connect vs CONNECT → 200)"
    )?;
    proxy.shutdown().await;
    let _ = std::fs::remove_dir(&dir);
    Ok(())
}
