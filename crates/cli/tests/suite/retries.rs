//! Retries: 429 with retry-after, 5xx, a stream cut after a tool call began, and giving up.

use super::support::*;
use bosun_protocol::{EventMsg, TaskStatus};
use bosun_testkit::{MockModelServer, MockReply};
use pretty_assertions::assert_eq;
use serde_json::json;

#[test]
fn rate_limits_and_server_errors_are_retried_and_a_cut_stream_runs_its_tool_once() {
    let env = Env::new();
    let cut = MockReply::Reply {
        text: "Writing the file.".into(),
        tool_calls: vec![call(
            "call_1",
            "write_file",
            json!({"path": "once.txt", "content": "1\n"}),
        )],
        usage: usage(10, 10),
        chunk_delay_ms: 0,
        cut_after_events: Some(4),
    };
    let server = MockModelServer::start_blocking(vec![
        MockReply::Status {
            status: 429,
            retry_after: Some("1".into()),
            body: r#"{"error":{"message":"slow down"}}"#.into(),
        },
        MockReply::Status {
            status: 500,
            retry_after: None,
            body: r#"{"error":{"message":"boom"}}"#.into(),
        },
        cut,
        tools(vec![call(
            "call_1",
            "write_file",
            json!({"path": "once.txt", "content": "1\n"}),
        )]),
        text("done"),
    ])
    .unwrap();
    let run = env.run(&server, "write once", &[]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let retries: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ModelRetry(r) => Some(r.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(retries.len(), 3, "{retries:?}");
    assert!(
        retries[0].delay_ms >= 1000,
        "retry-after honoured: {retries:?}"
    );
    let begins = run
        .kinds()
        .iter()
        .filter(|k| **k == "tool_call_begin")
        .count();
    assert_eq!(begins, 1, "the tool ran exactly once");
    assert_eq!(server.requests().len(), 5);
    assert_eq!(
        std::fs::read_to_string(run.worktree().join("once.txt")).unwrap(),
        "1\n"
    );
}

#[test]
fn after_the_last_retry_the_error_names_provider_status_and_message() {
    let env = Env::new();
    let fail = || MockReply::Status {
        status: 503,
        retry_after: Some("0".into()),
        body: r#"{"error":{"message":"model is loading"}}"#.into(),
    };
    let server = MockModelServer::start_blocking((0..8).map(|_| fail()).collect()).unwrap();
    let run = env.run(&server, "hi", &[]);
    assert_ne!(run.code(), Some(0));
    let (status, summary) = run.finished();
    assert_eq!(status, TaskStatus::Failed);
    for needle in ["openai-compat", "503", "model is loading"] {
        assert!(summary.contains(needle), "{needle:?} not in {summary:?}");
    }
    assert!(run.kinds().contains(&"error"));
}

#[test]
fn a_dead_model_server_fails_the_task_with_a_clear_error() {
    let env = Env::new();
    // Bind and drop a listener to get a port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "[providers.dead]\napi = \"openai-chat\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\nmax_retries = 1\nretry_initial_delay_ms = 10\n"
        ),
    )
    .unwrap();
    let run = env.run_args(&[
        "run",
        "--json",
        "--repo",
        path_str(&env.repo),
        "--prompt",
        "hi",
        "--provider",
        "dead",
    ]);
    assert_eq!(run.code(), Some(1), "{}", run.stderr());
    let (status, summary) = run.finished();
    assert_eq!(status, TaskStatus::Failed);
    assert!(
        summary.contains("dead") && summary.to_lowercase().contains("connect"),
        "{summary}"
    );
    // The journal agrees.
    let tasks = env.json(&["tasks", "--json"]);
    assert_eq!(tasks[0]["status"], "failed");
}
