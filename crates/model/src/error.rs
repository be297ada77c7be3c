//! What can go wrong talking to a model, classified so the loop knows whether to retry.

use std::time::Duration;

/// A failed model request. Messages name the provider and say what to do; they never contain
/// the API key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// The server answered with an error status (or an error event in the stream).
    #[error("{provider} returned {status} after {}: {message}", attempts_text(*attempts))]
    Http {
        provider: String,
        status: u16,
        message: String,
        attempts: u32,
    },
    /// 429: too many requests or tokens; wait and try again.
    #[error("{provider} rate-limited the request (429) after {}: {message}{}", attempts_text(*attempts), retry_after_text(retry_after))]
    RateLimited {
        provider: String,
        retry_after: Option<Duration>,
        message: String,
        attempts: u32,
    },
    /// The server could not be reached, or did not answer in time.
    #[error("could not reach {provider} after {}: {message} (is the server running and the base_url right?)", attempts_text(*attempts))]
    Connection {
        provider: String,
        message: String,
        attempts: u32,
    },
    /// The response stream broke off before its end.
    #[error("the response stream from {provider} ended before the response was complete, after {}: {message}", attempts_text(*attempts))]
    Interrupted {
        provider: String,
        message: String,
        attempts: u32,
    },
    /// The server did not connect, begin to answer or go on answering within a limit.
    #[error("{}", timeout_text(provider, *phase, *limit, *attempts))]
    Timeout {
        provider: String,
        phase: TimeoutPhase,
        limit: Duration,
        attempts: u32,
    },
    /// The response grew past `max_response_bytes` and was cut off.
    #[error(
        "the response from {provider} passed {} (max_response_bytes) and was cut off, after {}: the model may be repeating itself; lower max_output_tokens, or raise max_response_bytes in [providers.{provider}] if such long answers are expected",
        size_text(*limit),
        attempts_text(*attempts)
    )]
    TooLarge {
        provider: String,
        limit: u64,
        attempts: u32,
    },
    /// The server sent something that is not the expected wire format.
    #[error(
        "{provider} sent a response Bosun cannot read: {message} (is the API kind right for this server?)"
    )]
    Malformed { provider: String, message: String },
    /// The provider configuration cannot work.
    #[error("model configuration: {0}")]
    Config(String),
}

/// Which wait ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutPhase {
    /// Opening the connection (`connect_timeout_secs`).
    Connect,
    /// From the request to the response's first event (`first_byte_timeout_secs`).
    FirstByte,
    /// Between two events of the response (`idle_timeout_secs`).
    Idle,
}

impl TimeoutPhase {
    /// The `[providers.NAME]` key that sets this limit.
    pub fn setting(self) -> &'static str {
        match self {
            TimeoutPhase::Connect => "connect_timeout_secs",
            TimeoutPhase::FirstByte => "first_byte_timeout_secs",
            TimeoutPhase::Idle => "idle_timeout_secs",
        }
    }
}

fn timeout_text(provider: &str, phase: TimeoutPhase, limit: Duration, attempts: u32) -> String {
    let secs = limit.as_secs_f64();
    let setting = phase.setting();
    let attempts = attempts_text(attempts);
    match phase {
        TimeoutPhase::Connect => format!(
            "could not connect to {provider} within {secs} s ({setting}), after {attempts}: is the server running and the base_url right?"
        ),
        TimeoutPhase::FirstByte => format!(
            "{provider} did not begin to answer within {secs} s of the request ({setting}), after {attempts}: the server may be stuck or busy; a local model reading a long prompt may need longer (raise {setting} in [providers.{provider}])"
        ),
        TimeoutPhase::Idle => format!(
            "{provider} sent nothing for {secs} s in the middle of its response ({setting}), after {attempts}: the server may be stuck or overloaded; raise {setting} in [providers.{provider}] if it is only slow"
        ),
    }
}

fn size_text(bytes: u64) -> String {
    const MB: u64 = 1024 * 1024;
    if bytes >= MB && bytes.is_multiple_of(MB) {
        format!("{} MB", bytes / MB)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

fn attempts_text(n: u32) -> String {
    if n == 1 {
        "1 attempt".to_string()
    } else {
        format!("{n} attempts")
    }
}

fn retry_after_text(d: &Option<Duration>) -> String {
    match d {
        Some(d) => format!(" (the server asked to wait {:.1} s)", d.as_secs_f64()),
        None => String::new(),
    }
}

impl ModelError {
    /// The error for an HTTP failure status (from a response or an error event in a stream), on
    /// the first attempt: 429 is a rate limit, anything else an HTTP error.
    pub fn from_status(
        provider: &str,
        status: u16,
        message: String,
        retry_after: Option<std::time::Duration>,
    ) -> ModelError {
        if status == 429 {
            ModelError::RateLimited {
                provider: provider.to_string(),
                retry_after,
                message,
                attempts: 1,
            }
        } else {
            ModelError::Http {
                provider: provider.to_string(),
                status,
                message,
                attempts: 1,
            }
        }
    }

    /// Whether sending the same request again may succeed: 408, 409, 429, 5xx (incl. 529),
    /// connection failures, broken streams, and a server that did not connect or did not begin
    /// to answer in time (that one once: see [`ModelError::retries_at_most`]). A stream that
    /// stalled mid-way or ran past its size limit is not retried: the server was answering, and
    /// the same request would stall or run away again, at the price of its prompt.
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Http { status, .. } => matches!(status, 408 | 409 | 429 | 500..=599),
            ModelError::RateLimited { .. }
            | ModelError::Connection { .. }
            | ModelError::Interrupted { .. } => true,
            ModelError::Timeout { phase, .. } => *phase != TimeoutPhase::Idle,
            ModelError::TooLarge { .. } | ModelError::Malformed { .. } | ModelError::Config(_) => {
                false
            }
        }
    }

    /// How many retries this kind of failure gets at most, when fewer than the provider's
    /// `max_retries`: one for a server that did not begin to answer (each wait is long, and a
    /// server stuck once is likely stuck again).
    pub fn retries_at_most(&self) -> Option<u32> {
        match self {
            ModelError::Timeout {
                phase: TimeoutPhase::FirstByte,
                ..
            } => Some(1),
            _ => None,
        }
    }

    /// A stable code for `ErrorEvent.code`: `rate_limited`, `model_timeout`,
    /// `response_too_large`, `model_config` or `model_error`.
    pub fn code(&self) -> &'static str {
        match self {
            ModelError::RateLimited { .. } => "rate_limited",
            ModelError::Timeout { .. } => "model_timeout",
            ModelError::TooLarge { .. } => "response_too_large",
            ModelError::Config(_) => "model_config",
            _ => "model_error",
        }
    }

    /// The HTTP status, when the server sent one.
    pub fn status(&self) -> Option<u16> {
        match self {
            ModelError::Http { status, .. } => Some(*status),
            ModelError::RateLimited { .. } => Some(429),
            _ => None,
        }
    }

    /// How long the server asked to wait before the next attempt.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ModelError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    pub(crate) fn set_attempts(&mut self, n: u32) {
        match self {
            ModelError::Http { attempts, .. }
            | ModelError::RateLimited { attempts, .. }
            | ModelError::Connection { attempts, .. }
            | ModelError::Interrupted { attempts, .. }
            | ModelError::Timeout { attempts, .. }
            | ModelError::TooLarge { attempts, .. } => *attempts = n,
            ModelError::Malformed { .. } | ModelError::Config(_) => {}
        }
    }

    /// A short reason for a `Retrying` event.
    pub(crate) fn reason(&self) -> String {
        match self {
            ModelError::Http {
                status, message, ..
            } => format!("{status}: {message}"),
            ModelError::RateLimited { message, .. } => format!("429: {message}"),
            ModelError::Connection { message, .. } => format!("connection failed: {message}"),
            ModelError::Interrupted { message, .. } => format!("stream interrupted: {message}"),
            ModelError::Timeout { phase, limit, .. } => format!(
                "no answer within {} s ({})",
                limit.as_secs_f64(),
                phase.setting()
            ),
            ModelError::TooLarge { limit, .. } => {
                format!("response past {} (max_response_bytes)", size_text(*limit))
            }
            ModelError::Malformed { message, .. } | ModelError::Config(message) => message.clone(),
        }
    }

    /// Removes every occurrence of `secret` from the error's text.
    pub(crate) fn redact(mut self, secret: Option<&str>) -> Self {
        let Some(secret) = secret.filter(|s| !s.is_empty()) else {
            return self;
        };
        let scrub = |s: &mut String| {
            if s.contains(secret) {
                *s = s.replace(secret, "[redacted]");
            }
        };
        match &mut self {
            ModelError::Http { message, .. }
            | ModelError::RateLimited { message, .. }
            | ModelError::Connection { message, .. }
            | ModelError::Interrupted { message, .. }
            | ModelError::Malformed { message, .. }
            | ModelError::Config(message) => scrub(message),
            ModelError::Timeout { .. } | ModelError::TooLarge { .. } => {}
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn final_http_error_names_provider_status_attempts_and_message() {
        let e = ModelError::Http {
            provider: "openai-compat".into(),
            status: 500,
            message: "boom".into(),
            attempts: 5,
        };
        assert_eq!(
            e.to_string(),
            "openai-compat returned 500 after 5 attempts: boom"
        );
        assert!(e.is_retryable());
        assert_eq!(e.code(), "model_error");
    }

    #[test]
    fn client_errors_are_final_except_timeouts_conflicts_and_rate_limits() {
        let http = |status| ModelError::Http {
            provider: "p".into(),
            status,
            message: String::new(),
            attempts: 1,
        };
        for s in [400, 401, 403, 404, 413, 422] {
            assert!(!http(s).is_retryable(), "{s}");
        }
        for s in [408, 409, 429, 500, 502, 503, 529] {
            assert!(http(s).is_retryable(), "{s}");
        }
    }

    #[test]
    fn redaction_removes_the_key() {
        let e = ModelError::Http {
            provider: "p".into(),
            status: 401,
            message: "Incorrect API key provided: sk-abc123".into(),
            attempts: 1,
        }
        .redact(Some("sk-abc123"));
        assert!(!e.to_string().contains("sk-abc123"));
    }

    #[test]
    fn timeouts_and_size_limits_name_the_provider_and_the_setting() {
        let timeout = |phase| ModelError::Timeout {
            provider: "local".into(),
            phase,
            limit: Duration::from_secs(300),
            attempts: 2,
        };
        let first = timeout(TimeoutPhase::FirstByte);
        assert_eq!(
            first.to_string(),
            "local did not begin to answer within 300 s of the request (first_byte_timeout_secs), after 2 attempts: the server may be stuck or busy; a local model reading a long prompt may need longer (raise first_byte_timeout_secs in [providers.local])"
        );
        assert_eq!(first.code(), "model_timeout");
        assert!(first.is_retryable());
        assert_eq!(first.retries_at_most(), Some(1));
        let idle = timeout(TimeoutPhase::Idle);
        assert!(idle.to_string().contains("idle_timeout_secs"), "{idle}");
        assert!(!idle.is_retryable());
        assert!(timeout(TimeoutPhase::Connect).is_retryable());
        let big = ModelError::TooLarge {
            provider: "local".into(),
            limit: 8 * 1024 * 1024,
            attempts: 1,
        };
        assert!(
            big.to_string().contains("passed 8 MB (max_response_bytes)"),
            "{big}"
        );
        assert_eq!(big.code(), "response_too_large");
        assert!(!big.is_retryable());
    }
}
