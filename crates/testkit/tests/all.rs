//! The mock model server and the fixtures, exercised over real HTTP and real git.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bosun_testkit::{MockModelServer, MockReply, MockToolCall, MockUsage, fixture_repo};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

fn data_lines(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

fn reply() -> MockReply {
    MockReply::Reply {
        text: "Hello there, world".into(),
        tool_calls: vec![MockToolCall {
            id: "c1".into(),
            name: "read_file".into(),
            arguments: r#"{"path":"README.md"}"#.into(),
        }],
        usage: MockUsage {
            input_tokens: 300,
            output_tokens: 12,
            cached_input_tokens: 200,
            cache_write_tokens: 50,
            reasoning_tokens: 0,
        },
        chunk_delay_ms: 0,
        cut_after_events: None,
    }
}

#[tokio::test]
async fn openai_stream_has_the_real_chunk_shapes() {
    let server = MockModelServer::start(vec![reply()]).await.unwrap();
    let resp = reqwest::Client::new()
        .post(server.url() + "/v1/chat/completions")
        .body(
            json!({"model": "gpt-4o", "stream": true, "stream_options": {"include_usage": true}})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let body = resp.text().await.unwrap();
    assert!(body.trim_end().ends_with("data: [DONE]"));
    let chunks = data_lines(&body);
    assert!(chunks.iter().all(|c| c["model"] == "gpt-4o"));
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "Hello there, world");
    let args: Vec<&str> = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str())
        .filter(|a| !a.is_empty())
        .collect();
    assert!(args.len() > 3);
    assert_eq!(args.concat(), r#"{"path":"README.md"}"#);
    let first_call = chunks
        .iter()
        .find(|c| c["choices"][0]["delta"]["tool_calls"].is_array())
        .unwrap();
    assert_eq!(
        first_call["choices"][0]["delta"]["tool_calls"][0]["id"],
        "c1"
    );
    assert_eq!(
        first_call["choices"][0]["delta"]["tool_calls"][0]["function"]["name"],
        "read_file"
    );
    let usage = chunks.last().unwrap();
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"]["prompt_tokens"], 300);
    assert_eq!(usage["usage"]["completion_tokens"], 12);
    assert_eq!(
        usage["usage"]["prompt_tokens_details"]["cached_tokens"],
        200
    );
    assert_eq!(
        chunks[chunks.len() - 2]["choices"][0]["finish_reason"],
        "tool_calls"
    );
}

#[tokio::test]
async fn anthropic_stream_has_the_real_event_sequence_and_cache_usage() {
    let server = MockModelServer::start(vec![reply()]).await.unwrap();
    let body = reqwest::Client::new()
        .post(server.url() + "/v1/messages")
        .body(json!({"model": "claude-sonnet-4-5", "stream": true}).to_string())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let events: Vec<&str> = body
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(events.first(), Some(&"message_start"));
    assert_eq!(events.last(), Some(&"message_stop"));
    assert!(events.contains(&"ping"));
    let data = data_lines(&body);
    let usage = &data[0]["message"]["usage"];
    assert_eq!(usage["input_tokens"], 50, "uncached = 300 - 200 - 50");
    assert_eq!(usage["cache_read_input_tokens"], 200);
    assert_eq!(usage["cache_creation_input_tokens"], 50);
    let delta = data.iter().find(|d| d["type"] == "message_delta").unwrap();
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert_eq!(delta["usage"]["output_tokens"], 12);
    let tool = data
        .iter()
        .find(|d| d["content_block"]["type"] == "tool_use")
        .unwrap();
    assert_eq!(tool["content_block"]["id"], "c1");
    let json: String = data
        .iter()
        .filter_map(|d| d["delta"]["partial_json"].as_str())
        .collect();
    assert_eq!(json, r#"{"path":"README.md"}"#);
}

#[tokio::test]
async fn status_replies_exhaustion_models_push_and_recording() {
    let server = MockModelServer::start(vec![MockReply::Status {
        status: 429,
        retry_after: Some("3".into()),
        body: r#"{"error":{"message":"slow down"}}"#.into(),
    }])
    .await
    .unwrap();
    let http = reqwest::Client::new();
    let r = http
        .post(server.url() + "/v1/messages")
        .header("x-api-key", "k")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["retry-after"], "3");
    assert_eq!(
        r.text().await.unwrap(),
        r#"{"error":{"message":"slow down"}}"#
    );

    let r = http
        .post(server.url() + "/v1/chat/completions")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 500);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["message"], "mock model: script exhausted");

    let models: Value = http
        .get(server.url() + "/v1/models")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(models["data"][0]["id"], "mock-model");

    server.push(MockReply::text("pushed"));
    let pushed = http
        .post(server.url() + "/_mock/replies")
        .body(r#"[{"kind":"raw_sse","body":"data: [DONE]\n\n"}]"#)
        .send()
        .await
        .unwrap();
    assert_eq!(pushed.status(), 200);
    assert_eq!(server.remaining(), 2);

    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[0].path, "/v1/messages");
    assert_eq!(reqs[0].header("X-Api-Key"), Some("k"));
    assert_eq!(reqs[0].body, json!({}));
    assert_eq!(server.model_requests().len(), 2);
}

#[tokio::test]
async fn a_cut_stream_aborts_the_connection_without_the_terminal_event() {
    let mut cut = reply();
    if let MockReply::Reply {
        cut_after_events, ..
    } = &mut cut
    {
        *cut_after_events = Some(3);
    }
    let server = MockModelServer::start(vec![cut]).await.unwrap();
    let resp = reqwest::Client::new()
        .post(server.url() + "/v1/messages")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(
        resp.text().await.is_err(),
        "the body must end in an error, not cleanly"
    );
}

#[test]
fn blocking_server_works_without_a_runtime_and_stops_on_drop() {
    let server = MockModelServer::start_blocking(vec![MockReply::text("hi")]).unwrap();
    let url = server.url();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let status = rt.block_on(async {
        reqwest::Client::new()
            .get(url.clone() + "/v1/models")
            .send()
            .await
            .unwrap()
            .status()
    });
    assert_eq!(status, 200);
    drop(server);
    let after = rt.block_on(async {
        // The listener closes once the server's runtime saw the shutdown.
        for _ in 0..200 {
            if reqwest::Client::new()
                .get(url.clone() + "/v1/models")
                .send()
                .await
                .is_err()
            {
                return true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        false
    });
    assert!(after, "the server still answers after drop");
}

#[test]
fn the_binary_prints_its_url_first_and_records_requests() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    let record = dir.path().join("requests.jsonl");
    std::fs::write(&script, r#"[{"kind":"reply","text":"from the binary"}]"#).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_bosun-mock-model"))
        .args([
            "--script",
            script.to_str().unwrap(),
            "--record",
            record.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().strip_prefix("listening ").unwrap().to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{line}");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let body = rt.block_on(async {
        reqwest::Client::new()
            .post(url + "/v1/chat/completions")
            .body(r#"{"model":"m","stream":true}"#)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    });
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(body.contains("from the"), "{body}");
    let recorded = std::fs::read_to_string(&record).unwrap();
    let first: Value = serde_json::from_str(recorded.lines().next().unwrap()).unwrap();
    assert_eq!(first["path"], "/v1/chat/completions");
    assert_eq!(first["body"]["model"], "m");
}

#[test]
fn fixture_repo_is_a_real_repository_on_main_with_one_commit() {
    let dir = tempfile::tempdir().unwrap();
    let repo = fixture_repo(dir.path()).unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(&repo)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(git(&["rev-parse", "--abbrev-ref", "HEAD"]).trim(), "main");
    assert_eq!(git(&["rev-list", "--count", "HEAD"]).trim(), "1");
    assert_eq!(
        git(&["ls-files"]).lines().collect::<Vec<_>>(),
        vec![".gitignore", "README.md", "src/lib.rs", "src/main.rs"]
    );
    assert_eq!(git(&["status", "--porcelain"]), "");
    std::fs::write(repo.join("build.log"), "x").unwrap();
    std::fs::create_dir_all(repo.join("target")).unwrap();
    std::fs::write(repo.join("target/x"), "x").unwrap();
    assert_eq!(
        git(&["status", "--porcelain"]),
        "",
        "target/ and *.log are ignored"
    );
    assert_eq!(git(&["config", "user.email"]).trim(), "test@bosun.invalid");
}
