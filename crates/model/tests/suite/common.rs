use bosun_model::{
    ApiKind, ChatMessage, ModelClient, ModelError, ModelRequest, ModelResponse, ProviderConfig,
    RetryPolicy, StreamEvent, client,
};
use bosun_protocol::ToolSpec;
use bosun_testkit::MockModelServer;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const KEY: &str = "sk-test-very-secret-key-123";

pub fn fast_retry(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        initial_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
    }
}

pub fn openai(server: &MockModelServer, retry: RetryPolicy) -> Arc<dyn ModelClient> {
    let cfg = ProviderConfig::new(
        "openai-compat",
        ApiKind::OpenAiChat,
        server.url() + "/v1",
        "gpt-4o",
    )
    .with_api_key(KEY)
    .with_retry(retry);
    client(cfg).unwrap()
}

/// OpenAI Responses at the mock, as OpenAI's reasoning model `gpt-5`.
pub fn responses(server: &MockModelServer, retry: RetryPolicy) -> Arc<dyn ModelClient> {
    let cfg = ProviderConfig::new(
        "openai",
        ApiKind::OpenAiResponses,
        server.url() + "/v1",
        "gpt-5",
    )
    .with_api_key(KEY)
    .with_retry(retry);
    client(cfg).unwrap()
}

pub fn anthropic(server: &MockModelServer, retry: RetryPolicy) -> Arc<dyn ModelClient> {
    let cfg = ProviderConfig::new(
        "anthropic",
        ApiKind::Anthropic,
        server.url(),
        "claude-sonnet-4-5",
    )
    .with_api_key(KEY)
    .with_retry(retry);
    client(cfg).unwrap()
}

pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "read_file".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"},
                "offset": {"type": "integer"}}, "required": ["path"], "additionalProperties": false}),
        },
        ToolSpec {
            name: "run_command".into(),
            description: "Run a shell command".into(),
            parameters: json!({"type": "object", "properties": {"command": {"type": "string"}},
                "required": ["command"]}),
        },
    ]
}

pub fn request(prompt: &str) -> ModelRequest {
    ModelRequest {
        system: "You are a careful agent.".into(),
        messages: vec![ChatMessage::User {
            content: prompt.into(),
        }],
        tools: tools(),
        retry_sampling: None,
    }
}

/// Streams `req`, returning the result and every event seen.
pub async fn run(
    client: &Arc<dyn ModelClient>,
    req: &ModelRequest,
) -> (Result<ModelResponse, ModelError>, Vec<StreamEvent>) {
    let events = Mutex::new(Vec::new());
    let result = client
        .stream(req, &|e| events.lock().unwrap().push(e))
        .await;
    (result, events.into_inner().unwrap())
}

/// What a consumer that honours `Retrying` would show: the events after the last retry.
pub fn last_attempt(events: &[StreamEvent]) -> &[StreamEvent] {
    match events
        .iter()
        .rposition(|e| matches!(e, StreamEvent::Retrying { .. }))
    {
        Some(i) => &events[i + 1..],
        None => events,
    }
}

pub fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

pub fn retries(events: &[StreamEvent]) -> Vec<(u32, u32)> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retrying {
                attempt,
                max_attempts,
                ..
            } => Some((*attempt, *max_attempts)),
            _ => None,
        })
        .collect()
}
