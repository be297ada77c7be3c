//! What goes to a model and what comes back, independent of the wire format.

use bosun_protocol::{TokenUsage, ToolSpec};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The model's id (`call_…`, `toolu_…`), or `recovered_<n>` for a call recovered from text.
    pub id: String,
    pub name: String,
    /// The arguments as raw JSON text, exactly as streamed (`{}` when the model sent none).
    pub arguments: String,
}

impl ToolCall {
    /// The arguments parsed as JSON, or the raw text as a JSON string when they are not JSON.
    pub fn arguments_json(&self) -> serde_json::Value {
        serde_json::from_str(&self.arguments)
            .unwrap_or_else(|_| serde_json::Value::String(self.arguments.clone()))
    }
}

/// One message of the conversation so far (the system prompt is separate).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    User {
        content: String,
    },
    Assistant {
        content: String,
        #[serde(default)]
        tool_calls: Vec<ToolCall>,
        /// The provider's reasoning items for this reply, opaque (OpenAI Responses `reasoning`
        /// items with their `encrypted_content`): sent back as they are on the next request in
        /// the same wire format, left out by the others. Empty for most replies.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reasoning: Vec<serde_json::Value>,
    },
    /// The result of the tool call `call_id`. Consecutive tool results are sent together.
    Tool {
        call_id: String,
        content: String,
        #[serde(default)]
        is_error: bool,
    },
}

/// One request to the model.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelRequest {
    pub system: String,
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<ToolSpec>,
    /// A sampling temperature for this request instead of the provider's, with a seed so the
    /// same retry samples the same way: a retry after a reply that made no progress (at
    /// temperature 0 the same request gets the same reply). Only sent to a model that takes a
    /// temperature.
    pub retry_sampling: Option<RetrySampling>,
}

/// See [`ModelRequest::retry_sampling`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetrySampling {
    pub temperature: f64,
    pub seed: u64,
}

/// Something the model streamed. Deltas of one attempt are superseded by [`StreamEvent::Retrying`].
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    TextDelta(String),
    ToolCallStarted {
        id: String,
        name: String,
    },
    ToolCallDelta {
        id: String,
        delta: String,
    },
    /// The request failed and is sent again whole after `delay`: discard everything streamed so
    /// far for it. `attempt` is the number of the attempt about to be made (2 for the first
    /// retry), `max_attempts` the most there will be.
    Retrying {
        attempt: u32,
        max_attempts: u32,
        delay: Duration,
        reason: String,
    },
}

/// A complete response: what the model said, the tool calls to run, what it cost in tokens.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelResponse {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: TokenUsage,
    /// The provider's stop reason as sent (`stop`, `tool_calls`, `end_turn`, `tool_use`,
    /// `length`, `max_tokens`, …).
    pub stop_reason: Option<String>,
    /// The model that answered, as the server named it (the configured model if it did not).
    pub model: String,
    /// What the provider says the request cost in US dollars, when it says so (OpenRouter's
    /// `usage.cost`); it wins over the price table.
    pub reported_cost_usd: Option<f64>,
    /// Reasoning items to carry on the reply's [`ChatMessage::Assistant`] (OpenAI Responses);
    /// empty for the other formats.
    pub reasoning: Vec<serde_json::Value>,
}
