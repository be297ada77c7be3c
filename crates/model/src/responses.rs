//! OpenAI Responses, streaming (`POST {base_url}/responses`).
//!
//! Nothing is stored on the server (`store: false`): every request carries the whole
//! conversation as input items, and a reasoning model's `reasoning` items come back with their
//! `encrypted_content` (`include: ["reasoning.encrypted_content"]`) so they can be sent again on
//! the next turn, carried opaquely on the assistant message.

use crate::ModelError;
use crate::client::{Decoder, Wire, snippet};
use crate::config::ProviderConfig;
use crate::message::{ChatMessage, ModelRequest, ModelResponse, StreamEvent, ToolCall};
use crate::prices::ServiceTier;
use crate::sse::SseEvent;
use bosun_protocol::TokenUsage;
use serde_json::{Value, json};

pub(crate) struct OpenAiResponses;

impl Wire for OpenAiResponses {
    fn url(&self, base_url: &str) -> String {
        format!("{}/responses", base_url.trim_end_matches('/'))
    }

    fn headers(&self, cfg: &ProviderConfig) -> Vec<(&'static str, String)> {
        crate::openai::bearer(cfg)
    }

    fn body(&self, cfg: &ProviderConfig, req: &ModelRequest) -> Value {
        request_body(cfg, req)
    }

    fn decoder(&self, cfg: &ProviderConfig) -> Box<dyn Decoder> {
        Box::new(ResponsesDecoder {
            provider: cfg.name.clone(),
            model: cfg.model.clone(),
            origin: origin(cfg),
            ..ResponsesDecoder::default()
        })
    }
}

/// Bosun's mark on a reasoning item: which provider, server and model wrote it.
const ORIGIN: &str = "bosun_origin";

/// Who can read a reasoning item's encrypted content: the account (provider), server and model
/// that wrote it. Another one (a fallback account, another model) rejects it.
fn origin(cfg: &ProviderConfig) -> String {
    format!("{}\u{1f}{}\u{1f}{}", cfg.name, cfg.base_url, cfg.model)
}

/// A reasoning item as it is sent back: without its server id (with `store: false` the server
/// keeps no item to refer to, and rejects an id it does not know), status or Bosun's mark.
/// None for an item another provider or model wrote (after a fallback or a model change): its
/// encrypted content would fail the whole request there. An item without a mark (journaled
/// before marks) is sent.
fn replayed_reasoning(item: &Value, origin: &str) -> Option<Value> {
    let mut item = item.clone();
    let obj = item.as_object_mut()?;
    if obj.get("type").and_then(Value::as_str) != Some("reasoning") {
        return None;
    }
    if let Some(from) = obj.remove(ORIGIN)
        && from.as_str() != Some(origin)
    {
        return None;
    }
    obj.remove("id");
    obj.remove("status");
    Some(item)
}

/// The JSON body of a streaming Responses request.
pub(crate) fn request_body(cfg: &ProviderConfig, req: &ModelRequest) -> Value {
    let mut input = Vec::with_capacity(req.messages.len());
    let origin = origin(cfg);
    for m in &req.messages {
        match m {
            ChatMessage::User { content } => {
                input.push(json!({"type": "message", "role": "user", "content": content}));
            }
            ChatMessage::Assistant {
                content,
                tool_calls,
                reasoning,
            } => {
                input.extend(
                    reasoning
                        .iter()
                        .filter_map(|r| replayed_reasoning(r, &origin)),
                );
                if !content.is_empty() {
                    input.push(json!({"type": "message", "role": "assistant",
                                      "content": [{"type": "output_text", "text": content}]}));
                }
                for c in tool_calls {
                    input.push(
                        json!({"type": "function_call", "call_id": c.id, "name": c.name,
                                      "arguments": crate::openai::replayed_arguments(&c.arguments)}),
                    );
                }
            }
            ChatMessage::Tool {
                call_id, content, ..
            } => {
                input.push(json!({"type": "function_call_output", "call_id": call_id,
                                  "output": content}));
            }
        }
    }
    let mut body = json!({
        "model": cfg.model,
        "input": input,
        "stream": true,
        "store": false,
        "max_output_tokens": cfg.max_output_tokens,
    });
    if cfg.wants_encrypted_reasoning() {
        body["include"] = json!(["reasoning.encrypted_content"]);
    }
    if !req.system.is_empty() {
        body["instructions"] = json!(req.system);
    }
    if let Some(t) = cfg.sent_temperature() {
        body["temperature"] = json!(t);
        if let Some(retry) = req.retry_sampling {
            body["temperature"] = json!(retry.temperature);
        }
    }
    if let tier @ (ServiceTier::Priority | ServiceTier::Flex) = cfg.service_tier {
        body["service_tier"] = json!(tier.as_str());
    }
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "name": t.name, "description": t.description,
                       "parameters": t.parameters})
            })
            .collect();
    }
    body
}

/// A function call being streamed: output item `item_id` at `output_index`.
#[derive(Default)]
struct PartialCall {
    item_id: String,
    output_index: Option<u64>,
    call_id: String,
    name: String,
    arguments: String,
}

#[derive(Default)]
struct ResponsesDecoder {
    provider: String,
    model: String,
    /// Marked on each reasoning item (see [`origin`]).
    origin: String,
    server_model: Option<String>,
    text: String,
    /// Output items of type `message` whose text arrived as deltas.
    streamed_messages: Vec<String>,
    calls: Vec<PartialCall>,
    reasoning: Vec<Value>,
    usage: Option<TokenUsage>,
    stop_reason: Option<String>,
    /// A whole response object was read (`response.completed`, or a JSON answer).
    complete: bool,
}

impl ResponsesDecoder {
    fn malformed(&self, message: String) -> ModelError {
        ModelError::Malformed {
            provider: self.provider.clone(),
            message,
        }
    }

    /// The call an event is about: by `item_id`, else by `output_index`.
    fn call_slot(&self, v: &Value) -> Option<usize> {
        let item_id = v.get("item_id").and_then(Value::as_str);
        let index = v.get("output_index").and_then(Value::as_u64);
        self.calls
            .iter()
            .position(|c| item_id.is_some_and(|id| !id.is_empty() && c.item_id == id))
            .or_else(|| {
                self.calls
                    .iter()
                    .position(|c| index.is_some() && c.output_index == index)
            })
    }

    /// An output item began (`response.output_item.added`).
    fn item_added(
        &mut self,
        item: &Value,
        output_index: Option<u64>,
        emit: &(dyn Fn(StreamEvent) + Send + Sync),
    ) {
        if item.get("type").and_then(Value::as_str) != Some("function_call") {
            return;
        }
        let s = |k: &str| {
            item.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let mut call = PartialCall {
            item_id: s("id"),
            output_index,
            call_id: s("call_id"),
            name: s("name"),
            arguments: s("arguments"),
        };
        if call.call_id.is_empty() {
            call.call_id = if call.item_id.is_empty() {
                format!("call_{}", self.calls.len() + 1)
            } else {
                call.item_id.clone()
            };
        }
        emit(StreamEvent::ToolCallStarted {
            id: call.call_id.clone(),
            name: call.name.clone(),
        });
        if !call.arguments.is_empty() {
            emit(StreamEvent::ToolCallDelta {
                id: call.call_id.clone(),
                delta: call.arguments.clone(),
            });
        }
        self.calls.push(call);
    }

    /// An output item is complete (`response.output_item.done`, or an item of a whole
    /// response): its final form wins over what was streamed.
    fn item_done(
        &mut self,
        item: &Value,
        output_index: Option<u64>,
        emit: &(dyn Fn(StreamEvent) + Send + Sync),
    ) {
        match item.get("type").and_then(Value::as_str) {
            Some("reasoning") => {
                let mut item = item.clone();
                if let Some(obj) = item.as_object_mut() {
                    obj.insert(ORIGIN.into(), Value::String(self.origin.clone()));
                }
                self.reasoning.push(item);
            }
            Some("function_call") => {
                let probe = json!({"item_id": item.get("id"), "output_index": output_index});
                let slot = match self.call_slot(&probe) {
                    Some(i) => i,
                    None => {
                        self.item_added(item, output_index, emit);
                        self.calls.len() - 1
                    }
                };
                let call = &mut self.calls[slot];
                if let Some(args) = item.get("arguments").and_then(Value::as_str) {
                    call.arguments = args.to_string();
                }
                if let Some(name) = item.get("name").and_then(Value::as_str)
                    && !name.is_empty()
                {
                    call.name = name.to_string();
                }
            }
            Some("message") => {
                let id = item.get("id").and_then(Value::as_str).unwrap_or_default();
                if self.streamed_messages.iter().any(|m| m == id) {
                    return;
                }
                let text: String = item
                    .get("content")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default()
                    .iter()
                    .filter(|p| p.get("type").and_then(Value::as_str) == Some("output_text"))
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect();
                if !text.is_empty() {
                    self.text.push_str(&text);
                    emit(StreamEvent::TextDelta(text));
                }
            }
            _ => {}
        }
    }

    /// A response object (`response.completed`'s, `response.incomplete`'s or a JSON answer).
    fn read_response(&mut self, r: &Value) {
        if let Some(model) = r.get("model").and_then(Value::as_str)
            && !model.is_empty()
        {
            self.server_model = Some(model.to_string());
        }
        if let Some(u) = r.get("usage").filter(|u| u.is_object()) {
            let n = |p: &str| u.pointer(p).and_then(Value::as_u64).unwrap_or(0);
            // Disjoint classes: cached input is part of `input_tokens`, reasoning part of
            // `output_tokens`.
            let input = n("/input_tokens");
            let cached = n("/input_tokens_details/cached_tokens").min(input);
            let output = n("/output_tokens");
            let reasoning = n("/output_tokens_details/reasoning_tokens").min(output);
            self.usage = Some(TokenUsage {
                input_tokens: input - cached,
                output_tokens: output - reasoning,
                cached_input_tokens: cached,
                cache_write_tokens: 0,
                cache_write_1h_tokens: 0,
                reasoning_tokens: reasoning,
            });
        }
        if r.get("status").and_then(Value::as_str) == Some("incomplete") {
            let reason = r
                .pointer("/incomplete_details/reason")
                .and_then(Value::as_str)
                .unwrap_or("incomplete");
            // The output limit, named as the other formats name it.
            self.stop_reason = Some(if reason == "max_output_tokens" {
                "length".to_string()
            } else {
                reason.to_string()
            });
        }
    }

    /// Reads the items of a whole response that were not streamed (a JSON answer).
    fn read_output(&mut self, r: &Value, emit: &(dyn Fn(StreamEvent) + Send + Sync)) {
        let items = r
            .get("output")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for (i, item) in items.iter().enumerate() {
            self.item_done(item, Some(i as u64), emit);
        }
    }
}

impl Decoder for ResponsesDecoder {
    fn event(
        &mut self,
        ev: &SseEvent,
        emit: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<bool, ModelError> {
        let data = ev.data.trim();
        if data.is_empty() || data == "[DONE]" {
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
            .unwrap_or_default()
            .to_string();
        let output_index = v.get("output_index").and_then(Value::as_u64);
        match kind.as_str() {
            "response.created" | "response.in_progress" => {
                if let Some(model) = v.pointer("/response/model").and_then(Value::as_str)
                    && !model.is_empty()
                {
                    self.server_model = Some(model.to_string());
                }
            }
            "response.output_item.added" => {
                if let Some(item) = v.get("item") {
                    self.item_added(item, output_index, emit);
                }
            }
            "response.output_text.delta" => {
                if let Some(delta) = v.get("delta").and_then(Value::as_str)
                    && !delta.is_empty()
                {
                    if let Some(id) = v.get("item_id").and_then(Value::as_str)
                        && !self.streamed_messages.iter().any(|m| m == id)
                    {
                        self.streamed_messages.push(id.to_string());
                    }
                    self.text.push_str(delta);
                    emit(StreamEvent::TextDelta(delta.to_string()));
                }
            }
            "response.function_call_arguments.delta" => {
                let delta = v.get("delta").and_then(Value::as_str).unwrap_or_default();
                let Some(slot) = self.call_slot(&v) else {
                    return Err(self.malformed(format!(
                        "arguments for a function call that never began: {}",
                        snippet(data)
                    )));
                };
                if !delta.is_empty() {
                    let call = &mut self.calls[slot];
                    call.arguments.push_str(delta);
                    emit(StreamEvent::ToolCallDelta {
                        id: call.call_id.clone(),
                        delta: delta.to_string(),
                    });
                }
            }
            "response.function_call_arguments.done" => {
                if let (Some(slot), Some(args)) = (
                    self.call_slot(&v),
                    v.get("arguments").and_then(Value::as_str),
                ) {
                    self.calls[slot].arguments = args.to_string();
                }
            }
            "response.output_item.done" => {
                if let Some(item) = v.get("item") {
                    self.item_done(item, output_index, emit);
                }
            }
            "response.completed" | "response.incomplete" => {
                if let Some(r) = v.get("response") {
                    self.read_response(r);
                }
                self.complete = true;
                return Ok(true);
            }
            "response.failed" => {
                let err = v.pointer("/response/error").unwrap_or(&Value::Null);
                return Err(stream_error(&self.provider, err));
            }
            "error" => {
                let err = v.get("error").unwrap_or(&v);
                return Err(stream_error(&self.provider, err));
            }
            // A whole response object: a server that ignored `stream: true`.
            "" if v.get("object").and_then(Value::as_str) == Some("response") => {
                if v.get("status").and_then(Value::as_str) == Some("failed") {
                    let err = v.get("error").unwrap_or(&Value::Null);
                    return Err(stream_error(&self.provider, err));
                }
                self.read_output(&v, emit);
                self.read_response(&v);
                self.complete = true;
                return Ok(true);
            }
            // reasoning summaries, content parts, refusals and event types added later
            _ => {}
        }
        Ok(false)
    }

    fn complete_without_terminal(&self) -> bool {
        self.complete
    }

    fn finish(self: Box<Self>) -> ModelResponse {
        let tool_calls: Vec<ToolCall> = self
            .calls
            .into_iter()
            .filter(|c| !c.name.is_empty())
            .map(|c| ToolCall {
                id: c.call_id,
                name: c.name,
                arguments: if c.arguments.trim().is_empty() {
                    "{}".to_string()
                } else {
                    c.arguments
                },
            })
            .collect();
        let stop_reason = self.stop_reason.or_else(|| {
            Some(if tool_calls.is_empty() {
                "stop".to_string()
            } else {
                "tool_calls".to_string()
            })
        });
        ModelResponse {
            text: self.text,
            tool_calls,
            usage: self.usage.unwrap_or_default(),
            stop_reason,
            model: self.server_model.unwrap_or(self.model),
            reported_cost_usd: None,
            reasoning: self.reasoning,
        }
    }
}

/// A `response.failed` response's `error`, or an `error` event: `{code, message}`, its code
/// mapped to the status the API uses for it (a rate limit is retried, a server error too).
fn stream_error(provider: &str, err: &Value) -> ModelError {
    let code = err
        .get("code")
        .and_then(Value::as_str)
        .or_else(|| err.get("type").and_then(Value::as_str))
        .unwrap_or_default();
    let mut message = err
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| {
            if err.is_null() {
                "the response failed without saying why".to_string()
            } else {
                snippet(&err.to_string())
            }
        });
    if !code.is_empty() && !message.contains(code) {
        message.push_str(&format!(" ({code})"));
    }
    let status = match code {
        "rate_limit_exceeded" => 429,
        "server_error" | "internal_error" => 500,
        "server_is_overloaded" | "slow_down" | "overloaded" => 503,
        "" => 500,
        _ => 400,
    };
    ModelError::from_status(provider, status, message, None)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::config::ApiKind;
    use std::sync::Mutex;

    fn decode(lines: &[&str]) -> Result<(ModelResponse, Vec<StreamEvent>), ModelError> {
        let cfg = ProviderConfig::new("t", ApiKind::OpenAiResponses, "http://x/v1", "m");
        let mut d = OpenAiResponses.decoder(&cfg);
        let seen = Mutex::new(Vec::new());
        let emit = |e: StreamEvent| seen.lock().unwrap().push(e);
        for l in lines {
            let ev = SseEvent {
                event: None,
                data: l.to_string(),
            };
            if d.event(&ev, &emit)? {
                break;
            }
        }
        Ok((d.finish(), seen.into_inner().unwrap()))
    }

    #[test]
    fn a_whole_json_response_is_read_like_a_stream() {
        let (resp, events) = decode(&[r#"{"object":"response","model":"gpt-5","status":"completed",
            "output":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"xyz"},
                      {"type":"message","id":"m1","role":"assistant","content":[{"type":"output_text","text":"hi"}]},
                      {"type":"function_call","id":"fc_1","call_id":"call_1","name":"read_file","arguments":"{\"path\":\"a\"}"}],
            "usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":7,"output_tokens_details":{"reasoning_tokens":5}}}"#])
        .unwrap();
        assert_eq!(resp.text, "hi");
        assert_eq!(resp.tool_calls.len(), 1);
        assert_eq!(resp.tool_calls[0].id, "call_1");
        assert_eq!(resp.tool_calls[0].arguments, r#"{"path":"a"}"#);
        assert_eq!(resp.reasoning.len(), 1);
        assert_eq!(resp.usage.input_tokens, 6);
        assert_eq!(resp.usage.cached_input_tokens, 4);
        assert_eq!(resp.usage.output_tokens, 2);
        assert_eq!(resp.usage.reasoning_tokens, 5);
        assert_eq!(resp.model, "gpt-5");
        assert!(matches!(&events[0], StreamEvent::TextDelta(t) if t == "hi"));
    }

    #[test]
    fn failures_in_the_stream_are_classified_by_their_code() {
        let err = decode(&[
            r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"rate_limit_exceeded","message":"slow down"}}}"#,
        ])
        .unwrap_err();
        assert!(matches!(err, ModelError::RateLimited { .. }), "{err:?}");
        let err = decode(&[r#"{"type":"error","code":"context_length_exceeded","message":"too long","param":null}"#])
            .unwrap_err();
        assert_eq!(err.status(), Some(400));
        assert!(err.to_string().contains("context_length_exceeded"), "{err}");
        assert!(!err.is_retryable());
        let err = decode(&[r#"{"type":"response.failed","response":{"error":{"code":"server_error","message":"oops"}}}"#])
            .unwrap_err();
        assert!(err.is_retryable(), "{err:?}");
        let err = decode(&["{not json"]).unwrap_err();
        assert!(matches!(err, ModelError::Malformed { .. }));
        let err = decode(&[
            r#"{"type":"response.function_call_arguments.delta","item_id":"nope","output_index":3,"delta":"{"}"#,
        ])
        .unwrap_err();
        assert!(matches!(err, ModelError::Malformed { .. }), "{err:?}");
    }

    #[test]
    fn the_output_limit_reads_as_length() {
        let (resp, _) = decode(&[
            r#"{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}}"#,
        ])
        .unwrap();
        assert_eq!(resp.stop_reason.as_deref(), Some("length"));
    }

    #[test]
    fn the_request_sends_instructions_items_and_reasoning_without_ids() {
        let cfg = ProviderConfig::new(
            "openai",
            ApiKind::OpenAiResponses,
            "https://api.openai.com/v1",
            "gpt-5",
        );
        let req = ModelRequest {
            system: "be brief".into(),
            messages: vec![
                ChatMessage::User {
                    content: "go".into(),
                },
                ChatMessage::Assistant {
                    content: "Reading.".into(),
                    tool_calls: vec![ToolCall {
                        id: "call_1".into(),
                        name: "read_file".into(),
                        arguments: "{oops".into(),
                    }],
                    reasoning: vec![
                        json!({"type":"reasoning","id":"rs_1","status":null,"summary":[],"encrypted_content":"enc"}),
                    ],
                },
                ChatMessage::Tool {
                    call_id: "call_1".into(),
                    content: "text".into(),
                    is_error: false,
                },
            ],
            tools: vec![bosun_protocol::ToolSpec {
                name: "read_file".into(),
                description: "Read".into(),
                parameters: json!({"type":"object"}),
            }],
            retry_sampling: None,
        };
        let body = request_body(&cfg, &req);
        assert_eq!(body["instructions"], "be brief");
        assert_eq!(body["store"], false);
        assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
        assert_eq!(body["max_output_tokens"], 8192);
        assert!(
            body.get("temperature").is_none(),
            "gpt-5 takes no temperature"
        );
        let input = body["input"].as_array().unwrap();
        assert_eq!(
            input[0],
            json!({"type":"message","role":"user","content":"go"})
        );
        assert_eq!(
            input[1],
            json!({"type":"reasoning","summary":[],"encrypted_content":"enc"})
        );
        assert_eq!(input[2]["content"][0]["text"], "Reading.");
        assert_eq!(
            input[3],
            json!({"type":"function_call","call_id":"call_1","name":"read_file","arguments":"{}"})
        );
        assert_eq!(
            input[4],
            json!({"type":"function_call_output","call_id":"call_1","output":"text"})
        );
        assert_eq!(
            body["tools"],
            json!([{"type":"function","name":"read_file","description":"Read","parameters":{"type":"object"}}])
        );
    }

    #[test]
    fn reasoning_goes_back_only_to_the_provider_and_model_that_wrote_it() {
        let cfg = |name: &str, model: &str| {
            ProviderConfig::new(
                name,
                ApiKind::OpenAiResponses,
                "https://api.openai.com/v1",
                model,
            )
        };
        let primary = cfg("openai", "gpt-5");
        let mut decoder = ResponsesDecoder {
            origin: origin(&primary),
            ..ResponsesDecoder::default()
        };
        decoder.item_done(
            &json!({"type":"reasoning","id":"rs_9","summary":[],"encrypted_content":"mine"}),
            Some(0),
            &|_| {},
        );
        let req = ModelRequest {
            system: String::new(),
            messages: vec![
                ChatMessage::User {
                    content: "go".into(),
                },
                ChatMessage::Assistant {
                    content: "ok".into(),
                    tool_calls: Vec::new(),
                    reasoning: decoder.reasoning.clone(),
                },
            ],
            tools: Vec::new(),
            retry_sampling: None,
        };
        let reasoning_sent = |cfg: &ProviderConfig| -> Vec<Value> {
            request_body(cfg, &req)["input"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|i| i["type"] == "reasoning")
                .cloned()
                .collect()
        };
        // The same account and model: sent back, without Bosun's mark or the id.
        assert_eq!(
            reasoning_sent(&primary),
            [json!({"type":"reasoning","summary":[],"encrypted_content":"mine"})]
        );
        // A fallback account, or another model: it could not decrypt it, so it is left out.
        assert!(reasoning_sent(&cfg("openai-backup", "gpt-5")).is_empty());
        assert!(reasoning_sent(&cfg("openai", "gpt-5-mini")).is_empty());
    }
}
