//! Bytes both ways between the command and the host, counted, until both ends close, either
//! fails, or nothing moves for the idle timeout.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

const BUFFER: usize = 64 * 1024;

/// Bytes moved so far; shared with the report, so a connection cut short still counts.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    pub up: AtomicU64,
    pub down: AtomicU64,
}

impl Counts {
    pub(crate) fn get(&self) -> (u64, u64) {
        (
            self.up.load(Ordering::Relaxed),
            self.down.load(Ordering::Relaxed),
        )
    }
}

/// When bytes last moved, in milliseconds since `start`.
struct Activity {
    start: Instant,
    last_ms: AtomicU64,
}

impl Activity {
    fn touch(&self) {
        let ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    /// Resolves once nothing has moved for `idle`.
    async fn idle_for(&self, idle: Duration) {
        loop {
            let last = Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
            let quiet = self.start.elapsed().saturating_sub(last);
            if quiet >= idle {
                return;
            }
            tokio::time::sleep(idle - quiet).await;
        }
    }
}

/// How the tunnel ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Until {
    /// Both directions reach end of stream (CONNECT).
    BothClosed,
    /// The host's side ends (a forwarded HTTP request: the response is complete).
    HostClosed,
}

/// Copies `client ⇄ host` and returns when the tunnel is over (see [`Until`]).
pub(crate) async fn run<C, H>(client: C, host: H, counts: &Counts, idle: Duration, until: Until)
where
    C: AsyncRead + AsyncWrite + Unpin,
    H: AsyncRead + AsyncWrite + Unpin,
{
    let (mut client_read, mut client_write) = tokio::io::split(client);
    let (mut host_read, mut host_write) = tokio::io::split(host);
    let activity = Activity {
        start: Instant::now(),
        last_ms: AtomicU64::new(0),
    };
    let up = pump(&mut client_read, &mut host_write, &counts.up, &activity);
    let down = pump(&mut host_read, &mut client_write, &counts.down, &activity);
    tokio::pin!(up, down);
    let (mut up_done, mut down_done) = (false, false);
    loop {
        tokio::select! {
            ended = &mut up, if !up_done => {
                up_done = true;
                if ended.is_err() { return; }
            }
            ended = &mut down, if !down_done => {
                down_done = true;
                if ended.is_err() || until == Until::HostClosed { return; }
            }
            () = activity.idle_for(idle) => return,
        }
        if up_done && down_done {
            return;
        }
    }
}

/// Copies until end of stream, then shuts the writer down (a half-close passes through).
async fn pump<R, W>(
    reader: &mut R,
    writer: &mut W,
    count: &AtomicU64,
    activity: &Activity,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; BUFFER];
    loop {
        let n = reader.read(&mut buf).await?;
        if n == 0 {
            return writer.shutdown().await;
        }
        writer.write_all(&buf[..n]).await?;
        count.fetch_add(n as u64, Ordering::Relaxed);
        activity.touch();
    }
}
