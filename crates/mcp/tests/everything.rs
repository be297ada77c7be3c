//! Against the real `@modelcontextprotocol/server-everything` (a pinned npm devDependency,
//! `npm ci` installs it), over stdio and over streamable HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bosun_mcp::{Confinement, Launch, McpServerConfig, Server};
use std::path::PathBuf;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn everything() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        p.is_file(),
        "{} is missing: run `npm ci` at the repository's root",
        p.display()
    );
    p
}

fn launch(dir: &tempfile::TempDir) -> Launch {
    let worktree = dir.path().join("wt");
    let scratch = dir.path().join("tmp");
    std::fs::create_dir_all(&worktree).unwrap();
    std::fs::create_dir_all(&scratch).unwrap();
    Launch {
        worktree,
        io_dir: scratch.join("io"),
        cache_dir: scratch.join("cache"),
        scratch,
        confinement: Confinement::Unconfined,
        network: None,
    }
}

fn stdio(marker: &str) -> McpServerConfig {
    McpServerConfig {
        command: Some("node".into()),
        args: vec![
            everything().display().to_string(),
            "stdio".into(),
            marker.into(),
        ],
        ..Default::default()
    }
}

#[tokio::test]
async fn a_stdio_server_lists_and_calls_its_tools() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::new("everything".into(), stdio("--m1"), launch(&dir));
    let tools = server.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.model_name.as_str()).collect();
    assert!(names.contains(&"mcp__everything__echo"), "{names:?}");
    assert!(names.contains(&"mcp__everything__get-env"), "{names:?}");
    let echo = tools.iter().find(|t| t.name == "echo").unwrap();
    assert_eq!(echo.input_schema["type"], "object");
    let (text, failed) = server
        .call(
            "echo",
            serde_json::json!({"message": "hello from bosun"}),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(!failed);
    assert!(text.contains("hello from bosun"), "{text}");
    // Arguments its schema refuses: the server's own error, as a failed result or an error.
    let bad = server
        .call(
            "echo",
            serde_json::json!({"nope": 1}),
            &CancellationToken::new(),
        )
        .await;
    match bad {
        Ok((text, failed)) => assert!(failed, "{text}"),
        Err(e) => assert!(e.0.contains("echo"), "{e}"),
    }
    server.stop().await;
}

#[tokio::test]
async fn a_server_killed_mid_call_is_a_tool_error_and_starts_again_on_the_next_call() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("--bosun-test-{}", std::process::id());
    let server = Server::new("everything".into(), stdio(&marker), launch(&dir));
    server.list_tools().await.unwrap();
    let killer = {
        let marker = marker.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(700)).await;
            std::process::Command::new("pkill")
                .args(["-9", "-f", marker.trim_start_matches("-")])
                .status()
                .unwrap();
        })
    };
    let err = server
        .call(
            "trigger-long-running-operation",
            serde_json::json!({"duration": 20, "steps": 2}),
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    killer.await.unwrap();
    assert!(
        err.0
            .contains("exited while `trigger-long-running-operation` ran")
            || err.0.contains("failed on `trigger-long-running-operation`"),
        "{err}"
    );
    assert!(err.0.contains("starts again on the next call"), "{err}");
    let (text, _) = server
        .call(
            "echo",
            serde_json::json!({"message": "back"}),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(text.contains("back"), "{text}");
    server.stop().await;
}

#[tokio::test]
async fn a_call_past_its_timeout_is_a_tool_error_and_the_server_is_restarted() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = stdio("--m3");
    config.tool_timeout_sec = Some(1);
    let server = Server::new("slow".into(), config, launch(&dir));
    let err = server
        .call(
            "trigger-long-running-operation",
            serde_json::json!({"duration": 10, "steps": 2}),
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(err.0.contains("did not answer"), "{err}");
    assert!(err.0.contains("within 1 s"), "{err}");
    let (text, _) = server
        .call(
            "echo",
            serde_json::json!({"message": "again"}),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(text.contains("again"), "{text}");
}

#[tokio::test]
async fn a_command_that_is_not_an_mcp_server_fails_to_start_saying_what_it_printed() {
    let dir = tempfile::tempdir().unwrap();
    let config = McpServerConfig {
        command: Some("sh".into()),
        args: vec!["-c".into(), "echo not a server >&2; exit 3".into()],
        ..Default::default()
    };
    let server = Server::new("broken".into(), config, launch(&dir));
    let err = server.list_tools().await.unwrap_err();
    assert!(err.0.contains("`broken`"), "{err}");
    assert!(err.0.contains("exit code 3"), "{err}");
    assert!(err.0.contains("not a server"), "{err}");
    // Garbage on stdout instead of JSON-RPC.
    let config = McpServerConfig {
        command: Some("sh".into()),
        args: vec!["-c".into(), "echo garbage; sleep 30".into()],
        startup_timeout_sec: Some(2),
        ..Default::default()
    };
    let server = Server::new("garbage".into(), config, launch(&dir));
    let err = server.list_tools().await.unwrap_err();
    assert!(err.0.contains("`garbage`"), "{err}");
}

#[tokio::test]
async fn a_streamable_http_server_lists_and_calls_its_tools() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut child = tokio::process::Command::new("node")
        .arg(everything())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the server never listened"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = McpServerConfig {
        url: Some(format!("http://127.0.0.1:{port}/mcp")),
        ..Default::default()
    };
    let server = Server::new("web".into(), config, launch(&dir));
    let tools = server.list_tools().await.unwrap();
    assert!(
        tools.iter().any(|t| t.model_name == "mcp__web__get-sum"),
        "{tools:?}"
    );
    let (text, failed) = server
        .call(
            "get-sum",
            serde_json::json!({"a": 2, "b": 40}),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(!failed);
    assert!(text.contains("42"), "{text}");
    server.stop().await;
    child.kill().await.unwrap();
}

#[tokio::test]
async fn two_tasks_servers_of_one_name_at_once_keep_their_own_directories() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = launch(&dir);
    let mut b = launch(&dir);
    // Two tasks: their own private roots, the one FIFO root of the process.
    a.scratch = dir.path().join("tmp/a");
    b.scratch = dir.path().join("tmp/b");
    let first = Server::new("everything".into(), stdio("--m6"), a);
    let second = Server::new("everything".into(), stdio("--m6"), b);
    first.list_tools().await.unwrap();
    second.list_tools().await.unwrap();
    let cancel = CancellationToken::new();
    let (env, _) = first
        .call("get-env", serde_json::json!({}), &cancel)
        .await
        .unwrap();
    let env: serde_json::Value = serde_json::from_str(&env).unwrap();
    let first_tmp = PathBuf::from(env["TMPDIR"].as_str().unwrap());
    second.stop().await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        first_tmp.is_dir(),
        "stopping the other removed {}",
        first_tmp.display()
    );
    let (text, _) = first
        .call(
            "echo",
            serde_json::json!({"message": "still here"}),
            &cancel,
        )
        .await
        .unwrap();
    assert!(text.contains("still here"));
}
