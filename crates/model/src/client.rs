//! The one HTTP client behind both wire formats: send, stream, classify, retry.

use crate::body::Body;
use crate::config::{ProviderConfig, RetryPolicy};
use crate::error::TimeoutPhase;
use crate::message::{ModelRequest, ModelResponse, StreamEvent};
use crate::sse::{SseEvent, SseParser};
use crate::{ModelClient, ModelError};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;
use tokio::time::{Instant, timeout_at};

/// Whether `base_url` is a server on this machine (loopback): only those are asked to count
/// tokens.
fn local_server(base_url: &str) -> bool {
    let rest = base_url
        .strip_prefix("http://")
        .or_else(|| base_url.strip_prefix("https://"))
        .unwrap_or(base_url);
    let host = rest.split('/').next().unwrap_or("");
    let host = if host.starts_with('[') {
        host.split(']').next().unwrap_or("").trim_start_matches('[')
    } else {
        host.rsplit_once(':').map_or(host, |(h, _)| h)
    };
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// A server's `retry-after` is honoured up to this long.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// How much of an error response's body is read for its message.
const ERROR_BODY_BYTES: usize = 64 * 1024;

/// What differs between wire formats: where to send, which headers, the body, how to read.
pub(crate) trait Wire: Send + Sync {
    fn url(&self, base_url: &str) -> String;
    fn headers(&self, cfg: &ProviderConfig) -> Vec<(&'static str, String)>;
    fn body(&self, cfg: &ProviderConfig, req: &ModelRequest) -> serde_json::Value;
    fn decoder(&self, cfg: &ProviderConfig) -> Box<dyn Decoder>;
}

/// Reads one attempt's events into a response.
pub(crate) trait Decoder: Send {
    /// Handles one event; `Ok(true)` once the terminal event arrived.
    fn event(
        &mut self,
        ev: &SseEvent,
        emit: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<bool, ModelError>;
    /// The body ended cleanly without the terminal event: is what arrived complete anyway?
    fn complete_without_terminal(&self) -> bool;
    fn finish(self: Box<Self>) -> ModelResponse;
}

pub(crate) struct HttpModelClient {
    cfg: ProviderConfig,
    http: reqwest::Client,
    wire: Box<dyn Wire>,
    /// Whether the server counts tokens (llama.cpp `/tokenize`): 0 not tried, 1 yes, 2 no.
    tokenize: std::sync::atomic::AtomicU8,
}

/// A failed attempt, with how long the server asked us to wait.
struct Failure {
    error: ModelError,
    retry_after: Option<Duration>,
}

impl From<ModelError> for Failure {
    fn from(error: ModelError) -> Self {
        Failure {
            error,
            retry_after: None,
        }
    }
}

impl HttpModelClient {
    pub fn new(cfg: ProviderConfig, wire: Box<dyn Wire>) -> Result<Self, ModelError> {
        if cfg.base_url.trim().is_empty() {
            return Err(ModelError::Config(format!(
                "provider `{}` has no base_url: set one like `http://127.0.0.1:11434/v1`",
                cfg.name
            )));
        }
        if !(cfg.base_url.starts_with("http://") || cfg.base_url.starts_with("https://")) {
            return Err(ModelError::Config(format!(
                "provider `{}` has base_url `{}`: it must start with http:// or https://",
                cfg.name, cfg.base_url
            )));
        }
        if cfg.model.trim().is_empty() {
            return Err(ModelError::Config(format!(
                "provider `{}` has no model: set the model name",
                cfg.name
            )));
        }
        // Only the connection has reqwest's own timeout; the waits for the answer are
        // deadlines of `attempt` and `Body`, so each failure can say which limit ran out.
        let http = reqwest::Client::builder()
            .connect_timeout(cfg.limits.connect_timeout)
            .build()
            .map_err(|e| {
                ModelError::Config(format!("cannot build the HTTP client: {}", chain(&e)))
            })?;
        Ok(HttpModelClient {
            cfg,
            http,
            wire,
            tokenize: std::sync::atomic::AtomicU8::new(0),
        })
    }

    fn key(&self) -> Option<&str> {
        self.cfg.api_key.as_ref().map(|k| k.expose())
    }

    async fn attempt(
        &self,
        url: &str,
        body: &[u8],
        on_event: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<ModelResponse, Failure> {
        let provider = &self.cfg.name;
        let mut builder = self
            .http
            .post(url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .body(body.to_vec());
        for (name, value) in self.wire.headers(&self.cfg) {
            builder = builder.header(name, value);
        }
        let limits = &self.cfg.limits;
        let first = Instant::now() + limits.first_byte_timeout;
        let resp = match timeout_at(first, builder.send()).await {
            Err(_) => return Err(self.timeout(TimeoutPhase::FirstByte).into()),
            // The only timeout reqwest itself has is the connection's.
            Ok(Err(e)) if e.is_timeout() => return Err(self.timeout(TimeoutPhase::Connect).into()),
            Ok(Err(e)) => {
                return Err(ModelError::Connection {
                    provider: provider.clone(),
                    message: chain(&e),
                    attempts: 1,
                }
                .into());
            }
            Ok(Ok(resp)) => resp,
        };
        let status = resp.status().as_u16();
        if !resp.status().is_success() {
            let retry_after = retry_after(resp.headers());
            let text = Body::new(resp, provider, limits, first)
                .text_lossy(ERROR_BODY_BYTES)
                .await;
            return Err(Failure {
                error: status_error(provider, status, retry_after, &text, url),
                retry_after,
            });
        }
        let content_type = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let mut body = Body::new(resp, provider, limits, first);
        if content_type.contains("application/json") || content_type.contains("text/html") {
            let text = body.text().await?;
            // Some compatible servers ignore `stream: true` and answer with one JSON completion.
            if content_type.contains("application/json") {
                let mut decoder = self.wire.decoder(&self.cfg);
                let whole = SseEvent {
                    event: None,
                    data: text.clone(),
                };
                if decoder.event(&whole, on_event).is_ok() && decoder.complete_without_terminal() {
                    return Ok(decoder.finish());
                }
            }
            return Err(ModelError::Malformed {
                provider: provider.clone(),
                message: format!(
                    "expected an event stream from {url} but got {content_type}: {}",
                    snippet(&text)
                ),
            }
            .into());
        }
        let mut decoder = self.wire.decoder(&self.cfg);
        let mut parser = SseParser::default();
        let mut done = false;
        while !done {
            let Some(chunk) = body.next().await? else {
                break;
            };
            let events = parser.push(&chunk);
            if events.iter().any(|ev| !ev.is_keepalive()) {
                body.progressed();
            }
            for ev in events {
                if decoder.event(&ev, on_event)? {
                    done = true;
                    break;
                }
            }
        }
        if !done && let Some(ev) = parser.finish() {
            done = decoder.event(&ev, on_event)?;
        }
        if !done && !decoder.complete_without_terminal() {
            return Err(ModelError::Interrupted {
                provider: provider.clone(),
                message: "the server closed the stream before its final event".into(),
                attempts: 1,
            }
            .into());
        }
        Ok(decoder.finish())
    }

    fn timeout(&self, phase: TimeoutPhase) -> ModelError {
        let limit = match phase {
            TimeoutPhase::Connect => self.cfg.limits.connect_timeout,
            TimeoutPhase::FirstByte => self.cfg.limits.first_byte_timeout,
            TimeoutPhase::Idle => self.cfg.limits.idle_timeout,
        };
        ModelError::Timeout {
            provider: self.cfg.name.clone(),
            phase,
            limit,
            attempts: 1,
        }
    }
}

#[async_trait::async_trait]
impl ModelClient for HttpModelClient {
    fn provider(&self) -> &str {
        &self.cfg.name
    }

    fn model(&self) -> &str {
        &self.cfg.model
    }

    fn profile(&self) -> &crate::ModelProfile {
        &self.cfg.profile
    }

    /// llama.cpp's `/tokenize`, on a server of this machine that has it (asked once: a server
    /// without it is not asked again).
    async fn count_tokens(&self, text: &str) -> Option<usize> {
        use std::sync::atomic::Ordering;
        if self.cfg.api != crate::ApiKind::OpenAiChat
            || self.tokenize.load(Ordering::Relaxed) == 2
            || !local_server(&self.cfg.base_url)
        {
            return None;
        }
        let base = self.cfg.base_url.trim_end_matches('/');
        let root = base.strip_suffix("/v1").unwrap_or(base);
        let mut req = self
            .http
            .post(format!("{root}/tokenize"))
            .timeout(Duration::from_secs(2))
            .json(&serde_json::json!({"content": text}));
        if let Some(key) = self.key() {
            req = req.bearer_auth(key);
        }
        let counted = async {
            let resp = req.send().await.ok()?;
            if !resp.status().is_success() {
                return None;
            }
            let v: serde_json::Value = resp.json().await.ok()?;
            v.get("tokens")?.as_array().map(Vec::len)
        }
        .await;
        self.tokenize
            .store(if counted.is_some() { 1 } else { 2 }, Ordering::Relaxed);
        counted
    }

    async fn stream(
        &self,
        req: &ModelRequest,
        on_event: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<ModelResponse, ModelError> {
        let url = self.wire.url(&self.cfg.base_url);
        let body = serde_json::to_vec(&self.wire.body(&self.cfg, req))
            .map_err(|e| ModelError::Config(format!("cannot encode the request as JSON: {e}")))?;
        let max_attempts = self.cfg.retry.max_attempts();
        let mut attempt = 1;
        // Retries of failures that get fewer than `max_retries` (a first-byte timeout: one).
        let mut limited_retries = 0;
        loop {
            match self.attempt(&url, &body, on_event).await {
                Ok(resp) => return Ok(resp),
                Err(Failure { error, retry_after }) => {
                    let mut error = error.redact(self.key());
                    let limited = error.retries_at_most();
                    if !error.is_retryable()
                        || attempt >= max_attempts
                        || limited.is_some_and(|max| limited_retries >= max)
                    {
                        error.set_attempts(attempt);
                        return Err(error);
                    }
                    if limited.is_some() {
                        limited_retries += 1;
                    }
                    let delay = retry_delay(&self.cfg.retry, attempt, retry_after);
                    tracing::warn!(
                        provider = %self.cfg.name,
                        attempt,
                        delay_ms = delay.as_millis() as u64,
                        "model request failed, retrying: {}",
                        error.reason()
                    );
                    on_event(StreamEvent::Retrying {
                        attempt: attempt + 1,
                        max_attempts,
                        delay,
                        reason: error.reason(),
                    });
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
            }
        }
    }
}

/// The wait before attempt `attempt + 1`: the server's `retry-after` (capped at
/// [`MAX_RETRY_AFTER`]) or exponential backoff with ±25 % jitter, at most `max_delay`.
pub(crate) fn retry_delay(
    policy: &RetryPolicy,
    attempt: u32,
    retry_after: Option<Duration>,
) -> Duration {
    if let Some(d) = retry_after {
        return d.min(MAX_RETRY_AFTER);
    }
    let exp = 2f64.powi(attempt.saturating_sub(1).min(30) as i32);
    let base = policy.initial_delay.as_secs_f64() * exp;
    let jitter = 0.75 + 0.5 * random_unit();
    Duration::from_secs_f64((base * jitter).min(policy.max_delay.as_secs_f64()).max(0.0))
}

/// A number in [0, 1) from the standard library's per-process random hash keys.
fn random_unit() -> f64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// `retry-after-ms`, or `retry-after` as seconds or an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0).min(MAX_RETRY_AFTER));
    }
    let value = get("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        if secs.is_finite() && secs >= 0.0 {
            return Some(Duration::from_secs_f64(
                secs.min(MAX_RETRY_AFTER.as_secs_f64()),
            ));
        }
        return None;
    }
    let format = time::macros::format_description!(
        "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
    );
    let at = time::PrimitiveDateTime::parse(value, &format)
        .ok()?
        .assume_utc();
    let wait = at - time::OffsetDateTime::now_utc();
    let secs = wait
        .as_seconds_f64()
        .clamp(0.0, MAX_RETRY_AFTER.as_secs_f64());
    Some(Duration::from_secs_f64(secs))
}

/// The error for a non-2xx answer, with the server's own message.
fn status_error(
    provider: &str,
    status: u16,
    retry_after: Option<Duration>,
    body: &str,
    url: &str,
) -> ModelError {
    let mut message = server_message(body).unwrap_or_else(|| {
        if body.trim().is_empty() {
            reqwest::StatusCode::from_u16(status)
                .ok()
                .and_then(|s| s.canonical_reason())
                .unwrap_or("no message")
                .to_string()
        } else {
            snippet(body)
        }
    });
    match status {
        401 | 403 => message.push_str(" (check the API key configured for this provider)"),
        404 => message.push_str(&format!(
            " (the request went to {url}: check base_url and the model name)"
        )),
        _ => {}
    }
    ModelError::from_status(provider, status, message, retry_after)
}

/// `{"error":{"message":…}}`, `{"error":"…"}`, `{"message":…}` or `{"detail":…}`.
pub(crate) fn server_message(body: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let text = |v: &serde_json::Value| v.as_str().map(str::to_string);
    v.pointer("/error/message")
        .and_then(text)
        .or_else(|| v.get("error").and_then(text))
        .or_else(|| v.get("message").and_then(text))
        .or_else(|| v.get("detail").and_then(text))
}

/// The first 300 characters of a body, on one line.
pub(crate) fn snippet(body: &str) -> String {
    let one_line: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = one_line.chars().take(300).collect();
    if one_line.chars().count() > 300 {
        out.push('…');
    }
    out
}

/// An error and its sources, joined with `: `.
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn backoff_doubles_with_jitter_and_respects_the_cap() {
        let p = RetryPolicy {
            max_retries: 10,
            initial_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
        };
        for _ in 0..50 {
            let d1 = retry_delay(&p, 1, None).as_millis();
            let d3 = retry_delay(&p, 3, None).as_millis();
            let d9 = retry_delay(&p, 9, None).as_millis();
            assert!((75..=125).contains(&d1), "{d1}");
            assert!((300..=500).contains(&d3), "{d3}");
            assert!(d9 <= 1000, "{d9}");
        }
        assert_eq!(
            retry_delay(&p, 1, Some(Duration::from_secs(600))),
            MAX_RETRY_AFTER
        );
    }

    #[test]
    fn retry_after_reads_seconds_milliseconds_and_http_dates() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("7"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(7)));
        h.insert("retry-after", HeaderValue::from_static("3600"));
        assert_eq!(retry_after(&h), Some(MAX_RETRY_AFTER));
        h.insert(
            "retry-after",
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        let later = time::OffsetDateTime::now_utc() + time::Duration::seconds(30);
        let format = time::macros::format_description!(
            "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
        );
        let text = later.format(&format).unwrap();
        h.insert("retry-after", HeaderValue::from_str(&text).unwrap());
        let d = retry_after(&h).unwrap();
        assert!(
            d > Duration::from_secs(25) && d <= Duration::from_secs(30),
            "{d:?}"
        );
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
        h.clear();
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn server_messages_are_found_in_the_usual_shapes() {
        assert_eq!(
            server_message(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            Some("Overloaded".into())
        );
        assert_eq!(
            server_message(r#"{"error":"model not found"}"#),
            Some("model not found".into())
        );
        assert_eq!(server_message("<html>"), None);
    }
}
