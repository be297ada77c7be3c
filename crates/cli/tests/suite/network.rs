//! Egress through Bosun's proxy, end to end through `bosun run`: a command granted the network
//! reaches a host a rule names, a host no rule names asks and is approved (always, as a
//! `[network] domains` rule) or denied, and every connection is a `network_connection` event.
//!
//! The command reaches the proxy only through `$HTTP_PROXY`: the sandbox's forwarder on
//! `127.0.0.1:3128` inside the command's network namespace (curl, or Python when curl is
//! missing). Names map to a local server with the debug-only `BOSUN_PROXY_RESOLVE`.

use super::support::*;
use bosun_protocol::{EventMsg, NetworkConnection, NetworkDecision, ToolAction};
use bosun_testkit::MockModelServer;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;

/// An HTTP server on 127.0.0.1 answering `served <request line>` to every request.
fn web_server() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut got = Vec::new();
            let mut buf = [0u8; 4096];
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
            let text = String::from_utf8_lossy(&got);
            let body = format!("served {}\n", text.lines().next().unwrap_or_default());
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    addr
}

/// A command fetching `http://{host}{path}` through the proxy socket in `run_dir`.
fn fetch(_run_dir: &Path, host: &str, path: &str) -> String {
    // Plain HTTP through `$HTTP_PROXY`: the sandbox's forwarder on 127.0.0.1:3128 inside the
    // command's network namespace, the only way out, carries it to the proxy's socket.
    let url = format!("http://{host}{path}");
    let curl = std::process::Command::new("curl").arg("--version").output();
    if curl.is_ok_and(|o| o.status.success()) {
        return format!("curl -s {url}");
    }
    format!(
        "python3 -c 'import urllib.request as u, urllib.error as e\ntry: print(u.urlopen(\"{url}\").read().decode())\nexcept e.HTTPError as x: print(x.read().decode())'"
    )
}

const POLICY: &str = "[commands]\nallow = [\"curl\", \"python3\"]\n[network]\nallow = [\"curl\", \"python3\"]\ndomains = [\"allowed.test\"]\n";

fn connections(run: &Run) -> Vec<NetworkConnection> {
    run.events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::NetworkConnection(c) => Some(c.clone()),
            _ => None,
        })
        .collect()
}

/// The `BOSUN_PROXY_RESOLVE` value mapping every test host to the local server.
fn resolve(server: std::net::SocketAddr) -> String {
    ["allowed.test", "new.test", "denied.test", "once.test"]
        .map(|h| format!("{h}={server}"))
        .join(",")
}

fn sandboxed() -> bool {
    let support = bosun_exec::probe();
    if !support.is_available() {
        eprintln!("SKIPPED: {}", support.describe());
    }
    support.is_available()
}

#[test]
fn a_command_reaches_named_hosts_through_the_proxy_and_asks_for_others() {
    if !sandboxed() {
        return;
    }
    let env = Env::new();
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(env.home.join("policy.toml"), POLICY).unwrap();
    let run_dir = env.home.join("run");
    let web = web_server();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![
            call(
                "named",
                "run_command",
                json!({"command": fetch(&run_dir, "allowed.test", "/simple/")}),
            ),
            call(
                "always",
                "run_command",
                json!({"command": fetch(&run_dir, "new.test", "/pkg")}),
            ),
            call(
                "denied",
                "run_command",
                json!({"command": fetch(&run_dir, "denied.test", "/x")}),
            ),
            call(
                "once",
                "run_command",
                json!({"command": fetch(&run_dir, "once.test", "/y")}),
            ),
        ]),
        text("done"),
    ])
    .unwrap();
    let mut asked = Vec::new();
    let run = run_answering_with_env(
        &env,
        &server,
        "fetch",
        &["--mode", "ask"],
        &[("BOSUN_PROXY_RESOLVE", &resolve(web))],
        |req| {
            let ToolAction::Network {
                host,
                port,
                command,
            } = &req.action
            else {
                panic!("only hosts ask here: {req:?}");
            };
            asked.push((
                host.clone(),
                *port,
                req.rule.clone(),
                req.suggestions.clone(),
            ));
            assert!(command.contains(host.as_str()), "{command}");
            assert!(req.source.ends_with("policy.toml:4"), "{}", req.source);
            let id = &req.approval_id;
            match host.as_str() {
                "new.test" => {
                    json!({"approval_id": id, "decision": "approve_always", "scope": "user"})
                }
                "denied.test" => {
                    json!({"approval_id": id, "decision": "deny", "note": "not this one"})
                }
                _ => json!({"approval_id": id, "decision": "approve_once"}),
            }
        },
    );
    // 6: answered, the task changed nothing.
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    assert_eq!(
        asked,
        ["new.test", "denied.test", "once.test"].map(|h| (
            h.to_string(),
            80,
            "network.allow \"curl\"".to_string(),
            vec![h.to_string()]
        ))
    );

    assert!(tool_result(&server, "named").contains("served GET /simple/ HTTP/1.1"));
    assert!(tool_result(&server, "always").contains("served GET /pkg HTTP/1.1"));
    let denied = tool_result(&server, "denied");
    assert!(
        denied.contains("bosun: the user denied denied.test:80: not this one"),
        "{denied}"
    );
    // Approved once, a name that resolves to loopback stays refused: only a rule naming it may.
    let once = tool_result(&server, "once");
    assert!(
        once.contains("once.test resolves to 127.0.0.1, a loopback address"),
        "{once}"
    );

    let seen: Vec<(String, NetworkDecision, Option<String>)> = connections(&run)
        .into_iter()
        .map(|c| (c.host, c.decision, c.rule))
        .collect();
    assert_eq!(
        seen,
        vec![
            (
                "allowed.test".into(),
                NetworkDecision::Allowed,
                Some("network.domains \"allowed.test\"".into())
            ),
            (
                "new.test".into(),
                NetworkDecision::Approved,
                Some("network.domains \"new.test\"".into())
            ),
            (
                "denied.test".into(),
                NetworkDecision::Denied,
                Some("network.allow \"curl\"".into())
            ),
            (
                "once.test".into(),
                NetworkDecision::Denied,
                Some("network: non-public address".into())
            ),
        ]
    );
    let all = connections(&run);
    assert!(all[0].bytes_up > 0 && all[0].bytes_down > 0, "{:?}", all[0]);
    assert_eq!((all[2].bytes_up, all[2].bytes_down), (0, 0));
    // Each connection is journaled before its command's end.
    let position =
        |pred: &dyn Fn(&EventMsg) -> bool| run.events.iter().position(|e| pred(&e.msg)).unwrap();
    let first_net = position(&|m| matches!(m, EventMsg::NetworkConnection(_)));
    let first_end = position(&|m| matches!(m, EventMsg::ToolCallEnd(_)));
    assert!(first_net < first_end);

    let saved = std::fs::read_to_string(env.home.join("policy.toml")).unwrap();
    assert!(
        saved.contains("domains = [\"allowed.test\", \"new.test\"]"),
        "{saved}"
    );
    let left: Vec<_> = std::fs::read_dir(&run_dir).unwrap().collect();
    assert!(left.is_empty(), "proxy sockets left behind: {left:?}");

    let (ok, transcript, err) = env.text(&["show", &run.task_id()]);
    assert!(ok, "{err}");
    assert!(
        transcript.contains("⇄ allowed.test:80 · allowed by network.domains \"allowed.test\" · ↑"),
        "{transcript}"
    );
    assert!(
        transcript.contains("⊘ denied.test:80 · denied by network.allow \"curl\": the user denied"),
        "{transcript}"
    );
}

#[test]
fn yes_approves_a_host_like_any_ask() {
    if !sandboxed() {
        return;
    }
    let env = Env::new();
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(env.home.join("policy.toml"), POLICY).unwrap();
    let web = web_server();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![call(
            "c",
            "run_command",
            json!({"command": fetch(&env.home.join("run"), "once.test", "/")}),
        )]),
        text("done"),
    ])
    .unwrap();
    let run = env.run_with_env(
        &server,
        "fetch",
        &["--mode", "ask", "--yes"],
        &[("BOSUN_PROXY_RESOLVE", &resolve(web))],
    );
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    let by: Vec<String> = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ApprovalResolved(r) => Some(r.by.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(by, vec!["--yes"]);
    let conn = connections(&run);
    assert_eq!(conn.len(), 1);
    assert_eq!(conn[0].host, "once.test");
    // Approved, then refused only for where it resolves (a local test server).
    assert!(
        conn[0]
            .reason
            .as_deref()
            .unwrap_or_default()
            .contains("loopback"),
        "{conn:?}"
    );
}

#[test]
fn policy_check_shows_the_network_a_command_gets() {
    let env = Env::new();
    let policy = env.dir.path().join("p.toml");
    std::fs::write(
        &policy,
        "[network]\ndomains = [\"pypi.org\"]\n[[network.rules]]\ncommand = \"pip install*\"\ndomains = [\"*.pythonhosted.org\"]\n",
    )
    .unwrap();
    let check = |args: &[&str]| {
        let mut all = vec![
            "policy",
            "check",
            "--repo",
            path_str(&env.repo),
            "--policy",
            path_str(&policy),
        ];
        all.extend_from_slice(args);
        let (ok, out, err) = env.text(&all);
        assert!(ok, "{err}");
        out
    };
    let out = check(&["--", "pip", "install", "torch"]);
    assert!(
        out.contains("network: through Bosun's proxy, granted by network.rules \"pip install*\""),
        "{out}"
    );
    assert!(out.contains("allow *.pythonhosted.org"), "{out}");
    assert!(out.contains("other hosts: ask"), "{out}");
    let out = check(&["--host", "files.pythonhosted.org", "--", "make"]);
    assert!(out.contains("other hosts: deny"), "{out}");
    assert!(
        out.contains("host deny: no [network] domains rule names `files.pythonhosted.org`"),
        "{out}"
    );
    let out = check(&["--json", "--host", "pypi.org", "--", "pip", "install", "x"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["host"]["decision"], "allow");
    assert_eq!(v["host"]["named"], true);
    assert_eq!(v["network"]["other_hosts"], "ask");
}

#[test]
fn the_proxy_is_the_only_way_out_tls_tunnels_through_and_ip_literals_are_refused() {
    if !sandboxed() {
        return;
    }
    let env = Env::new();
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(env.home.join("policy.toml"), POLICY).unwrap();
    let web = web_server();
    let server = MockModelServer::start_blocking(vec![
        tools(vec![
            call(
                "direct",
                "run_command",
                json!({"command": format!("curl -s --noproxy '*' --max-time 5 http://{web}/direct; echo exit=$?")}),
            ),
            call(
                "ip",
                "run_command",
                // (127.0.0.1 itself is in NO_PROXY, so curl would try it directly, and fail.)
                json!({"command": format!("curl -s --max-time 5 http://10.1.2.3:{}/ip", web.port())}),
            ),
            call(
                "tls",
                "run_command",
                json!({"command": "curl -s --max-time 2 https://allowed.test/; echo exit=$?"}),
            ),
        ]),
        text("done"),
    ])
    .unwrap();
    let run = env.run_with_env(
        &server,
        "try every way out",
        &["--mode", "full-auto"],
        &[("BOSUN_PROXY_RESOLVE", &resolve(web))],
    );
    assert_eq!(run.code(), Some(6), "{}", run.stderr());
    let direct = tool_result(&server, "direct");
    assert!(
        !direct.contains("served") && !direct.contains("exit=0"),
        "a direct socket reached the host: {direct}"
    );
    let ip = tool_result(&server, "ip");
    assert!(!ip.contains("served"), "{ip}");
    let seen: Vec<(String, u16, NetworkDecision)> = connections(&run)
        .into_iter()
        .map(|c| (c.host, c.port, c.decision))
        .collect();
    assert_eq!(
        seen,
        vec![
            ("10.1.2.3".to_string(), web.port(), NetworkDecision::Denied),
            ("allowed.test".to_string(), 443, NetworkDecision::Allowed),
        ],
        "the direct attempt never reached the proxy; the IP literal was refused; the TLS CONNECT was tunnelled"
    );
    let tls = connections(&run)
        .into_iter()
        .find(|c| c.port == 443)
        .unwrap();
    assert!(
        tls.bytes_up > 0,
        "the TLS client hello went through the tunnel: {tls:?}"
    );
}
