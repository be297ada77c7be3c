//! One turn: a model request streamed into events.

use crate::{CoreError, Emitter};
use bosun_model::{ModelClient, ModelRequest, ModelResponse, StreamEvent};
use bosun_protocol::{AssistantDelta, EventMsg, ModelRetry};
use tokio_util::sync::CancellationToken;

/// How a turn ended.
pub enum TurnResult {
    Response(ModelResponse),
    Interrupted,
}

/// Sends `request` and streams its text into `assistant_delta` events, redacted as one text (a
/// line goes out once it is complete, so a secret split across deltas is still found). A retried
/// request emits `model_retry` (the frontend discards the partial text it showed, and what was
/// held back is dropped); tool calls are only taken from the final response, so no tool can run
/// twice.
pub async fn run_turn(
    client: &dyn ModelClient,
    request: &ModelRequest,
    emitter: &Emitter,
    cancel: &CancellationToken,
) -> Result<TurnResult, CoreError> {
    let text = emitter.text_stream();
    let delta = |text| EventMsg::AssistantDelta(AssistantDelta { text });
    let on_event = |ev: StreamEvent| match ev {
        StreamEvent::TextDelta(piece) if !piece.is_empty() => {
            emitter.emit_piece(&text, Some(&piece), delta);
        }
        StreamEvent::Retrying {
            attempt,
            max_attempts,
            delay,
            reason,
        } => {
            text.reset();
            emitter.emit_quietly(EventMsg::ModelRetry(ModelRetry {
                attempt,
                max_attempts,
                delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                reason,
            }));
        }
        _ => {}
    };
    let response = tokio::select! {
        biased;
        _ = cancel.cancelled() => None,
        r = client.stream(request, &on_event) => Some(r),
    };
    emitter.emit_piece(&text, None, delta);
    emitter.check()?;
    match response {
        None => Ok(TurnResult::Interrupted),
        Some(r) => Ok(TurnResult::Response(r?)),
    }
}
