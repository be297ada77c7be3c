//! The egress proxy against real local servers: a TCP echo server and a tiny HTTP server on
//! 127.0.0.1, reached through names mapped to them (no internet needed). One scenario per test,
//! named by what a command tries.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bosun_exec::{ConnectionReport, ConnectionRequest, Decider, Proxy, ProxyConfig, Verdict};
use bosun_protocol::NetworkDecision;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, UnixStream};
use tokio::sync::Notify;

/// A TCP server on 127.0.0.1 that echoes every byte; `accepted` counts its connections.
struct Echo {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
}

async fn echo_server() -> Echo {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&accepted);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let (mut r, mut w) = stream.split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
            });
        }
    });
    Echo { addr, accepted }
}

/// An HTTP server on 127.0.0.1 that records each request it gets and answers `body`.
struct Web {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<String>>>,
    response: String,
}

async fn web_server(body: &str) -> Web {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let response = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let (seen, answer) = (Arc::clone(&requests), response.clone());
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut got = Vec::new();
            let mut buf = [0u8; 4096];
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
            seen.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&got).into_owned());
            let _ = stream.write_all(answer.as_bytes()).await;
        }
    });
    Web {
        addr,
        requests,
        response,
    }
}

/// A decider like the policy's: `named.test` and `web.test` are named exactly, `*.glob.test`
/// by a glob, `127.0.0.1` listed exactly, `once.test` approved once; the rest is refused.
fn policy_decider() -> Decider {
    Arc::new(|req: ConnectionRequest| {
        Box::pin(async move {
            match req.host.as_str() {
                "named.test" | "web.test" | "127.0.0.1" => {
                    Verdict::allowed(format!("network.domains \"{}\"", req.host), true)
                }
                // A person approved it once: no rule names it.
                "once.test" => Verdict::approved(None, false),
                h if h.ends_with(".glob.test") => {
                    Verdict::allowed("network.domains \"*.glob.test\"", false)
                }
                h => Verdict::denied(
                    Some("network.allow \"curl\"".into()),
                    format!("no [network] domains rule names `{h}`"),
                ),
            }
        })
    })
}

struct Harness {
    proxy: Proxy,
    reports: Arc<Mutex<Vec<ConnectionReport>>>,
    _dir: tempfile::TempDir,
}

fn start(decider: Decider, config: ProxyConfig) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let reports = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&reports);
    let proxy = Proxy::start(
        &dir.path().join("run/proxy.sock"),
        config,
        decider,
        Arc::new(move |r| sink.lock().unwrap().push(r)),
    )
    .unwrap();
    Harness {
        proxy,
        reports,
        _dir: dir,
    }
}

fn mapped(names: &[(&str, SocketAddr)]) -> ProxyConfig {
    ProxyConfig {
        resolve: names.iter().map(|(n, a)| (n.to_string(), *a)).collect(),
        ..ProxyConfig::default()
    }
}

impl Harness {
    async fn client(&self) -> UnixStream {
        UnixStream::connect(self.proxy.socket()).await.unwrap()
    }

    /// Sends `request` on a new connection and reads the response head.
    async fn ask(&self, request: &str) -> (UnixStream, String) {
        let mut c = self.client().await;
        c.write_all(request.as_bytes()).await.unwrap();
        let head = read_head(&mut c).await;
        (c, head)
    }

    /// Waits until `n` connections were reported.
    async fn reports(&self, n: usize) -> Vec<ConnectionReport> {
        for _ in 0..500 {
            let got = self.reports.lock().unwrap().clone();
            if got.len() >= n {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!(
            "expected {n} reports, got {:?}",
            self.reports.lock().unwrap()
        );
    }
}

async fn read_head(c: &mut UnixStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match tokio::time::timeout(Duration::from_secs(5), c.read(&mut byte)).await {
            Ok(Ok(1)) => head.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}

async fn read_to_end(c: &mut UnixStream) -> String {
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), c.read_to_end(&mut rest)).await;
    String::from_utf8_lossy(&rest).into_owned()
}

#[tokio::test]
async fn an_allowed_host_is_reached_through_connect_with_its_bytes_counted() {
    let echo = echo_server().await;
    let h = start(policy_decider(), mapped(&[("named.test", echo.addr)]));
    let mut c = h.client().await;
    // The first bytes come with the CONNECT, as some clients send them.
    c.write_all(b"CONNECT named.test:443 HTTP/1.1\r\nHost: named.test:443\r\n\r\nearly")
        .await
        .unwrap();
    assert_eq!(
        read_head(&mut c).await,
        "HTTP/1.1 200 Connection established\r\n\r\n"
    );
    let payload: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let mut back = vec![0u8; 5 + payload.len()];
    let (mut r, mut w) = c.split();
    let send = async {
        w.write_all(&payload).await.unwrap();
        w.shutdown().await.unwrap();
    };
    let (_, got) = tokio::join!(send, r.read_exact(&mut back));
    got.unwrap();
    assert_eq!(&back[..5], b"early");
    assert_eq!(&back[5..], &payload[..]);
    drop(c);
    let report = h.reports(1).await.remove(0);
    assert_eq!(
        report,
        ConnectionReport {
            host: "named.test".into(),
            port: 443,
            decision: NetworkDecision::Allowed,
            rule: Some("network.domains \"named.test\"".into()),
            reason: None,
            bytes_up: 200_005,
            bytes_down: 200_005,
        }
    );
}

#[tokio::test]
async fn an_allowed_host_is_reached_with_an_absolute_url_and_its_response_streams_back() {
    let web = web_server("hello from web.test\n").await;
    let h = start(policy_decider(), mapped(&[("web.test", web.addr)]));
    let (mut c, head) = h
        .ask("GET http://web.test/pkg/index.html?v=1 HTTP/1.1\r\nHost: web.test\r\nProxy-Connection: keep-alive\r\nUser-Agent: curl/8\r\n\r\n")
        .await;
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert_eq!(read_to_end(&mut c).await, "hello from web.test\n");
    let sent = web.requests.lock().unwrap()[0].clone();
    assert_eq!(
        sent,
        "GET /pkg/index.html?v=1 HTTP/1.1\r\nHost: web.test\r\nUser-Agent: curl/8\r\nConnection: close\r\n\r\n"
    );
    let report = h.reports(1).await.remove(0);
    assert_eq!(report.decision, NetworkDecision::Allowed);
    assert_eq!(report.bytes_up, sent.len() as u64);
    assert_eq!(report.bytes_down, web.response.len() as u64);
}

#[tokio::test]
async fn a_refused_host_gets_403_with_the_reason_and_nothing_connects_upstream() {
    let echo = echo_server().await;
    let h = start(policy_decider(), mapped(&[("evil.test", echo.addr)]));
    let (mut c, head) = h.ask("CONNECT evil.test:443 HTTP/1.1\r\n\r\n").await;
    assert!(
        head.starts_with("HTTP/1.1 403 bosun: no [network] domains rule names `evil.test`\r\n"),
        "{head}"
    );
    assert!(read_to_end(&mut c).await.contains("evil.test"));
    let (mut c, head) = h.ask("GET http://evil.test/x HTTP/1.1\r\n\r\n").await;
    assert!(head.starts_with("HTTP/1.1 403 "), "{head}");
    assert_eq!(
        read_to_end(&mut c).await,
        "bosun: no [network] domains rule names `evil.test`\n"
    );
    let reports = h.reports(2).await;
    assert_eq!(echo.accepted.load(Ordering::SeqCst), 0);
    for r in reports {
        assert_eq!(
            (r.decision, r.bytes_up, r.bytes_down),
            (NetworkDecision::Denied, 0, 0)
        );
        assert_eq!(r.rule.as_deref(), Some("network.allow \"curl\""));
    }
}

#[tokio::test]
async fn an_ip_address_is_refused_unless_a_rule_lists_it_exactly() {
    let echo = echo_server().await;
    let everything: Decider =
        Arc::new(|_| Box::pin(async { Verdict::allowed("network.domains \"*\"", false) }));
    let h = start(everything, ProxyConfig::default());
    let (_, head) = h
        .ask(&format!(
            "CONNECT 127.0.0.1:{} HTTP/1.1\r\n\r\n",
            echo.addr.port()
        ))
        .await;
    assert!(
        head.starts_with("HTTP/1.1 403 bosun: 127.0.0.1 is an IP address"),
        "{head}"
    );
    let (_, head) = h
        .ask(&format!(
            "CONNECT [::1]:{} HTTP/1.1\r\n\r\n",
            echo.addr.port()
        ))
        .await;
    assert!(head.starts_with("HTTP/1.1 403 "), "{head}");
    assert_eq!(echo.accepted.load(Ordering::SeqCst), 0);
    let report = h.reports(1).await.remove(0);
    assert_eq!(report.rule.as_deref(), Some("network: IP address"));

    // Listed exactly, the address is reached (loopback included).
    let listed = start(policy_decider(), ProxyConfig::default());
    let (_, head) = listed
        .ask(&format!(
            "CONNECT 127.0.0.1:{} HTTP/1.1\r\n\r\n",
            echo.addr.port()
        ))
        .await;
    assert!(head.starts_with("HTTP/1.1 200 "), "{head}");
}

#[tokio::test]
async fn a_name_resolving_to_loopback_is_refused_unless_a_rule_names_it_exactly() {
    let echo = echo_server().await;
    let h = start(
        policy_decider(),
        mapped(&[
            ("sneaky.glob.test", echo.addr),
            ("once.test", echo.addr),
            ("named.test", echo.addr),
        ]),
    );
    let (_, head) = h.ask("CONNECT sneaky.glob.test:443 HTTP/1.1\r\n\r\n").await;
    assert!(
        head.starts_with(
            "HTTP/1.1 403 bosun: sneaky.glob.test resolves to 127.0.0.1, a loopback address"
        ),
        "{head}"
    );
    assert_eq!(echo.accepted.load(Ordering::SeqCst), 0);
    let report = h.reports(1).await.remove(0);
    assert_eq!(report.decision, NetworkDecision::Denied);
    assert_eq!(report.rule.as_deref(), Some("network: non-public address"));
    let (_, head) = h.ask("CONNECT once.test:443 HTTP/1.1\r\n\r\n").await;
    assert!(head.contains("once.test resolves to 127.0.0.1"), "{head}");
    assert_eq!(echo.accepted.load(Ordering::SeqCst), 0);
    let (_, head) = h.ask("CONNECT named.test:443 HTTP/1.1\r\n\r\n").await;
    assert!(head.starts_with("HTTP/1.1 200 "), "{head}");
}

#[tokio::test]
async fn a_decider_waiting_for_approval_holds_the_connect_then_opens_the_tunnel() {
    let echo = echo_server().await;
    let approved = Arc::new(Notify::new());
    let asked = Arc::new(AtomicUsize::new(0));
    let (wait, count) = (Arc::clone(&approved), Arc::clone(&asked));
    let decider: Decider = Arc::new(move |_| {
        let (wait, count) = (Arc::clone(&wait), Arc::clone(&count));
        Box::pin(async move {
            count.fetch_add(1, Ordering::SeqCst);
            wait.notified().await;
            // "Approve always": the person wrote `new.test` as a rule.
            Verdict::approved(Some("network.domains \"new.test\"".into()), true)
        })
    });
    let h = start(decider, mapped(&[("new.test", echo.addr)]));
    let mut c = h.client().await;
    c.write_all(b"CONNECT new.test:443 HTTP/1.1\r\n\r\n")
        .await
        .unwrap();
    let mut byte = [0u8; 1];
    let early = tokio::time::timeout(Duration::from_millis(300), c.read(&mut byte)).await;
    assert!(early.is_err(), "the proxy answered before the approval");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    approved.notify_one();
    assert!(read_head(&mut c).await.starts_with("HTTP/1.1 200 "));
    c.write_all(b"ping").await.unwrap();
    let mut back = [0u8; 4];
    c.read_exact(&mut back).await.unwrap();
    assert_eq!(&back, b"ping");
    drop(c);
    let report = h.reports(1).await.remove(0);
    assert_eq!(
        (report.decision, report.bytes_up, report.bytes_down),
        (NetworkDecision::Approved, 4, 4)
    );
}

#[tokio::test]
async fn a_decider_that_does_not_answer_in_time_is_a_refusal() {
    let echo = echo_server().await;
    let never: Decider = Arc::new(|_| Box::pin(std::future::pending()));
    let config = ProxyConfig {
        decide_timeout: Duration::from_millis(200),
        ..mapped(&[("slow.test", echo.addr)])
    };
    let h = start(never, config);
    let (_, head) = h.ask("CONNECT slow.test:443 HTTP/1.1\r\n\r\n").await;
    assert!(
        head.starts_with("HTTP/1.1 403 bosun: no decision about slow.test:443 within 0.2 s"),
        "{head}"
    );
    assert_eq!(h.reports(1).await[0].decision, NetworkDecision::Denied);
    assert_eq!(echo.accepted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_malformed_request_gets_400_and_is_not_reported() {
    let h = start(policy_decider(), ProxyConfig::default());
    for bad in [
        "hello\r\n\r\n",
        "GET /etc/passwd HTTP/1.1\r\nHost: named.test\r\n\r\n",
        "GET https://named.test/ HTTP/1.1\r\n\r\n",
        "CONNECT named.test HTTP/1.1\r\n\r\n",
        "CONNECT 2130706433:80 HTTP/1.1\r\n\r\n",
        "CONNECT named.test@evil.test:443 HTTP/1.1\r\n\r\n",
        "\u{16}\u{3}\u{1}\u{0}\u{a5}\u{1}\r\n\r\n",
    ] {
        let (_, head) = h.ask(bad).await;
        assert!(head.starts_with("HTTP/1.1 400 bosun: "), "{bad:?}: {head}");
    }
    // A client that sends nothing and leaves gets nothing.
    drop(h.client().await);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(h.reports.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_huge_request_head_gets_431() {
    let h = start(policy_decider(), ProxyConfig::default());
    let mut c = h.client().await;
    let mut request = b"CONNECT named.test:443 HTTP/1.1\r\n".to_vec();
    for i in 0..2000 {
        request.extend_from_slice(format!("X-Padding-{i}: {}\r\n", "a".repeat(40)).as_bytes());
    }
    // The proxy may close before all of it is written.
    let _ = c.write_all(&request).await;
    let head = read_head(&mut c).await;
    assert!(head.starts_with("HTTP/1.1 431 "), "{head}");
}

#[tokio::test]
async fn an_idle_tunnel_is_closed() {
    let echo = echo_server().await;
    let config = ProxyConfig {
        idle_timeout: Duration::from_millis(300),
        ..mapped(&[("named.test", echo.addr)])
    };
    let h = start(policy_decider(), config);
    let (mut c, head) = h.ask("CONNECT named.test:443 HTTP/1.1\r\n\r\n").await;
    assert!(head.starts_with("HTTP/1.1 200 "));
    let mut buf = [0u8; 16];
    let closed = tokio::time::timeout(Duration::from_secs(5), c.read(&mut buf)).await;
    assert!(matches!(closed, Ok(Ok(0))), "{closed:?}");
    assert_eq!(h.reports(1).await[0].decision, NetworkDecision::Allowed);
}

#[tokio::test]
async fn shutting_down_refuses_a_waiting_connection_reports_it_and_removes_the_socket() {
    let never: Decider = Arc::new(|_| Box::pin(std::future::pending()));
    let h = start(never, ProxyConfig::default());
    let mut c = h.client().await;
    c.write_all(b"CONNECT named.test:443 HTTP/1.1\r\n\r\n")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let socket = h.proxy.socket().to_path_buf();
    let reports = Arc::clone(&h.reports);
    h.proxy.shutdown().await;
    assert!(!socket.exists());
    let got = reports.lock().unwrap().clone();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].decision, NetworkDecision::Denied);
    assert_eq!(got[0].reason.as_deref(), Some("the command ended first"));
    assert_eq!(read_to_end(&mut c).await, "");
}

#[tokio::test]
async fn a_command_opening_connections_without_end_gets_503_past_the_limit() {
    let never: Decider = Arc::new(|_| Box::pin(std::future::pending()));
    let h = start(never, ProxyConfig::default());
    let mut held = Vec::new();
    for _ in 0..256 {
        let mut c = h.client().await;
        c.write_all(b"CONNECT named.test:443 HTTP/1.1\r\n\r\n")
            .await
            .unwrap();
        held.push(c);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (_, head) = h.ask("CONNECT named.test:443 HTTP/1.1\r\n\r\n").await;
    assert!(
        head.starts_with("HTTP/1.1 503 bosun: too many connections"),
        "{head}"
    );
    drop(held);
}
