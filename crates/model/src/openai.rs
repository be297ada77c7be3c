//! OpenAI Chat Completions, streaming (`POST {base_url}/chat/completions`), as spoken by OpenAI
//! and by Ollama, llama.cpp, vLLM, LM Studio, OpenRouter.

use crate::ModelError;
use crate::client::{Decoder, Wire};
use crate::config::ProviderConfig;
use crate::message::{ChatMessage, ModelRequest, ModelResponse, StreamEvent, ToolCall};
use crate::prices::ServiceTier;
use crate::sse::SseEvent;
use bosun_protocol::TokenUsage;
use serde_json::{Value, json};

pub(crate) struct OpenAiChat;

/// `Authorization: Bearer <key>` when the provider has a key (both OpenAI wire formats).
pub(crate) fn bearer(cfg: &ProviderConfig) -> Vec<(&'static str, String)> {
    match &cfg.api_key {
        Some(key) if !key.expose().is_empty() => {
            vec![("authorization", format!("Bearer {}", key.expose()))]
        }
        _ => Vec::new(),
    }
}

impl Wire for OpenAiChat {
    fn url(&self, base_url: &str) -> String {
        format!("{}/chat/completions", base_url.trim_end_matches('/'))
    }

    fn headers(&self, cfg: &ProviderConfig) -> Vec<(&'static str, String)> {
        bearer(cfg)
    }

    fn body(&self, cfg: &ProviderConfig, req: &ModelRequest) -> Value {
        request_body(cfg, req)
    }

    fn decoder(&self, cfg: &ProviderConfig) -> Box<dyn Decoder> {
        Box::new(ChatDecoder {
            provider: cfg.name.clone(),
            model: cfg.model.clone(),
            ..ChatDecoder::default()
        })
    }
}

/// The JSON body of a streaming chat completion request.
pub(crate) fn request_body(cfg: &ProviderConfig, req: &ModelRequest) -> Value {
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    // A model whose native tool calls are not reliable gets the tools as text, in its chat
    // template's format, and the conversation's calls and results written the same way.
    let text_tools = !cfg.profile.sends_native_tools() && !req.tools.is_empty();
    if text_tools {
        let format = cfg.profile.tool_format;
        let block = crate::text_tools::system_block(format, &req.tools);
        let system = if req.system.is_empty() {
            block
        } else {
            format!("{}\n\n{block}", req.system)
        };
        messages.push(json!({"role": "system", "content": system}));
        for (role, content) in crate::text_tools::conversation(format, &req.messages) {
            messages.push(json!({"role": role, "content": content}));
        }
    } else if !req.system.is_empty() {
        messages.push(json!({"role": "system", "content": req.system}));
    }
    for m in req.messages.iter().filter(|_| !text_tools) {
        messages.push(match m {
            ChatMessage::User { content } => json!({"role": "user", "content": content}),
            ChatMessage::Assistant {
                content,
                tool_calls,
                ..
            } => {
                let mut msg = json!({
                    "role": "assistant",
                    "content": if content.is_empty() && !tool_calls.is_empty() { Value::Null } else { json!(content) },
                });
                if !tool_calls.is_empty() {
                    msg["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| {
                            json!({"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": replayed_arguments(&c.arguments)}})
                        })
                        .collect();
                }
                msg
            }
            ChatMessage::Tool {
                call_id, content, ..
            } => json!({"role": "tool", "tool_call_id": call_id, "content": content}),
        });
    }
    // OpenAI's own newer models refuse `max_tokens`; compatible servers know only `max_tokens`.
    let limit_key = if cfg.base_url.contains("api.openai.com") {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    let mut body = json!({
        "model": cfg.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    body[limit_key] = json!(cfg.max_output_tokens);
    if let Some(t) = cfg.sent_temperature() {
        body["temperature"] = json!(t);
        if let Some(retry) = req.retry_sampling {
            body["temperature"] = json!(retry.temperature);
            body["seed"] = json!(retry.seed);
        }
    }
    // OpenAI's processing tiers; `batch` is a different API and only changes prices.
    if let tier @ (ServiceTier::Priority | ServiceTier::Flex) = cfg.service_tier {
        body["service_tier"] = json!(tier.as_str());
    }
    if !req.tools.is_empty() && !text_tools {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect();
    }
    body
}

/// Arguments replayed to the server: the raw text when it is JSON, else `{}` (several servers
/// parse it and reject the whole request otherwise).
pub(crate) fn replayed_arguments(raw: &str) -> String {
    if serde_json::from_str::<Value>(raw).is_ok() {
        raw.to_string()
    } else {
        "{}".to_string()
    }
}

#[derive(Default)]
struct PartialCall {
    index: u64,
    id: String,
    name: String,
    arguments: String,
    started: bool,
}

#[derive(Default)]
struct ChatDecoder {
    provider: String,
    model: String,
    server_model: Option<String>,
    text: String,
    calls: Vec<PartialCall>,
    usage: Option<TokenUsage>,
    reported_cost_usd: Option<f64>,
    finish_reason: Option<String>,
}

impl ChatDecoder {
    fn malformed(&self, message: String) -> ModelError {
        ModelError::Malformed {
            provider: self.provider.clone(),
            message,
        }
    }

    fn tool_delta(
        &mut self,
        tc: &Value,
        position: usize,
        emit: &(dyn Fn(StreamEvent) + Send + Sync),
    ) {
        let id = tc
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let index = match tc.get("index").and_then(Value::as_u64) {
            Some(i) => i,
            // Servers that omit `index`: a new id starts a new call, otherwise the latest one.
            None => match (id, self.calls.last()) {
                (Some(id), Some(last)) if last.id != id => self.calls.len() as u64,
                (_, Some(last)) => last.index,
                (_, None) => position as u64,
            },
        };
        let slot = match self.calls.iter().position(|c| c.index == index) {
            Some(i) => i,
            None => {
                self.calls.push(PartialCall {
                    index,
                    ..PartialCall::default()
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[slot];
        if let Some(id) = id
            && call.id.is_empty()
        {
            call.id = id.to_string();
        }
        let function = tc.get("function");
        if let Some(name) = function.and_then(|f| f.get("name")).and_then(Value::as_str) {
            if call.name.is_empty() {
                call.name = name.to_string();
            } else if !call.started {
                call.name.push_str(name);
            }
        }
        let delta = match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        if !call.started && !call.name.is_empty() {
            if call.id.is_empty() {
                call.id = format!("call_{}", slot + 1);
            }
            call.started = true;
            emit(StreamEvent::ToolCallStarted {
                id: call.id.clone(),
                name: call.name.clone(),
            });
            if !call.arguments.is_empty() {
                emit(StreamEvent::ToolCallDelta {
                    id: call.id.clone(),
                    delta: call.arguments.clone(),
                });
            }
        }
        if !delta.is_empty() {
            call.arguments.push_str(&delta);
            if call.started {
                emit(StreamEvent::ToolCallDelta {
                    id: call.id.clone(),
                    delta,
                });
            }
        }
    }
}

impl Decoder for ChatDecoder {
    fn event(
        &mut self,
        ev: &SseEvent,
        emit: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<bool, ModelError> {
        let data = ev.data.trim();
        if data == "[DONE]" {
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            self.malformed(format!(
                "a stream event is not JSON ({e}): {}",
                crate::client::snippet(data)
            ))
        })?;
        if let Some(err) = chunk.get("error").filter(|e| !e.is_null()) {
            return Err(stream_error(&self.provider, err));
        }
        if let Some(model) = chunk.get("model").and_then(Value::as_str)
            && !model.is_empty()
        {
            self.server_model = Some(model.to_string());
        }
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            let n = |p: &str| u.pointer(p).and_then(Value::as_u64).unwrap_or(0);
            // Disjoint classes: cached prompt tokens and reasoning tokens are parts of
            // `prompt_tokens` and `completion_tokens`. Servers that report a cache write
            // (`cache_write_tokens`, as OpenRouter passes Anthropic's on) get it counted too.
            let prompt = n("/prompt_tokens");
            let cached = n("/prompt_tokens_details/cached_tokens").min(prompt);
            let written = n("/prompt_tokens_details/cache_write_tokens").min(prompt - cached);
            let completion = n("/completion_tokens");
            let reasoning = n("/completion_tokens_details/reasoning_tokens").min(completion);
            self.usage = Some(TokenUsage {
                input_tokens: prompt - cached - written,
                output_tokens: completion - reasoning,
                cached_input_tokens: cached,
                cache_write_tokens: written,
                cache_write_1h_tokens: 0,
                reasoning_tokens: reasoning,
            });
            // OpenRouter reports what the request cost, in dollars.
            self.reported_cost_usd = u
                .get("cost")
                .and_then(Value::as_f64)
                .filter(|c| c.is_finite() && *c >= 0.0);
        }
        let choices = chunk
            .get("choices")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for choice in choices {
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            let delta = choice.get("delta").or_else(|| choice.get("message"));
            if let Some(text) = delta.and_then(|d| d.get("content")).and_then(Value::as_str)
                && !text.is_empty()
            {
                self.text.push_str(text);
                emit(StreamEvent::TextDelta(text.to_string()));
            }
            if let Some(calls) = delta
                .and_then(|d| d.get("tool_calls"))
                .and_then(Value::as_array)
            {
                for (position, tc) in calls.iter().enumerate() {
                    self.tool_delta(tc, position, emit);
                }
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str)
                && !reason.is_empty()
            {
                self.finish_reason = Some(reason.to_string());
            }
        }
        Ok(false)
    }

    fn complete_without_terminal(&self) -> bool {
        self.finish_reason.is_some()
    }

    fn finish(self: Box<Self>) -> ModelResponse {
        let tool_calls = self
            .calls
            .into_iter()
            .enumerate()
            .filter(|(_, c)| !c.name.is_empty())
            .map(|(i, c)| ToolCall {
                id: if c.id.is_empty() {
                    format!("call_{}", i + 1)
                } else {
                    c.id
                },
                name: c.name,
                arguments: if c.arguments.trim().is_empty() {
                    "{}".to_string()
                } else {
                    c.arguments
                },
            })
            .collect();
        ModelResponse {
            text: self.text,
            tool_calls,
            usage: self.usage.unwrap_or_default(),
            stop_reason: self.finish_reason,
            model: self.server_model.unwrap_or(self.model),
            reported_cost_usd: self.reported_cost_usd,
            reasoning: Vec::new(),
        }
    }
}

/// An `{"error": …}` object sent inside a 200 stream (OpenRouter, vLLM, llama.cpp do this).
fn stream_error(provider: &str, err: &Value) -> ModelError {
    let message = err
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| err.as_str().map(str::to_string))
        .unwrap_or_else(|| err.to_string());
    let status = err
        .get("code")
        .and_then(|c| {
            c.as_u64()
                .or_else(|| c.as_str().and_then(|s| s.parse().ok()))
        })
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| (400..600).contains(c))
        .unwrap_or(500);
    ModelError::from_status(provider, status, message, None)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::config::ApiKind;
    use std::sync::Mutex;

    fn decode(lines: &[&str]) -> (ModelResponse, Vec<StreamEvent>) {
        let cfg = ProviderConfig::new("t", ApiKind::OpenAiChat, "http://x/v1", "m");
        let mut d = OpenAiChat.decoder(&cfg);
        let seen = Mutex::new(Vec::new());
        let emit = |e: StreamEvent| seen.lock().unwrap().push(e);
        for l in lines {
            let ev = SseEvent {
                event: None,
                data: l.to_string(),
            };
            if d.event(&ev, &emit).unwrap() {
                break;
            }
        }
        (d.finish(), seen.into_inner().unwrap())
    }

    #[test]
    fn tool_calls_without_index_and_with_object_arguments_are_tolerated() {
        let (resp, events) = decode(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"read_file","arguments":{"path":"x"}}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"list_dir","arguments":""}}]},"finish_reason":"tool_calls"}]}"#,
        ]);
        assert_eq!(resp.tool_calls.len(), 2);
        assert_eq!(resp.tool_calls[0].arguments, r#"{"path":"x"}"#);
        assert_eq!(resp.tool_calls[1].arguments, "{}");
        assert_eq!(resp.stop_reason.as_deref(), Some("tool_calls"));
        assert!(matches!(&events[0], StreamEvent::ToolCallStarted { id, .. } if id == "a"));
    }

    #[test]
    fn assistant_replay_keeps_valid_arguments_and_replaces_broken_ones() {
        let cfg = ProviderConfig::new("t", ApiKind::OpenAiChat, "http://x/v1", "m");
        let req = ModelRequest {
            system: String::new(),
            messages: vec![ChatMessage::Assistant {
                content: String::new(),
                tool_calls: vec![
                    ToolCall {
                        id: "1".into(),
                        name: "a".into(),
                        arguments: r#"{"k":1}"#.into(),
                    },
                    ToolCall {
                        id: "2".into(),
                        name: "b".into(),
                        arguments: "{oops".into(),
                    },
                ],
                reasoning: Vec::new(),
            }],
            tools: vec![],
            retry_sampling: None,
        };
        let body = request_body(&cfg, &req);
        assert_eq!(body["messages"][0]["content"], Value::Null);
        assert_eq!(
            body["messages"][0]["tool_calls"][0]["function"]["arguments"],
            r#"{"k":1}"#
        );
        assert_eq!(
            body["messages"][0]["tool_calls"][1]["function"]["arguments"],
            "{}"
        );
        assert_eq!(body["max_tokens"], 8192);
        assert!(body.get("tools").is_none());
    }

    #[test]
    fn the_output_limit_is_max_completion_tokens_for_openai_and_max_tokens_elsewhere() {
        let req = ModelRequest::default();
        let mut openai = ProviderConfig::new(
            "openai",
            ApiKind::OpenAiChat,
            "https://api.openai.com/v1",
            "m",
        );
        openai.max_output_tokens = 500;
        let body = request_body(&openai, &req);
        assert_eq!(body["max_completion_tokens"], 500);
        assert!(body.get("max_tokens").is_none());
        // Ollama and llama.cpp read `max_tokens` (llama.cpp as its n_predict).
        let mut local =
            ProviderConfig::new("l", ApiKind::OpenAiChat, "http://127.0.0.1:11434/v1", "m");
        local.max_output_tokens = 500;
        let body = request_body(&local, &req);
        assert_eq!(body["max_tokens"], 500);
        assert!(body.get("max_completion_tokens").is_none());
    }
}
