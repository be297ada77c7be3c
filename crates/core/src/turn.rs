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

/// Sends `request` and streams its text into `assistant_delta` events. A retried request emits
/// `model_retry` (the frontend discards the partial text it showed); tool calls are only taken
/// from the final response, so no tool can run twice.
pub async fn run_turn(
    client: &dyn ModelClient,
    request: &ModelRequest,
    emitter: &Emitter,
    cancel: &CancellationToken,
) -> Result<TurnResult, CoreError> {
    let on_event = |ev: StreamEvent| match ev {
        StreamEvent::TextDelta(text) if !text.is_empty() => {
            emitter.emit_quietly(EventMsg::AssistantDelta(AssistantDelta { text }));
        }
        StreamEvent::Retrying {
            attempt,
            max_attempts,
            delay,
            reason,
        } => emitter.emit_quietly(EventMsg::ModelRetry(ModelRetry {
            attempt,
            max_attempts,
            delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            reason,
        })),
        _ => {}
    };
    let response = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Ok(TurnResult::Interrupted),
        r = client.stream(request, &on_event) => r,
    };
    emitter.check()?;
    Ok(TurnResult::Response(response?))
}
