use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A tool as offered to the model: its name, what it does, and a JSON schema of its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema (`{"type":"object","properties":{…},"required":[…]}`).
    #[ts(type = "unknown")]
    pub parameters: serde_json::Value,
}

/// What a tool call would do, described for the policy engine and for approval cards. A tool
/// describes its action; it never decides whether it may run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum ToolAction {
    /// Reads these worktree-relative paths (a directory for `list_dir` / `search`).
    Read { paths: Vec<String> },
    /// Writes (creates, modifies or deletes) these worktree-relative paths.
    Write { paths: Vec<String> },
    /// Runs this shell command (`bash -c`) in the worktree.
    Command { command: String },
    /// A running command's connection to `host:port` through Bosun's egress proxy, which no
    /// policy rule allows (`command` is the command that connects).
    Network {
        host: String,
        port: u16,
        command: String,
    },
    /// Changes nothing outside Bosun (e.g. `update_plan`).
    Internal,
    /// Not a tool call: the spend-rate breaker (`[budgets] max_usd_per_minute`) tripped; the
    /// task is paused before its next model request. Amounts in millionths of a dollar.
    SpendRate {
        #[ts(type = "number")]
        spent_usd_micros: u64,
        #[ts(type = "number")]
        limit_usd_micros: u64,
        /// The window the spend was measured over (60).
        window_secs: u32,
    },
    /// Not a tool call: the task's model has no price while budgets (named) apply, so its
    /// spend cannot be counted against them.
    UnpricedModel { model: String, budgets: Vec<String> },
    /// Not a tool call: compaction summarised `replaces` older messages into `text`
    /// (`[context] review_summaries = true`); the task waits until the user accepts the
    /// summary, edits it (`ApprovalAnswer.text`) or refuses it (the older turns are kept).
    Summary { text: String, replaces: u32 },
    /// A tool of an MCP server (the model calls it `mcp__<server>__<tool>`) with these
    /// arguments.
    Mcp {
        server: String,
        tool: String,
        #[ts(type = "unknown")]
        arguments: serde_json::Value,
    },
    /// Not a tool call: starting an MCP server that a repository's `.bosun/config.toml`
    /// declares. Asked once for its exact command and arguments (or URL); the answer is kept.
    McpServer {
        server: String,
        /// The command line (or URL) exactly as it will run.
        command: String,
        /// The file that declares it.
        origin: String,
    },
    /// A plan node failed after its retry and the escalation model: approve once retries it
    /// on the escalation model, approve for the task skips it, deny stops the plan (the task
    /// ends `checks_failed`).
    PlanNodeFailed {
        node: String,
        step: String,
        attempts: u32,
        failure: String,
    },
}

impl ToolAction {
    /// For the budget approvals (not tool calls), what they ask in one line.
    pub fn budget_question(&self) -> Option<String> {
        let usd = |micros: u64| micros as f64 / 1_000_000.0;
        match self {
            ToolAction::SpendRate {
                spent_usd_micros,
                limit_usd_micros,
                window_secs,
            } => Some(format!(
                "spending ${:.4} in the last {window_secs} s passed the limit of ${:.4} a minute (max_usd_per_minute): go on?",
                usd(*spent_usd_micros),
                usd(*limit_usd_micros)
            )),
            ToolAction::UnpricedModel { model, budgets } => Some(format!(
                "`{model}` has no price, so its spend cannot be counted against {}: run it anyway?",
                budgets.join(", ")
            )),
            _ => None,
        }
    }

    /// What kind of approval asking about this action is.
    pub fn approval_kind(&self) -> crate::ApprovalKind {
        match self {
            ToolAction::Network { .. } => crate::ApprovalKind::Network,
            ToolAction::SpendRate { .. } => crate::ApprovalKind::SpendRate,
            ToolAction::UnpricedModel { .. } => crate::ApprovalKind::UnpricedModel,
            ToolAction::Summary { .. } => crate::ApprovalKind::Summary,
            ToolAction::PlanNodeFailed { .. } => crate::ApprovalKind::PlanNodeFailed,
            _ => crate::ApprovalKind::Tool,
        }
    }
}
