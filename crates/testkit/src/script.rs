//! What the mock model server answers, one scripted reply per model request.

use serde::{Deserialize, Serialize};

/// One scripted answer. The next one is used for each model request, rendered in the wire
/// format of the endpoint that was hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MockReply {
    /// A streamed reply: text first (split into several deltas), then tool calls whose
    /// `arguments` are split across many small chunks, then usage and the terminal event.
    Reply {
        #[serde(default)]
        text: String,
        #[serde(default)]
        tool_calls: Vec<MockToolCall>,
        #[serde(default)]
        usage: MockUsage,
        /// Wait this long before each SSE event.
        #[serde(default)]
        chunk_delay_ms: u64,
        /// Close the connection without the terminal event after this many SSE events.
        #[serde(default)]
        cut_after_events: Option<usize>,
    },
    /// An error status with an optional `retry-after` header and a body sent as is
    /// (`{"error":{"message":…}}` is what the real APIs send).
    Status {
        status: u16,
        #[serde(default)]
        retry_after: Option<String>,
        #[serde(default)]
        body: String,
    },
    /// Sent verbatim with status 200 and content-type `text/event-stream`.
    RawSse { body: String },
    /// Accepts the request and never answers: no status, no headers, until the server stops.
    HangBeforeHeaders,
    /// Starts a streamed answer (its headers and a first event carrying `text`), then sends
    /// nothing more until the server stops.
    SilentAfterFirstChunk {
        #[serde(default)]
        text: String,
    },
    /// A streamed answer that never ends: `text` as one delta after another, each after
    /// `chunk_delay_ms`, until the client goes away or the server stops.
    Endless {
        #[serde(default)]
        text: String,
        #[serde(default)]
        chunk_delay_ms: u64,
    },
    /// `reply` preceded by a reasoning item: on the OpenAI Responses wire an output item of type
    /// `reasoning` with this `encrypted_content` (and `summary` as its summary text) streamed
    /// before the reply's text and calls; the other wires leave it out.
    WithReasoning {
        encrypted_content: String,
        #[serde(default)]
        summary: String,
        reply: Box<MockReply>,
    },
}

impl MockReply {
    /// A plain text answer.
    pub fn text(text: impl Into<String>) -> Self {
        MockReply::Reply {
            text: text.into(),
            tool_calls: Vec::new(),
            usage: MockUsage::default(),
            chunk_delay_ms: 0,
            cut_after_events: None,
        }
    }

    /// An answer that calls one tool; `arguments` is JSON text.
    pub fn tool_call(id: &str, name: &str, arguments: &str) -> Self {
        MockReply::Reply {
            text: String::new(),
            tool_calls: vec![MockToolCall {
                id: id.into(),
                name: name.into(),
                arguments: arguments.into(),
            }],
            usage: MockUsage::default(),
            chunk_delay_ms: 0,
            cut_after_events: None,
        }
    }

    /// An error status with the API's error body carrying `message`.
    pub fn status(status: u16, message: &str) -> Self {
        MockReply::Status {
            status,
            retry_after: None,
            body: serde_json::json!({"error": {"message": message}}).to_string(),
        }
    }

    /// Sets the usage of a `Reply` (no effect on other kinds).
    pub fn with_usage(mut self, new: MockUsage) -> Self {
        match &mut self {
            MockReply::Reply { usage, .. } => *usage = new,
            MockReply::WithReasoning { reply, .. } => {
                **reply = reply.as_ref().clone().with_usage(new);
            }
            _ => {}
        }
        self
    }

    /// This reply preceded by a reasoning item (see [`MockReply::WithReasoning`]).
    pub fn with_reasoning(self, encrypted_content: &str, summary: &str) -> Self {
        MockReply::WithReasoning {
            encrypted_content: encrypted_content.into(),
            summary: summary.into(),
            reply: Box::new(self),
        }
    }
}

/// A tool call the mock model makes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MockToolCall {
    pub id: String,
    pub name: String,
    /// JSON text, streamed in small pieces.
    pub arguments: String,
}

/// Token counts of a reply: `input_tokens` counts every prompt token including cached and
/// cache-written ones (on the Anthropic wire the uncached remainder is sent as `input_tokens`);
/// `output_tokens` and `reasoning_tokens` are disjoint, and the wire's output (completion) tokens
/// are their sum, with the reasoning part in its details as OpenAI reports it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MockUsage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cached_input_tokens: u64,
    #[serde(default)]
    pub cache_write_tokens: u64,
    #[serde(default)]
    pub reasoning_tokens: u64,
}
