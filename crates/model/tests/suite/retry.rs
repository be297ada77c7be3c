use super::common::*;
use bosun_model::{ModelError, StreamEvent, ToolCall};
use bosun_testkit::{MockModelServer, MockReply, MockToolCall, MockUsage};
use pretty_assertions::assert_eq;
use std::time::Duration;

#[tokio::test]
async fn server_error_then_success_is_retried_transparently() {
    let server = MockModelServer::start(vec![
        MockReply::status(500, "internal hiccup"),
        MockReply::text("fine"),
    ])
    .await
    .unwrap();
    let client = openai(&server, fast_retry(3));
    let (resp, events) = run(&client, &request("x")).await;
    assert_eq!(resp.unwrap().text, "fine");
    assert_eq!(retries(&events), vec![(2, 4)]);
    match &events[0] {
        StreamEvent::Retrying { reason, delay, .. } => {
            assert!(
                reason.contains("500") && reason.contains("internal hiccup"),
                "{reason}"
            );
            assert!(*delay <= Duration::from_millis(20));
        }
        other => panic!("expected Retrying first, got {other:?}"),
    }
    assert_eq!(server.model_requests().len(), 2);
}

#[tokio::test]
async fn rate_limit_retry_after_is_honoured() {
    let server = MockModelServer::start(vec![
        MockReply::Status {
            status: 429,
            retry_after: Some("1".into()),
            body: r#"{"error":{"message":"Rate limit reached for requests"}}"#.into(),
        },
        MockReply::text("after the wait"),
    ])
    .await
    .unwrap();
    let client = anthropic(&server, fast_retry(2));
    let (resp, events) = run(&client, &request("x")).await;
    assert_eq!(resp.unwrap().text, "after the wait");
    match &events[0] {
        StreamEvent::Retrying {
            attempt,
            max_attempts,
            delay,
            reason,
        } => {
            assert_eq!((*attempt, *max_attempts), (2, 3));
            assert_eq!(
                *delay,
                Duration::from_secs(1),
                "retry-after wins over the 5 ms backoff"
            );
            assert!(
                reason.contains("429") && reason.contains("Rate limit reached"),
                "{reason}"
            );
        }
        other => panic!("expected Retrying first, got {other:?}"),
    }
}

#[tokio::test]
async fn overloaded_529_is_retried() {
    let server = MockModelServer::start(vec![
        MockReply::Status {
            status: 529,
            retry_after: None,
            body: r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
                .into(),
        },
        MockReply::text("ok"),
    ])
    .await
    .unwrap();
    let client = anthropic(&server, fast_retry(1));
    let (resp, events) = run(&client, &request("x")).await;
    assert_eq!(resp.unwrap().text, "ok");
    assert_eq!(retries(&events), vec![(2, 2)]);
}

#[tokio::test]
async fn a_stream_cut_after_a_tool_call_began_is_sent_again_whole_and_yields_one_set_of_calls() {
    for api in ["openai", "anthropic"] {
        let reply = |cut| MockReply::Reply {
            text: "Running it.".into(),
            tool_calls: vec![MockToolCall {
                id: "call_run".into(),
                name: "run_command".into(),
                arguments: r#"{"command": "cargo build --release"}"#.into(),
            }],
            usage: MockUsage {
                input_tokens: 100,
                output_tokens: 20,
                ..MockUsage::default()
            },
            chunk_delay_ms: 0,
            cut_after_events: cut,
        };
        // Event 8 is inside the tool call's arguments in both wire formats.
        let server = MockModelServer::start(vec![reply(Some(8)), reply(None)])
            .await
            .unwrap();
        let client = if api == "openai" {
            openai(&server, fast_retry(2))
        } else {
            anthropic(&server, fast_retry(2))
        };
        let (resp, events) = run(&client, &request("build")).await;
        let resp = resp.unwrap();
        assert_eq!(
            resp.tool_calls,
            vec![ToolCall {
                id: "call_run".into(),
                name: "run_command".into(),
                arguments: r#"{"command": "cargo build --release"}"#.into()
            }],
            "{api}"
        );
        assert_eq!(resp.text, "Running it.", "{api}");
        assert_eq!(retries(&events), vec![(2, 3)], "{api}");
        let before_retry = &events[..events
            .iter()
            .position(|e| matches!(e, StreamEvent::Retrying { .. }))
            .unwrap()];
        assert!(
            before_retry
                .iter()
                .any(|e| matches!(e, StreamEvent::ToolCallStarted { .. })),
            "{api}: the first attempt had begun the tool call: {before_retry:?}"
        );
        let started_after = last_attempt(&events)
            .iter()
            .filter(|e| matches!(e, StreamEvent::ToolCallStarted { .. }))
            .count();
        assert_eq!(started_after, 1, "{api}");
        assert_eq!(server.model_requests().len(), 2, "{api}");
        assert_eq!(
            server.model_requests()[0].body,
            server.model_requests()[1].body,
            "{api}: the same request again"
        );
    }
}

#[tokio::test]
async fn after_the_last_retry_the_error_names_provider_status_and_message() {
    let server = MockModelServer::start(
        (0..5)
            .map(|_| MockReply::status(500, "the upstream exploded"))
            .collect(),
    )
    .await
    .unwrap();
    let client = openai(&server, fast_retry(4));
    let (resp, events) = run(&client, &request("x")).await;
    let err = resp.unwrap_err();
    assert_eq!(
        err.to_string(),
        "openai-compat returned 500 after 5 attempts: the upstream exploded"
    );
    assert!(matches!(
        err,
        ModelError::Http {
            status: 500,
            attempts: 5,
            ..
        }
    ));
    assert_eq!(err.code(), "model_error");
    assert_eq!(retries(&events), vec![(2, 5), (3, 5), (4, 5), (5, 5)]);
    assert_eq!(server.model_requests().len(), 5);
}

#[tokio::test]
async fn client_errors_are_not_retried_and_never_show_the_key() {
    let server = MockModelServer::start(vec![MockReply::status(
        401,
        &format!("Incorrect API key provided: {KEY}. You can find your API key at ..."),
    )])
    .await
    .unwrap();
    let client = openai(&server, fast_retry(3));
    let (resp, events) = run(&client, &request("x")).await;
    let err = resp.unwrap_err();
    let text = format!("{err} {err:?}");
    assert!(!text.contains(KEY), "{text}");
    assert!(
        text.contains("401") && text.contains("check the API key"),
        "{text}"
    );
    assert!(events.is_empty());
    assert_eq!(server.model_requests().len(), 1);
}

#[tokio::test]
async fn unreachable_server_is_a_connection_error_after_retries() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let cfg = bosun_model::ProviderConfig::new(
        "ollama",
        bosun_model::ApiKind::OpenAiChat,
        format!("http://127.0.0.1:{port}/v1"),
        "llama3",
    )
    .with_api_key(KEY)
    .with_retry(fast_retry(1));
    let client = bosun_model::client(cfg).unwrap();
    let (resp, events) = run(&client, &request("x")).await;
    let err = resp.unwrap_err();
    assert!(
        matches!(err, ModelError::Connection { attempts: 2, .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.starts_with("could not reach ollama after 2 attempts"),
        "{msg}"
    );
    assert!(!msg.contains(KEY));
    assert_eq!(retries(&events).len(), 1);
}

#[tokio::test]
async fn exhausted_script_and_wrong_path_errors_are_readable() {
    let server = MockModelServer::start(vec![]).await.unwrap();
    let client = openai(&server, fast_retry(0));
    let err = client.complete(&request("x")).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "openai-compat returned 500 after 1 attempt: mock model: script exhausted"
    );

    // A base_url with a wrong path: the 404 says where the request went.
    let cfg = bosun_model::ProviderConfig::new(
        "x",
        bosun_model::ApiKind::OpenAiChat,
        server.url() + "/api",
        "m",
    );
    let err = bosun_model::client(cfg)
        .unwrap()
        .complete(&request("x"))
        .await
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("404") && msg.contains("check base_url"),
        "{msg}"
    );
}

#[tokio::test]
async fn bad_configs_are_refused_up_front() {
    for (url, model) in [("", "m"), ("ftp://x", "m"), ("http://x", " ")] {
        let cfg =
            bosun_model::ProviderConfig::new("p", bosun_model::ApiKind::Anthropic, url, model);
        let err = bosun_model::client(cfg).err().unwrap();
        assert_eq!(err.code(), "model_config", "{err}");
    }
}
