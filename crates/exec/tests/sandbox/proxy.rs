//! The proxy forwarder: a command reaches Bosun's egress proxy through `$HTTPS_PROXY`, and
//! has no other way out.

use super::fixture::*;
use super::sockets::write_probe;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::sync::{Arc, Mutex};

/// A fake egress proxy on a Unix socket: records what each connection sent first and answers
/// `HTTP/1.1 200 OK` to anything.
fn fake_proxy(path: &std::path::Path) -> Arc<Mutex<Vec<String>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let listener = UnixListener::bind(path).unwrap();
    let record = Arc::clone(&seen);
    std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            let mut buf = [0u8; 1024];
            let n = conn.read(&mut buf).unwrap_or(0);
            record
                .lock()
                .unwrap()
                .push(String::from_utf8_lossy(&buf[..n]).into_owned());
            let _ = conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        }
    });
    seen
}

#[tokio::test]
async fn a_command_reaches_the_proxy_through_https_proxy_and_cannot_open_a_direct_socket() {
    let Some(fx) = Fixture::new() else { return };
    if !matches!(
        bosun_exec::probe(),
        bosun_exec::SandboxSupport::Full { netns: true, .. }
    ) {
        eprintln!("SKIPPED: the proxy forwarder needs a network namespace");
        return;
    }
    let run_dir = fx.base.join("bosun-home/run");
    std::fs::create_dir_all(&run_dir).unwrap();
    let socket = run_dir.join("proxy.sock");
    let seen = fake_proxy(&socket);
    let mut policy = fx.policy();
    policy.proxy = Some(socket.clone());

    let through_proxy = "p=${HTTPS_PROXY#http://}; exec 3<>/dev/tcp/${p%:*}/${p##*:} \
        && printf 'CONNECT example.com:443 HTTP/1.1\\r\\nHost: example.com:443\\r\\n\\r\\n' >&3 \
        && head -c 15 <&3; echo; echo \"$HTTPS_PROXY $no_proxy\"";
    let (outcome, text) = fx.run_with(through_proxy, policy.clone()).await;
    assert!(outcome.success(), "{text}");
    assert_eq!(
        text,
        "HTTP/1.1 200 OK\nhttp://127.0.0.1:3128 localhost,127.0.0.1,::1\n"
    );
    assert!(
        seen.lock().unwrap()[0].starts_with("CONNECT example.com:443 HTTP/1.1\r\n"),
        "{:?}",
        seen.lock().unwrap()
    );

    // No direct way out: not a TCP connection to the host, not the proxy's socket itself.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (_, text) = fx
        .run_with(
            &format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"),
            policy.clone(),
        )
        .await;
    assert!(!text.contains("connected\n"), "{text}");
    if tool_exists("python3") {
        write_probe(&fx);
        let (_, text) = fx
            .run_with(&format!("python3 probe.py '{}'", socket.display()), policy)
            .await;
        assert!(text.starts_with("refused"), "{text}");
    }
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "only the forwarded connection"
    );
}
