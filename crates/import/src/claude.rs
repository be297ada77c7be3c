//! Claude Code's session files: `<config>/projects/<escaped-cwd>/<session-uuid>.jsonl`, and its
//! sub-agents' `agent-<id>.jsonl` (beside them, or under `<session-uuid>/subagents/`). One JSON
//! object a line: `type` `user` | `assistant` (a `message` in the Anthropic Messages shape, its
//! content blocks `text`, `tool_use`, `tool_result`, `thinking`; an assistant's `usage`),
//! `summary`, `system`; with `timestamp`, `sessionId`, `cwd`, `version`, `uuid`, `parentUuid`,
//! `isSidechain`. An assistant message streamed as several lines repeats its `message.id` and its
//! usage: the usage counts once.

use crate::session::{Item, Line, ReaderState, text_of};
use bosun_protocol::TokenUsage;
use serde_json::Value;

/// Reads one line into `out`.
pub fn read_line(state: &mut ReaderState, line: &str, out: &mut Vec<Item>) -> Line {
    let Ok(v) = serde_json::from_str::<Value>(line) else {
        return Line::Malformed;
    };
    let Some(kind) = v.get("type").and_then(Value::as_str) else {
        return Line::Malformed;
    };
    let str_of = |key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    match kind {
        "user" | "assistant" => {
            let Some(message) = v.get("message").filter(|m| m.is_object()) else {
                return Line::Malformed;
            };
            if state.session_id.is_none() {
                state.session_id = str_of("sessionId");
            }
            if let Some(cwd) = str_of("cwd") {
                state.cwd = Some(cwd);
            }
            if let Some(version) = str_of("version") {
                state.version = Some(version);
            }
            let ts = state.time(v.get("timestamp").and_then(Value::as_str));
            if kind == "user" {
                user(state, message, &ts, out)
            } else {
                assistant(state, &v, message, &ts, out)
            }
        }
        // A title for the conversation, and Claude Code's own notes (hooks, compaction, errors):
        // nothing of the transcript.
        "summary" | "system" => {
            if kind == "system" {
                state.time(v.get("timestamp").and_then(Value::as_str));
            }
            Line::Read
        }
        _ => Line::Unknown,
    }
}

fn user(state: &mut ReaderState, message: &Value, ts: &str, out: &mut Vec<Item>) -> Line {
    match message.get("content") {
        Some(Value::String(text)) => {
            if !text.trim().is_empty() {
                out.push(Item::User {
                    ts: ts.to_string(),
                    text: text.clone(),
                });
            }
            Line::Read
        }
        Some(Value::Array(blocks)) => {
            for b in blocks {
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        let text = b.get("text").and_then(Value::as_str).unwrap_or_default();
                        if !text.trim().is_empty() {
                            out.push(Item::User {
                                ts: ts.to_string(),
                                text: text.to_string(),
                            });
                        }
                    }
                    Some("tool_result") => {
                        let Some(call_id) = b.get("tool_use_id").and_then(Value::as_str) else {
                            continue;
                        };
                        let duration_ms = state.end_call(call_id, ts);
                        out.push(Item::ToolResult {
                            ts: ts.to_string(),
                            call_id: call_id.to_string(),
                            output: b.get("content").map(text_of).unwrap_or_default(),
                            error: b.get("is_error").and_then(Value::as_bool).unwrap_or(false),
                            duration_ms,
                        });
                    }
                    // Images and documents the user attached: not text.
                    _ => {}
                }
            }
            Line::Read
        }
        _ => Line::Malformed,
    }
}

fn assistant(
    state: &mut ReaderState,
    line: &Value,
    message: &Value,
    ts: &str,
    out: &mut Vec<Item>,
) -> Line {
    let Some(blocks) = message.get("content").and_then(Value::as_array) else {
        return Line::Malformed;
    };
    let model = message.get("model").and_then(Value::as_str);
    if let Some(m) = model.filter(|m| *m != "<synthetic>") {
        state.model = Some(m.to_string());
    }
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => {
                let text = b.get("text").and_then(Value::as_str).unwrap_or_default();
                if !text.trim().is_empty() {
                    out.push(Item::Assistant {
                        ts: ts.to_string(),
                        text: text.to_string(),
                    });
                }
            }
            Some("tool_use") => {
                let Some(call_id) = b.get("id").and_then(Value::as_str) else {
                    continue;
                };
                state.open_calls.insert(call_id.to_string(), ts.to_string());
                out.push(Item::ToolCall {
                    ts: ts.to_string(),
                    call_id: call_id.to_string(),
                    tool: b
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("tool")
                        .to_string(),
                    args: b.get("input").cloned().unwrap_or(Value::Null),
                });
            }
            // The model's thinking is not part of the transcript Bosun keeps.
            _ => {}
        }
    }
    if let Some(usage) = message.get("usage").filter(|u| u.is_object()) {
        let n = |v: &Value, key: &str| v.get(key).and_then(Value::as_u64).unwrap_or(0);
        let (write_5m, write_1h) = match usage.get("cache_creation").filter(|c| c.is_object()) {
            Some(c) => (
                n(c, "ephemeral_5m_input_tokens"),
                n(c, "ephemeral_1h_input_tokens"),
            ),
            None => (n(usage, "cache_creation_input_tokens"), 0),
        };
        let tokens = TokenUsage {
            input_tokens: n(usage, "input_tokens"),
            output_tokens: n(usage, "output_tokens"),
            cached_input_tokens: n(usage, "cache_read_input_tokens"),
            cache_write_tokens: write_5m,
            cache_write_1h_tokens: write_1h,
            reasoning_tokens: 0,
        };
        let id = message.get("id").and_then(Value::as_str);
        let request = line.get("requestId").and_then(Value::as_str);
        let key = id.map(|id| format!("claude-code:{id}:{}", request.unwrap_or("")));
        // The later lines of a streamed message repeat its usage, the output tokens counted so
        // far growing: the last line's is the response's.
        let repeated = key.is_some() && key == state.last_response;
        if key.is_some() {
            state.last_response.clone_from(&key);
        }
        if !repeated {
            state.last_usage = None;
        }
        if tokens == TokenUsage::default() || state.last_usage == Some(tokens) {
            return Line::Read;
        }
        let earlier = out.iter_mut().rev().find_map(|i| match i {
            Item::Usage {
                key: k, tokens: t, ..
            } if repeated && *k == key => Some(t),
            _ => None,
        });
        match earlier {
            // Read in this scan: it is not journaled yet.
            Some(t) => *t = tokens,
            None => out.push(Item::Usage {
                ts: ts.to_string(),
                model: model.unwrap_or("unknown").to_string(),
                tokens,
                key,
                replaces: if repeated { state.last_usage } else { None },
            }),
        }
        state.last_usage = Some(tokens);
    }
    Line::Read
}
