//! A scripted reply as the real APIs stream it: SSE frames of OpenAI Chat Completions chunks,
//! OpenAI Responses events or Anthropic Messages events.

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
                "completion_tokens": usage.output_tokens + usage.reasoning_tokens,
                "total_tokens": usage.input_tokens + usage.output_tokens + usage.reasoning_tokens,
                "prompt_tokens_details": {"cached_tokens": usage.cached_input_tokens, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens}
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
                "usage": {"output_tokens": usage.output_tokens + usage.reasoning_tokens}}),
    ));
    out.push(named_frame(
        "message_stop",
        &json!({"type": "message_stop"}),
    ));
    out
}

/// The wire format a model request came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    OpenAi,
    Responses,
    Anthropic,
}

/// A reasoning item of a Responses reply: its encrypted content and summary text.
pub(crate) struct MockReasoning<'a> {
    pub encrypted_content: &'a str,
    pub summary: &'a str,
}

/// OpenAI Responses events, from `response.created` to `response.completed`: a reasoning item
/// if scripted, the text as a message item, then each call as a `function_call` item whose
/// arguments arrive in small pieces.
pub(crate) fn responses_frames(
    id: &str,
    model: &str,
    reasoning: Option<&MockReasoning<'_>>,
    text: &str,
    calls: &[MockToolCall],
    usage: &MockUsage,
) -> Vec<String> {
    let mut seq = 0u64;
    let mut event = |kind: &str, mut data: Value| {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(seq);
        seq += 1;
        named_frame(kind, &data)
    };
    let response = |status: &str, output: Vec<Value>| {
        json!({"id": id, "object": "response", "created_at": 1_764_470_000, "status": status,
               "model": model, "output": output, "store": false})
    };
    let mut out = vec![
        event(
            "response.created",
            json!({"response": response("in_progress", Vec::new())}),
        ),
        event(
            "response.in_progress",
            json!({"response": response("in_progress", Vec::new())}),
        ),
    ];
    let mut output: Vec<Value> = Vec::new();
    if let Some(r) = reasoning {
        let index = output.len();
        let item_id = format!("rs_{id}_{index}");
        out.push(event(
            "response.output_item.added",
            json!({"output_index": index,
                   "item": {"type": "reasoning", "id": item_id, "summary": []}}),
        ));
        let summary: Vec<Value> = if r.summary.is_empty() {
            Vec::new()
        } else {
            vec![json!({"type": "summary_text", "text": r.summary})]
        };
        let item = json!({"type": "reasoning", "id": item_id, "summary": summary,
                          "encrypted_content": r.encrypted_content});
        out.push(event(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        ));
        output.push(item);
    }
    if !text.is_empty() {
        let index = output.len();
        let item_id = format!("msg_{id}_{index}");
        out.push(event(
            "response.output_item.added",
            json!({"output_index": index, "item": {"type": "message", "id": item_id,
                   "status": "in_progress", "role": "assistant", "content": []}}),
        ));
        out.push(event(
            "response.content_part.added",
            json!({"item_id": item_id, "output_index": index, "content_index": 0,
                   "part": {"type": "output_text", "text": "", "annotations": []}}),
        ));
        for p in pieces(text, TEXT_PIECE) {
            out.push(event(
                "response.output_text.delta",
                json!({"item_id": item_id, "output_index": index, "content_index": 0,
                       "delta": p}),
            ));
        }
        out.push(event(
            "response.output_text.done",
            json!({"item_id": item_id, "output_index": index, "content_index": 0, "text": text}),
        ));
        let part = json!({"type": "output_text", "text": text, "annotations": []});
        out.push(event(
            "response.content_part.done",
            json!({"item_id": item_id, "output_index": index, "content_index": 0, "part": part}),
        ));
        let item = json!({"type": "message", "id": item_id, "status": "completed",
                          "role": "assistant", "content": [part]});
        out.push(event(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        ));
        output.push(item);
    }
    for call in calls {
        let index = output.len();
        let item_id = format!("fc_{id}_{index}");
        out.push(event(
            "response.output_item.added",
            json!({"output_index": index, "item": {"type": "function_call", "id": item_id,
                   "call_id": call.id, "name": call.name, "arguments": "",
                   "status": "in_progress"}}),
        ));
        for p in pieces(&call.arguments, ARGS_PIECE) {
            out.push(event(
                "response.function_call_arguments.delta",
                json!({"item_id": item_id, "output_index": index, "delta": p}),
            ));
        }
        out.push(event(
            "response.function_call_arguments.done",
            json!({"item_id": item_id, "output_index": index, "arguments": call.arguments}),
        ));
        let item = json!({"type": "function_call", "id": item_id, "call_id": call.id,
                          "name": call.name, "arguments": call.arguments,
                          "status": "completed"});
        out.push(event(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        ));
        output.push(item);
    }
    let mut done = response("completed", output);
    done["usage"] = json!({
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_input_tokens},
        "output_tokens": usage.output_tokens + usage.reasoning_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.input_tokens + usage.output_tokens + usage.reasoning_tokens,
    });
    out.push(event("response.completed", json!({"response": done})));
    out
}

/// A streamed text answer that does not finish: the frames that open it, and the frame of one
/// more piece of its text.
pub(crate) fn unfinished_frames(
    wire: Wire,
    id: &str,
    model: &str,
    text: &str,
) -> (Vec<String>, String) {
    if wire == Wire::Responses {
        let item_id = format!("msg_{id}_0");
        let open = vec![
            named_frame(
                "response.created",
                &json!({"type": "response.created", "response": {"id": id, "object": "response",
                        "status": "in_progress", "model": model, "output": []}}),
            ),
            named_frame(
                "response.output_item.added",
                &json!({"type": "response.output_item.added", "output_index": 0,
                        "item": {"type": "message", "id": item_id, "status": "in_progress",
                                 "role": "assistant", "content": []}}),
            ),
        ];
        let piece = named_frame(
            "response.output_text.delta",
            &json!({"type": "response.output_text.delta", "item_id": item_id, "output_index": 0,
                    "content_index": 0, "delta": text}),
        );
        return (open, piece);
    }
    if wire == Wire::Anthropic {
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
