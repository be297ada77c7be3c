//! The event follower: a task's events in, finished spans and (at its end) its metrics out. Pure:
//! no IO, no clock (times come from the events).

use crate::otlp::{AnyValue, Attributes, Metric, Point, Span, SpanKind};
use bosun_policy::redact::Redactor;
use bosun_protocol::{Event, EventMsg, TaskStatus, ToolCallStatus};
use std::collections::HashMap;

/// What following an event produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    Span(Span),
    /// The task ended: its metrics, to send with its last spans.
    Metrics(Vec<Metric>),
}

/// The GenAI conventions' bucket boundaries for `gen_ai.client.token.usage`.
const TOKEN_BOUNDS: &[f64] = &[
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
    16777216.0, 67108864.0,
];
/// … and for `gen_ai.client.operation.duration`, in seconds.
const DURATION_BOUNDS: &[f64] = &[
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/// Follows any number of tasks' streams (the app follows several at once), keyed by task id.
pub struct Follower {
    include_content: bool,
    redactor: Redactor,
    tasks: HashMap<String, TaskTrace>,
    /// Sub-agents announced (`subagent_started`) whose own events have not begun: their spans
    /// go in the parent's trace, under the parent's span.
    children: HashMap<String, Link>,
}

/// Where a sub-agent's spans hang.
#[derive(Debug, Clone)]
struct Link {
    trace_id: String,
    parent_span_id: String,
    parent_task: String,
    role: String,
}

struct TaskTrace {
    trace_id: String,
    span_id: String,
    /// A sub-agent's place under its parent.
    link: Option<Link>,
    start_ns: u64,
    repo: Option<String>,
    provider: Option<String>,
    model: Option<String>,
    /// The wire format (`openai-chat`, `anthropic`, …) and server: the GenAI provider name.
    api: Option<String>,
    base_url: Option<String>,
    /// When the next model request starts: the last event it waits for (the task's start, a
    /// tool call's end, the last response, a retry).
    request_from: u64,
    /// `follow_up` or `resume` for a continuation.
    resumed: Option<&'static str>,
    /// The prompt or follow-up, when content is exported.
    input: Option<String>,
    /// The last model request's span, held until its text (which follows its `usage` event)
    /// is in.
    chat: Option<Span>,
    tools: HashMap<String, OpenTool>,
    cost_usd: f64,
    input_tokens: u64,
    output_tokens: u64,
    requests: u64,
    last_error: Option<String>,
    metrics: Vec<Metric>,
}

struct OpenTool {
    span_id: String,
    start_ns: u64,
    tool: String,
    args: Option<String>,
    /// The approval asked about it: its rule, then the answer.
    asked: Option<(String, Option<String>)>,
}

impl Follower {
    pub fn new(include_content: bool, redactor: Redactor) -> Follower {
        Follower {
            include_content,
            redactor,
            tasks: HashMap::new(),
            children: HashMap::new(),
        }
    }

    /// Fills in what a continued task's `task_started` said (its repository, provider and
    /// model), which a follow-up's or a resume's stream does not repeat.
    pub fn started_earlier(
        &mut self,
        task: &bosun_protocol::TaskId,
        started: &bosun_protocol::TaskStarted,
    ) {
        if let Some(t) = self.tasks.get_mut(&task.0) {
            t.repo.get_or_insert_with(|| started.repo.clone());
            t.provider.get_or_insert_with(|| started.provider.clone());
            t.model.get_or_insert_with(|| started.model.clone());
            t.api.get_or_insert_with(|| started.api.clone());
            t.base_url.get_or_insert_with(|| started.base_url.clone());
        }
    }

    /// Follows one event; returns what it finished.
    pub fn observe(&mut self, ev: &Event) -> Vec<Output> {
        let at = unix_nanos(&ev.ts);
        let key = ev.task_id.0.clone();
        if !self.tasks.contains_key(&key) {
            let link = self.children.remove(&key);
            self.tasks.insert(key.clone(), TaskTrace::new(at, link));
        }
        let content = self.include_content;
        let redact = |text: &str| -> String { self.redactor.redact(text).text.into_owned() };
        let Some(t) = self.tasks.get_mut(&key) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if !matches!(
            ev.msg,
            EventMsg::AssistantDelta(_) | EventMsg::AssistantMessage(_) | EventMsg::Redacted(_)
        ) && let Some(chat) = t.chat.take()
        {
            out.push(Output::Span(chat));
        }
        match &ev.msg {
            EventMsg::TaskStarted(s) => {
                t.start_ns = at;
                t.repo = Some(s.repo.clone());
                t.provider = Some(s.provider.clone());
                t.model = Some(s.model.clone());
                t.api = Some(s.api.clone());
                t.base_url = Some(s.base_url.clone());
                if content {
                    t.input = Some(redact(&s.prompt));
                }
            }
            EventMsg::TaskResumed(r) => {
                t.start_ns = at;
                t.request_from = at;
                t.resumed = Some(match r.kind {
                    bosun_protocol::ResumeKind::FollowUp => "follow_up",
                    bosun_protocol::ResumeKind::Resume => "resume",
                });
            }
            EventMsg::UserMessage(m) if content && t.input.is_none() => {
                t.input = Some(redact(&m.text));
            }
            EventMsg::AssistantMessage(m) if content => {
                if let Some(chat) = t.chat.as_mut() {
                    chat.attributes.push(attr(
                        "gen_ai.output.messages",
                        messages("assistant", &redact(&m.text)),
                    ));
                }
            }
            EventMsg::Usage(u) => {
                let tokens = u.tokens();
                let latency = u.latency_ms.unwrap_or(0);
                let start = at.saturating_sub(latency.saturating_mul(1_000_000));
                t.model.get_or_insert_with(|| u.model.clone());
                t.request_from = at;
                let mut attrs = t.gen_ai("chat", &u.model);
                attrs.extend([
                    attr("gen_ai.response.model", u.model.as_str()),
                    attr("gen_ai.usage.input_tokens", tokens.prompt_tokens()),
                    attr("gen_ai.usage.output_tokens", tokens.completion_tokens()),
                    attr(
                        "gen_ai.usage.cache_read.input_tokens",
                        tokens.cached_input_tokens,
                    ),
                    attr(
                        "gen_ai.usage.cache_creation.input_tokens",
                        tokens.cache_write_tokens + tokens.cache_write_1h_tokens,
                    ),
                    attr("bosun.usage.reasoning_tokens", tokens.reasoning_tokens),
                    attr("bosun.task.id", key.as_str()),
                    attr("bosun.priced", u.priced),
                ]);
                if let Some(cost) = u.cost_usd {
                    attrs.push(attr("bosun.cost.usd", cost));
                }
                t.requests += 1;
                t.input_tokens += tokens.prompt_tokens();
                t.output_tokens += tokens.completion_tokens();
                // This run's spend (a follow-up's `total_cost_usd` is the whole task's).
                t.cost_usd += u.cost_usd.unwrap_or(0.0);
                t.record_request(&u.model, &tokens, latency, u.cost_usd, start, at);
                t.chat = Some(Span {
                    trace_id: t.trace_id.clone(),
                    span_id: span_id(),
                    parent_span_id: Some(t.span_id.clone()),
                    name: format!("chat {}", u.model),
                    kind: SpanKind::Client,
                    start_ns: start,
                    end_ns: at,
                    attributes: attrs,
                    error: None,
                });
            }
            EventMsg::ToolCallBegin(b) => {
                let args = content.then(|| {
                    let mut args = b.args.clone();
                    self.redactor.redact_json(&mut args);
                    args.to_string()
                });
                t.tools.insert(
                    b.call_id.0.clone(),
                    OpenTool {
                        span_id: span_id(),
                        start_ns: at,
                        tool: b.tool.clone(),
                        args,
                        asked: None,
                    },
                );
            }
            EventMsg::ApprovalRequested(r) => {
                if let Some(open) = t.tools.get_mut(&r.call_id.0) {
                    open.asked = Some((r.rule.clone(), None));
                }
            }
            EventMsg::ApprovalResolved(r) => {
                if let Some((_, answer)) = t
                    .tools
                    .get_mut(&r.call_id.0)
                    .and_then(|open| open.asked.as_mut())
                {
                    *answer = Some(decision_name(r.decision).to_string());
                }
            }
            EventMsg::ToolCallEnd(end) => {
                t.request_from = at;
                let Some(open) = t.tools.remove(&end.call_id.0) else {
                    return out;
                };
                let status = match end.status {
                    ToolCallStatus::Success => "success",
                    ToolCallStatus::Error => "error",
                    ToolCallStatus::Denied => "denied",
                    ToolCallStatus::TimedOut => "timed_out",
                };
                let mut attrs: Attributes = vec![
                    attr("gen_ai.operation.name", "execute_tool"),
                    attr("gen_ai.tool.name", open.tool.as_str()),
                    attr("gen_ai.tool.call.id", end.call_id.0.as_str()),
                    attr("gen_ai.tool.type", "function"),
                    attr("bosun.task.id", key.as_str()),
                    attr("bosun.tool.status", status),
                    attr("bosun.tool.duration_ms", end.duration_ms),
                ];
                match &open.asked {
                    Some((rule, answer)) => {
                        attrs.push(attr("bosun.policy.decision", "ask"));
                        attrs.push(attr("bosun.policy.rule", rule.as_str()));
                        if let Some(a) = answer {
                            attrs.push(attr("bosun.approval.decision", a.as_str()));
                        }
                    }
                    None if end.status == ToolCallStatus::Denied => {
                        attrs.push(attr("bosun.policy.decision", "deny"));
                    }
                    None => attrs.push(attr("bosun.policy.decision", "allow")),
                }
                if let Some(code) = end.exit_code {
                    attrs.push(attr("bosun.tool.exit_code", code));
                }
                if end.status != ToolCallStatus::Success {
                    attrs.push(attr("error.type", status));
                }
                if let Some(args) = open.args {
                    attrs.push(attr("gen_ai.tool.call.arguments", args));
                }
                if content {
                    attrs.push(attr("gen_ai.tool.call.result", redact(&end.output)));
                }
                let error = matches!(end.status, ToolCallStatus::Error | ToolCallStatus::TimedOut)
                    .then(|| status.to_string());
                out.push(Output::Span(Span {
                    trace_id: t.trace_id.clone(),
                    span_id: open.span_id,
                    parent_span_id: Some(t.span_id.clone()),
                    name: format!("execute_tool {}", open.tool),
                    kind: SpanKind::Internal,
                    start_ns: open.start_ns,
                    end_ns: at,
                    attributes: attrs,
                    error,
                }));
            }
            EventMsg::SubagentStarted(s) => {
                self.children.insert(
                    s.child_task_id.0.clone(),
                    Link {
                        trace_id: t.trace_id.clone(),
                        parent_span_id: t.span_id.clone(),
                        parent_task: key.clone(),
                        role: s.role.clone(),
                    },
                );
            }
            // A model request that failed: its chat span, with what went wrong.
            EventMsg::ModelRetry(r) => {
                let span = t.failed_chat(at, "retry", &r.reason, &key);
                t.request_from = at;
                out.push(Output::Span(span));
            }
            EventMsg::ProviderFallback(f) => {
                let span = t.failed_chat(at, "provider_fallback", &f.reason, &key);
                out.push(Output::Span(span));
                t.request_from = at;
                // The provider taking over answers the next requests.
                t.provider = Some(f.to.clone());
                if !f.model.is_empty() {
                    t.model = Some(f.model.clone());
                }
                t.api = None;
                t.base_url = None;
            }
            EventMsg::Error(e) => {
                t.last_error = Some(e.code.clone());
                if matches!(
                    e.code.as_str(),
                    "model_error" | "rate_limited" | "model_timeout" | "response_too_large"
                ) {
                    let span = t.failed_chat(at, &e.code, &e.message, &key);
                    out.push(Output::Span(span));
                }
            }
            EventMsg::TaskFinished(f) => {
                // A sub-agent it announced whose events never came will not come now.
                self.children.retain(|_, l| l.parent_task != key);
                let summary = content.then(|| redact(&f.summary));
                if let Some(t) = self.tasks.remove(&key) {
                    out.extend(t.finish(&key, f.status, summary, at));
                }
            }
            _ => {}
        }
        out
    }
}

/// The GenAI conventions' name of a provider (`openai`, `anthropic`, `gcp.gemini`, …), from the
/// wire format and the server; Bosun's own name for it where the server is none of theirs (a
/// local model, a proxy).
fn provider_name(api: Option<&str>, base_url: Option<&str>, configured: &str) -> String {
    let host = base_url
        .and_then(|u| u.split_once("://").map(|(_, rest)| rest).or(Some(u)))
        .map(|rest| {
            rest.split(['/', ':'])
                .next()
                .unwrap_or("")
                .to_ascii_lowercase()
        })
        .unwrap_or_default();
    let known = [
        ("api.openai.com", "openai"),
        ("api.anthropic.com", "anthropic"),
        ("generativelanguage.googleapis.com", "gcp.gemini"),
        ("aiplatform.googleapis.com", "gcp.vertex_ai"),
        ("openai.azure.com", "azure.ai.openai"),
        ("api.deepseek.com", "deepseek"),
        ("api.mistral.ai", "mistral_ai"),
        ("api.groq.com", "groq"),
        ("api.x.ai", "x_ai"),
        ("api.perplexity.ai", "perplexity"),
    ];
    if let Some((_, name)) = known.iter().find(|(h, _)| {
        host == *h
                || host.ends_with(&format!(".{h}"))
                // Vertex AI's regional hosts: `us-central1-aiplatform.googleapis.com`.
                || (h.starts_with("aiplatform.") && host.ends_with(&format!("-{h}")))
    }) {
        return (*name).to_string();
    }
    match (api, host.is_empty()) {
        // Anthropic's format at its default server.
        (Some("anthropic"), true) => "anthropic".to_string(),
        (Some("openai-chat" | "openai-responses"), true) => "openai".to_string(),
        _ => configured.to_string(),
    }
}

impl TaskTrace {
    fn new(at: u64, link: Option<Link>) -> TaskTrace {
        TaskTrace {
            trace_id: link.as_ref().map_or_else(
                || format!("{:032x}", ulid::Ulid::new().0),
                |l| l.trace_id.clone(),
            ),
            span_id: span_id(),
            link,
            start_ns: at,
            repo: None,
            provider: None,
            model: None,
            api: None,
            base_url: None,
            request_from: at,
            resumed: None,
            input: None,
            chat: None,
            tools: HashMap::new(),
            cost_usd: 0.0,
            input_tokens: 0,
            output_tokens: 0,
            requests: 0,
            last_error: None,
            metrics: Vec::new(),
        }
    }

    /// A chat span for a model request that failed (`kind`: `retry`, `provider_fallback`, or
    /// the error's code), from when it was sent to now.
    fn failed_chat(&self, at: u64, kind: &str, reason: &str, task: &str) -> Span {
        let model = self.model.clone().unwrap_or_default();
        let mut attrs = self.gen_ai("chat", &model);
        attrs.extend([attr("error.type", kind), attr("bosun.task.id", task)]);
        Span {
            trace_id: self.trace_id.clone(),
            span_id: span_id(),
            parent_span_id: Some(self.span_id.clone()),
            name: format!("chat {model}"),
            kind: SpanKind::Client,
            start_ns: self.request_from.min(at),
            end_ns: at,
            attributes: attrs,
            error: Some(reason.to_string()),
        }
    }

    /// The model a request that `answered` asked for: the task's model when the answer is it
    /// or a snapshot of it (`gpt-4o` answered by `gpt-4o-2024-08-06`); another model (a
    /// compaction summarizer's) is its own.
    fn requested<'a>(&'a self, answered: &'a str) -> &'a str {
        match self.model.as_deref().filter(|m| !m.is_empty()) {
            Some(m)
                if answered.is_empty() || answered.starts_with(m) || m.starts_with(answered) =>
            {
                m
            }
            _ => answered,
        }
    }

    /// The attributes every GenAI span and metric of this task carries: the model asked for
    /// (a response names the one that answered in `gen_ai.response.model`), the provider as the
    /// GenAI conventions name it, and Bosun's name for it.
    fn gen_ai(&self, operation: &str, model: &str) -> Attributes {
        let mut attrs = vec![
            attr("gen_ai.operation.name", operation),
            attr("gen_ai.request.model", self.requested(model)),
        ];
        if let Some(p) = &self.provider {
            attrs.push(attr(
                "gen_ai.provider.name",
                provider_name(self.api.as_deref(), self.base_url.as_deref(), p),
            ));
            attrs.push(attr("bosun.provider", p.as_str()));
        }
        if let Some(r) = &self.repo {
            attrs.push(attr("bosun.repository", r.as_str()));
        }
        attrs
    }

    fn record_request(
        &mut self,
        model: &str,
        tokens: &bosun_protocol::TokenUsage,
        latency_ms: u64,
        cost: Option<f64>,
        start: u64,
        end: u64,
    ) {
        let base = self.gen_ai("chat", model);
        let with = |extra: &[(&str, &str)]| {
            let mut a = base.clone();
            a.extend(extra.iter().map(|(k, v)| attr(k, *v)));
            a
        };
        let task_start = self.start_ns;
        let mut add =
            |name, unit, description, attrs: Attributes, bounds: Option<&'static [f64]>, v: f64| {
                let slot = self
                    .metrics
                    .iter_mut()
                    .find(|m| m.name == name && m.attributes == attrs);
                let m = match slot {
                    Some(m) => m,
                    None => {
                        self.metrics.push(Metric {
                            name,
                            unit,
                            description,
                            attributes: attrs,
                            start_ns: task_start.min(start),
                            end_ns: end,
                            point: bounds.map_or(Point::Sum(0.0), Point::histogram),
                        });
                        let Some(m) = self.metrics.last_mut() else {
                            return;
                        };
                        m
                    }
                };
                m.end_ns = m.end_ns.max(end);
                m.point.record(v);
            };
        const TOKENS: &str = "gen_ai.client.token.usage";
        const TOKENS_ABOUT: &str = "Tokens used per model request, by type";
        add(
            TOKENS,
            "{token}",
            TOKENS_ABOUT,
            with(&[("gen_ai.token.type", "input")]),
            Some(TOKEN_BOUNDS),
            tokens.prompt_tokens() as f64,
        );
        add(
            TOKENS,
            "{token}",
            TOKENS_ABOUT,
            with(&[("gen_ai.token.type", "output")]),
            Some(TOKEN_BOUNDS),
            tokens.completion_tokens() as f64,
        );
        add(
            "gen_ai.client.operation.duration",
            "s",
            "Time from sending a model request to the end of its response",
            with(&[]),
            Some(DURATION_BOUNDS),
            latency_ms as f64 / 1000.0,
        );
        if let Some(cost) = cost {
            add(
                "bosun.cost.usd",
                "USD",
                "What the model requests cost, in US dollars",
                with(&[]),
                None,
                cost,
            );
        }
    }

    fn finish(
        self,
        task: &str,
        status: TaskStatus,
        summary: Option<String>,
        at: u64,
    ) -> Vec<Output> {
        let model = self.model.clone().unwrap_or_default();
        let mut attrs = self.gen_ai("invoke_agent", &model);
        // A sub-agent is `bosun-<role>` (`bosun-worker`), under its parent's span.
        let agent = match &self.link {
            Some(l) => format!("bosun-{}", l.role),
            None => "bosun".to_string(),
        };
        if let Some(l) = &self.link {
            attrs.push(attr("bosun.task.parent_id", l.parent_task.as_str()));
            attrs.push(attr("bosun.subagent.role", l.role.as_str()));
        }
        attrs.extend([
            attr("gen_ai.agent.name", agent.as_str()),
            attr("gen_ai.conversation.id", task),
            attr("bosun.task.id", task),
            attr("bosun.task.outcome", status.as_str()),
            attr("bosun.cost.usd", self.cost_usd),
            attr("bosun.model_requests", self.requests),
            attr("gen_ai.usage.input_tokens", self.input_tokens),
            attr("gen_ai.usage.output_tokens", self.output_tokens),
        ]);
        if let Some(kind) = self.resumed {
            attrs.push(attr("bosun.task.resumed", kind));
        }
        if let Some(input) = &self.input {
            attrs.push(attr("gen_ai.input.messages", messages("user", input)));
        }
        if let Some(summary) = summary {
            attrs.push(attr(
                "gen_ai.output.messages",
                messages("assistant", &summary),
            ));
        }
        let failed = matches!(status, TaskStatus::Failed | TaskStatus::ChecksFailed);
        if failed {
            attrs.push(attr(
                "error.type",
                self.last_error
                    .clone()
                    .unwrap_or_else(|| status.as_str().to_string()),
            ));
        }
        let root = Span {
            trace_id: self.trace_id,
            span_id: self.span_id,
            parent_span_id: self.link.map(|l| l.parent_span_id),
            name: format!("invoke_agent {agent}"),
            kind: SpanKind::Internal,
            start_ns: self.start_ns,
            end_ns: at,
            attributes: attrs,
            error: failed.then(|| status.as_str().to_string()),
        };
        vec![Output::Span(root), Output::Metrics(self.metrics)]
    }
}

fn attr(key: &str, v: impl Into<AnyValue>) -> (String, AnyValue) {
    (key.to_string(), v.into())
}

/// The conventions' message list as JSON text: one message of one text part.
fn messages(role: &str, text: &str) -> String {
    serde_json::json!([{"role": role, "parts": [{"type": "text", "content": text}]}]).to_string()
}

fn decision_name(d: bosun_protocol::ApprovalDecision) -> &'static str {
    use bosun_protocol::ApprovalDecision::*;
    match d {
        ApproveOnce => "approve_once",
        ApproveTask => "approve_task",
        ApproveAlways => "approve_always",
        Deny => "deny",
    }
}

/// 16 hex digits from a fresh ULID's random low bits.
fn span_id() -> String {
    format!("{:016x}", (ulid::Ulid::new().0 as u64).max(1))
}

/// An event's RFC 3339 time as Unix nanoseconds (0 if it does not parse).
fn unix_nanos(ts: &str) -> u64 {
    time::OffsetDateTime::parse(ts, &time::format_description::well_known::Rfc3339)
        .ok()
        .and_then(|t| u64::try_from(t.unix_timestamp_nanos()).ok())
        .unwrap_or(0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn ev(seq: u64, ts: &str, msg: serde_json::Value) -> Event {
        let mut v = json!({"seq": seq, "task_id": "01task", "ts": ts});
        v.as_object_mut()
            .unwrap()
            .extend(msg.as_object().unwrap().clone());
        serde_json::from_value(v).unwrap()
    }

    fn task() -> Vec<Event> {
        vec![
            ev(
                1,
                "2026-12-02T10:00:00.000Z",
                json!({"type": "task_started", "repo": "/r",
                "base_commit": "abc", "branch": "bosun/01task", "worktree": "/w",
                "prompt": "PROMPT-TEXT with sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ",
                "provider": "anthropic", "model": "m1"}),
            ),
            ev(
                2,
                "2026-12-02T10:00:01.000Z",
                json!({"type": "tool_call_begin", "call_id": "c1",
                "tool": "run_command", "args": {"command": "rm -rf build"}}),
            ),
            ev(
                3,
                "2026-12-02T10:00:01.100Z",
                json!({"type": "approval_requested",
                "approval_id": "a1", "call_id": "c1", "tool": "run_command",
                "action": {"kind": "command", "command": "rm -rf build"}, "reason": "r",
                "rule": "commands.ask \"rm -rf\"", "source": "built-in", "suggestions": []}),
            ),
            ev(
                4,
                "2026-12-02T10:00:02.000Z",
                json!({"type": "approval_resolved",
                "approval_id": "a1", "call_id": "c1", "decision": "approve_once", "by": "cli"}),
            ),
            ev(
                5,
                "2026-12-02T10:00:03.000Z",
                json!({"type": "tool_call_end", "call_id": "c1",
                "status": "success", "exit_code": 0, "output": "OUTPUT-TEXT", "duration_ms": 1000}),
            ),
            ev(
                6,
                "2026-12-02T10:00:05.000Z",
                json!({"type": "usage", "model": "m1",
                "input_tokens": 70, "output_tokens": 20, "cached_input_tokens": 20,
                "cache_write_tokens": 10, "reasoning_tokens": 5, "cost_usd": 0.5,
                "total_cost_usd": 0.5, "priced": true, "latency_ms": 1500}),
            ),
            ev(
                7,
                "2026-12-02T10:00:05.001Z",
                json!({"type": "assistant_message", "text": "ANSWER-TEXT"}),
            ),
            ev(
                8,
                "2026-12-02T10:00:06.000Z",
                json!({"type": "task_finished",
                "status": "completed", "summary": "SUMMARY-TEXT"}),
            ),
        ]
    }

    fn follow(content: bool) -> Vec<Output> {
        let mut f = Follower::new(content, Redactor::new(&[]));
        task().iter().flat_map(|e| f.observe(e)).collect()
    }

    fn get<'a>(s: &'a Span, key: &str) -> Option<&'a AnyValue> {
        s.attributes.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    #[test]
    fn a_task_becomes_a_tool_span_a_chat_span_under_its_agent_span_and_metrics() {
        let out = follow(false);
        let spans: Vec<&Span> = out
            .iter()
            .filter_map(|o| match o {
                Output::Span(s) => Some(s),
                _ => None,
            })
            .collect();
        let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["execute_tool run_command", "chat m1", "invoke_agent bosun"]
        );
        let (tool, chat, root) = (spans[0], spans[1], spans[2]);
        assert_eq!(tool.parent_span_id.as_ref(), Some(&root.span_id));
        assert_eq!(chat.parent_span_id.as_ref(), Some(&root.span_id));
        assert_eq!(tool.trace_id, root.trace_id);
        assert_eq!(chat.end_ns - chat.start_ns, 1_500_000_000);
        assert_eq!(
            get(chat, "gen_ai.usage.input_tokens"),
            Some(&AnyValue::Int(100))
        );
        assert_eq!(
            get(chat, "gen_ai.usage.output_tokens"),
            Some(&AnyValue::Int(25))
        );
        assert_eq!(
            get(chat, "gen_ai.usage.cache_read.input_tokens"),
            Some(&AnyValue::Int(20))
        );
        assert_eq!(
            get(chat, "gen_ai.usage.cache_creation.input_tokens"),
            Some(&AnyValue::Int(10))
        );
        assert_eq!(
            get(tool, "bosun.policy.decision"),
            Some(&AnyValue::from("ask"))
        );
        assert_eq!(
            get(tool, "bosun.approval.decision"),
            Some(&AnyValue::from("approve_once"))
        );
        assert_eq!(
            get(root, "bosun.task.outcome"),
            Some(&AnyValue::from("completed"))
        );
        assert_eq!(get(root, "bosun.repository"), Some(&AnyValue::from("/r")));
        let Some(Output::Metrics(metrics)) = out.last() else {
            panic!("no metrics")
        };
        let names: Vec<&str> = metrics.iter().map(|m| m.name).collect();
        assert_eq!(
            names,
            [
                "gen_ai.client.token.usage",
                "gen_ai.client.token.usage",
                "gen_ai.client.operation.duration",
                "bosun.cost.usd"
            ]
        );
        assert_eq!(metrics[3].point, Point::Sum(0.5));
        let text = format!("{out:?}");
        for secret in [
            "PROMPT-TEXT",
            "OUTPUT-TEXT",
            "ANSWER-TEXT",
            "SUMMARY-TEXT",
            "rm -rf build",
        ] {
            assert!(
                !text.contains(secret),
                "{secret} exported without include_content"
            );
        }
    }

    #[test]
    fn content_is_exported_redacted_only_when_asked() {
        let out = follow(true);
        let chat = out
            .iter()
            .find_map(|o| match o {
                Output::Span(s) if s.name == "chat m1" => Some(s),
                _ => None,
            })
            .unwrap();
        let said = get(chat, "gen_ai.output.messages");
        assert!(
            matches!(said, Some(AnyValue::Str(m)) if m.contains("ANSWER-TEXT")),
            "the answer that followed the request's usage is its output: {said:?}"
        );
        let text = format!("{out:?}");
        for expected in [
            "PROMPT-TEXT",
            "OUTPUT-TEXT",
            "SUMMARY-TEXT",
            "rm -rf build",
            "[REDACTED:",
        ] {
            assert!(text.contains(expected), "{expected} missing");
        }
        assert!(!text.contains("sk-ant-api03"), "a secret was exported");
    }
}

#[cfg(test)]
mod provider_tests {
    use super::provider_name;

    #[test]
    fn the_provider_is_named_as_the_genai_conventions_do() {
        let cases = [
            (
                Some("openai-responses"),
                Some("https://api.openai.com/v1"),
                "work",
                "openai",
            ),
            (
                Some("anthropic"),
                Some("https://api.anthropic.com"),
                "claude",
                "anthropic",
            ),
            (
                Some("openai-chat"),
                Some("https://generativelanguage.googleapis.com/v1beta/openai/"),
                "gemini",
                "gcp.gemini",
            ),
            (
                Some("openai-chat"),
                Some("https://x.openai.azure.com/"),
                "az",
                "azure.ai.openai",
            ),
            (Some("anthropic"), Some(""), "default", "anthropic"),
            (
                Some("openai-chat"),
                Some("https://us-central1-aiplatform.googleapis.com/v1/projects/p"),
                "vertex",
                "gcp.vertex_ai",
            ),
            (
                Some("openai-chat"),
                Some("http://127.0.0.1:11434/v1"),
                "ollama",
                "ollama",
            ),
            (
                Some("openai-chat"),
                Some("https://api.openai.com.evil.example/v1"),
                "p",
                "p",
            ),
        ];
        for (api, url, configured, want) in cases {
            assert_eq!(provider_name(api, url, configured), want, "{url:?}");
        }
    }

    #[test]
    fn a_request_asked_for_the_tasks_model_unless_another_model_answered() {
        let mut t = super::TaskTrace::new(0, None);
        t.model = Some("gpt-4o".into());
        // A snapshot of the task's model answered: the task's model was asked for.
        assert_eq!(t.requested("gpt-4o-2024-08-06"), "gpt-4o");
        // A compaction summarizer's model is its own.
        assert_eq!(t.requested("claude-haiku-4-5"), "claude-haiku-4-5");
    }
}
