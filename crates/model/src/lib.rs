//! Streaming model clients for Bosun.
//!
//! [`ModelClient::stream`] is the primitive: it sends one [`ModelRequest`], calls `on_event`
//! with every [`StreamEvent`] as it arrives and returns the whole [`ModelResponse`].
//! [`ModelClient::complete`] collects the same stream. Three wire formats are spoken:
//! OpenAI Chat Completions (OpenAI and every OpenAI-compatible server: Ollama, llama.cpp, vLLM,
//! LM Studio, OpenRouter, Gemini), OpenAI Responses (reasoning items kept across turns) and
//! Anthropic Messages.
//!
//! A request that fails in a retryable way (429, 5xx, 529, a connection failure, a stream that
//! breaks before its end, a server that does not begin to answer — that one once) is sent again
//! whole, after [`StreamEvent::Retrying`] told the consumer to discard what it streamed; tools
//! only ever run on the final response, so none runs twice. Every wait has a deadline and every
//! response a size limit ([`Limits`]): a stalled stream or a runaway one ends the request with
//! [`ModelError::Timeout`] or [`ModelError::TooLarge`], never an endless wait.
//!
//! Also here: [`recover_tool_calls`] for tool calls small models write as text,
//! [`validate_args`] for tool arguments, and the [`PriceTable`].

mod anthropic;
mod body;
mod client;
mod config;
mod edit_blocks;
mod error;
mod message;
mod openai;
mod prices;
mod probe;
mod profile;
mod recover;
mod responses;
mod schema;
mod sse;
mod text_tools;

pub use client::MAX_RETRY_AFTER;
pub use config::{
    ApiKind, DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_TEMPERATURE, Limits, ProviderConfig, RetryPolicy,
    Secret,
};
pub use edit_blocks::{
    EditBlock, EditBlocks, EditKind, direct_example, direct_instructions, instructions,
    parse_edit_blocks,
};
pub use error::{ModelError, TimeoutPhase};
pub use message::{ChatMessage, ModelRequest, ModelResponse, RetrySampling, StreamEvent, ToolCall};
pub use prices::{
    LayerInfo, ModelPrice, PriceEntry, PriceLayer, PriceTable, Priced, Resolved, SNAPSHOT_FILE,
    ServiceTier, SnapshotInfo, TableHeader, TierRates, USER_FILE, UserPrice, import_snapshot,
    write_user_price,
};
pub use probe::{ProbeFindings, probe_profile};
pub use profile::{EditFormat, ModelProfile, ProfileKeys, ProfileSource, ToolFormat, is_local_url};
pub use recover::{RecoveredCalls, recover_tool_calls};
pub use schema::validate_args;

use std::sync::Arc;

/// A model behind some API. Cheap to share (`Arc<dyn ModelClient>`); requests may run concurrently.
#[async_trait::async_trait]
pub trait ModelClient: Send + Sync {
    /// The provider's configured name, e.g. `anthropic` or `ollama`.
    fn provider(&self) -> &str;
    /// The configured model name.
    fn model(&self) -> &str;
    /// What is known about the model: how it takes tools and writes edits.
    fn profile(&self) -> &ModelProfile {
        &ModelProfile::DEFAULT
    }
    /// Sends `req`, reporting each streamed piece to `on_event`, and returns the whole response.
    async fn stream(
        &self,
        req: &ModelRequest,
        on_event: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<ModelResponse, ModelError>;
    /// The tokens of `text` as the model counts them, when the provider's server has a
    /// tokenizer (llama.cpp `/tokenize`); None otherwise.
    async fn count_tokens(&self, _text: &str) -> Option<usize> {
        None
    }
    /// Sends `req` and returns the whole response.
    async fn complete(&self, req: &ModelRequest) -> Result<ModelResponse, ModelError> {
        self.stream(req, &|_| {}).await
    }
}

/// A client for `cfg`. Fails only on a configuration that cannot work (no base_url, no model).
pub fn client(cfg: ProviderConfig) -> Result<Arc<dyn ModelClient>, ModelError> {
    let wire: Box<dyn client::Wire> = match cfg.api {
        ApiKind::OpenAiChat => Box::new(openai::OpenAiChat),
        ApiKind::OpenAiResponses => Box::new(responses::OpenAiResponses),
        ApiKind::Anthropic => Box::new(anthropic::AnthropicMessages),
    };
    Ok(Arc::new(client::HttpModelClient::new(cfg, wire)?))
}
