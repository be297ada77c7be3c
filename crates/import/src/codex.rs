//! Codex's session files: `<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`, one
//! `{timestamp, type, payload}` a line: `session_meta` (id, cwd, cli_version, model_provider),
//! `turn_context` (model), `response_item` (`message`, `reasoning`, `function_call`,
//! `function_call_output`, `custom_tool_call`, `custom_tool_call_output`, …), `event_msg`
//! (`user_message`, `agent_message`, `token_count`, …), `compacted`.
//!
//! The user's and the agent's words are read from `event_msg` (the `response_item` messages
//! repeat them, with the instructions and environment Codex adds); usage from `token_count`, as
//! the growth of `total_token_usage` (Codex repeats a count when nothing changed). Codex's input
//! tokens include the cached ones and its output tokens the reasoning ones: Bosun's classes are
//! disjoint, so they are taken apart.

use crate::session::{Item, Line, ReaderState, text_of};
use bosun_protocol::TokenUsage;
use serde_json::Value;

/// Reads one line into `out`.
pub fn read_line(state: &mut ReaderState, line: &str, out: &mut Vec<Item>) -> Line {
    let Ok(v) = serde_json::from_str::<Value>(line) else {
        return Line::Malformed;
    };
    let (Some(kind), Some(p)) = (
        v.get("type").and_then(Value::as_str),
        v.get("payload").filter(|p| p.is_object()),
    ) else {
        return Line::Malformed;
    };
    let ts = state.time(v.get("timestamp").and_then(Value::as_str));
    let s = |key: &str| p.get(key).and_then(Value::as_str).map(str::to_string);
    match kind {
        "session_meta" => {
            let Some(id) = s("id") else {
                return Line::Malformed;
            };
            state.session_id.get_or_insert(id);
            if let Some(cwd) = s("cwd") {
                state.cwd = Some(cwd);
            }
            if let Some(version) = s("cli_version") {
                state.version = Some(version);
            }
            Line::Read
        }
        "turn_context" => {
            if let Some(model) = s("model") {
                state.model = Some(model);
            }
            if let Some(cwd) = s("cwd") {
                state.cwd = Some(cwd);
            }
            Line::Read
        }
        "response_item" => response_item(state, p, &ts, out),
        "event_msg" => event_msg(state, p, &ts, out),
        "compacted" => Line::Read,
        _ => Line::Unknown,
    }
}

fn response_item(state: &mut ReaderState, p: &Value, ts: &str, out: &mut Vec<Item>) -> Line {
    let s = |key: &str| p.get(key).and_then(Value::as_str);
    match s("type") {
        // Read from the `event_msg` that accompanies them.
        Some("message" | "reasoning") => Line::Read,
        Some(kind @ ("function_call" | "custom_tool_call" | "local_shell_call")) => {
            let Some(call_id) = s("call_id").or_else(|| s("id")) else {
                return Line::Malformed;
            };
            let args = match kind {
                // Arguments as the model wrote them: a JSON object in a string.
                "function_call" => {
                    let raw = s("arguments").unwrap_or("{}");
                    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
                }
                "custom_tool_call" => Value::String(s("input").unwrap_or_default().to_string()),
                _ => p.get("action").cloned().unwrap_or(Value::Null),
            };
            state.open_calls.insert(call_id.to_string(), ts.to_string());
            out.push(Item::ToolCall {
                ts: ts.to_string(),
                call_id: call_id.to_string(),
                tool: s("name").unwrap_or("shell").to_string(),
                args,
            });
            Line::Read
        }
        Some("function_call_output" | "custom_tool_call_output") => {
            let Some(call_id) = s("call_id") else {
                return Line::Malformed;
            };
            let raw = p.get("output").map(text_of).unwrap_or_default();
            // A shell call's output is itself JSON: `{output, metadata: {exit_code, …}}`.
            let (output, exit_code, secs) = match serde_json::from_str::<Value>(&raw) {
                Ok(o) if o.get("output").is_some() => (
                    o.get("output").map(text_of).unwrap_or_default(),
                    o.pointer("/metadata/exit_code").and_then(Value::as_i64),
                    o.pointer("/metadata/duration_seconds")
                        .and_then(Value::as_f64),
                ),
                _ => (raw, None, None),
            };
            let begun = state.end_call(call_id, ts);
            let failed = p
                .get("success")
                .and_then(Value::as_bool)
                .is_some_and(|ok| !ok);
            out.push(Item::ToolResult {
                ts: ts.to_string(),
                call_id: call_id.to_string(),
                output,
                error: failed || exit_code.is_some_and(|c| c != 0),
                duration_ms: secs.map(|s| (s * 1000.0).round() as u64).or(begun),
            });
            Line::Read
        }
        Some(_) => Line::Unknown,
        None => Line::Malformed,
    }
}

fn event_msg(state: &mut ReaderState, p: &Value, ts: &str, out: &mut Vec<Item>) -> Line {
    let s = |key: &str| p.get(key).and_then(Value::as_str);
    match s("type") {
        Some("user_message") => {
            let Some(text) = s("message") else {
                return Line::Malformed;
            };
            out.push(Item::User {
                ts: ts.to_string(),
                text: text.to_string(),
            });
            Line::Read
        }
        Some("agent_message") => {
            let Some(text) = s("message") else {
                return Line::Malformed;
            };
            out.push(Item::Assistant {
                ts: ts.to_string(),
                text: text.to_string(),
            });
            Line::Read
        }
        Some("token_count") => {
            // `info` is null before the first response.
            let Some(info) = p.get("info").filter(|i| i.is_object()) else {
                return Line::Read;
            };
            let n = |u: &Value, key: &str| u.get(key).and_then(Value::as_u64).unwrap_or(0);
            let four = |u: &Value| {
                [
                    n(u, "input_tokens"),
                    n(u, "cached_input_tokens"),
                    n(u, "output_tokens"),
                    n(u, "reasoning_output_tokens"),
                ]
            };
            let mut key = None;
            let this = match (info.get("total_token_usage"), info.get("last_token_usage")) {
                (Some(total), _) if total.is_object() => {
                    let total = four(total);
                    // The session's running totals name the response that grew them: the same
                    // session read from another file does not count it twice.
                    key = state
                        .session_id
                        .as_ref()
                        .map(|s| format!("codex:{s}:{}", total.map(|n| n.to_string()).join(":")));
                    let before = state.totals.unwrap_or_default();
                    state.totals = Some(total);
                    let mut d = [0; 4];
                    for i in 0..4 {
                        d[i] = total[i].saturating_sub(before[i]);
                    }
                    d
                }
                (_, Some(last)) if last.is_object() => four(last),
                _ => return Line::Malformed,
            };
            let [input, cached, output, reasoning] = this;
            if this == [0; 4] {
                return Line::Read;
            }
            let cached = cached.min(input);
            let reasoning = reasoning.min(output);
            out.push(Item::Usage {
                ts: ts.to_string(),
                model: state.model.clone().unwrap_or_else(|| "unknown".into()),
                tokens: TokenUsage {
                    input_tokens: input - cached,
                    output_tokens: output - reasoning,
                    cached_input_tokens: cached,
                    cache_write_tokens: 0,
                    cache_write_1h_tokens: 0,
                    reasoning_tokens: reasoning,
                },
                key,
                replaces: None,
            });
            Line::Read
        }
        // Reasoning summaries, turn boundaries, approvals, command streams: what the items
        // above already say, or nothing of the transcript.
        Some(_) => Line::Read,
        None => Line::Malformed,
    }
}
