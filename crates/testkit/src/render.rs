//! A scripted reply as the real APIs stream it: SSE frames of OpenAI Chat Completions chunks or
//! Anthropic Messages events.

use crate::script::{MockToolCall, MockUsage};
use serde_json::{Value, json};

/// Text is streamed in deltas of this many characters.
const TEXT_PIECE: usize = 8;
/// Tool-call arguments are streamed in pieces of this many characters.
const ARGS_PIECE: usize = 5;

/// Splits `s` into pieces of `n` characters (never inside a UTF-8 sequence).
pub(crate) fn pieces(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars.chunks(n.max(1)).map(|c| c.iter().collect()).collect()
}

fn frame(data: &Value) -> String {
    format!("data: {data}\n\n")
}

fn named_frame(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

/// OpenAI chat completion chunks. Usage is sent (in a last chunk with empty `choices`) only when
/// the request asked for it with `stream_options.include_usage`, as the real API does.
pub(crate) fn openai_frames(
    id: &str,
    model: &str,
    text: &str,
    calls: &[MockToolCall],
    usage: &MockUsage,
    include_usage: bool,
) -> Vec<String> {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": id, "object": "chat.completion.chunk", "created": 1_764_470_000, "model": model,
               "system_fingerprint": "fp_mock",
               "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
    };
    let mut out = vec![frame(&chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    ))];
    for p in pieces(text, TEXT_PIECE) {
        out.push(frame(&chunk(json!({"content": p}), Value::Null)));
    }
    for (index, call) in calls.iter().enumerate() {
        out.push(frame(&chunk(
            json!({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                                   "function": {"name": call.name, "arguments": ""}}]}),
            Value::Null,
        )));
        for p in pieces(&call.arguments, ARGS_PIECE) {
            out.push(frame(&chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": p}}]}),
                Value::Null,
            )));
        }
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    out.push(frame(&chunk(json!({}), json!(finish))));
    if include_usage {
        out.push(frame(&json!({
            "id": id, "object": "chat.completion.chunk", "created": 1_764_470_000, "model": model,
            "choices": [],
            "usage": {
                "prompt_tokens": usage.input_tokens,
                "completion_tokens": usage.output_tokens,
                "total_tokens": usage.input_tokens + usage.output_tokens,
                "prompt_tokens_details": {"cached_tokens": usage.cached_input_tokens, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0}
            }
        })));
    }
    out.push("data: [DONE]\n\n".to_string());
    out
}

/// Anthropic Messages events, from `message_start` to `message_stop`.
pub(crate) fn anthropic_frames(
    id: &str,
    model: &str,
    text: &str,
    calls: &[MockToolCall],
    usage: &MockUsage,
) -> Vec<String> {
    let uncached = usage
        .input_tokens
        .saturating_sub(usage.cached_input_tokens)
        .saturating_sub(usage.cache_write_tokens);
    let mut out = vec![
        named_frame(
            "message_start",
            &json!({"type": "message_start", "message": {
                "id": id, "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": uncached,
                          "cache_creation_input_tokens": usage.cache_write_tokens,
                          "cache_read_input_tokens": usage.cached_input_tokens,
                          "output_tokens": 1}}}),
        ),
        named_frame("ping", &json!({"type": "ping"})),
    ];
    let mut index = 0;
    if !text.is_empty() {
        out.push(named_frame(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
        ));
        for p in pieces(text, TEXT_PIECE) {
            out.push(named_frame(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}}),
            ));
        }
        out.push(named_frame(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    for call in calls {
        out.push(named_frame(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}}),
        ));
        for p in pieces(&call.arguments, ARGS_PIECE) {
            out.push(named_frame(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": p}}),
            ));
        }
        out.push(named_frame(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    let stop = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    out.push(named_frame(
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                "usage": {"output_tokens": usage.output_tokens}}),
    ));
    out.push(named_frame(
        "message_stop",
        &json!({"type": "message_stop"}),
    ));
    out
}

/// A streamed text answer that does not finish: the frames that open it, and the frame of one
/// more piece of its text (`anthropic` picks the wire format).
pub(crate) fn unfinished_frames(
    anthropic: bool,
    id: &str,
    model: &str,
    text: &str,
) -> (Vec<String>, String) {
    if anthropic {
        let open = vec![
            named_frame(
                "message_start",
                &json!({"type": "message_start", "message": {
                    "id": id, "type": "message", "role": "assistant", "model": model,
                    "content": [], "stop_reason": null, "stop_sequence": null,
                    "usage": {"input_tokens": 1, "output_tokens": 1}}}),
            ),
            named_frame(
                "content_block_start",
                &json!({"type": "content_block_start", "index": 0,
                        "content_block": {"type": "text", "text": ""}}),
            ),
        ];
        let piece = named_frame(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": text}}),
        );
        return (open, piece);
    }
    let chunk = |delta: Value| {
        frame(
            &json!({"id": id, "object": "chat.completion.chunk", "created": 1_764_470_000,
                      "model": model,
                      "choices": [{"index": 0, "delta": delta, "finish_reason": null}]}),
        )
    };
    (
        vec![chunk(json!({"role": "assistant", "content": ""}))],
        chunk(json!({"content": text})),
    )
}
