//! One connection a command opens to the proxy: read its request, ask the decider, resolve,
//! refuse what must not be reached, connect, then tunnel or forward, and report.

use std::net::SocketAddr;
use std::sync::Arc;

use bosun_protocol::NetworkDecision;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

use super::address::{self, Host};
use super::request::{self, HeadError, Kind};
use super::tunnel::{self, Counts, Until};
use super::{ConnectionReport, ConnectionRequest, Shared, Verdict};

/// What is known about the connection so far; reported when it ends, however it ends.
struct Record {
    host: Option<(String, u16)>,
    decision: NetworkDecision,
    rule: Option<String>,
    reason: Option<String>,
    counts: Counts,
}

/// Serves one client connection and reports it (unless it never named a host).
pub(crate) async fn serve<C>(mut client: C, shared: Arc<Shared>, stop: CancellationToken)
where
    C: AsyncRead + AsyncWrite + Unpin,
{
    let mut record = Record {
        host: None,
        decision: NetworkDecision::Denied,
        rule: None,
        reason: None,
        counts: Counts::default(),
    };
    tokio::select! {
        () = handle(&mut client, &shared, &mut record) => {}
        () = stop.cancelled() => {
            if record.reason.is_none() && record.counts.get() == (0, 0) {
                record.decision = NetworkDecision::Denied;
                record.reason = Some("the command ended first".into());
            }
        }
    }
    let _ = client.shutdown().await;
    if let Some((host, port)) = record.host {
        let (bytes_up, bytes_down) = record.counts.get();
        (shared.report)(ConnectionReport {
            host,
            port,
            decision: record.decision,
            rule: record.rule,
            reason: record.reason,
            bytes_up,
            bytes_down,
        });
    }
}

/// `503` for a connection over the proxy's limit (not reported: it named no host yet).
pub(crate) async fn busy<C: AsyncWrite + Unpin>(mut client: C) {
    let why = "too many connections at once through this proxy; retry when some have closed";
    answer(&mut client, 503, why).await;
    let _ = client.shutdown().await;
}

async fn handle<C>(client: &mut C, shared: &Shared, record: &mut Record)
where
    C: AsyncRead + AsyncWrite + Unpin,
{
    let config = &shared.config;
    let head = tokio::time::timeout(
        config.head_timeout,
        request::read_head(client, config.max_head_bytes),
    );
    let (req, early) = match head.await {
        Ok(Ok(parsed)) => parsed,
        Ok(Err(HeadError::Malformed(why))) => return answer(client, 400, &why).await,
        Ok(Err(HeadError::TooLarge)) => {
            let why = format!(
                "the request head is larger than {} KB",
                config.max_head_bytes / 1024
            );
            return answer(client, 431, &why).await;
        }
        Ok(Err(HeadError::Closed)) | Err(_) => return,
    };
    let host_text = req.host.text();
    record.host = Some((host_text.clone(), req.port));

    let asked = (shared.decider)(ConnectionRequest {
        host: host_text.clone(),
        port: req.port,
    });
    let verdict = match tokio::time::timeout(config.decide_timeout, asked).await {
        Ok(v) => v,
        Err(_) => Verdict::denied(
            None,
            format!(
                "no decision about {host_text}:{} within {}",
                req.port,
                seconds(config.decide_timeout)
            ),
        ),
    };
    record.decision = verdict.decision;
    record.rule = verdict.rule.clone();
    if verdict.decision == NetworkDecision::Denied {
        return refuse(client, record, None, verdict.reason).await;
    }
    if matches!(req.host, Host::Ip(_)) && !verdict.named {
        let why = format!(
            "{host_text} is an IP address; only an address listed exactly in [network] domains is reached"
        );
        return refuse(client, record, Some("network: IP address"), why).await;
    }
    let addrs = match address::resolve(&req.host, req.port, &config.resolve, config.connect_timeout)
        .await
    {
        Ok(a) => a,
        Err(why) => return fail(client, record, 502, why).await,
    };
    if !verdict.named
        && let Some((addr, kind)) = addrs
            .iter()
            .find_map(|a| address::non_public(a.ip()).map(|k| (a, k)))
    {
        let why = format!(
            "{host_text} resolves to {}, a {kind} address; only a host named exactly in [network] domains may",
            addr.ip()
        );
        return refuse(client, record, Some("network: non-public address"), why).await;
    }
    let Some(mut upstream) = connect(&addrs, config.connect_timeout).await else {
        let why = format!("cannot connect to {host_text}:{}", req.port);
        return fail(client, record, 502, why).await;
    };
    let until = match &req.kind {
        Kind::Connect => {
            let ok = b"HTTP/1.1 200 Connection established\r\n\r\n";
            if client.write_all(ok).await.is_err() {
                return;
            }
            Until::BothClosed
        }
        Kind::Http { head } => {
            if upstream.write_all(head).await.is_err() {
                return;
            }
            add(&record.counts.up, head.len());
            Until::HostClosed
        }
    };
    if !early.is_empty() {
        if upstream.write_all(&early).await.is_err() {
            return;
        }
        add(&record.counts.up, early.len());
    }
    tunnel::run(client, upstream, &record.counts, config.idle_timeout, until).await;
}

/// `120 s`, or `0.2 s` for a short timeout.
fn seconds(d: std::time::Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

fn add(count: &std::sync::atomic::AtomicU64, n: usize) {
    count.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
}

/// The first address that accepts within `timeout`.
async fn connect(addrs: &[SocketAddr], timeout: std::time::Duration) -> Option<TcpStream> {
    for addr in addrs {
        if let Ok(Ok(stream)) = tokio::time::timeout(timeout, TcpStream::connect(addr)).await {
            let _ = stream.set_nodelay(true);
            return Some(stream);
        }
    }
    None
}

/// `403`: the policy (or where the host resolves) refuses it.
async fn refuse<C: AsyncWrite + Unpin>(
    client: &mut C,
    record: &mut Record,
    rule: Option<&str>,
    why: String,
) {
    record.decision = NetworkDecision::Denied;
    if let Some(rule) = rule {
        record.rule = Some(rule.to_string());
    }
    answer(client, 403, &why).await;
    record.reason = Some(why);
}

/// `502`: allowed, but the host could not be reached.
async fn fail<C: AsyncWrite + Unpin>(
    client: &mut C,
    record: &mut Record,
    status: u16,
    why: String,
) {
    answer(client, status, &why).await;
    record.reason = Some(why);
}

/// An error response with the reason on its status line (what `pip` prints) and as its body
/// (what `curl` prints).
async fn answer<C: AsyncWrite + Unpin>(client: &mut C, status: u16, why: &str) {
    let line: String = format!("bosun: {why}")
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .take(300)
        .collect();
    let body = format!("{line}\n");
    let response = format!(
        "HTTP/1.1 {status} {line}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\nX-Bosun-Proxy: {}\r\n\r\n{body}",
        body.len(),
        if status == 403 { "refused" } else { "error" },
    );
    let _ = client.write_all(response.as_bytes()).await;
    let _ = client.flush().await;
}
