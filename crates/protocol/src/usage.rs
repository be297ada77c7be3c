use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Token counts of one model response, normalised across providers into disjoint classes that
/// add up to the billed tokens ([`TokenUsage::billed`]).
///
/// - `input_tokens`: prompt tokens neither read from nor written to the provider's cache
///   (OpenAI: `prompt_tokens - cached_tokens`; Anthropic: `input_tokens`);
/// - `cached_input_tokens`: prompt tokens read from the cache;
/// - `cache_write_tokens`: prompt tokens written to the cache for 5 minutes (Anthropic's
///   `ephemeral_5m_input_tokens`, or `cache_creation_input_tokens` when it does not split them);
/// - `cache_write_1h_tokens`: prompt tokens written to the cache for 1 hour;
/// - `output_tokens`: completion tokens that are not reasoning;
/// - `reasoning_tokens`: completion tokens spent reasoning (OpenAI's
///   `completion_tokens_details.reasoning_tokens`), billed at the reasoning rate (the output
///   rate unless the price table says otherwise). Providers that do not report them separately
///   (Anthropic's thinking) count them in `output_tokens`.
///
/// Journals written before schema 5 counted cached and cache-written tokens inside
/// `input_tokens`; the migration rewrote them.
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
    #[serde(default)]
    #[ts(type = "number")]
    pub cache_write_1h_tokens: u64,
    #[serde(default)]
    #[ts(type = "number")]
    pub reasoning_tokens: u64,
}

impl TokenUsage {
    pub fn add(&mut self, other: &TokenUsage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.cache_write_1h_tokens += other.cache_write_1h_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
    }

    pub fn is_zero(&self) -> bool {
        *self == TokenUsage::default()
    }

    /// Every prompt token: uncached, read from the cache and written to it.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens
            + self.cached_input_tokens
            + self.cache_write_tokens
            + self.cache_write_1h_tokens
    }

    /// Every completion token: output and reasoning.
    pub fn completion_tokens(&self) -> u64 {
        self.output_tokens + self.reasoning_tokens
    }

    /// The tokens the provider bills: the sum of the six classes.
    pub fn billed(&self) -> u64 {
        self.prompt_tokens() + self.completion_tokens()
    }
}

/// The prices one response was charged at, in US dollars per million tokens, kept with its usage
/// row so history never changes when prices do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct Rates {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    /// A 5-minute cache write.
    pub cache_write: f64,
    /// A 1-hour cache write.
    pub cache_write_1h: f64,
    pub reasoning: f64,
    /// The tier the request was priced in when not the standard one: `above_200k_tokens` (a
    /// long-context tier charges the whole request at its rates), `batch`, `priority`, `flex`,
    /// or both (`priority+above_272k_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tier: Option<String>,
    /// Where the price came from: `prices.toml` (the user's file), `snapshot` (`bosun prices
    /// update`), `override` (Bosun's reviewed corrections), `litellm <version>` (the generated
    /// table), or `provider` (the response reported its own cost).
    pub source: String,
    /// The table entry that matched (e.g. `claude-sonnet-4-5` for `claude-sonnet-4-5-20250929`).
    pub entry: String,
}
