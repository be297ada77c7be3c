use super::common::*;
use bosun_model::{ChatMessage, ModelRequest, StreamEvent, ToolCall};
use bosun_protocol::TokenUsage;
use bosun_testkit::{MockModelServer, MockReply, MockToolCall, MockUsage};
use pretty_assertions::assert_eq;
use serde_json::json;

#[tokio::test]
async fn text_and_tool_calls_with_arguments_split_over_many_chunks() {
    let args_a = r#"{"path": "src/lib.rs", "offset": 10}"#;
    let args_b = r#"{"command": "cargo test --workspace -- --nocapture"}"#;
    let server = MockModelServer::start(vec![MockReply::Reply {
        text: "Let me look at the library and run the tests.".into(),
        tool_calls: vec![
            MockToolCall {
                id: "call_a".into(),
                name: "read_file".into(),
                arguments: args_a.into(),
            },
            MockToolCall {
                id: "call_b".into(),
                name: "run_command".into(),
                arguments: args_b.into(),
            },
        ],
        usage: MockUsage {
            input_tokens: 1200,
            output_tokens: 80,
            cached_input_tokens: 1024,
            cache_write_tokens: 0,
            reasoning_tokens: 0,
        },
        chunk_delay_ms: 0,
        cut_after_events: None,
    }])
    .await
    .unwrap();
    let client = openai(&server, fast_retry(0));
    let (resp, events) = run(&client, &request("fix the bug")).await;
    let resp = resp.unwrap();

    assert_eq!(resp.text, "Let me look at the library and run the tests.");
    assert_eq!(
        resp.tool_calls,
        vec![
            ToolCall {
                id: "call_a".into(),
                name: "read_file".into(),
                arguments: args_a.into()
            },
            ToolCall {
                id: "call_b".into(),
                name: "run_command".into(),
                arguments: args_b.into()
            },
        ]
    );
    assert_eq!(
        resp.usage,
        TokenUsage {
            input_tokens: 1200 - 1024,
            output_tokens: 80,
            cached_input_tokens: 1024,
            cache_write_tokens: 0,
            cache_write_1h_tokens: 0,
            reasoning_tokens: 0,
        }
    );
    assert_eq!(resp.stop_reason.as_deref(), Some("tool_calls"));
    assert_eq!(resp.model, "gpt-4o");

    // The text arrived in several deltas, and each call's arguments in many.
    let text_deltas = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
        .count();
    assert!(text_deltas > 3, "{text_deltas} text deltas");
    assert_eq!(text_of(&events), resp.text);
    let started: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallStarted { id, name } => Some((id.as_str(), name.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        started,
        vec![("call_a", "read_file"), ("call_b", "run_command")]
    );
    let b_deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallDelta { id, delta } if id == "call_b" => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert!(b_deltas.len() > 5, "{b_deltas:?}");
    assert_eq!(b_deltas.concat(), args_b);
}

#[tokio::test]
async fn request_body_replays_history_with_paired_tool_call_ids() {
    let server = MockModelServer::start(vec![MockReply::text("done")])
        .await
        .unwrap();
    let client = openai(&server, fast_retry(0));
    let req = ModelRequest {
        system: "sys".into(),
        messages: vec![
            ChatMessage::User {
                content: "go".into(),
            },
            ChatMessage::Assistant {
                content: "reading".into(),
                tool_calls: vec![
                    ToolCall {
                        id: "call_1".into(),
                        name: "read_file".into(),
                        arguments: r#"{"path":"a"}"#.into(),
                    },
                    ToolCall {
                        id: "call_2".into(),
                        name: "read_file".into(),
                        arguments: r#"{"path":"b"}"#.into(),
                    },
                ],
                reasoning: Vec::new(),
            },
            ChatMessage::Tool {
                call_id: "call_1".into(),
                content: "A".into(),
                is_error: false,
            },
            ChatMessage::Tool {
                call_id: "call_2".into(),
                content: "no such file".into(),
                is_error: true,
            },
        ],
        tools: tools(),
        retry_sampling: None,
    };
    let resp = client.complete(&req).await.unwrap();
    assert_eq!(resp.text, "done");
    assert_eq!(resp.usage, TokenUsage::default());

    let sent = server.model_requests();
    assert_eq!(sent.len(), 1);
    let r = &sent[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(r.body["stream"], true);
    assert_eq!(r.body["stream_options"], json!({"include_usage": true}));
    assert_eq!(r.body["model"], "gpt-4o");
    assert_eq!(
        r.body["messages"],
        json!([
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "reading", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"b\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "A"},
            {"role": "tool", "tool_call_id": "call_2", "content": "no such file"}
        ])
    );
    assert_eq!(r.body["tools"][0]["type"], "function");
    assert_eq!(r.body["tools"][0]["function"]["name"], "read_file");
    assert_eq!(
        r.body["tools"][0]["function"]["parameters"]["required"],
        json!(["path"])
    );
}

#[tokio::test]
async fn no_authorization_header_without_a_key() {
    let server = MockModelServer::start(vec![MockReply::text("hi")])
        .await
        .unwrap();
    let cfg = bosun_model::ProviderConfig::new(
        "ollama",
        bosun_model::ApiKind::OpenAiChat,
        server.url() + "/v1/",
        "qwen2.5-coder:7b",
    );
    let client = bosun_model::client(cfg).unwrap();
    assert_eq!(client.provider(), "ollama");
    assert_eq!(client.model(), "qwen2.5-coder:7b");
    client.complete(&request("hi")).await.unwrap();
    let sent = server.model_requests();
    assert_eq!(sent[0].header("authorization"), None);
    assert_eq!(sent[0].path, "/v1/chat/completions");
}

#[tokio::test]
async fn local_server_quirks_missing_usage_odd_finish_reason_and_no_done() {
    // llama.cpp / Ollama style: no usage, finish_reason "eos", and the stream just ends.
    let body = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"}}]}\n\n",
        ": keep-alive\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"eos\"}],\"usage\":null}\n\n",
    );
    let server = MockModelServer::start(vec![MockReply::RawSse { body: body.into() }])
        .await
        .unwrap();
    let client = openai(&server, fast_retry(0));
    let resp = client.complete(&request("hi")).await.unwrap();
    assert_eq!(resp.text, "Hello");
    assert_eq!(resp.stop_reason.as_deref(), Some("eos"));
    assert_eq!(resp.usage, TokenUsage::default());
    assert_eq!(
        resp.model, "gpt-4o",
        "the configured model when the server names none"
    );
}

#[tokio::test]
async fn malformed_sse_is_a_clear_final_error() {
    let server = MockModelServer::start(vec![MockReply::RawSse {
        body: "data: {\"choices\": [oops\n\n".into(),
    }])
    .await
    .unwrap();
    let client = openai(&server, fast_retry(3));
    let err = client.complete(&request("hi")).await.unwrap_err();
    let msg = err.to_string();
    assert!(!err.is_retryable());
    assert!(msg.contains("openai-compat"), "{msg}");
    assert!(msg.contains("not JSON"), "{msg}");
    assert_eq!(
        server.model_requests().len(),
        1,
        "a malformed stream is not retried"
    );
}

#[tokio::test]
async fn a_stream_that_just_stops_is_retried_then_reported_as_interrupted() {
    let partial = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"half an ans\"}}]}\n\n";
    let server = MockModelServer::start(vec![
        MockReply::RawSse {
            body: partial.into(),
        },
        MockReply::RawSse {
            body: partial.into(),
        },
    ])
    .await
    .unwrap();
    let client = openai(&server, fast_retry(1));
    let (resp, events) = run(&client, &request("x")).await;
    let err = resp.unwrap_err();
    assert!(
        matches!(
            err,
            bosun_model::ModelError::Interrupted { attempts: 2, .. }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("ended before the response was complete"),
        "{err}"
    );
    assert_eq!(retries(&events), vec![(2, 2)]);
}

#[tokio::test]
async fn a_server_ignoring_stream_true_is_read_as_one_completion() {
    let body = json!({"id": "x", "object": "chat.completion", "model": "llama3",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": "ok",
            "tool_calls": [{"id": "c9", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}}]}}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 3}});
    let server = MockModelServer::start(vec![MockReply::Status {
        status: 200,
        retry_after: None,
        body: body.to_string(),
    }])
    .await
    .unwrap();
    let resp = openai(&server, fast_retry(0))
        .complete(&request("x"))
        .await
        .unwrap();
    assert_eq!(resp.text, "ok");
    assert_eq!(resp.model, "llama3");
    assert_eq!(
        resp.tool_calls,
        vec![ToolCall {
            id: "c9".into(),
            name: "read_file".into(),
            arguments: r#"{"path":"a"}"#.into()
        }]
    );
    assert_eq!(resp.usage.input_tokens, 9);
}

#[tokio::test]
async fn reasoning_and_cached_tokens_are_split_out_and_a_reported_cost_is_kept() {
    // OpenRouter style: 12,000 prompt tokens of which 8,000 cached and 1,000 written to the
    // cache; 3,000 completion tokens of which 2,500 reasoning; the request's cost in dollars.
    let body = concat!(
        "data: {\"model\":\"openai/o3\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"done\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12000,\"completion_tokens\":3000,",
        "\"prompt_tokens_details\":{\"cached_tokens\":8000,\"cache_write_tokens\":1000},",
        "\"completion_tokens_details\":{\"reasoning_tokens\":2500},\"cost\":0.04125}}\n\n",
        "data: [DONE]\n\n",
    );
    let server = MockModelServer::start(vec![MockReply::RawSse { body: body.into() }])
        .await
        .unwrap();
    let client = openai(&server, fast_retry(0));
    let resp = client.complete(&request("think")).await.unwrap();
    assert_eq!(
        resp.usage,
        TokenUsage {
            input_tokens: 3000,
            cached_input_tokens: 8000,
            cache_write_tokens: 1000,
            cache_write_1h_tokens: 0,
            output_tokens: 500,
            reasoning_tokens: 2500,
        }
    );
    assert_eq!(resp.usage.billed(), 15_000);
    assert_eq!(resp.reported_cost_usd, Some(0.04125));
    assert_eq!(resp.model, "openai/o3");

    // The reported cost wins over the table; the rates are still o3's.
    let priced = bosun_model::PriceTable::builtin().price(
        &resp.model,
        &resp.usage,
        bosun_model::ServiceTier::Standard,
        resp.reported_cost_usd,
    );
    assert_eq!(priced.cost_usd, Some(0.04125));
    assert_eq!(priced.rates.map(|r| r.entry), Some("o3".to_string()));
}

#[tokio::test]
async fn without_a_reported_cost_there_is_none() {
    let body = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":2,\"cost\":\"free\"}}\n\n",
        "data: [DONE]\n\n",
    );
    let server = MockModelServer::start(vec![MockReply::RawSse { body: body.into() }])
        .await
        .unwrap();
    let resp = openai(&server, fast_retry(0))
        .complete(&request("x"))
        .await
        .unwrap();
    assert_eq!(resp.reported_cost_usd, None);
    assert_eq!(resp.usage.input_tokens, 10);
}

#[tokio::test]
async fn priority_and_flex_are_sent_as_service_tier_and_standard_is_not() {
    for (tier, sent) in [
        (bosun_model::ServiceTier::Priority, Some("priority")),
        (bosun_model::ServiceTier::Flex, Some("flex")),
        (bosun_model::ServiceTier::Standard, None),
        (bosun_model::ServiceTier::Batch, None),
    ] {
        let server = MockModelServer::start(vec![MockReply::text("ok")])
            .await
            .unwrap();
        let cfg = bosun_model::ProviderConfig::new(
            "openai",
            bosun_model::ApiKind::OpenAiChat,
            server.url() + "/v1",
            "gpt-5",
        )
        .with_retry(fast_retry(0))
        .with_service_tier(tier);
        bosun_model::client(cfg)
            .unwrap()
            .complete(&request("x"))
            .await
            .unwrap();
        let body = &server.model_requests()[0].body;
        assert_eq!(body["service_tier"].as_str(), sent, "{tier}");
    }
}
