use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Token counts of one model response, normalised across providers.
///
/// `input_tokens` counts every prompt token including cached ones (OpenAI's `prompt_tokens`;
/// Anthropic's `input_tokens + cache_read_input_tokens + cache_creation_input_tokens`).
/// `cached_input_tokens` is the part read from the provider's prompt cache and
/// `cache_write_tokens` the part written to it; both are priced differently.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct TokenUsage {
    #[ts(type = "number")]
    pub input_tokens: u64,
    #[ts(type = "number")]
    pub output_tokens: u64,
    #[ts(type = "number")]
    pub cached_input_tokens: u64,
    #[ts(type = "number")]
    pub cache_write_tokens: u64,
}

impl TokenUsage {
    pub fn add(&mut self, other: &TokenUsage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }

    pub fn is_zero(&self) -> bool {
        *self == TokenUsage::default()
    }
}
