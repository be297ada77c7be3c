//! OpenAI Responses against the mock server: streamed text and function calls, reasoning items
//! carried to the next turn, usage in disjoint classes and its cost, and the failures that are
//! retried as for the other formats.

use super::common::*;
use bosun_model::{ChatMessage, ModelError, PriceTable, ServiceTier, StreamEvent, ToolCall};
use bosun_protocol::TokenUsage;
use bosun_testkit::{MockModelServer, MockReply, MockToolCall, MockUsage};
use pretty_assertions::assert_eq;
use serde_json::json;

fn two_calls() -> MockReply {
    MockReply::Reply {
        text: "Let me look at the library and run the tests.".into(),
        tool_calls: vec![
            MockToolCall {
                id: "call_a".into(),
                name: "read_file".into(),
                arguments: r#"{"path": "src/lib.rs", "offset": 10}"#.into(),
            },
            MockToolCall {
                id: "call_b".into(),
                name: "run_command".into(),
                arguments: r#"{"command": "cargo test --workspace -- --nocapture"}"#.into(),
            },
        ],
        usage: MockUsage::default(),
        chunk_delay_ms: 0,
        cut_after_events: None,
    }
}

#[tokio::test]
async fn text_and_function_calls_with_arguments_split_over_many_chunks() {
    let server = MockModelServer::start(vec![two_calls()]).await.unwrap();
    let client = responses(&server, fast_retry(0));
    let (resp, events) = run(&client, &request("fix the bug")).await;
    let resp = resp.unwrap();

    assert_eq!(resp.text, "Let me look at the library and run the tests.");
    assert_eq!(
        resp.tool_calls,
        vec![
            ToolCall {
                id: "call_a".into(),
                name: "read_file".into(),
                arguments: r#"{"path": "src/lib.rs", "offset": 10}"#.into(),
            },
            ToolCall {
                id: "call_b".into(),
                name: "run_command".into(),
                arguments: r#"{"command": "cargo test --workspace -- --nocapture"}"#.into(),
            },
        ]
    );
    assert_eq!(resp.stop_reason.as_deref(), Some("tool_calls"));
    assert_eq!(resp.model, "gpt-5");
    assert!(resp.reasoning.is_empty());

    let text_deltas = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
        .count();
    assert!(text_deltas > 3, "{text_deltas} text deltas");
    assert_eq!(text_of(&events), resp.text);
    for call in &resp.tool_calls {
        let deltas: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallDelta { id, delta } if *id == call.id => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        assert!(deltas.len() > 3, "{}: {} pieces", call.id, deltas.len());
        assert_eq!(deltas.concat(), call.arguments);
        let started = events.iter().position(|e| {
            matches!(e, StreamEvent::ToolCallStarted { id, name } if *id == call.id && *name == call.name)
        });
        assert!(started.is_some(), "{} started", call.id);
    }

    // What was sent: the Responses request, to /v1/responses, with the key as a bearer token.
    let sent = &server.model_requests()[0];
    assert_eq!(sent.path, "/v1/responses");
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let body = &sent.body;
    assert_eq!(body["model"], "gpt-5");
    assert_eq!(body["stream"], true);
    assert_eq!(body["store"], false);
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["instructions"], "You are a careful agent.");
    assert_eq!(
        body["input"],
        json!([{"type": "message", "role": "user", "content": "fix the bug"}])
    );
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["name"], "read_file");
    assert_eq!(body["tools"][1]["name"], "run_command");
    assert!(body["tools"][0]["parameters"]["properties"]["path"].is_object());
    assert!(body.get("messages").is_none());
}

#[tokio::test]
async fn reasoning_items_are_sent_back_on_the_next_turn_with_the_calls_and_their_results() {
    let server = MockModelServer::start(vec![
        MockReply::tool_call("call_r", "read_file", r#"{"path": "README.md"}"#).with_reasoning(
            "gAAAA-opaque-reasoning-1",
            "I should read the README first.",
        ),
        MockReply::text("Done."),
    ])
    .await
    .unwrap();
    let client = responses(&server, fast_retry(0));
    let mut req = request("summarise the readme");
    let (first, _) = run(&client, &req).await;
    let first = first.unwrap();
    assert_eq!(first.reasoning.len(), 1);
    assert_eq!(
        first.reasoning[0]["encrypted_content"],
        "gAAAA-opaque-reasoning-1"
    );
    assert_eq!(first.tool_calls.len(), 1);

    req.messages.push(ChatMessage::Assistant {
        content: first.text.clone(),
        tool_calls: first.tool_calls.clone(),
        reasoning: first.reasoning.clone(),
    });
    req.messages.push(ChatMessage::Tool {
        call_id: "call_r".into(),
        content: "# Bosun".into(),
        is_error: false,
    });
    let (second, _) = run(&client, &req).await;
    assert_eq!(second.unwrap().text, "Done.");

    let input = server.model_requests()[1].body["input"].clone();
    assert_eq!(
        input,
        json!([
            {"type": "message", "role": "user", "content": "summarise the readme"},
            {"type": "reasoning",
             "summary": [{"type": "summary_text", "text": "I should read the README first."}],
             "encrypted_content": "gAAAA-opaque-reasoning-1"},
            {"type": "function_call", "call_id": "call_r", "name": "read_file",
             "arguments": r#"{"path": "README.md"}"#},
            {"type": "function_call_output", "call_id": "call_r", "output": "# Bosun"},
        ]),
        "the reasoning item goes back without its id (store: false keeps nothing to refer to)"
    );
    assert_eq!(server.model_requests()[1].body["store"], false);
}

#[tokio::test]
async fn old_assistant_messages_without_reasoning_still_load() {
    let old = r#"{"role":"assistant","content":"hi","tool_calls":[]}"#;
    let m: ChatMessage = serde_json::from_str(old).unwrap();
    assert_eq!(
        m,
        ChatMessage::Assistant {
            content: "hi".into(),
            tool_calls: vec![],
            reasoning: vec![],
        }
    );
    assert_eq!(serde_json::to_string(&m).unwrap(), old);
}

#[tokio::test]
async fn usage_is_read_into_disjoint_classes_and_reasoning_is_priced_at_the_output_rate() {
    let server = MockModelServer::start(vec![MockReply::text("ok").with_usage(MockUsage {
        input_tokens: 10_000,
        cached_input_tokens: 4_000,
        output_tokens: 1_000,
        reasoning_tokens: 3_000,
        cache_write_tokens: 0,
    })])
    .await
    .unwrap();
    let client = responses(&server, fast_retry(0));
    let (resp, _) = run(&client, &request("x")).await;
    let resp = resp.unwrap();
    assert_eq!(
        resp.usage,
        TokenUsage {
            input_tokens: 6_000,
            output_tokens: 1_000,
            cached_input_tokens: 4_000,
            cache_write_tokens: 0,
            cache_write_1h_tokens: 0,
            reasoning_tokens: 3_000,
        },
        "the wire's 10k input include the 4k cached, its 4k output the 3k reasoning"
    );
    assert_eq!(resp.stop_reason.as_deref(), Some("stop"));
    // gpt-5: 1.25 in, 0.125 cached, 10 out (reasoning too): 6k in = 0.0075, 4k cached =
    // 0.0005, 1k out + 3k reasoning = 0.04 → 0.048; each token counted once.
    let priced = PriceTable::builtin().price("gpt-5", &resp.usage, ServiceTier::Standard, None);
    let cost = priced.cost_usd.unwrap();
    assert!((cost - 0.048).abs() < 1e-9, "{priced:?}");
}

#[tokio::test]
async fn a_429_with_retry_after_is_waited_out_and_retried() {
    let server = MockModelServer::start(vec![
        MockReply::Status {
            status: 429,
            retry_after: Some("0".into()),
            body: json!({"error": {"message": "Rate limit reached for gpt-5", "type": "requests",
                                   "code": "rate_limit_exceeded"}})
            .to_string(),
        },
        MockReply::text("ok"),
    ])
    .await
    .unwrap();
    let client = responses(&server, fast_retry(2));
    let (resp, events) = run(&client, &request("x")).await;
    assert_eq!(resp.unwrap().text, "ok");
    assert_eq!(retries(&events), vec![(2, 3)]);
    assert_eq!(server.model_requests().len(), 2);
}

#[tokio::test]
async fn server_errors_are_retried_and_the_last_one_names_status_and_message() {
    let server = MockModelServer::start(vec![
        MockReply::status(500, "the upstream exploded"),
        MockReply::status(503, "the upstream exploded"),
    ])
    .await
    .unwrap();
    let client = responses(&server, fast_retry(1));
    let (resp, events) = run(&client, &request("x")).await;
    let err = resp.unwrap_err();
    assert_eq!(
        err.to_string(),
        "openai returned 503 after 2 attempts: the upstream exploded"
    );
    assert_eq!(retries(&events), vec![(2, 2)]);
    let text = format!("{err} {err:?}");
    assert!(!text.contains(KEY), "{text}");
}

#[tokio::test]
async fn a_stream_cut_inside_a_function_call_is_sent_again_whole() {
    let reply = |cut| match two_calls() {
        MockReply::Reply {
            text,
            tool_calls,
            usage,
            chunk_delay_ms,
            ..
        } => MockReply::Reply {
            text,
            tool_calls,
            usage,
            chunk_delay_ms,
            cut_after_events: cut,
        },
        other => other,
    };
    // created, in_progress, the message (4 + 6 deltas), then the first call's added and some
    // of its argument deltas.
    let server = MockModelServer::start(vec![reply(Some(16)), reply(None)])
        .await
        .unwrap();
    let client = responses(&server, fast_retry(2));
    let (resp, events) = run(&client, &request("x")).await;
    let resp = resp.unwrap();
    assert_eq!(resp.tool_calls.len(), 2);
    assert_eq!(
        resp.tool_calls[0].arguments,
        r#"{"path": "src/lib.rs", "offset": 10}"#
    );
    assert_eq!(retries(&events), vec![(2, 3)]);
    let before = &events[..events
        .iter()
        .position(|e| matches!(e, StreamEvent::Retrying { .. }))
        .unwrap()];
    assert!(
        before
            .iter()
            .any(|e| matches!(e, StreamEvent::ToolCallDelta { .. })),
        "the cut came inside the call's arguments: {before:?}"
    );
    let after = last_attempt(&events);
    assert_eq!(text_of(after), resp.text);
}

#[tokio::test]
async fn a_stream_that_ends_without_response_completed_is_interrupted() {
    let server = MockModelServer::start(vec![MockReply::RawSse {
        body: "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"model\":\"gpt-5\"}}\n\n\
               event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"m\",\"delta\":\"half\"}\n\n"
            .into(),
    }])
    .await
    .unwrap();
    let client = responses(&server, fast_retry(0));
    let (resp, _) = run(&client, &request("x")).await;
    let err = resp.unwrap_err();
    assert!(matches!(err, ModelError::Interrupted { .. }), "{err:?}");
}

#[tokio::test]
async fn a_failed_response_and_an_error_event_are_clear_errors() {
    let server = MockModelServer::start(vec![
        MockReply::RawSse {
            body: "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"The model failed\"}}}\n\n".into(),
        },
        MockReply::RawSse {
            body: "event: error\ndata: {\"type\":\"error\",\"code\":\"invalid_prompt\",\"message\":\"Invalid prompt\",\"param\":null}\n\n".into(),
        },
    ])
    .await
    .unwrap();
    let client = responses(&server, fast_retry(1));
    let (resp, events) = run(&client, &request("x")).await;
    let err = resp.unwrap_err();
    assert_eq!(retries(&events), vec![(2, 2)], "a server error is retried");
    assert_eq!(err.status(), Some(400));
    assert!(
        err.to_string().contains("Invalid prompt (invalid_prompt)"),
        "{err}"
    );
}
