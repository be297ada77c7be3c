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
    /// The server sent something that is not the expected wire format.
    #[error(
        "{provider} sent a response Bosun cannot read: {message} (is the API kind right for this server?)"
    )]
    Malformed { provider: String, message: String },
    /// The provider configuration cannot work.
    #[error("model configuration: {0}")]
    Config(String),
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
    /// connection failures and broken streams.
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Http { status, .. } => matches!(status, 408 | 409 | 429 | 500..=599),
            ModelError::RateLimited { .. }
            | ModelError::Connection { .. }
            | ModelError::Interrupted { .. } => true,
            ModelError::Malformed { .. } | ModelError::Config(_) => false,
        }
    }

    /// A stable code for `ErrorEvent.code`: `rate_limited`, `model_config` or `model_error`.
    pub fn code(&self) -> &'static str {
        match self {
            ModelError::RateLimited { .. } => "rate_limited",
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
            | ModelError::Interrupted { attempts, .. } => *attempts = n,
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
}
