use crate::{
    ApprovalRequested, ApprovalResolved, CallId, CheckFinished, CheckOutputDelta, CheckStarted,
    ChecksPlanned, NetworkConnection, Rates, Redacted, TaskId, TokenUsage, Warning,
};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One thing that happened in a task. `seq` starts at 1 and is monotonic per task; every event is
/// appended to the journal before it is delivered to any frontend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct Event {
    #[ts(type = "number")]
    pub seq: u64,
    pub task_id: TaskId,
    /// RFC 3339 UTC time with milliseconds.
    pub ts: String,
    #[serde(flatten)]
    pub msg: EventMsg,
}

/// The payload of an [`Event`], tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum EventMsg {
    TaskStarted(TaskStarted),
    TaskResumed(TaskResumed),
    /// A user message given to the task (the prompt, or a later follow-up).
    UserMessage(UserMessage),
    /// A piece of assistant text as it streams in; `assistant_message` carries the whole text.
    AssistantDelta(AssistantDelta),
    AssistantMessage(AssistantMessage),
    ToolCallBegin(ToolCallBegin),
    ToolOutputDelta(ToolOutputDelta),
    ToolCallEnd(ToolCallEnd),
    /// A connection a running command made through Bosun's egress proxy, when it ended.
    NetworkConnection(NetworkConnection),
    PlanUpdated(PlanUpdated),
    CheckpointCreated(CheckpointCreated),
    Usage(UsageEvent),
    /// The model request failed in a way that is retried; the request is sent again whole.
    ModelRetry(ModelRetry),
    ApprovalRequested(ApprovalRequested),
    ApprovalResolved(ApprovalResolved),
    Redacted(Redacted),
    Warning(Warning),
    /// The model stopped without a call Bosun could run (a plan in prose, a promise, a
    /// question, a rejected call) or made a degenerate one; Bosun answered it and the loop went on.
    Nudge(Nudge),
    /// The checks this task will run, and where they came from.
    ChecksPlanned(ChecksPlanned),
    /// What the next request shows the model about the repository, and why (the repository
    /// map's files, …), within its token budget.
    ContextAssembled(ContextAssembled),
    /// The conversation was made smaller before a request would pass ~80 % of the model's
    /// context window (or after the provider said it was too long): old tool outputs masked,
    /// then older turns summarised.
    ContextCompacted(ContextCompacted),
    /// The user pinned (or unpinned) a file, a tool call's output or a message: compaction
    /// never drops what is pinned.
    ContextPinned(ContextPinned),
    CheckStarted(CheckStarted),
    CheckOutputDelta(CheckOutputDelta),
    CheckFinished(CheckFinished),
    TaskFinished(TaskFinished),
    /// A provider failed past its retries (down, overloaded, rate-limited) and the next one of
    /// its `fallback` list takes over; the request is sent again to it.
    ProviderFallback(ProviderFallback),
    /// A sub-agent (a `delegate` call or a plan node) started, as a task of its own.
    SubagentStarted(SubagentStarted),
    /// A running sub-agent's totals so far (after each of its model responses and tool calls).
    SubagentProgress(SubagentProgress),
    /// A sub-agent ended; its result went back to the model as the `delegate` call's result.
    SubagentFinished(SubagentFinished),
    Error(ErrorEvent),
    /// A review verdict, comment, merge or worktree removal (see [`crate::ReviewEvent`]).
    Review(crate::ReviewEvent),
}

impl EventMsg {
    /// The `type` tag of this message, as it appears in JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            EventMsg::TaskStarted(_) => "task_started",
            EventMsg::TaskResumed(_) => "task_resumed",
            EventMsg::UserMessage(_) => "user_message",
            EventMsg::AssistantDelta(_) => "assistant_delta",
            EventMsg::AssistantMessage(_) => "assistant_message",
            EventMsg::ToolCallBegin(_) => "tool_call_begin",
            EventMsg::ToolOutputDelta(_) => "tool_output_delta",
            EventMsg::ToolCallEnd(_) => "tool_call_end",
            EventMsg::NetworkConnection(_) => "network_connection",
            EventMsg::PlanUpdated(_) => "plan_updated",
            EventMsg::CheckpointCreated(_) => "checkpoint_created",
            EventMsg::Usage(_) => "usage",
            EventMsg::ModelRetry(_) => "model_retry",
            EventMsg::ApprovalRequested(_) => "approval_requested",
            EventMsg::ApprovalResolved(_) => "approval_resolved",
            EventMsg::Redacted(_) => "redacted",
            EventMsg::Warning(_) => "warning",
            EventMsg::Nudge(_) => "nudge",
            EventMsg::ChecksPlanned(_) => "checks_planned",
            EventMsg::ContextAssembled(_) => "context_assembled",
            EventMsg::ContextCompacted(_) => "context_compacted",
            EventMsg::ContextPinned(_) => "context_pinned",
            EventMsg::CheckStarted(_) => "check_started",
            EventMsg::CheckOutputDelta(_) => "check_output_delta",
            EventMsg::CheckFinished(_) => "check_finished",
            EventMsg::TaskFinished(_) => "task_finished",
            EventMsg::ProviderFallback(_) => "provider_fallback",
            EventMsg::SubagentStarted(_) => "subagent_started",
            EventMsg::SubagentProgress(_) => "subagent_progress",
            EventMsg::SubagentFinished(_) => "subagent_finished",
            EventMsg::Error(_) => "error",
            EventMsg::Review(_) => "review",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct TaskStarted {
    /// The user's repository (its working directory), absolute.
    pub repo: String,
    pub base_commit: String,
    /// The branch the task was started from (named, or the one checked out), when there was one:
    /// where a merge goes by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub base_ref: Option<String>,
    /// `bosun/<task-id>`.
    pub branch: String,
    /// The task's worktree, absolute; under `$BOSUN_HOME`, never inside the user's checkout.
    pub worktree: String,
    pub prompt: String,
    pub provider: String,
    pub model: String,
    /// The wire format (`openai-chat` | `openai-responses` | `anthropic`) and server, so a
    /// follow-up can reach the same model; the key is never recorded, only the name of the
    /// variable holding it.
    #[serde(default)]
    pub api: String,
    #[serde(default)]
    pub base_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub api_key_env: Option<String>,
    /// The policy mode the task was started with (`--mode`), when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mode: Option<String>,
    /// The task's cost limit in US dollars; it covers follow-ups too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub max_cost_usd: Option<f64>,
    /// A fork: the task and checkpoint it started from (its worktree, and the conversation up to
    /// that point); its base is that task's base commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub forked_from: Option<ForkedFrom>,
    /// How the model is talked to (its profile), when it is not the default: tools as text, a
    /// text edit format, a known context window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub profile: Option<ModelProfileInfo>,
}

/// A model profile as a task records it (see `bosun models`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ModelProfileInfo {
    /// The API's own tool calls are used.
    pub native_tools: bool,
    /// How tools are offered otherwise: `native`, `hermes`, `llama3`, `mistral`, `json`.
    pub tool_format: String,
    /// `tools`, `whole` or `search-replace`.
    pub edit_format: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub context_window: Option<u32>,
    /// `config`, `probe` or `default`.
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ForkedFrom {
    pub task: TaskId,
    /// 0 is the task's base.
    pub checkpoint: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum ResumeKind {
    /// The user sent a follow-up to a finished or stopped task.
    FollowUp,
    /// A task interrupted by a crash or a quit continues from its last checkpoint.
    Resume,
}

/// The task continues in the same worktree with the conversation so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct TaskResumed {
    pub kind: ResumeKind,
    /// The checkpoint the worktree was put back to (a resume discards what an interrupted tool
    /// call half-did since then); 0 is the base, when no checkpoint preceded that call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub restored_checkpoint: Option<u32>,
    pub restored_files: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct UserMessage {
    pub text: String,
    /// Who wrote it when not the user: `checks` for the failures of a round of checks, which
    /// Bosun sends the model in the user's turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub origin: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct AssistantDelta {
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct AssistantMessage {
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ToolCallBegin {
    pub call_id: CallId,
    pub tool: String,
    /// The arguments as the model sent them (an object for a well-formed call; the raw text as a
    /// string when they were not valid JSON).
    #[ts(type = "unknown")]
    pub args: serde_json::Value,
    /// True when the model wrote this call as text (a JSON object or `<tool_call>` tags) instead
    /// of using the API's tool-call field, and Bosun recovered it.
    #[serde(default)]
    pub recovered: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum OutputStream {
    Stdout,
    Stderr,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ToolOutputDelta {
    pub call_id: CallId,
    pub stream: OutputStream,
    /// Output text, lossily decoded as UTF-8.
    pub chunk: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum ToolCallStatus {
    Success,
    /// The tool failed (bad arguments, a path outside the worktree, a non-zero exit…); the error
    /// went back to the model and the loop continued.
    Error,
    /// The policy refused the call.
    Denied,
    TimedOut,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ToolCallEnd {
    pub call_id: CallId,
    pub status: ToolCallStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<String>,
    /// The result as the model was told it (possibly truncated, with a note).
    pub output: String,
    #[ts(type = "number")]
    pub duration_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum PlanStatus {
    Pending,
    InProgress,
    Completed,
    /// A plan node whose sub-agent failed (its checks, after the escalation ladder).
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct PlanItem {
    pub step: String,
    pub status: PlanStatus,
    /// A node of a task graph: its id, which other nodes must be completed first, and the role
    /// whose model runs it (`worker` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub depends_on: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub role: Option<String>,
    /// The files a node's sub-agent may change (globs; the whole worktree when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub scope: Vec<String>,
    /// The checks that judge a node (names of the task's checks; all required ones when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub checks: Vec<String>,
    /// The sub-agent that ran (or runs) the node, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub child_task_id: Option<TaskId>,
}

impl PlanItem {
    /// A plain plan step (no graph fields).
    pub fn step(step: impl Into<String>, status: PlanStatus) -> PlanItem {
        PlanItem {
            step: step.into(),
            status,
            id: None,
            depends_on: Vec::new(),
            role: None,
            scope: Vec::new(),
            checks: Vec::new(),
            child_task_id: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct PlanUpdated {
    pub items: Vec<PlanItem>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct CheckpointCreated {
    /// n in `refs/bosun/<task-id>/<n>`, starting at 1.
    pub checkpoint: u32,
    pub commit: String,
    /// Paths (relative to the worktree) that differ from the previous checkpoint.
    pub files: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub call_id: Option<CallId>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct UsageEvent {
    pub model: String,
    /// Uncached prompt tokens (see [`TokenUsage`] for the disjoint classes).
    #[ts(type = "number")]
    pub input_tokens: u64,
    /// Completion tokens that are not reasoning.
    #[ts(type = "number")]
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    #[ts(type = "number")]
    pub cached_input_tokens: u64,
    /// Prompt tokens written to the provider's cache for 5 minutes.
    #[ts(type = "number")]
    pub cache_write_tokens: u64,
    /// Prompt tokens written to the provider's cache for 1 hour.
    #[serde(default)]
    #[ts(type = "number")]
    pub cache_write_1h_tokens: u64,
    /// Completion tokens spent reasoning.
    #[serde(default)]
    #[ts(type = "number")]
    pub reasoning_tokens: u64,
    /// Cost of this response in US dollars; null when the model has no price ("unpriced").
    pub cost_usd: Option<f64>,
    /// Cost of the task so far (its priced responses).
    pub total_cost_usd: f64,
    /// False when the model is not in the price table (`cost_usd` is null).
    pub priced: bool,
    /// The rates the response was priced at; absent when unpriced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rates: Option<Rates>,
    /// From sending the request to the end of the response, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub latency_ms: Option<u64>,
    /// The provider's reasoning items of this response, opaque (OpenAI Responses, with their
    /// encrypted content): journaled so a resumed task sends them back as the live one did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, type = "Array<unknown>")]
    pub reasoning: Vec<serde_json::Value>,
}

impl UsageEvent {
    pub fn tokens(&self) -> TokenUsage {
        TokenUsage {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cached_input_tokens: self.cached_input_tokens,
            cache_write_tokens: self.cache_write_tokens,
            cache_write_1h_tokens: self.cache_write_1h_tokens,
            reasoning_tokens: self.reasoning_tokens,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ModelRetry {
    pub attempt: u32,
    pub max_attempts: u32,
    #[ts(type = "number")]
    pub delay_ms: u64,
    pub reason: String,
}

/// What a request shows the model about the repository: each item, why it is there and what
/// it costs, against the budget it was fitted to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ContextAssembled {
    pub items: Vec<ContextItem>,
    #[ts(type = "number")]
    pub total_tokens: u64,
    #[ts(type = "number")]
    pub budget_tokens: u64,
}

impl ContextAssembled {
    /// One line: `Context: map of 5 files, 1.2k tokens`.
    pub fn summary(&self) -> String {
        let count = |kind: ContextKind| self.items.iter().filter(|i| i.kind == kind).count();
        let mut parts = Vec::new();
        let map = count(ContextKind::Map);
        if map > 0 {
            parts.push(format!(
                "map of {map} file{}",
                if map == 1 { "" } else { "s" }
            ));
        }
        for (kind, one, many) in [
            (ContextKind::File, "file", "files"),
            (ContextKind::FileList, "file list", "file lists"),
            (ContextKind::Test, "test", "tests"),
            (ContextKind::Sibling, "nearby file", "nearby files"),
            (ContextKind::Symbols, "symbol list", "symbol lists"),
            (
                ContextKind::RecentChanges,
                "recent change",
                "recent changes",
            ),
            (
                ContextKind::Instructions,
                "instruction file",
                "instruction files",
            ),
            (ContextKind::Memory, "memory", "memories"),
        ] {
            let n = count(kind);
            if n > 0 {
                parts.push(format!("{n} {}", if n == 1 { one } else { many }));
            }
        }
        if parts.is_empty() {
            parts.push("nothing".into());
        }
        format!(
            "Context: {}, {} tokens",
            parts.join(", "),
            short_count(self.total_tokens)
        )
    }
}

/// `950`, `1.2k`, `12k`.
pub fn short_count(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..10_000 => format!("{:.1}k", n as f64 / 1000.0),
        _ => format!("{}k", (n as f64 / 1000.0).round() as u64),
    }
}

/// What a compaction did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ContextCompacted {
    #[ts(type = "number")]
    pub tokens_before: u64,
    #[ts(type = "number")]
    pub tokens_after: u64,
    /// The context window it was kept within, in tokens.
    #[ts(type = "number")]
    pub window_tokens: u64,
    /// Why: `near_window` (before a request would pass ~80 % of it) or `provider_said_too_long`.
    pub reason: String,
    /// The tool outputs replaced by one line, each as `tool target` (`read_file src/a.py`).
    pub masked: Vec<String>,
    /// The older messages summarised, each as one line (`user: Fix the …`, `read_file src/a.py`).
    pub summarised: Vec<String>,
    /// The summary that replaced them, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub summary: Option<String>,
}

/// What the user pinned so that compaction never drops it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum PinTarget {
    /// A file of the worktree (relative to it): its current content is in every request.
    File { path: String },
    /// A tool call's output: never masked, and kept word for word through a summary.
    Call { call_id: String },
    /// A message the user sent (its text as `user_message` recorded it): kept word for word
    /// through a summary, however long.
    Message { text: String },
}

impl PinTarget {
    /// `src/a.py`, `call c3`, `message "Never touch …"`.
    pub fn describe(&self) -> String {
        match self {
            PinTarget::File { path } => path.clone(),
            PinTarget::Call { call_id } => format!("call {call_id}"),
            PinTarget::Message { text } => {
                let line = text.lines().next().unwrap_or("");
                let mut cut: String = line.chars().take(40).collect();
                if line.chars().count() > 40 || text.lines().nth(1).is_some() {
                    cut.push('…');
                }
                format!("message \"{cut}\"")
            }
        }
    }
}

/// A pin set or taken back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ContextPinned {
    pub target: PinTarget,
    /// false: unpinned.
    pub pinned: bool,
    /// Who pinned it (`cli`, `app`).
    pub by: String,
}

/// One piece of a request's context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ContextItem {
    pub kind: ContextKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub symbol: Option<String>,
    /// Why it is there, in words ("defines `calc_total`, named in the prompt").
    pub reason: String,
    /// Estimated, or counted by the provider's tokenizer.
    #[ts(type = "number")]
    pub tokens: u64,
}

/// What a context item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum ContextKind {
    /// A file of the repository map: its definitions' signatures.
    Map,
    /// A file shown whole or in part (named in the prompt, or found through the map).
    File,
    /// The list of the repository's files.
    FileList,
    /// A test related to a target file.
    Test,
    /// The definitions of a file next to a target file.
    Sibling,
    /// Definitions looked up by name.
    Symbols,
    /// Recent commits that touched the target files.
    RecentChanges,
    /// The project's instructions (AGENTS.md, …).
    Instructions,
    /// What Bosun remembers about the repository from earlier tasks (one item per memory).
    Memory,
}

/// What Bosun told the model when it stopped without making progress, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct Nudge {
    pub reason: NudgeReason,
    /// The exact message sent to the model.
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum NudgeReason {
    /// Steps of work described in prose, none of them done.
    ProsePlan,
    /// "I will now …" and then nothing.
    Promise,
    /// A question the model could answer itself with its tools.
    Question,
    /// A call written as text that names a tool that does not exist.
    UnknownTool,
    /// A call written as text whose arguments do not fit the tool's schema.
    SchemaError,
    /// An `edit_file` whose old and new text are the same.
    NoOpEdit,
    /// The same call that failed the previous time, sent again.
    RepeatedCall,
}

impl NudgeReason {
    pub fn as_str(&self) -> &'static str {
        match self {
            NudgeReason::ProsePlan => "prose_plan",
            NudgeReason::Promise => "promise",
            NudgeReason::Question => "question",
            NudgeReason::UnknownTool => "unknown_tool",
            NudgeReason::SchemaError => "schema_error",
            NudgeReason::NoOpEdit => "no_op_edit",
            NudgeReason::RepeatedCall => "repeated_call",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum TaskStatus {
    /// Not finished yet (only in the journal's task table, never in `task_finished`).
    Running,
    /// Finished with evidence: the task changed the worktree (and, once checks exist, they
    /// pass).
    Completed,
    /// The model answered and the task changed nothing: a question answered, or work claimed
    /// but never done. Never reported as `completed`.
    Answered,
    Failed,
    /// The task changed files but the project's required checks fail.
    ChecksFailed,
    /// Stopped by the user, or found unfinished after its process died.
    Interrupted,
    BudgetExceeded,
    MaxSteps,
}

impl TaskStatus {
    pub fn as_str(&self) -> &'static str {
        match self {
            TaskStatus::Running => "running",
            TaskStatus::Completed => "completed",
            TaskStatus::Answered => "answered",
            TaskStatus::Failed => "failed",
            TaskStatus::ChecksFailed => "checks_failed",
            TaskStatus::Interrupted => "interrupted",
            TaskStatus::BudgetExceeded => "budget_exceeded",
            TaskStatus::MaxSteps => "max_steps",
        }
    }

    /// Every status, in the order the README's table lists them.
    pub const ALL: [TaskStatus; 8] = [
        TaskStatus::Running,
        TaskStatus::Completed,
        TaskStatus::Answered,
        TaskStatus::Failed,
        TaskStatus::ChecksFailed,
        TaskStatus::BudgetExceeded,
        TaskStatus::MaxSteps,
        TaskStatus::Interrupted,
    ];

    pub fn parse(s: &str) -> Option<TaskStatus> {
        Some(match s {
            "running" => TaskStatus::Running,
            "completed" => TaskStatus::Completed,
            "answered" => TaskStatus::Answered,
            "failed" => TaskStatus::Failed,
            "checks_failed" => TaskStatus::ChecksFailed,
            "interrupted" => TaskStatus::Interrupted,
            "budget_exceeded" => TaskStatus::BudgetExceeded,
            "max_steps" => TaskStatus::MaxSteps,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct TaskFinished {
    pub status: TaskStatus,
    /// The model's last answer, or why the task stopped.
    pub summary: String,
    /// The results of the last round of checks (empty when none ran).
    #[serde(default)]
    pub checks: Vec<CheckFinished>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ProviderFallback {
    /// The provider that failed and the one that takes over (names of `config.toml`).
    pub from: String,
    pub to: String,
    /// What failed: the error's message after its retries.
    pub reason: String,
    /// The model of the provider taking over.
    #[serde(default)]
    pub model: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct SubagentStarted {
    pub child_task_id: TaskId,
    pub brief: String,
    /// The globs the child may change.
    pub scope: Vec<String>,
    /// `worker`, `planner`, `escalation`, `main`.
    pub role: String,
    pub provider: String,
    pub model: String,
    /// The `delegate` call it answers, or the plan node it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub call_id: Option<CallId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub plan_node: Option<String>,
    /// Runs in a worktree of its own beside other children (merged back after), or one after
    /// another on the parent's state.
    pub parallel: bool,
    /// 1 for a child of the user's task, 2 for its children.
    pub depth: u32,
    /// Its caps.
    pub max_steps: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub max_cost_usd: Option<f64>,
    #[ts(type = "number")]
    pub max_tokens: u64,
    #[ts(type = "number")]
    pub max_wall_secs: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct SubagentProgress {
    pub child_task_id: TaskId,
    /// Model requests so far.
    pub steps: u32,
    /// Tokens of every class so far.
    #[ts(type = "number")]
    pub tokens: u64,
    pub cost_usd: f64,
    pub tool_calls: u32,
    /// Paths changed so far.
    pub files: Vec<String>,
    /// What it is doing now: the tool it runs, or `thinking`.
    pub activity: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct SubagentFinished {
    pub child_task_id: TaskId,
    pub status: TaskStatus,
    pub summary: String,
    /// The paths it changed (what was merged into the parent, for a parallel child).
    pub files: Vec<String>,
    /// Its checks' last results (after the merge, for a parallel child).
    pub checks: Vec<CheckFinished>,
    pub cost_usd: f64,
    #[ts(type = "number")]
    pub tokens: u64,
    pub steps: u32,
    /// How its work reached the parent: `applied` (run on the parent's state), `merged`,
    /// `conflict` (nothing merged), `none` (nothing changed), `reverted` (its changes were
    /// dropped: the child failed).
    pub merge: String,
    /// The paths a three-way merge found changed on both sides.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub conflicts: Vec<String>,
    /// Paths its commands changed outside its scope, put back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub reverted: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ErrorEvent {
    /// A stable code a frontend may branch on, e.g. `model_error`, `rate_limited`,
    /// `worktree_error`, `journal_error`.
    pub code: String,
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn event_json_is_flat_with_type_tag() -> Result<(), serde_json::Error> {
        let ev = Event {
            seq: 4,
            task_id: TaskId::from("01abc"),
            ts: "2026-11-30T03:15:00.123Z".into(),
            msg: EventMsg::ToolCallEnd(ToolCallEnd {
                call_id: CallId::from("call_1"),
                status: ToolCallStatus::TimedOut,
                exit_code: None,
                error: Some("timed out after 5 s".into()),
                output: String::new(),
                duration_ms: 5000,
            }),
        };
        let v = serde_json::to_value(&ev)?;
        assert_eq!(
            v,
            json!({"seq":4,"task_id":"01abc","ts":"2026-11-30T03:15:00.123Z","type":"tool_call_end",
                   "call_id":"call_1","status":"timed_out","error":"timed out after 5 s","output":"","duration_ms":5000})
        );
        let back: Event = serde_json::from_value(v)?;
        assert_eq!(back, ev);
        Ok(())
    }

    #[test]
    fn review_events_carry_both_tags() -> Result<(), serde_json::Error> {
        let msg = EventMsg::Review(crate::ReviewEvent::Accept {
            path: "src/a.rs".into(),
            hunks: vec!["h1".into()],
        });
        let v = serde_json::to_value(&msg)?;
        assert_eq!(
            v,
            json!({"type":"review","action":"accept","path":"src/a.rs","hunks":["h1"]})
        );
        let back: EventMsg = serde_json::from_value(v)?;
        assert_eq!(back, msg);
        Ok(())
    }

    #[test]
    fn kind_matches_serde_tag() -> Result<(), serde_json::Error> {
        let msg = EventMsg::TaskFinished(TaskFinished {
            status: TaskStatus::MaxSteps,
            summary: "stopped".into(),
            checks: Vec::new(),
        });
        let v = serde_json::to_value(&msg)?;
        assert_eq!(v["type"], msg.kind());
        assert_eq!(v["status"], "max_steps");
        Ok(())
    }

    #[test]
    fn the_context_line_counts_memories() {
        let item = |kind, path: Option<&str>| ContextItem {
            kind,
            path: path.map(str::to_string),
            symbol: None,
            reason: String::new(),
            tokens: 10,
        };
        let c = ContextAssembled {
            items: vec![
                item(ContextKind::Map, Some("a.rs")),
                item(ContextKind::Memory, None),
                item(ContextKind::Memory, None),
            ],
            total_tokens: 30,
            budget_tokens: 100,
        };
        assert_eq!(c.summary(), "Context: map of 1 file, 2 memories, 30 tokens");
        let one = ContextAssembled {
            items: vec![item(ContextKind::Memory, None)],
            ..c
        };
        assert_eq!(one.summary(), "Context: 1 memory, 30 tokens");
        assert_eq!(
            serde_json::to_value(ContextKind::Memory).ok(),
            Some(json!("memory"))
        );
    }
}
