use crate::{CallId, ToolAction};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A tool call the policy says must be asked about. The tool call waits until it is answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ApprovalRequested {
    pub approval_id: String,
    /// What is asked about: a tool call, a network connection, the spend-rate breaker or an
    /// unpriced model under a budget (always [`crate::ToolAction::approval_kind`] of `action`).
    #[serde(default)]
    pub kind: ApprovalKind,
    pub call_id: CallId,
    pub tool: String,
    /// Exactly what would run or change.
    pub action: ToolAction,
    /// Why it asks, in words.
    pub reason: String,
    /// The rule that asked, e.g. `commands.ask "rm -rf"` or `mode ask`.
    pub rule: String,
    /// Where that rule came from (`built-in`, `path/to/policy.toml:12`).
    pub source: String,
    /// General rules the user may choose to allow from now on, most general first.
    pub suggestions: Vec<String>,
    /// For an edit: the unified diff of what it would change (capped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub preview: Option<String>,
}

/// What an approval asks about.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum ApprovalKind {
    #[default]
    Tool,
    Network,
    SpendRate,
    UnpricedModel,
    /// A compaction's summary, to accept, edit or refuse (`[context] review_summaries`).
    Summary,
    /// A plan node failed after its retry and the escalation model: retry it (approve once),
    /// skip it (approve for the task), or stop the plan (deny).
    PlanNodeFailed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum ApprovalDecision {
    /// Run this call only.
    ApproveOnce,
    /// Run it, and do not ask again for the same action in this task.
    ApproveTask,
    /// Run it, and write `rule` to a policy file so it is allowed from now on.
    ApproveAlways,
    /// Do not run it; `note` goes to the model as the tool result.
    Deny,
}

impl ApprovalDecision {
    pub fn approves(&self) -> bool {
        !matches!(self, ApprovalDecision::Deny)
    }
}

/// Which policy file an "always" answer writes its rule to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum RuleScope {
    /// The repository's `.bosun/policy.toml`.
    #[default]
    Project,
    /// `$BOSUN_HOME/policy.toml`.
    User,
}

/// An answer to an approval request (an `Op` from a frontend; the CLI reads it as one JSON line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ApprovalAnswer {
    pub approval_id: String,
    pub decision: ApprovalDecision,
    /// For `approve_always`: the rule to allow (default: the first suggestion).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rule: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub scope: Option<RuleScope>,
    /// For `deny`: what the model is told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub note: Option<String>,
    /// For a summary (`kind: summary`) approved: the summary as the user edited it (absent:
    /// as it was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text: Option<String>,
    /// Who answered (`cli`, `app`, `--yes`, a user name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub by: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct ApprovalResolved {
    pub approval_id: String,
    pub call_id: CallId,
    pub decision: ApprovalDecision,
    /// The rule written for `approve_always`, or the action key remembered for `approve_task`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rule: Option<String>,
    /// The policy file an `approve_always` rule was written to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rule_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub note: Option<String>,
    pub by: String,
}

/// Secrets replaced with `[REDACTED:<kind>]` before something reached the journal or a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct Redacted {
    pub count: u32,
    pub kinds: Vec<String>,
    /// Where: `journal` or `model_request`.
    pub place: String,
}

/// Something the user should know that does not stop the task (said once).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct Warning {
    /// e.g. `sandbox_unavailable`.
    pub code: String,
    pub message: String,
}
