//! How to reach one model: which wire format, where, with which key, how patiently.

use crate::ModelError;
use crate::prices::ServiceTier;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// The wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ApiKind {
    /// OpenAI Chat Completions (`POST {base_url}/chat/completions`); also Ollama, llama.cpp,
    /// vLLM, LM Studio, OpenRouter and any other OpenAI-compatible server.
    #[serde(rename = "openai-chat")]
    OpenAiChat,
    /// OpenAI Responses (`POST {base_url}/responses`), with reasoning items kept across turns
    /// (`store: false`, their encrypted content sent back).
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    /// Anthropic Messages (`POST {base_url}/v1/messages`).
    #[serde(rename = "anthropic")]
    Anthropic,
}

impl ApiKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            ApiKind::OpenAiChat => "openai-chat",
            ApiKind::OpenAiResponses => "openai-responses",
            ApiKind::Anthropic => "anthropic",
        }
    }
}

impl fmt::Display for ApiKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ApiKind {
    type Err = ModelError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "openai-chat" | "openai" | "openai-compat" | "openai_chat" => Ok(ApiKind::OpenAiChat),
            "openai-responses" | "responses" | "openai_responses" => Ok(ApiKind::OpenAiResponses),
            "anthropic" | "anthropic-messages" => Ok(ApiKind::Anthropic),
            other => Err(ModelError::Config(format!(
                "unknown API kind `{other}`: use `openai-chat`, `openai-responses` or `anthropic`"
            ))),
        }
    }
}

/// An API key. It prints as `[redacted]` and never appears in an error message.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The key itself, for the request header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Secret(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret(value.to_string())
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// How a failed request is retried: exponential backoff with jitter, starting at
/// `initial_delay`, doubling, never above `max_delay` (a server's `retry-after` wins, capped at 60 s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt; the request is sent at most `max_retries + 1` times.
    pub max_retries: u32,
    pub initial_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 4,
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// No retries at all: the first failure is final.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// How many times the request is sent at most.
    pub fn max_attempts(&self) -> u32 {
        self.max_retries.saturating_add(1)
    }
}

/// How long to wait for a response and how much of one to take; each is a key of
/// `[providers.NAME]` in `config.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// To open the connection (`connect_timeout_secs`, default 10 s).
    pub connect_timeout: Duration,
    /// From sending the request to the response's first event (`first_byte_timeout_secs`,
    /// default 300 s: a local server on a small machine sends nothing while it reads a long
    /// prompt). Retried once.
    pub first_byte_timeout: Duration,
    /// Between two events of a streamed response (`idle_timeout_secs`, default 60 s). Not
    /// retried: the server began answering and stalled.
    pub idle_timeout: Duration,
    /// The most bytes of one response (`max_response_bytes`, default 8 MB): past it the
    /// response is cut off and not retried (the same request would run away again).
    pub max_response_bytes: u64,
}

impl Limits {
    pub const DEFAULT_CONNECT_TIMEOUT_SECS: u64 = 10;
    pub const DEFAULT_FIRST_BYTE_TIMEOUT_SECS: u64 = 300;
    pub const DEFAULT_IDLE_TIMEOUT_SECS: u64 = 60;
    pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 8 * 1024 * 1024;
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connect_timeout: Duration::from_secs(Self::DEFAULT_CONNECT_TIMEOUT_SECS),
            first_byte_timeout: Duration::from_secs(Self::DEFAULT_FIRST_BYTE_TIMEOUT_SECS),
            idle_timeout: Duration::from_secs(Self::DEFAULT_IDLE_TIMEOUT_SECS),
            max_response_bytes: Self::DEFAULT_MAX_RESPONSE_BYTES,
        }
    }
}

/// The response's token limit when none is configured (`max_output_tokens`).
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 8192;

/// One configured model endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderConfig {
    /// The provider's name as the user configured it (`anthropic`, `ollama`, …); used in errors
    /// and events.
    pub name: String,
    pub api: ApiKind,
    /// `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`, `https://api.anthropic.com`.
    pub base_url: String,
    pub model: String,
    /// Sent as `Authorization: Bearer` (OpenAI) or `x-api-key` (Anthropic) when set.
    pub api_key: Option<Secret>,
    /// The response's token limit, sent as `max_tokens` (Anthropic, OpenAI-compatible servers)
    /// or `max_completion_tokens` (OpenAI's own API); default 8192.
    pub max_output_tokens: u32,
    pub retry: RetryPolicy,
    pub limits: Limits,
    /// The tier requests are served and priced in (`service_tier`): `priority` and `flex` are
    /// sent as OpenAI's `service_tier`; `batch` only prices.
    pub service_tier: ServiceTier,
    /// The sampling temperature sent with every request: 0 (deterministic) unless configured.
    /// `None` sends none (the server's default). OpenAI's reasoning models (o-series, gpt-5)
    /// accept only their default, so none is sent to them.
    pub temperature: Option<f64>,
    /// How the model takes tools and writes edits (configured, probed or the default).
    pub profile: crate::ModelProfile,
    /// The profile keys the user set; the others may be found by a probe.
    pub profile_keys: crate::ProfileKeys,
}

/// The temperature a request carries when none is configured: deterministic sampling, so a task
/// tried twice behaves the same (a local server's own default is often 0.8).
pub const DEFAULT_TEMPERATURE: f64 = 0.0;

impl ProviderConfig {
    /// A config with the defaults: no key, 8192 output tokens, the default retry policy and
    /// limits.
    pub fn new(
        name: impl Into<String>,
        api: ApiKind,
        base_url: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        ProviderConfig {
            name: name.into(),
            api,
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            retry: RetryPolicy::default(),
            limits: Limits::default(),
            service_tier: ServiceTier::Standard,
            temperature: Some(DEFAULT_TEMPERATURE),
            profile: crate::ModelProfile::DEFAULT,
            profile_keys: crate::ProfileKeys {
                native_tools: None,
                tool_format: None,
                edit_format: None,
                context_window: None,
            },
        }
    }

    /// An OpenAI reasoning model by its name (`gpt-5*`, `o1`, `o3`, `o4-mini`, …).
    pub fn is_reasoning_model(&self) -> bool {
        let m = self.model.rsplit('/').next().unwrap_or(&self.model);
        m.starts_with("gpt-5")
            || (m.starts_with('o') && m[1..].starts_with(|c: char| c.is_ascii_digit()))
    }

    /// Whether to ask the Responses API for encrypted reasoning: not from OpenAI's own
    /// non-reasoning models, which refuse `include: ["reasoning.encrypted_content"]`.
    pub fn wants_encrypted_reasoning(&self) -> bool {
        self.is_reasoning_model() || !self.base_url.contains("api.openai.com")
    }

    /// The temperature to send to this model, if any.
    pub fn sent_temperature(&self) -> Option<f64> {
        let reasoning = self.is_reasoning_model();
        if reasoning
            && matches!(self.api, ApiKind::OpenAiChat | ApiKind::OpenAiResponses)
            && self.base_url.contains("api.openai.com")
        {
            return None;
        }
        self.temperature
    }

    pub fn with_service_tier(mut self, tier: ServiceTier) -> Self {
        self.service_tier = tier;
        self
    }

    pub fn with_profile(mut self, profile: crate::ModelProfile) -> Self {
        self.profile = profile;
        self
    }

    /// Whether a task probes this model before its first request: an OpenAI-compatible server
    /// on this machine or the local network whose profile the user did not set in full. A
    /// paid API is never probed unasked.
    pub fn auto_probe(&self) -> bool {
        self.api == ApiKind::OpenAiChat
            && crate::is_local_url(&self.base_url)
            && !self.profile_keys.is_complete()
    }

    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    pub fn with_api_key(mut self, key: impl Into<Secret>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn api_kind_parses_and_serializes_with_its_wire_names() {
        assert_eq!(
            "openai-chat".parse::<ApiKind>().unwrap(),
            ApiKind::OpenAiChat
        );
        assert_eq!("Anthropic".parse::<ApiKind>().unwrap(), ApiKind::Anthropic);
        let err = "gemini".parse::<ApiKind>().unwrap_err().to_string();
        assert!(err.contains("openai-chat"), "{err}");
        assert_eq!(
            serde_json::to_string(&ApiKind::OpenAiChat).unwrap(),
            "\"openai-chat\""
        );
        let back: ApiKind = serde_json::from_str("\"anthropic\"").unwrap();
        assert_eq!(back, ApiKind::Anthropic);
        let responses: ApiKind = "openai-responses".parse().unwrap();
        assert_eq!(responses, ApiKind::OpenAiResponses);
        assert_eq!(responses.to_string(), "openai-responses");
        assert_eq!(
            serde_json::to_string(&responses).unwrap(),
            "\"openai-responses\""
        );
        assert!(err.contains("openai-responses"), "{err}");
    }

    #[test]
    fn secrets_never_print() {
        let cfg = ProviderConfig::new("x", ApiKind::Anthropic, "http://h", "m")
            .with_api_key("sk-very-secret");
        let shown = format!("{cfg:?} {}", Secret::from("sk-very-secret"));
        assert!(!shown.contains("sk-very-secret"), "{shown}");
        assert_eq!(
            cfg.api_key.as_ref().map(Secret::expose),
            Some("sk-very-secret")
        );
    }
}

#[cfg(test)]
mod temperature_tests {
    use super::*;

    #[test]
    fn openai_reasoning_models_get_no_temperature_and_the_rest_get_zero() {
        let cfg = |api, url: &str, model: &str| ProviderConfig::new("p", api, url, model);
        let openai = "https://api.openai.com/v1";
        // Encrypted reasoning is asked of reasoning models, and of servers Bosun cannot know.
        assert!(cfg(ApiKind::OpenAiResponses, openai, "gpt-5").wants_encrypted_reasoning());
        assert!(!cfg(ApiKind::OpenAiResponses, openai, "gpt-4.1").wants_encrypted_reasoning());
        assert!(
            cfg(ApiKind::OpenAiResponses, "http://127.0.0.1:1/v1", "gpt-4.1")
                .wants_encrypted_reasoning()
        );
        assert_eq!(
            cfg(ApiKind::OpenAiChat, openai, "gpt-5").sent_temperature(),
            None
        );
        assert_eq!(
            cfg(ApiKind::OpenAiChat, openai, "o4-mini").sent_temperature(),
            None
        );
        assert_eq!(
            cfg(ApiKind::OpenAiChat, openai, "gpt-4o").sent_temperature(),
            Some(0.0)
        );
        assert_eq!(
            cfg(ApiKind::OpenAiChat, "http://127.0.0.1:8080/v1", "gpt-5").sent_temperature(),
            Some(0.0),
            "a compatible server named its model gpt-5: it takes what it is sent"
        );
        assert_eq!(
            cfg(
                ApiKind::Anthropic,
                "https://api.anthropic.com",
                "claude-sonnet-4-5"
            )
            .sent_temperature(),
            Some(0.0)
        );
        assert_eq!(
            cfg(ApiKind::OpenAiChat, openai, "openai/o3").sent_temperature(),
            None
        );
        assert_eq!(
            cfg(ApiKind::OpenAiResponses, openai, "gpt-5-mini").sent_temperature(),
            None
        );
        assert_eq!(
            cfg(ApiKind::OpenAiResponses, openai, "gpt-4.1").sent_temperature(),
            Some(0.0)
        );
    }
}
