use super::common::*;
use bosun_model::{ChatMessage, ModelRequest, StreamEvent, ToolCall};
use bosun_protocol::TokenUsage;
use bosun_testkit::{MockModelServer, MockReply, MockToolCall, MockUsage};
use pretty_assertions::assert_eq;
use serde_json::json;

#[tokio::test]
async fn text_tool_calls_and_cache_usage_are_normalised() {
    let args = r#"{"path": "src/main.rs", "offset": 0}"#;
    let server = MockModelServer::start(vec![MockReply::Reply {
        text: "I will read main.rs first.".into(),
        tool_calls: vec![MockToolCall {
            id: "toolu_01".into(),
            name: "read_file".into(),
            arguments: args.into(),
        }],
        usage: MockUsage {
            input_tokens: 5000,
            output_tokens: 42,
            cached_input_tokens: 3000,
            cache_write_tokens: 1500,
            reasoning_tokens: 0,
        },
        chunk_delay_ms: 0,
        cut_after_events: None,
    }])
    .await
    .unwrap();
    let client = anthropic(&server, fast_retry(0));
    let (resp, events) = run(&client, &request("read main")).await;
    let resp = resp.unwrap();
    assert_eq!(resp.text, "I will read main.rs first.");
    assert_eq!(
        resp.tool_calls,
        vec![ToolCall {
            id: "toolu_01".into(),
            name: "read_file".into(),
            arguments: args.into()
        }]
    );
    // Disjoint classes: uncached 500, cache read 3000, cache write 1500 (5-minute: the
    // response does not split the writes), 5000 prompt tokens in all.
    assert_eq!(
        resp.usage,
        TokenUsage {
            input_tokens: 500,
            output_tokens: 42,
            cached_input_tokens: 3000,
            cache_write_tokens: 1500,
            cache_write_1h_tokens: 0,
            reasoning_tokens: 0,
        }
    );
    assert_eq!(resp.usage.prompt_tokens(), 5000);
    assert_eq!(resp.stop_reason.as_deref(), Some("tool_use"));
    assert_eq!(resp.model, "claude-sonnet-4-5");
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallDelta { id, delta } if id == "toolu_01" => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert!(deltas.len() > 4, "{deltas:?}");
    assert_eq!(deltas.concat(), args);
    assert!(events.contains(&StreamEvent::ToolCallStarted {
        id: "toolu_01".into(),
        name: "read_file".into()
    }));
}

#[tokio::test]
async fn request_has_headers_system_tools_and_tool_results_in_one_user_message() {
    let server = MockModelServer::start(vec![MockReply::text("ok")])
        .await
        .unwrap();
    let client = anthropic(&server, fast_retry(0));
    let req = ModelRequest {
        system: "be brief".into(),
        messages: vec![
            ChatMessage::User {
                content: "go".into(),
            },
            ChatMessage::Assistant {
                content: String::new(),
                tool_calls: vec![
                    ToolCall {
                        id: "toolu_1".into(),
                        name: "read_file".into(),
                        arguments: r#"{"path":"a"}"#.into(),
                    },
                    ToolCall {
                        id: "toolu_2".into(),
                        name: "run_command".into(),
                        arguments: "{\"command\": \"ls".into(),
                    },
                ],
                reasoning: Vec::new(),
            },
            ChatMessage::Tool {
                call_id: "toolu_1".into(),
                content: "A".into(),
                is_error: false,
            },
            ChatMessage::Tool {
                call_id: "toolu_2".into(),
                content: "bad arguments".into(),
                is_error: true,
            },
        ],
        tools: tools(),
        retry_sampling: None,
    };
    client.complete(&req).await.unwrap();
    let sent = server.model_requests();
    let r = &sent[0];
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.header("x-api-key"), Some(KEY));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("authorization"), None);
    assert_eq!(r.body["system"], "be brief");
    assert_eq!(r.body["max_tokens"], 8192);
    assert_eq!(r.body["stream"], true);
    assert_eq!(r.body["tools"][1]["name"], "run_command");
    assert_eq!(
        r.body["tools"][1]["input_schema"]["required"],
        json!(["command"])
    );
    assert_eq!(
        r.body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "go"}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}},
                {"type": "tool_use", "id": "toolu_2", "name": "run_command", "input": {}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "A"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "bad arguments", "is_error": true}
            ]}
        ])
    );
}

#[tokio::test]
async fn base_url_ending_in_v1_is_not_doubled() {
    let server = MockModelServer::start(vec![MockReply::text("ok")])
        .await
        .unwrap();
    let cfg = bosun_model::ProviderConfig::new(
        "anthropic",
        bosun_model::ApiKind::Anthropic,
        server.url() + "/v1",
        "claude-haiku-4-5",
    );
    bosun_model::client(cfg)
        .unwrap()
        .complete(&request("x"))
        .await
        .unwrap();
    assert_eq!(server.model_requests()[0].path, "/v1/messages");
    assert_eq!(server.model_requests()[0].header("x-api-key"), None);
}

#[tokio::test]
async fn overloaded_error_event_mid_stream_is_retried() {
    let overloaded = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"partial \"}}\n\n",
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
    );
    let server = MockModelServer::start(vec![
        MockReply::RawSse {
            body: overloaded.into(),
        },
        MockReply::text("whole answer"),
    ])
    .await
    .unwrap();
    let client = anthropic(&server, fast_retry(2));
    let (resp, events) = run(&client, &request("x")).await;
    assert_eq!(resp.unwrap().text, "whole answer");
    assert_eq!(retries(&events), vec![(2, 3)]);
    assert!(
        matches!(&events.iter().find(|e| matches!(e, StreamEvent::Retrying{..})),
        Some(StreamEvent::Retrying { reason, .. }) if reason.contains("529") && reason.contains("Overloaded"))
    );
    assert_eq!(text_of(last_attempt(&events)), "whole answer");
}

#[tokio::test]
async fn five_minute_and_one_hour_cache_writes_are_counted_apart() {
    // 2,000 tokens written to the cache: 1,500 for 5 minutes and 500 for an hour.
    let body = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-4-5-20250929\",\"usage\":{\"input_tokens\":300,\"cache_read_input_tokens\":4000,\"cache_creation_input_tokens\":2000,\"cache_creation\":{\"ephemeral_5m_input_tokens\":1500,\"ephemeral_1h_input_tokens\":500},\"output_tokens\":1}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":100}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    let server = MockModelServer::start(vec![MockReply::RawSse { body: body.into() }])
        .await
        .unwrap();
    let resp = anthropic(&server, fast_retry(0))
        .complete(&request("x"))
        .await
        .unwrap();
    assert_eq!(
        resp.usage,
        TokenUsage {
            input_tokens: 300,
            cached_input_tokens: 4000,
            cache_write_tokens: 1500,
            cache_write_1h_tokens: 500,
            output_tokens: 100,
            reasoning_tokens: 0,
        }
    );
    assert_eq!(resp.reported_cost_usd, None);
    // claude-sonnet-4-5: 300 x 3 + 4000 x 0.30 + 1500 x 3.75 + 500 x 6 + 100 x 15 per M
    // = 0.0009 + 0.0012 + 0.005625 + 0.003 + 0.0015 = 0.012225.
    let priced = bosun_model::PriceTable::builtin().price(
        &resp.model,
        &resp.usage,
        bosun_model::ServiceTier::Standard,
        None,
    );
    let cost = priced.cost_usd.unwrap();
    assert!((cost - 0.012225).abs() < 1e-12, "{cost}");
}
