//! Every wait has a deadline and every response a size limit: a server that never answers, one
//! that stops after its first chunk and one that never stops each end the request in seconds
//! with an error naming the provider and the limit.

use super::common::*;
use bosun_model::{ApiKind, Limits, ModelClient, ModelError, ProviderConfig, TimeoutPhase, client};
use bosun_testkit::MockModelServer;
use bosun_testkit::MockReply;
use pretty_assertions::assert_eq;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn small_limits() -> Limits {
    Limits {
        connect_timeout: Duration::from_secs(2),
        first_byte_timeout: Duration::from_millis(400),
        idle_timeout: Duration::from_millis(400),
        max_response_bytes: 64 * 1024,
    }
}

/// A client for `server` with small limits and fast retries, in the wire format `api`.
fn limited(server: &MockModelServer, api: ApiKind) -> Arc<dyn ModelClient> {
    let base = match api {
        ApiKind::OpenAiChat | ApiKind::OpenAiResponses => server.url() + "/v1",
        ApiKind::Anthropic => server.url(),
    };
    let cfg = ProviderConfig::new("slow-local", api, base, "m")
        .with_retry(fast_retry(4))
        .with_limits(small_limits());
    client(cfg).unwrap()
}

const WIRES: [ApiKind; 3] = [
    ApiKind::OpenAiChat,
    ApiKind::OpenAiResponses,
    ApiKind::Anthropic,
];

#[tokio::test]
async fn a_server_that_never_answers_times_out_and_is_retried_once() {
    for api in WIRES {
        let server = MockModelServer::start(vec![MockReply::HangBeforeHeaders; 5])
            .await
            .unwrap();
        let started = Instant::now();
        let (result, events) = run(&limited(&server, api), &request("x")).await;
        let elapsed = started.elapsed();
        let err = result.unwrap_err();
        assert_eq!(
            err,
            ModelError::Timeout {
                provider: "slow-local".into(),
                phase: TimeoutPhase::FirstByte,
                limit: Duration::from_millis(400),
                attempts: 2,
            },
            "{api}"
        );
        assert_eq!(err.code(), "model_timeout");
        assert!(err.to_string().contains("first_byte_timeout_secs"), "{err}");
        assert_eq!(retries(&events), vec![(2, 5)], "one retry, not four");
        assert_eq!(server.model_requests().len(), 2);
        assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    }
}

#[tokio::test]
async fn a_stream_that_goes_silent_after_its_first_chunk_times_out_and_is_not_retried() {
    for api in WIRES {
        let silent = MockReply::SilentAfterFirstChunk {
            text: "Let me look".into(),
        };
        let server = MockModelServer::start(vec![silent.clone(), silent])
            .await
            .unwrap();
        let started = Instant::now();
        let (result, events) = run(&limited(&server, api), &request("x")).await;
        let err = result.unwrap_err();
        assert_eq!(
            err,
            ModelError::Timeout {
                provider: "slow-local".into(),
                phase: TimeoutPhase::Idle,
                limit: Duration::from_millis(400),
                attempts: 1,
            },
            "{api}"
        );
        assert!(err.to_string().contains("idle_timeout_secs"), "{err}");
        assert_eq!(text_of(&events), "Let me look");
        assert!(retries(&events).is_empty());
        assert_eq!(server.model_requests().len(), 1);
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}

#[tokio::test]
async fn an_endless_stream_is_cut_at_max_response_bytes_and_not_retried() {
    for api in WIRES {
        let endless = MockReply::Endless {
            text: "all work and no play\n".into(),
            chunk_delay_ms: 0,
        };
        let server = MockModelServer::start(vec![endless.clone(), endless])
            .await
            .unwrap();
        let started = Instant::now();
        let (result, events) = run(&limited(&server, api), &request("x")).await;
        let err = result.unwrap_err();
        assert_eq!(
            err,
            ModelError::TooLarge {
                provider: "slow-local".into(),
                limit: 64 * 1024,
                attempts: 1,
            },
            "{api}"
        );
        assert_eq!(err.code(), "response_too_large");
        assert!(
            err.to_string().contains("64 KB (max_response_bytes)"),
            "{err}"
        );
        let streamed = text_of(&events).len();
        assert!(streamed > 0 && streamed < 64 * 1024, "{streamed}");
        assert_eq!(server.model_requests().len(), 1);
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}

#[tokio::test]
async fn a_slow_but_steady_stream_is_not_cut_by_the_idle_timeout() {
    let server = MockModelServer::start(vec![MockReply::Reply {
        text: "steady words arriving one after another".into(),
        tool_calls: vec![],
        usage: Default::default(),
        chunk_delay_ms: 150,
        cut_after_events: None,
    }])
    .await
    .unwrap();
    let (result, _) = run(&limited(&server, ApiKind::OpenAiChat), &request("x")).await;
    // ~8 events 150 ms apart: more than the 400 ms idle timeout in all, never between two.
    assert_eq!(
        result.unwrap().text,
        "steady words arriving one after another"
    );
}

#[tokio::test]
async fn max_output_tokens_is_sent_as_each_apis_limit() {
    for (api, key) in [
        (ApiKind::OpenAiChat, "max_tokens"),
        (ApiKind::OpenAiResponses, "max_output_tokens"),
        (ApiKind::Anthropic, "max_tokens"),
    ] {
        let server = MockModelServer::start(vec![MockReply::text("ok")])
            .await
            .unwrap();
        let base = match api {
            ApiKind::OpenAiChat | ApiKind::OpenAiResponses => server.url() + "/v1",
            ApiKind::Anthropic => server.url(),
        };
        let mut cfg = ProviderConfig::new("p", api, base, "m");
        cfg.max_output_tokens = 1234;
        let (result, _) = run(&client(cfg).unwrap(), &request("x")).await;
        result.unwrap();
        let body = &server.model_requests()[0].body;
        assert_eq!(body[key], 1234, "{api}: {body}");
        assert!(body.get("max_completion_tokens").is_none(), "{api}");
    }
}
