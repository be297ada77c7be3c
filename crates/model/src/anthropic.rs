//! Anthropic Messages, streaming (`POST {base_url}/v1/messages`).

use crate::ModelError;
use crate::client::{Decoder, Wire, snippet};
use crate::config::ProviderConfig;
use crate::message::{ChatMessage, ModelRequest, ModelResponse, StreamEvent, ToolCall};
use crate::sse::SseEvent;
use bosun_protocol::TokenUsage;
use serde_json::{Value, json};

pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";

pub(crate) struct AnthropicMessages;

impl Wire for AnthropicMessages {
    fn url(&self, base_url: &str) -> String {
        let base = base_url.trim_end_matches('/');
        if base.ends_with("/v1") {
            format!("{base}/messages")
        } else {
            format!("{base}/v1/messages")
        }
    }

    fn headers(&self, cfg: &ProviderConfig) -> Vec<(&'static str, String)> {
        let mut h = vec![("anthropic-version", ANTHROPIC_VERSION.to_string())];
        if let Some(key) = cfg.api_key.as_ref().filter(|k| !k.expose().is_empty()) {
            h.push(("x-api-key", key.expose().to_string()));
        }
        h
    }

    fn body(&self, cfg: &ProviderConfig, req: &ModelRequest) -> Value {
        request_body(cfg, req)
    }

    fn decoder(&self, cfg: &ProviderConfig) -> Box<dyn Decoder> {
        Box::new(MessagesDecoder {
            provider: cfg.name.clone(),
            model: cfg.model.clone(),
            ..MessagesDecoder::default()
        })
    }
}

/// The JSON body of a streaming Messages request. Consecutive user-side messages (tool results,
/// then a user's note) are merged into one user message, as the API requires alternation.
pub(crate) fn request_body(cfg: &ProviderConfig, req: &ModelRequest) -> Value {
    let mut messages: Vec<Value> = Vec::new();
    let mut push = |role: &str, blocks: Vec<Value>| {
        if blocks.is_empty() {
            return;
        }
        if let Some(last) = messages.last_mut()
            && last["role"] == role
            && let Some(content) = last["content"].as_array_mut()
        {
            content.extend(blocks);
            return;
        }
        messages.push(json!({"role": role, "content": blocks}));
    };
    for m in &req.messages {
        match m {
            ChatMessage::User { content } => {
                push("user", vec![json!({"type": "text", "text": content})]);
            }
            ChatMessage::Assistant {
                content,
                tool_calls,
                ..
            } => {
                let mut blocks = Vec::new();
                if !content.trim().is_empty() {
                    blocks.push(json!({"type": "text", "text": content}));
                }
                for c in tool_calls {
                    let input = serde_json::from_str::<Value>(&c.arguments)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({}));
                    blocks.push(
                        json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}),
                    );
                }
                push("assistant", blocks);
            }
            ChatMessage::Tool {
                call_id,
                content,
                is_error,
            } => {
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content});
                if *is_error {
                    block["is_error"] = json!(true);
                }
                push("user", vec![block]);
            }
        }
    }
    let mut body = json!({
        "model": cfg.model,
        "max_tokens": cfg.max_output_tokens,
        "messages": messages,
        "stream": true,
    });
    if let Some(t) = cfg.sent_temperature() {
        body["temperature"] = json!(t);
        if let Some(retry) = req.retry_sampling {
            body["temperature"] = json!(retry.temperature);
        }
    }
    if !req.system.is_empty() {
        body["system"] = json!(req.system);
    }
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
    }
    body
}

enum Block {
    Text,
    Tool {
        id: String,
        name: String,
        json: String,
    },
    Other,
}

#[derive(Default)]
struct MessagesDecoder {
    provider: String,
    model: String,
    server_model: Option<String>,
    text: String,
    blocks: Vec<(u64, Block)>,
    input: u64,
    cache_read: u64,
    cache_write: u64,
    /// Of `cache_write`, the tokens written for 1 hour (`cache_creation.ephemeral_1h_input_tokens`).
    cache_write_1h: u64,
    output: u64,
    stop_reason: Option<String>,
}

impl MessagesDecoder {
    fn malformed(&self, message: String) -> ModelError {
        ModelError::Malformed {
            provider: self.provider.clone(),
            message,
        }
    }

    fn read_usage(&mut self, u: &Value) {
        let n = |k: &str| u.get(k).and_then(Value::as_u64);
        if let Some(v) = n("input_tokens") {
            self.input = v;
        }
        if let Some(v) = n("cache_read_input_tokens") {
            self.cache_read = v;
        }
        if let Some(v) = n("cache_creation_input_tokens") {
            self.cache_write = v;
        }
        // `cache_creation` splits the writes by lifetime; without it every write is 5-minute.
        if let Some(split) = u.get("cache_creation").filter(|c| c.is_object()) {
            let part = |k: &str| split.get(k).and_then(Value::as_u64).unwrap_or(0);
            let (five, hour) = (
                part("ephemeral_5m_input_tokens"),
                part("ephemeral_1h_input_tokens"),
            );
            self.cache_write_1h = hour;
            self.cache_write = self.cache_write.max(five + hour);
        }
        if let Some(v) = n("output_tokens") {
            self.output = v;
        }
    }

    fn block(&mut self, index: u64) -> Option<&mut Block> {
        self.blocks
            .iter_mut()
            .find(|(i, _)| *i == index)
            .map(|(_, b)| b)
    }
}

impl Decoder for MessagesDecoder {
    fn event(
        &mut self,
        ev: &SseEvent,
        emit: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<bool, ModelError> {
        let data = ev.data.trim();
        if data.is_empty() {
            return Ok(false);
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            self.malformed(format!(
                "a stream event is not JSON ({e}): {}",
                snippet(data)
            ))
        })?;
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .or(ev.event.as_deref())
            .unwrap_or("")
            .to_string();
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind.as_str() {
            "message_start" => {
                let msg = v.get("message").unwrap_or(&Value::Null);
                if let Some(m) = msg.get("model").and_then(Value::as_str) {
                    self.server_model = Some(m.to_string());
                }
                if let Some(u) = msg.get("usage") {
                    self.read_usage(u);
                }
            }
            "content_block_start" => {
                let cb = v.get("content_block").unwrap_or(&Value::Null);
                let block = match cb.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if let Some(t) = cb
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            self.text.push_str(t);
                            emit(StreamEvent::TextDelta(t.to_string()));
                        }
                        Block::Text
                    }
                    Some("tool_use") => {
                        let id = cb.get("id").and_then(Value::as_str).unwrap_or_default();
                        let id = if id.is_empty() {
                            format!("toolu_{}", index + 1)
                        } else {
                            id.to_string()
                        };
                        let name = cb
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string();
                        emit(StreamEvent::ToolCallStarted {
                            id: id.clone(),
                            name: name.clone(),
                        });
                        Block::Tool {
                            id,
                            name,
                            json: String::new(),
                        }
                    }
                    _ => Block::Other,
                };
                self.blocks.push((index, block));
            }
            "content_block_delta" => {
                let delta = v.get("delta").unwrap_or(&Value::Null);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        let t = delta
                            .get("text")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        if !t.is_empty() {
                            self.text.push_str(t);
                            emit(StreamEvent::TextDelta(t.to_string()));
                        }
                    }
                    Some("input_json_delta") => {
                        let part = delta
                            .get("partial_json")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        // Deltas of other blocks (server tools) are not Bosun's to run.
                        if let Some(Block::Tool { id, json, .. }) = self.block(index)
                            && !part.is_empty()
                        {
                            json.push_str(part);
                            emit(StreamEvent::ToolCallDelta {
                                id: id.clone(),
                                delta: part.to_string(),
                            });
                        }
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(r) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(r.to_string());
                }
                if let Some(u) = v.get("usage") {
                    self.read_usage(u);
                }
            }
            "message_stop" => return Ok(true),
            "error" => {
                let err = v.get("error").unwrap_or(&Value::Null);
                return Err(stream_error(&self.provider, err));
            }
            // ping, content_block_stop, and event types added later
            _ => {}
        }
        Ok(false)
    }

    fn complete_without_terminal(&self) -> bool {
        false
    }

    fn finish(self: Box<Self>) -> ModelResponse {
        let tool_calls = self
            .blocks
            .into_iter()
            .filter_map(|(_, b)| match b {
                Block::Tool { id, name, json } => Some(ToolCall {
                    id,
                    name,
                    arguments: if json.trim().is_empty() {
                        "{}".to_string()
                    } else {
                        json
                    },
                }),
                _ => None,
            })
            .collect();
        ModelResponse {
            text: self.text,
            tool_calls,
            usage: TokenUsage {
                input_tokens: self.input,
                output_tokens: self.output,
                cached_input_tokens: self.cache_read,
                cache_write_tokens: self.cache_write.saturating_sub(self.cache_write_1h),
                cache_write_1h_tokens: self.cache_write_1h,
                // Thinking is billed as output and not reported apart.
                reasoning_tokens: 0,
            },
            stop_reason: self.stop_reason,
            model: self.server_model.unwrap_or(self.model),
            reported_cost_usd: None,
            reasoning: Vec::new(),
        }
    }
}

/// An `error` event: its type mapped to the status the API uses for it.
fn stream_error(provider: &str, err: &Value) -> ModelError {
    let kind = err
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("api_error");
    let message = err
        .get("message")
        .and_then(Value::as_str)
        .map(|m| format!("{kind}: {m}"))
        .unwrap_or_else(|| kind.to_string());
    let status = match kind {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "overloaded_error" => 529,
        _ => 500,
    };
    ModelError::from_status(provider, status, message, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ApiKind;

    #[test]
    fn url_never_doubles_v1() {
        assert_eq!(
            AnthropicMessages.url("https://api.anthropic.com"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            AnthropicMessages.url("https://proxy.example/v1/"),
            "https://proxy.example/v1/messages"
        );
    }

    #[test]
    fn tool_results_merge_into_one_user_message_with_a_following_note() {
        let cfg = ProviderConfig::new("a", ApiKind::Anthropic, "http://x", "m");
        let req = ModelRequest {
            system: "sys".into(),
            messages: vec![
                ChatMessage::User {
                    content: "hi".into(),
                },
                ChatMessage::Assistant {
                    content: String::new(),
                    tool_calls: vec![
                        ToolCall {
                            id: "t1".into(),
                            name: "a".into(),
                            arguments: "{\"p\":1}".into(),
                        },
                        ToolCall {
                            id: "t2".into(),
                            name: "b".into(),
                            arguments: "not json".into(),
                        },
                    ],
                    reasoning: Vec::new(),
                },
                ChatMessage::Tool {
                    call_id: "t1".into(),
                    content: "ok".into(),
                    is_error: false,
                },
                ChatMessage::Tool {
                    call_id: "t2".into(),
                    content: "bad".into(),
                    is_error: true,
                },
                ChatMessage::User {
                    content: "go on".into(),
                },
            ],
            tools: vec![],
            retry_sampling: None,
        };
        let body = request_body(&cfg, &req);
        let msgs = body["messages"].as_array().cloned().unwrap_or_default();
        assert_eq!(msgs.len(), 3);
        assert_eq!(msgs[1]["content"][0]["input"], json!({"p": 1}));
        assert_eq!(msgs[1]["content"][1]["input"], json!({}));
        assert_eq!(
            msgs[2]["content"],
            json!([
                {"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "bad", "is_error": true},
                {"type": "text", "text": "go on"}
            ])
        );
        assert_eq!(body["system"], "sys");
    }
}
