use crate::ApprovalAnswer;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What a frontend submits to a running task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub enum Op {
    /// Stop the task: the model stream is dropped, a running command's process group is killed,
    /// and the task finishes as `interrupted`.
    Interrupt,
    /// A message from the user, taken at the next turn.
    UserMessage(UserMessageOp),
    /// An answer to an `approval_requested` event.
    Approval(ApprovalAnswer),
    /// Pin or unpin something so that compaction never drops it.
    Pin(PinOp),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct PinOp {
    pub target: crate::PinTarget,
    /// false: unpin.
    pub pinned: bool,
    /// Who pinned it (`app`, `cli`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub by: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, export_to = "../../../ui/src/lib/bindings/")]
pub struct UserMessageOp {
    pub text: String,
}
