//! A response body read within the provider's [`Limits`]: its first event by the first-byte
//! deadline, then one at least every idle timeout, and no more than `max_response_bytes` in all.

use crate::client::chain;
use crate::config::Limits;
use crate::error::{ModelError, TimeoutPhase};
use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use tokio::time::{Instant, timeout_at};

pub(crate) struct Body {
    stream: BoxStream<'static, reqwest::Result<Bytes>>,
    provider: String,
    limits: Limits,
    read: u64,
    deadline: Instant,
    /// The response began: its first event (or, for a whole body, its first bytes) arrived.
    began: bool,
}

impl Body {
    /// `first` is the first-byte deadline, counted from when the request was sent.
    pub fn new(resp: reqwest::Response, provider: &str, limits: &Limits, first: Instant) -> Body {
        Body {
            stream: resp.bytes_stream().boxed(),
            provider: provider.to_string(),
            limits: limits.clone(),
            read: 0,
            deadline: first,
            began: false,
        }
    }

    /// The next piece of the body, `None` at its end.
    pub async fn next(&mut self) -> Result<Option<Bytes>, ModelError> {
        let chunk = match timeout_at(self.deadline, self.stream.next()).await {
            Err(_) => return Err(self.timed_out()),
            Ok(None) => return Ok(None),
            Ok(Some(Err(e))) => {
                return Err(ModelError::Interrupted {
                    provider: self.provider.clone(),
                    message: chain(&e),
                    attempts: 1,
                });
            }
            Ok(Some(Ok(chunk))) => chunk,
        };
        self.read = self.read.saturating_add(chunk.len() as u64);
        if self.read > self.limits.max_response_bytes {
            return Err(ModelError::TooLarge {
                provider: self.provider.clone(),
                limit: self.limits.max_response_bytes,
                attempts: 1,
            });
        }
        Ok(Some(chunk))
    }

    /// An event arrived: the next one must come within the idle timeout.
    pub fn progressed(&mut self) {
        self.began = true;
        self.deadline = Instant::now() + self.limits.idle_timeout;
    }

    /// The rest of the body as text (a JSON answer), within the same limits; each piece
    /// counts as progress.
    pub async fn text(mut self) -> Result<String, ModelError> {
        let mut bytes = Vec::new();
        while let Some(chunk) = self.next().await? {
            bytes.extend_from_slice(&chunk);
            self.progressed();
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// At most `max` bytes of the rest of the body as text (an error's message): whatever
    /// arrived in time, never an error.
    pub async fn text_lossy(mut self, max: usize) -> String {
        let mut bytes = Vec::new();
        while bytes.len() < max {
            match self.next().await {
                Ok(Some(chunk)) => {
                    bytes.extend_from_slice(&chunk);
                    self.progressed();
                }
                Ok(None) | Err(_) => break,
            }
        }
        bytes.truncate(max);
        String::from_utf8_lossy(&bytes).into_owned()
    }

    fn timed_out(&self) -> ModelError {
        let (phase, limit) = if self.began {
            (TimeoutPhase::Idle, self.limits.idle_timeout)
        } else {
            (TimeoutPhase::FirstByte, self.limits.first_byte_timeout)
        };
        ModelError::Timeout {
            provider: self.provider.clone(),
            phase,
            limit,
            attempts: 1,
        }
    }
}
