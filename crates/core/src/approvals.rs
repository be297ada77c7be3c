//! Approval requests: an `ask` decision pauses the tool call until a frontend answers.
//!
//! Requests have ids; answers arrive as `Op::Approval` and are matched to the waiting call.
//! "Approve for this task" remembers the action's key so the same action does not ask again.

use crate::{CoreError, Emitter};
use bosun_protocol::{
    ApprovalAnswer, ApprovalDecision, ApprovalRequested, ApprovalResolved, CallId, EventMsg,
    ToolAction,
};
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// What an approval came to.
pub enum Approval {
    Approved,
    /// Approved, and `answer.rule` must be written to a policy file before the call runs; the
    /// caller emits `resolved` once it knows which file (or that writing failed).
    Always {
        answer: Box<ApprovalAnswer>,
        resolved: Box<ApprovalResolved>,
    },
    Denied {
        note: Option<String>,
    },
    /// The task was stopped while waiting.
    Cancelled,
}

/// A tool call that asks, as the policy explained it.
pub struct AskRequest<'a> {
    pub call_id: &'a str,
    pub tool: &'a str,
    pub action: &'a ToolAction,
    pub reason: String,
    pub rule: String,
    pub source: String,
    pub suggestions: Vec<String>,
    pub preview: Option<String>,
}

#[derive(Default)]
pub struct ApprovalGate {
    waiting: Mutex<HashMap<String, oneshot::Sender<ApprovalAnswer>>>,
    approved_for_task: Mutex<HashSet<String>>,
    next: AtomicU64,
}

/// The key "approve for this task" remembers: the exact action; for a connection, the host
/// (any port, any command of the task).
pub fn action_key(tool: &str, action: &ToolAction) -> String {
    match action {
        ToolAction::Command { command } => format!("command:{command}"),
        ToolAction::Write { paths } => format!("write:{}", paths.join("\u{0}")),
        ToolAction::Read { paths } => format!("read:{}", paths.join("\u{0}")),
        ToolAction::Network { host, .. } => format!("network:{host}"),
        ToolAction::Internal => format!("tool:{tool}"),
        ToolAction::SpendRate { .. } => "spend_rate".into(),
        ToolAction::UnpricedModel { model, .. } => format!("unpriced:{model}"),
        ToolAction::Summary { .. } => "summary".into(),
        ToolAction::PlanNodeFailed { node, .. } => format!("plan_node:{node}"),
        // Approved for the task: this tool of this server, whatever the arguments.
        ToolAction::Mcp { server, tool, .. } => format!("mcp:{server}/{tool}"),
        ToolAction::McpServer {
            server, command, ..
        } => format!("mcp_server:{server}:{command}"),
    }
}

impl ApprovalGate {
    /// Delivers an answer to the call waiting for it; false if none waits (already answered,
    /// unknown id).
    pub fn answer(&self, answer: ApprovalAnswer) -> bool {
        let sender = match self.waiting.lock() {
            Ok(mut w) => w.remove(&answer.approval_id),
            Err(_) => None,
        };
        match sender {
            Some(tx) => tx.send(answer).is_ok(),
            None => false,
        }
    }

    /// True when the user already approved this exact action for the task.
    pub fn approved_for_task(&self, tool: &str, action: &ToolAction) -> bool {
        self.approved_for_task
            .lock()
            .map(|s| s.contains(&action_key(tool, action)))
            .unwrap_or(false)
    }

    /// A compaction's summary to review (`[context] review_summaries`): `Ok(Some(text))` is the
    /// summary to use (as the user edited it), `Ok(None)` that the user refused it, and `Err(())`
    /// that the task was stopped while waiting.
    pub async fn ask_summary(
        &self,
        req: AskRequest<'_>,
        emitter: &Emitter,
        cancel: &CancellationToken,
    ) -> Result<Result<Option<String>, ()>, CoreError> {
        let ToolAction::Summary { text, .. } = req.action else {
            return Err(CoreError::Internal("ask_summary without a summary".into()));
        };
        let text = text.clone();
        let call_id = req.call_id.to_string();
        let Some((approval_id, answer)) = self.wait(&req, emitter, cancel).await? else {
            return Ok(Err(()));
        };
        let edited = answer
            .text
            .as_ref()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty());
        let approves = answer.decision.approves();
        emitter.emit(EventMsg::ApprovalResolved(ApprovalResolved {
            approval_id,
            call_id: CallId(call_id),
            decision: if approves {
                ApprovalDecision::ApproveOnce
            } else {
                ApprovalDecision::Deny
            },
            rule: None,
            rule_file: None,
            note: match (&edited, approves) {
                (Some(e), true) if *e != text.trim() => Some("summary edited".into()),
                _ => answer.note.clone(),
            },
            by: answer.by.clone().unwrap_or_else(|| "user".into()),
        }))?;
        Ok(Ok(approves.then(|| edited.unwrap_or(text))))
    }

    /// Emits `approval_requested` and waits for the answer: None when the task was stopped
    /// meanwhile.
    async fn wait(
        &self,
        req: &AskRequest<'_>,
        emitter: &Emitter,
        cancel: &CancellationToken,
    ) -> Result<Option<(String, ApprovalAnswer)>, CoreError> {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let approval_id = format!("{}-a{n}", emitter.task_id());
        let (tx, rx) = oneshot::channel();
        self.waiting
            .lock()
            .map_err(|_| CoreError::Internal("approval table poisoned".into()))?
            .insert(approval_id.clone(), tx);
        emitter.emit(EventMsg::ApprovalRequested(ApprovalRequested {
            approval_id: approval_id.clone(),
            kind: req.action.approval_kind(),
            call_id: CallId(req.call_id.to_string()),
            tool: req.tool.to_string(),
            action: req.action.clone(),
            reason: req.reason.clone(),
            rule: req.rule.clone(),
            source: req.source.clone(),
            suggestions: req.suggestions.clone(),
            preview: req.preview.clone(),
        }))?;
        let answer = tokio::select! {
            biased;
            _ = cancel.cancelled() => {
                if let Ok(mut w) = self.waiting.lock() {
                    w.remove(&approval_id);
                }
                return Ok(None);
            }
            a = rx => a.map_err(|_| CoreError::Internal("the approval was dropped".into()))?,
        };
        Ok(Some((approval_id, answer)))
    }

    /// Emits `approval_requested` and waits for the answer (or the task's cancellation).
    /// Asks, and returns the answer as given (None: the task was stopped meanwhile); for
    /// questions whose answers mean more than run-or-not (a failed plan node).
    pub async fn ask_decision(
        &self,
        req: AskRequest<'_>,
        emitter: &Emitter,
        cancel: &CancellationToken,
    ) -> Result<Option<ApprovalAnswer>, CoreError> {
        let Some((approval_id, answer)) = self.wait(&req, emitter, cancel).await? else {
            return Ok(None);
        };
        emitter.emit(EventMsg::ApprovalResolved(ApprovalResolved {
            approval_id,
            call_id: CallId(req.call_id.to_string()),
            decision: answer.decision,
            rule: None,
            rule_file: None,
            note: answer.note.clone(),
            by: answer.by.clone().unwrap_or_else(|| "user".into()),
        }))?;
        Ok(Some(answer))
    }

    pub async fn ask(
        &self,
        req: AskRequest<'_>,
        emitter: &Emitter,
        cancel: &CancellationToken,
    ) -> Result<Approval, CoreError> {
        let Some((approval_id, answer)) = self.wait(&req, emitter, cancel).await? else {
            return Ok(Approval::Cancelled);
        };
        let key = action_key(req.tool, req.action);
        let mut resolved = ApprovalResolved {
            approval_id,
            call_id: CallId(req.call_id.to_string()),
            decision: answer.decision,
            rule: None,
            rule_file: None,
            note: answer.note.clone(),
            by: answer.by.clone().unwrap_or_else(|| "user".into()),
        };
        let outcome = match answer.decision {
            ApprovalDecision::ApproveOnce => Approval::Approved,
            ApprovalDecision::ApproveTask => {
                if let Ok(mut s) = self.approved_for_task.lock() {
                    s.insert(key.clone());
                }
                resolved.rule = Some(key);
                Approval::Approved
            }
            ApprovalDecision::ApproveAlways => {
                let mut answer = answer.clone();
                if answer.rule.as_deref().is_none_or(|r| r.trim().is_empty()) {
                    answer.rule = req.suggestions.first().cloned();
                }
                resolved.rule = answer.rule.clone();
                if answer.rule.is_some() {
                    return Ok(Approval::Always {
                        answer: Box::new(answer),
                        resolved: Box::new(resolved),
                    });
                }
                Approval::Approved
            }
            ApprovalDecision::Deny => Approval::Denied { note: answer.note },
        };
        emitter.emit(EventMsg::ApprovalResolved(resolved))?;
        Ok(outcome)
    }
}
